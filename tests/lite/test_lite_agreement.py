"""ember lite agrees with LiteRT's reference kernels, computed live in the test.

Every model of engine/testdata/lite (made by TensorFlow's TFLiteConverter) is run by
`ember-lite-run` and by ai_edge_litert's Interpreter with OpResolverType.BUILTIN_REF on the
same inputs: int8 outputs must be equal element for element, float outputs within rtol 1e-5.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle: pip install '.[test]'")

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "engine" / "testdata" / "lite"
MODELS = sorted(p.stem for p in TESTDATA.glob("*.tflite"))


def litert_outputs(model: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interp = litert.Interpreter(
        model_path=str(model),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def ember_outputs(install: Path, model: Path, inputs: list[np.ndarray], tmp: Path) -> list[np.ndarray]:
    argv = [str(install / "bin" / "ember-lite-run"), str(model), "--outdir", str(tmp)]
    for i, x in enumerate(inputs):
        path = tmp / f"input_{i}.npy"
        np.save(path, x)
        argv += ["--input", f"{i}={path}"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    outs = sorted(tmp.glob("output_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    return [np.load(p) for p in outs]


def random_inputs(model: Path, seed: int) -> list[np.ndarray]:
    interp = litert.Interpreter(model_path=str(model))
    rng = np.random.default_rng(seed)
    inputs = []
    for d in interp.get_input_details():
        if d["dtype"] == np.int8:
            inputs.append(rng.integers(-128, 128, size=d["shape"]).astype(np.int8))
        else:
            inputs.append(rng.normal(0.0, 1.5, size=d["shape"]).astype(np.float32))
    return inputs


def assert_agree(ours: list[np.ndarray], ref: list[np.ndarray]) -> None:
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == np.float32:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)


def test_testdata_present() -> None:
    assert len(MODELS) >= 30, f"expected the generated models in {TESTDATA}"


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", range(8))
def test_matches_litert_reference(ember_install: Path, tmp_path: Path, name: str, seed: int) -> None:
    model = TESTDATA / f"{name}.tflite"
    inputs = random_inputs(model, seed)
    assert_agree(ember_outputs(ember_install, model, inputs, tmp_path), litert_outputs(model, inputs))


def test_bad_model_is_a_clear_error(ember_install: Path, tmp_path: Path) -> None:
    data = (TESTDATA / "small_cnn_int8.tflite").read_bytes()
    bad = tmp_path / "truncated.tflite"
    bad.write_bytes(data[: len(data) // 2])
    proc = subprocess.run([str(ember_install / "bin" / "ember-lite-run"), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid .tflite model" in lines[0], proc.stderr


@pytest.mark.parametrize("name", ["small_cnn_int8", "add", "concatenation_int8"])
def test_ember_run_accepts_tflite(ember_install: Path, tmp_path: Path, name: str) -> None:
    model = TESTDATA / f"{name}.tflite"
    inputs = random_inputs(model, 7)
    interp = litert.Interpreter(model_path=str(model))
    argv = [str(ember_install / "bin" / "ember-run"), str(model), "--out", str(tmp_path / "out")]
    for detail, x in zip(interp.get_input_details(), inputs, strict=True):
        np.save(tmp_path / f"{detail['name']}.npy", x)
        argv += ["--feed", f"{detail['name']}={tmp_path / (detail['name'] + '.npy')}"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    outs = [np.load(tmp_path / "out" / f"{i}.npy") for i in range(len(interp.get_output_details()))]
    assert_agree(outs, litert_outputs(model, inputs))
