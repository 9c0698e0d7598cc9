"""ember.Session against TensorFlow: the agreement fixtures, fetch structures, feeds of every
dtype, error classes, threads and memory."""

from __future__ import annotations

import collections
import gc
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import ember
import graphs
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
GRAPHS = REPO / "engine" / "testdata" / "graphs"
FIXTURES = sorted(p.name for p in GRAPHS.iterdir() if (p / "manifest.json").is_file())
DTYPES = [np.float32, np.float64, np.int32, np.uint8, np.int16, np.int8, np.int64, np.bool_]
RTOL, ATOL = 1e-5, 1e-6
C = np.array([1, 2, 3, 4], np.float32)  # the Const c of graphs.add_graph()


def _manifest(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((GRAPHS / name / "manifest.json").read_text())
    return result


def _tensor(name: str) -> str:
    return name if ":" in name else f"{name}:0"


def _check(got: Any, expected: np.ndarray, where: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} vs TensorFlow's {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape} vs TensorFlow's {expected.shape}"
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def test_fixtures_exist() -> None:
    assert len(FIXTURES) >= 6, f"expected TensorFlow's fixtures under {GRAPHS}, found {FIXTURES}"


# Each fixture in each encoding it ships (a manifest's "encodings"; the real models ship .pb only).
CASES = [(name, enc) for name in FIXTURES for enc in _manifest(name).get("encodings", ["pb", "json"])]


@pytest.mark.parametrize(("name", "encoding"), CASES)
def test_matches_tensorflow(name: str, encoding: str) -> None:
    """Every fixture GraphDef through ember.Session equals what TensorFlow stored (to the manifest's
    own rtol/atol where it sets them: real models accumulate float32 rounding over many layers)."""
    manifest = _manifest(name)
    folder = GRAPHS / name
    graph = ember.GraphDef.from_file(str(folder / f"model.{encoding}"))
    feeds = {f["name"]: np.load(folder / f["file"]) for f in manifest["feeds"]}
    fetches = [_tensor(f) for f in manifest["fetches"]]
    with ember.Session(graph, config=ember.SessionConfig(inter_op_threads=2, intra_op_threads=1)) as sess:
        if "expected_error" in manifest:
            want = manifest["expected_error"]
            cls = ember.errors.exception_type_from_error_code(getattr(ember.errors, want["code"]))
            with pytest.raises(cls) as info:
                sess.run(fetches, feed_dict=feeds)
            assert info.value.code == getattr(ember.errors, want["code"])
            assert want["message"] in info.value.message
            return
        results = sess.run(fetches, feed_dict=feeds)
    assert isinstance(results, list) and len(results) == len(fetches) == len(manifest["expected"])
    for fetch, got, expected_file in zip(fetches, results, manifest["expected"]):
        tolerance = {"rtol": float(manifest.get("rtol", RTOL)), "atol": float(manifest.get("atol", ATOL))}
        _check(got, np.load(folder / expected_file), f"{name}/{fetch} ({encoding})", **tolerance)


def test_from_bytes_and_paths() -> None:
    folder = GRAPHS / "mlp"
    x = np.load(folder / "input_0.npy")
    expected = np.load(folder / "expected_0.npy")
    for graph in (
        ember.GraphDef.from_bytes((folder / "model.pb").read_bytes()),
        ember.GraphDef.from_bytes((folder / "model.json").read_bytes()),
        folder / "model.pb",
        str(folder / "model.json"),
        (folder / "model.pb").read_bytes(),
    ):
        with ember.Session(graph) as sess:
            _check(sess.run("Identity:0", {"x:0": x}), expected, f"mlp from {type(graph).__name__}")
    parsed = ember.GraphDef()
    parsed.ParseFromString((folder / "model.pb").read_bytes())
    again = ember.GraphDef.from_bytes(parsed.SerializeToString())
    assert again.node_names() == parsed.node_names() and parsed.num_nodes > 0


Pair = collections.namedtuple("Pair", ["first", "second"])


def test_fetch_structures_as_tf() -> None:
    """Fetches and results have tf.compat.v1.Session.run's shapes: names, ops, lists, tuples,
    namedtuples, dicts; scalars come back as NumPy scalars; op names run as targets (None)."""
    x = np.array([1, 2, 3, 4], np.float32)
    y, z = x + C, (x + C) * x
    with ember.Session(ember.GraphDef.from_bytes(graphs.add_graph())) as sess:
        got = sess.run("z:0", {"x:0": x})
        assert isinstance(got, np.ndarray) and got.dtype == np.float32
        np.testing.assert_array_equal(got, z)
        assert sess.run("init") is None
        assert sess.run("y", {"x": x}) is None  # an op name: run as a target
        res = sess.run(["y:0", ("z:0", "init"), {"a": "y:0", "b": ["z:0"]}, Pair("y:0", "z:0")], feed_dict={"x": x})
        assert isinstance(res, list) and len(res) == 4
        np.testing.assert_array_equal(res[0], y)
        assert isinstance(res[1], tuple) and res[1][1] is None
        np.testing.assert_array_equal(res[1][0], z)
        assert isinstance(res[2], dict) and set(res[2]) == {"a", "b"} and isinstance(res[2]["b"], list)
        np.testing.assert_array_equal(res[2]["b"][0], z)
        assert isinstance(res[3], Pair)
        np.testing.assert_array_equal(res[3].second, z)
        ordered = sess.run(collections.OrderedDict([("k", "z:0")]), {"x:0": x})
        assert isinstance(ordered, collections.OrderedDict)
        assert sess.run([], {"x:0": x}) == []  # nothing to run, as TF
        assert sess.run({}) == {}
        same = sess.run(["z:0", "z:0"], {"x:0": x})
        np.testing.assert_array_equal(same[0], same[1])
        c = sess.run("c:0")
        np.testing.assert_array_equal(c, [1, 2, 3, 4])
        c[0] = 100  # a fetched constant is the caller's copy
        np.testing.assert_array_equal(sess.run("c:0"), [1, 2, 3, 4])


def test_feeds_cast_as_tf() -> None:
    """Feeds convert to the placeholder's dtype as tf.compat.v1 does (np.asarray(v, dtype))."""
    with ember.Session(ember.GraphDef.from_bytes(graphs.add_graph())) as sess:
        want = (np.arange(4) + C) * np.arange(4)
        for value in ([0, 1, 2, 3], (0.0, 1.0, 2.0, 3.0), np.arange(4, dtype=np.float64), np.arange(4)):
            got = sess.run("z:0", {"x:0": value})
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, want.astype(np.float32))
        strided = np.arange(8, dtype=np.float32)[::2]  # not contiguous: converted, not wrapped
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": strided}), strided + C)
        with pytest.raises(
            ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor x:0, which has shape \(4,\)"
        ):
            sess.run("z:0", {"x:0": [1, 2, 3]})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_round_trips(dtype: Any) -> None:
    """A feed of each dtype comes back through Identity with its dtype, shape and values, and
    neither side aliases the other (the fed array is wrapped without a copy, so the output must
    not hand the caller's memory back)."""
    rng = np.random.default_rng(7)
    if dtype is np.bool_:
        x = rng.integers(0, 2, size=(3, 5)).astype(np.bool_)
    elif np.issubdtype(dtype, np.floating):
        x = rng.standard_normal((3, 5)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=(3, 5), dtype=dtype, endpoint=True)
    keep = x.copy()
    with ember.Session(ember.GraphDef.from_bytes(graphs.identity_graph(np.dtype(dtype), [-1, 5]))) as sess:
        for value in (x, x[:, :], np.asfortranarray(x)):
            y = sess.run("y:0", {"x:0": value})
            assert y.dtype == np.dtype(dtype) and y.shape == x.shape
            np.testing.assert_array_equal(y, keep)
            assert not np.shares_memory(y, x)
            assert y.flags.writeable and y.flags.c_contiguous
            y[...] = 0
            np.testing.assert_array_equal(x, keep)
        scalar_graph = graphs.identity_graph(np.dtype(dtype), [])
    with ember.Session(ember.GraphDef.from_bytes(scalar_graph)) as sess:
        s = sess.run("y:0", {"x:0": x[0, 0]})
        assert isinstance(s, np.generic) and s.dtype == np.dtype(dtype) and s == x[0, 0]


def test_unsupported_dtypes_are_type_errors() -> None:
    with ember.Session(ember.GraphDef.from_bytes(graphs.identity_graph(np.dtype(np.float32)))) as sess:
        with pytest.raises(TypeError):
            sess.run("y:0", {"x:0": None})
        with pytest.raises(TypeError):
            sess.run("y:0", {1: np.zeros(2, np.float32)})
        with pytest.raises(TypeError):
            sess.run(None)


def test_errors_carry_tensorflow_classes() -> None:
    x = np.zeros(4, np.float32)
    sess = ember.Session(ember.GraphDef.from_bytes(graphs.add_graph()))
    with pytest.raises(ember.errors.InvalidArgumentError) as info:
        sess.run("z:0")  # x not fed
    assert info.value.code == ember.errors.INVALID_ARGUMENT == info.value.error_code
    assert "You must feed a value for placeholder tensor 'x'" in info.value.message
    assert isinstance(info.value, ember.errors.OpError)
    for fetch, feeds in (("nope:0", {"x:0": x}), ("z:0", {"nope:0": x}), ("nope", {"x:0": x})):
        with pytest.raises(ember.errors.NotFoundError) as nf:
            sess.run(fetch, feeds)
        assert nf.value.code == ember.errors.NOT_FOUND
        assert isinstance(nf.value, ValueError)  # what tf.compat.v1.Session raises for unknown names
    with pytest.raises(ember.errors.InvalidArgumentError, match="both fed and fetched"):
        sess.run("x:0", {"x:0": x})
    with pytest.raises(ember.errors.InvalidArgumentError):
        sess.run("z:7", {"x:0": x})
    with pytest.raises(ember.errors.NotFoundError):
        ember.GraphDef.from_file(str(REPO / "no-such-graph.pb"))
    with pytest.raises(ember.errors.OpError):
        ember.GraphDef.from_bytes(b"\xff\xff\xff garbage")
    sess.close()
    sess.close()  # a second close is fine
    with pytest.raises(ember.errors.CancelledError) as closed:
        sess.run("z:0", {"x:0": x})
    assert closed.value.code == ember.errors.CANCELLED
    assert isinstance(closed.value, RuntimeError)  # what tf.compat.v1.Session raises
    err = ember.errors.NotFoundError(None, None, "gone")
    assert err.code == ember.errors.NOT_FOUND and str(err) == "gone"


def test_eight_threads_share_one_session() -> None:
    folder = GRAPHS / "mlp"
    x = np.load(folder / "input_0.npy")
    expected = np.load(folder / "expected_0.npy")
    rng = np.random.default_rng(3)
    others = [rng.standard_normal(x.shape).astype(np.float32) for _ in range(8)]
    sess = ember.Session(ember.GraphDef.from_file(str(folder / "model.pb")), ember.SessionConfig(inter_op_threads=4))
    serial = [sess.run("Identity:0", {"x:0": o}) for o in others]
    failures: list[str] = []

    def worker(k: int) -> None:
        try:
            for i in range(150):
                if i % 2:
                    got = sess.run("Identity:0", {"x:0": x})
                    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
                else:
                    got = sess.run(["Identity:0"], {"x": others[k]})[0]
                    np.testing.assert_array_equal(got, serial[k])
        except Exception as e:  # reported below with the thread's number
            failures.append(f"thread {k}: {e!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sess.close()
    assert not failures, failures


def _rss_bytes() -> int:
    statm = Path("/proc/self/statm")
    if statm.exists():
        return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) * (1 if sys.platform == "darwin" else 1024)


def test_ten_thousand_runs_do_not_grow_rss() -> None:
    x = np.arange(4, dtype=np.float32)
    sess = ember.Session(ember.GraphDef.from_bytes(graphs.add_graph()), ember.SessionConfig(inter_op_threads=-1))
    for _ in range(2000):  # warm caches and allocators
        sess.run(["z:0", "y:0"], {"x:0": x})
    gc.collect()
    before = _rss_bytes()
    for i in range(10000):
        out = sess.run(["z:0", "y:0"], {"x:0": x if i % 2 else [0.0, 1.0, 2.0, 3.0]})
    gc.collect()
    grown = _rss_bytes() - before
    sess.close()
    np.testing.assert_array_equal(out[0], (x + C) * x)
    assert grown < 1 << 20, f"RSS grew by {grown} bytes over 10,000 runs"


def test_make_callable_and_config_proto() -> None:
    config = ember.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with ember.Session(ember.GraphDef.from_bytes(graphs.add_graph()), config=config) as sess:
        run = sess.make_callable(["y:0", "z:0"], feed_list=["x:0"])
        y, z = run(np.ones(4, np.float32))
        np.testing.assert_array_equal(z, [2, 3, 4, 5])
        np.testing.assert_array_equal(y, [2, 3, 4, 5])


def test_fed_arrays_are_released() -> None:
    """A fed array is wrapped, not copied, and its reference is dropped once the run is over."""
    x = np.arange(4, dtype=np.float32)
    before = sys.getrefcount(x)
    with ember.Session(ember.GraphDef.from_bytes(graphs.add_graph()), ember.SessionConfig(inter_op_threads=-1)) as sess:
        for _ in range(100):
            sess.run("z:0", {"x:0": x})
        assert sys.getrefcount(x) == before
    pool = ember.Session(ember.GraphDef.from_bytes(graphs.add_graph()))
    for _ in range(100):
        pool.run("z:0", {"x:0": x})
    del pool  # joins the pool; references released on its threads are dropped
    gc.collect()
    assert sys.getrefcount(x) == before


def test_compat_v1_names() -> None:
    from ember.compat import v1

    graph = v1.GraphDef()
    graph.ParseFromString(graphs.add_graph())
    config = v1.ConfigProto(inter_op_parallelism_threads=1)
    with v1.Session(graph, config=config) as sess:
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": np.zeros(4, np.float32)}), C)
    assert v1.errors.NotFoundError is ember.errors.NotFoundError


def test_tf1_frozen_graph_idiom() -> None:
    """The usual TF1 inference code, ported by its import: GFile + GraphDef.ParseFromString,
    import_graph_def into a Graph (the "import/" prefix, or name=""), Session(graph=...),
    tensors and operations from get_tensor_by_name as fetches and feed keys."""
    folder = GRAPHS / "mlp"
    x = np.load(folder / "input_0.npy")
    expected = np.load(folder / "expected_0.npy")
    with ember.io.gfile.GFile(str(folder / "model.pb"), "rb") as f:
        graph_def = ember.compat.v1.GraphDef()
        graph_def.ParseFromString(f.read())
    with ember.Graph().as_default() as graph:
        ember.import_graph_def(graph_def)  # prefix "import", as TF
    assert ember.get_default_graph() is not graph
    inp = graph.get_tensor_by_name("import/x:0")
    out = graph.get_tensor_by_name("import/Identity:0")
    with ember.compat.v1.Session(graph=graph) as sess:
        _check(sess.run(out, feed_dict={inp: x}), expected, "import/ prefix")
        _check(sess.run([out.name], {"import/x:0": x})[0], expected, "by name")
        assert sess.run(graph.get_operation_by_name("import/Identity"), {inp: x}) is None
        assert sess.graph is graph
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("x:0")
    with ember.Graph().as_default() as plain:
        y, op = ember.import_graph_def(graph_def, name="", return_elements=["Identity:0", "Identity"]) or []
        with ember.Session() as sess:  # the default graph
            _check(sess.run(y, {"x:0": x}), expected, "name=''")
    assert isinstance(op, ember.Operation) and plain.get_operations()
