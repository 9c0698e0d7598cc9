"""ember-run end to end: GraphDefs written here in the protobuf wire format (and its JSON
mapping) by hand, inputs and outputs as .npy, results checked with NumPy, and every failure a
single `error: <CODE>: <message>` line on stderr."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration

DT = {
    np.dtype("float32"): 1,
    np.dtype("int32"): 3,
    np.dtype("uint8"): 4,
    np.dtype("int8"): 6,
    np.dtype("int64"): 9,
    np.dtype("bool"): 10,
}
DT_NAME = {1: "DT_FLOAT", 3: "DT_INT32", 4: "DT_UINT8", 6: "DT_INT8", 9: "DT_INT64", 10: "DT_BOOL"}


# ---- protobuf wire format, enough for GraphDef ----
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len_field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _int_field(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(value)


def _shape(dims: tuple[int, ...]) -> bytes:
    return b"".join(_len_field(2, _int_field(1, d)) for d in dims)


def _tensor(arr: np.ndarray) -> bytes:
    return (
        _int_field(1, DT[arr.dtype])
        + _len_field(2, _shape(arr.shape))
        + _len_field(4, np.ascontiguousarray(arr).tobytes())
    )


def attr_type(dtype: str) -> bytes:
    return _int_field(6, DT[np.dtype(dtype)])


def attr_tensor(arr: np.ndarray) -> bytes:
    return _len_field(8, _tensor(arr))


def attr_shape(dims: tuple[int, ...]) -> bytes:
    return _len_field(7, _shape(dims))


def node(name: str, op: str, inputs: list[str], attrs: dict[str, bytes]) -> bytes:
    body = _len_field(1, name.encode()) + _len_field(2, op.encode())
    body += b"".join(_len_field(3, i.encode()) for i in inputs)
    for key, value in sorted(attrs.items()):
        body += _len_field(5, _len_field(1, key.encode()) + _len_field(2, value))
    return _len_field(1, body)


def const(name: str, arr: np.ndarray) -> bytes:
    return node(name, "Const", [], {"dtype": _int_field(6, DT[arr.dtype]), "value": attr_tensor(arr)})


def placeholder(name: str, dtype: str, dims: tuple[int, ...]) -> bytes:
    return node(name, "Placeholder", [], {"dtype": attr_type(dtype), "shape": attr_shape(dims)})


C = np.array([[1.5, -2.0], [0.25, 4.0]], dtype=np.float32)


def affine_graph() -> bytes:
    """y = MatMul(x, c) + c, z = Neg(y)."""
    return b"".join(
        [
            placeholder("x", "float32", (2, 2)),
            const("c", C),
            node(
                "mm",
                "MatMul",
                ["x", "c"],
                {"T": attr_type("float32"), "transpose_a": _int_field(5, 0), "transpose_b": _int_field(5, 0)},
            ),
            node("y", "Add", ["mm:0", "c"], {"T": attr_type("float32")}),
            node("z", "Neg", ["y"], {"T": attr_type("float32")}),
        ]
    )


def affine_json() -> str:
    def tensor(arr: np.ndarray) -> dict[str, object]:
        return {
            "dtype": DT_NAME[DT[arr.dtype]],
            "tensorShape": {"dim": [{"size": str(d)} for d in arr.shape]},
            "tensorContent": base64.b64encode(arr.tobytes()).decode(),
        }

    t = {"T": {"type": "DT_FLOAT"}}
    return json.dumps(
        {
            "node": [
                {
                    "name": "x",
                    "op": "Placeholder",
                    "attr": {
                        "dtype": {"type": "DT_FLOAT"},
                        "shape": {"shape": {"dim": [{"size": "2"}, {"size": "2"}]}},
                    },
                },
                {"name": "c", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": tensor(C)}}},
                {
                    "name": "mm",
                    "op": "MatMul",
                    "input": ["x", "c"],
                    "attr": {**t, "transpose_a": {"b": False}, "transpose_b": {"b": False}},
                },
                {"name": "y", "op": "Add", "input": ["mm:0", "c"], "attr": t},
                {"name": "z", "op": "Neg", "input": ["y"], "attr": t},
            ]
        }
    )


def run(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tool = prefix / "bin" / "ember-run"
    if not tool.is_file():
        pytest.fail(f"{tool} was not installed by the engine build")
    return subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=120)


def assert_error(proc: subprocess.CompletedProcess[str], code: str, fragment: str) -> None:
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {code}: "), lines[0]
    assert fragment in lines[0], lines[0]


@pytest.fixture()
def x_npy(tmp_path: Path) -> tuple[Path, np.ndarray]:
    x = np.array([[1.0, 2.0], [-3.0, 0.5]], dtype=np.float32)
    path = tmp_path / "x.npy"
    np.save(path, x)
    return path, x


@pytest.mark.parametrize("encoding", ["pb", "json"])
def test_fetches_in_order_to_npy(
    ember_install: Path, tmp_path: Path, x_npy: tuple[Path, np.ndarray], encoding: str
) -> None:
    model = tmp_path / f"model.{encoding}"
    if encoding == "pb":
        model.write_bytes(affine_graph())
    else:
        model.write_text(affine_json())
    out = tmp_path / "out" / "nested"
    proc = run(
        ember_install,
        str(model),
        "--feed",
        f"x={x_npy[0]}",
        "--fetch",
        "z",
        "--fetch",
        "y:0",
        "--fetch",
        "z",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    y = x_npy[1] @ C + C
    np.testing.assert_allclose(np.load(out / "0.npy"), -y, rtol=1e-6)
    np.testing.assert_allclose(np.load(out / "1.npy"), y, rtol=1e-6)
    np.testing.assert_array_equal(np.load(out / "2.npy"), np.load(out / "0.npy"))
    assert np.load(out / "0.npy").dtype == np.float32


def test_prints_without_out(ember_install: Path, tmp_path: Path, x_npy: tuple[Path, np.ndarray]) -> None:
    model = tmp_path / "model.pb"
    model.write_bytes(affine_graph())
    proc = run(ember_install, str(model), f"--feed=x={x_npy[0]}", "--fetch", "y")
    assert proc.returncode == 0, proc.stderr
    header, values = proc.stdout.splitlines()[:2]
    assert header == "0 y float [2,2]"
    np.testing.assert_allclose(np.array(values.split(), dtype=np.float32), (x_npy[1] @ C + C).ravel(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "int8", "uint8", "bool"])
def test_npy_dtypes_round_trip(ember_install: Path, tmp_path: Path, dtype: str) -> None:
    arr = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    model = tmp_path / "id.pb"
    model.write_bytes(placeholder("p", dtype, (2, 3)) + node("i", "Identity", ["p"], {"T": attr_type(dtype)}))
    np.save(tmp_path / "p.npy", arr)
    proc = run(
        ember_install, str(model), "--feed", f"p={tmp_path / 'p.npy'}", "--fetch", "i", "--out", str(tmp_path / "o")
    )
    assert proc.returncode == 0, proc.stderr
    back = np.load(tmp_path / "o" / "0.npy")
    assert back.dtype == arr.dtype
    np.testing.assert_array_equal(back, arr)


def test_target_runs_without_output(ember_install: Path, tmp_path: Path) -> None:
    model = tmp_path / "noop.pb"
    model.write_bytes(node("n", "NoOp", [], {}))
    proc = run(ember_install, str(model), "--target", "n", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert not list((tmp_path / "o").iterdir())


def test_errors_are_one_line_with_tf_codes(ember_install: Path, tmp_path: Path, x_npy: tuple[Path, np.ndarray]) -> None:
    model = tmp_path / "model.pb"
    model.write_bytes(affine_graph())
    feed = f"x={x_npy[0]}"
    assert_error(
        run(ember_install, str(model), "--feed", feed, "--fetch", "nope"),
        "NOT_FOUND",
        "FetchOutputs node nope:0: not found",
    )
    assert_error(
        run(ember_install, str(model), "--fetch", "z"),
        "INVALID_ARGUMENT",
        "You must feed a value for placeholder tensor 'x' with dtype float",
    )
    np.save(tmp_path / "i.npy", np.zeros((2, 2), dtype=np.int32))
    assert_error(
        run(ember_install, str(model), "--feed", f"x={tmp_path / 'i.npy'}", "--fetch", "z"),
        "INVALID_ARGUMENT",
        "Expects arg[0] to be float but int32 is provided",
    )
    np.save(tmp_path / "d.npy", np.zeros((2, 2), dtype=np.float64))
    assert_error(
        run(ember_install, str(model), "--feed", f"x={tmp_path / 'd.npy'}", "--fetch", "z"),
        "INVALID_ARGUMENT",
        "'<f8' is not supported",
    )
    assert_error(
        run(ember_install, str(model), "--feed", feed, "--fetch", "y:3"),
        "INVALID_ARGUMENT",
        "FetchOutputs y:3: output index too large, must be < 1",
    )
    assert_error(
        run(ember_install, str(model), "--feed", feed, "--feed", feed, "--fetch", "z"),
        "INVALID_ARGUMENT",
        'Endpoint "x:0" fed more than once.',
    )
    assert_error(
        run(ember_install, str(model), "--feed", feed),
        "INVALID_ARGUMENT",
        "Must specify at least one target to fetch or execute.",
    )
    assert_error(run(ember_install, str(tmp_path / "missing.pb"), "--fetch", "z"), "NOT_FOUND", "missing.pb")
    assert_error(run(ember_install, str(model), "--bogus"), "INVALID_ARGUMENT", "unknown option '--bogus'")


def test_bad_graphs_fail_cleanly(ember_install: Path, tmp_path: Path) -> None:
    data = affine_graph()
    for cut in range(1, len(data), max(1, len(data) // 40)):
        model = tmp_path / "cut.pb"
        model.write_bytes(data[:cut])
        proc = run(ember_install, str(model), "--fetch", "z")
        # Every cut leaves GraphDef's last node field incomplete: always one clear error, never a
        # run of a partial graph (exit 0) and never a crash (a signal, not exit 1).
        assert proc.returncode == 1, (cut, proc.returncode, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (cut, proc.stderr)
    unknown = tmp_path / "unknown.pb"
    unknown.write_bytes(node("u", "FancyOp", [], {}))
    assert_error(run(ember_install, str(unknown), "--fetch", "u"), "NOT_FOUND", "FancyOp")
    cyc = tmp_path / "cycle.pb"
    cyc.write_bytes(
        node("a", "Neg", ["b"], {"T": attr_type("float32")}) + node("b", "Neg", ["a"], {"T": attr_type("float32")})
    )
    assert_error(run(ember_install, str(cyc), "--fetch", "a"), "INVALID_ARGUMENT", "2 nodes in a cycle")
    mismatch = tmp_path / "mismatch.pb"
    mismatch.write_bytes(const("x", np.ones(2, np.float32)) + node("y", "Neg", ["x"], {"T": attr_type("int32")}))
    assert_error(
        run(ember_install, str(mismatch), "--fetch", "y"),
        "INVALID_ARGUMENT",
        "Input 0 of node y was passed float from x:0 incompatible with expected int32.",
    )
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"node": [{"name": "x", "op": 3}]}')
    assert_error(run(ember_install, str(bad_json), "--fetch", "x"), "INVALID_ARGUMENT", "node 'x'")
