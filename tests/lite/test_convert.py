"""ember-convert writes models that LiteRT loads and runs exactly as ember's interpreter does.

The GraphDefs in engine/testdata/lite/graphs are frozen TensorFlow graphs with TensorFlow's
own output for a stored input. Float conversions must match TensorFlow; int8 conversions
(full-integer PTQ from the stored calibration samples) must give LiteRT BUILTIN_REF outputs
equal to ember's, element for element, and stay close to TensorFlow's float result.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle: pip install '.[test]'")

pytestmark = pytest.mark.integration

GRAPHS = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "lite" / "graphs"
NAMES = sorted(p.stem for p in GRAPHS.glob("*.pb"))


def convert(install: Path, name: str, out: Path, int8: bool) -> None:
    argv = [str(install / "bin" / "ember-convert"), str(GRAPHS / f"{name}.pb"), "--input", "x"]
    argv += ["--output", "out", "-o", str(out)]
    if int8:
        argv += ["--quantize", "int8", "--calibration", str(GRAPHS / f"{name}_calibration")]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def run_both(install: Path, model: Path, x: np.ndarray, tmp: Path) -> tuple[np.ndarray, np.ndarray, tuple[float, int]]:
    interp = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    if inp["dtype"] == np.int8:
        scale, zp = inp["quantization"]
        x = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    ref = interp.get_tensor(out["index"]).copy()
    np.save(tmp / "x.npy", x)
    proc = subprocess.run(
        [str(install / "bin" / "ember-lite-run"), str(model), str(tmp / "x.npy"), "--outdir", str(tmp)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return np.load(tmp / "output_0.npy"), ref, out["quantization"]


@pytest.mark.parametrize("name", NAMES)
def test_float_conversion_matches_tensorflow(ember_install: Path, tmp_path: Path, name: str) -> None:
    model = tmp_path / f"{name}.tflite"
    convert(ember_install, name, model, int8=False)
    ours, ref, _ = run_both(ember_install, model, np.load(GRAPHS / f"{name}.input.npy"), tmp_path)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours, np.load(GRAPHS / f"{name}.tf_output.npy"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_int8_conversion_agrees_with_litert(ember_install: Path, tmp_path: Path, name: str) -> None:
    model = tmp_path / f"{name}_int8.tflite"
    convert(ember_install, name, model, int8=True)
    ours, ref, (scale, zp) = run_both(ember_install, model, np.load(GRAPHS / f"{name}.input.npy"), tmp_path)
    assert ours.dtype == np.int8
    np.testing.assert_array_equal(ours, ref)
    tf_out = np.load(GRAPHS / f"{name}.tf_output.npy")
    dequantized = (ours.astype(np.float32) - zp) * scale
    assert np.abs(dequantized - tf_out).max() <= 4 * scale + 0.02 * np.abs(tf_out).max()


def test_unknown_output_is_a_clear_error(ember_install: Path, tmp_path: Path) -> None:
    argv = [str(ember_install / "bin" / "ember-convert"), str(GRAPHS / f"{NAMES[0]}.pb"), "--input", "x"]
    argv += ["--output", "nonexistent", "-o", str(tmp_path / "m.tflite")]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "nonexistent" in proc.stderr
