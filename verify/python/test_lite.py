"""ember.lite.Interpreter against LiteRT: every .tflite fixture (LiteRT's stored outputs, and a
live LiteRT where installed), the detail dicts, errors, and ember.lite.convert."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import ember
import ember.lite
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
LITE = REPO / "engine" / "testdata" / "lite"
MODELS = sorted(p.stem for p in LITE.glob("*.tflite"))
CONVERT = LITE / "graphs"


def _litert() -> Any:
    return pytest.importorskip(
        "ai_edge_litert.interpreter", reason="LiteRT is the live oracle: pip install ai-edge-litert"
    )


def _inputs(name: str) -> list[np.ndarray]:
    return [np.load(p) for p in sorted(LITE.glob(f"{name}.input_*.npy"))]


def _run(interp: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interp.allocate_tensors()
    details = interp.get_input_details()
    assert len(details) == len(inputs), f"{len(details)} inputs, {len(inputs)} input files"
    for detail, x in zip(details, inputs):
        interp.set_tensor(detail["index"], x)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def _same(got: np.ndarray, want: np.ndarray, where: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{where}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    )
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def test_fixtures_exist() -> None:
    assert len(MODELS) >= 20, MODELS


@pytest.mark.parametrize("name", MODELS)
def test_matches_litert_stored(name: str) -> None:
    """Outputs equal what LiteRT's reference kernels stored (int8 exactly, float to 1e-5)."""
    got = _run(ember.lite.Interpreter(model_path=str(LITE / f"{name}.tflite"), num_threads=1), _inputs(name))
    expected = [np.load(p) for p in sorted(LITE.glob(f"{name}.expected_*.npy"))]
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        _same(g, e, f"{name} output {i}")


def _equal_details(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], where: str) -> None:
    assert len(ours) == len(theirs), where
    for a, b in zip(ours, theirs):
        assert set(a) == set(b), f"{where}: keys {sorted(a)} vs LiteRT's {sorted(b)}"
        for key, want in b.items():
            have = a[key]
            if isinstance(want, np.ndarray):
                assert isinstance(have, np.ndarray) and have.dtype == want.dtype, f"{where}/{key}"
                np.testing.assert_array_equal(have, want, err_msg=f"{where}/{key}")
            elif isinstance(want, dict):
                assert set(have) == set(want), f"{where}/{key}"
                for k, v in want.items():
                    np.testing.assert_array_equal(have[k], v, err_msg=f"{where}/{key}/{k}")
                    assert np.asarray(have[k]).dtype == np.asarray(v).dtype, f"{where}/{key}/{k}"
            else:
                assert have == want and type(have) is type(want), f"{where}/{key}: {have!r} vs {want!r}"


@pytest.mark.parametrize("name", MODELS)
def test_matches_live_litert(name: str) -> None:
    """Same detail dicts (keys, values, types) and same outputs as a live LiteRT."""
    litert = _litert()
    model = LITE / f"{name}.tflite"
    ref = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ours = ember.lite.Interpreter(
        model_content=model.read_bytes(),
        experimental_op_resolver_type=ember.lite.experimental.OpResolverType.BUILTIN_REF,
    )
    ref.allocate_tensors()
    ours.allocate_tensors()
    _equal_details(ours.get_input_details(), ref.get_input_details(), f"{name} inputs")
    _equal_details(ours.get_output_details(), ref.get_output_details(), f"{name} outputs")
    outputs, expected = _run(ours, _inputs(name)), _run(ref, _inputs(name))
    assert len(outputs) == len(expected), name
    for got, want in zip(outputs, expected):
        _same(got, want, name)


def test_errors_as_tf_lite() -> None:
    model = str(LITE / "add.tflite")
    interp = ember.lite.Interpreter(model_path=model)
    index = interp.get_input_details()[0]["index"]
    shape = tuple(interp.get_input_details()[0]["shape"])
    with pytest.raises(ValueError, match="allocate_tensors"):
        interp.get_tensor(index)
    with pytest.raises(RuntimeError):
        interp.invoke()
    interp.allocate_tensors()
    with pytest.raises(ValueError, match="Got value of type FLOAT64 but expected type FLOAT32"):
        interp.set_tensor(index, np.zeros(shape, np.float64))
    with pytest.raises(ValueError, match="Dimension mismatch"):
        interp.set_tensor(index, np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError):
        interp.get_tensor(10_000)
    with pytest.raises(ValueError):
        ember.lite.Interpreter(model_content=b"not a flatbuffer")
    with pytest.raises(ValueError):
        ember.lite.Interpreter(model_path=str(LITE / "missing.tflite"))
    with pytest.raises(ValueError):
        ember.lite.Interpreter()
    interp.resize_tensor_input(index, list(shape))  # the same shape is fine
    with pytest.raises(ValueError):
        interp.resize_tensor_input(index, [7, *shape[1:]])


@pytest.mark.parametrize("num_threads", [2, 4])
def test_num_threads_gives_the_same_bytes(num_threads: int) -> None:
    """num_threads splits CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED; every output is summed
    in the same order, so each fixture's outputs equal one thread's byte for byte."""
    for name in MODELS:
        path = str(LITE / f"{name}.tflite")
        one = _run(ember.lite.Interpreter(model_path=path, num_threads=1), _inputs(name))
        interp = ember.lite.Interpreter(model_path=path, num_threads=num_threads)
        assert interp._num_threads() == num_threads
        many = _run(interp, _inputs(name))
        assert [m.tobytes() for m in many] == [o.tobytes() for o in one], name


def test_num_threads_values_as_tf_lite() -> None:
    path = str(LITE / "relu.tflite")
    for default in (None, -1, 1):
        assert ember.lite.Interpreter(model_path=path, num_threads=default)._num_threads() == 1
    for bad in (0, -2):
        with pytest.raises(ValueError, match="num_threads should be >= 1"):
            ember.lite.Interpreter(model_path=path, num_threads=bad)
    for wrong in (2.0, "2", True):
        with pytest.raises(ValueError, match="type of num_threads should be int"):
            ember.lite.Interpreter(model_path=path, num_threads=wrong)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_threads is 100000"):
        ember.lite.Interpreter(model_path=path, num_threads=100_000)


def test_tensor_view_and_copies() -> None:
    name = "relu"
    interp = ember.lite.Interpreter(model_path=str(LITE / f"{name}.tflite"))
    interp.allocate_tensors()
    (x,) = _inputs(name)
    inp, out = interp.get_input_details()[0]["index"], interp.get_output_details()[0]["index"]
    view = interp.tensor(inp)
    view()[...] = x  # writes the interpreter's input in place, as tf.lite's tensor()
    interp.invoke()
    got = interp.get_tensor(out)
    np.testing.assert_array_equal(got, np.load(LITE / f"{name}.expected_0.npy"))
    got[...] = -1  # get_tensor returns a copy
    assert (interp.get_tensor(out) >= 0).all()
    assert len(interp.get_tensor_details()) >= 2


def test_threads_each_with_an_interpreter() -> None:
    name = "small_cnn_int8"
    expected = np.load(LITE / f"{name}.expected_0.npy")
    content = (LITE / f"{name}.tflite").read_bytes()
    failures: list[str] = []

    def worker() -> None:
        interp = ember.lite.Interpreter(model_content=content)
        for _ in range(20):
            got = _run(interp, _inputs(name))[0]
            if not np.array_equal(got, expected):
                failures.append("mismatch")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.parametrize("name", sorted(p.stem for p in CONVERT.glob("*.pb")))
def test_convert_float_matches_tensorflow(name: str) -> None:
    model = ember.lite.convert(CONVERT / f"{name}.pb", ["x"], ["out"])
    (got,) = _run(ember.lite.Interpreter(model_content=model), [np.load(CONVERT / f"{name}.input.npy")])
    np.testing.assert_allclose(got, np.load(CONVERT / f"{name}.tf_output.npy"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(p.stem for p in CONVERT.glob("*.pb")))
def test_convert_int8_agrees_with_litert(name: str) -> None:
    litert = _litert()
    samples = [np.load(p) for p in sorted((CONVERT / f"{name}_calibration").glob("*.npy"))]
    x = np.load(CONVERT / f"{name}.input.npy")

    def representative_dataset() -> Any:
        for s in samples:
            for row in s.reshape(-1, *x.shape).astype(np.float32):
                yield [row]

    model = ember.lite.convert(
        ember.GraphDef.from_file(str(CONVERT / f"{name}.pb")),
        ["x"],
        ["out"],
        quantize="int8",
        representative_dataset=representative_dataset,
    )
    ours = ember.lite.Interpreter(model_content=model)
    ours.allocate_tensors()
    scale, zp = ours.get_input_details()[0]["quantization"]
    q = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    ref = litert.Interpreter(model_content=model, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    (got,), (want,) = _run(ours, [q]), _run(ref, [q])
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, want)
    # The same calibration given as stacked arrays, as ember-convert's directory, or through
    # the TFLiteConverter front end makes the same model, byte for byte.
    stacked = ember.lite.convert(
        CONVERT / f"{name}.pb",
        inputs=["x"],
        outputs=["out"],
        quantize=True,
        representative_dataset=[[s] for s in samples],
    )
    from_dir = ember.lite.convert(
        CONVERT / f"{name}.pb", ["x"], ["out"], quantize="int8", calibration=CONVERT / f"{name}_calibration"
    )
    converter = ember.lite.TFLiteConverter.from_frozen_graph(str(CONVERT / f"{name}.pb"), ["x"], ["out"])
    converter.optimizations = [ember.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative_dataset
    assert stacked == model == from_dir == converter.convert()
    with pytest.raises(ValueError):
        ember.lite.convert(CONVERT / f"{name}.pb", ["x"], ["out"], quantize="int4")
    with pytest.raises(ember.errors.InvalidArgumentError):
        ember.lite.convert(
            CONVERT / f"{name}.pb",
            ["x"],
            ["out"],
            quantize="int8",
            representative_dataset=[[np.zeros(x.size + 1, np.float32)]],
        )
    with pytest.raises(ember.errors.OpError):
        ember.lite.convert(CONVERT / f"{name}.pb", ["x"], ["nonexistent"])


def test_keras_model_signatures_as_litert(tmp_path: Path) -> None:
    """A Keras model converted by TensorFlow (float and full-int8): same details (with the
    -1 batch of shape_signature), signature list and signature runner results as LiteRT."""
    litert = _litert()
    tf = pytest.importorskip("tensorflow", reason="TensorFlow converts the Keras model: pip install tensorflow-cpu")
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential(
        [tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)]
    )
    rng = np.random.default_rng(5)

    def representative() -> Any:
        for _ in range(16):
            yield [rng.standard_normal((1, 8)).astype(np.float32)]

    float_model = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    for content in (float_model, converter.convert()):
        ref = litert.Interpreter(model_content=content, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
        path = tmp_path / "m.tflite"
        path.write_bytes(content)
        ours = ember.lite.Interpreter(model_path=str(path))
        ref.allocate_tensors()
        ours.allocate_tensors()
        _equal_details(ours.get_input_details(), ref.get_input_details(), "keras inputs")
        _equal_details(ours.get_output_details(), ref.get_output_details(), "keras outputs")
        assert ours.get_signature_list() == ref.get_signature_list()
        (key,) = ref.get_signature_list()
        (arg,) = ref.get_signature_list()[key]["inputs"]
        dtype = ref.get_input_details()[0]["dtype"]
        x = (rng.standard_normal((1, 8)) * 40).clip(-128, 127).astype(dtype)
        got, want = ours.get_signature_runner(key)(**{arg: x}), ref.get_signature_runner(key)(**{arg: x})
        assert got.keys() == want.keys()
        for name in want:
            _same(got[name], want[name], f"keras {name}")


@pytest.mark.parametrize("name", ["small_cnn", "small_cnn_int8"])
def test_preserve_all_tensors_keeps_every_intermediate_as_litert(name: str) -> None:
    """experimental_preserve_all_tensors: after invoke every tensor holds the value LiteRT's has
    (by default intermediates share memory once dead, as in LiteRT, so they are not compared)."""
    litert = _litert()
    path = str(LITE / f"{name}.tflite")
    ours = ember.lite.Interpreter(model_path=path, experimental_preserve_all_tensors=True)
    ref = litert.Interpreter(
        model_path=path,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    inputs = _inputs(name)
    _run(ref, inputs)
    _run(ours, inputs)
    compared = 0
    for detail in ref.get_tensor_details():
        index = detail["index"]
        try:
            want = ref.get_tensor(index)
        except ValueError:  # LiteRT holds no data for this tensor
            continue
        _same(ours.get_tensor(index), want, f"{name} tensor {index} ({detail['name']})")
        compared += 1
    ends = len(ref.get_input_details()) + len(ref.get_output_details())
    assert compared >= ends + 2, f"compared {compared} tensors: the intermediates were left out"
