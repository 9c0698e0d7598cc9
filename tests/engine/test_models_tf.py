"""ember agrees with TensorFlow on real architectures too large to commit as fixtures.

ResNet50 (~94 MB of weights), EfficientNetB0 and DenseNet121 are built here with random weights
by engine/testdata/gen_models.py, frozen to a GraphDef, run by TensorFlow (the oracle) and by
`ember-run`, and compared to rtol 1e-4. They need the `models` extra (tensorflow-cpu): without it
every test here is skipped with that reason, loudly, so a CI that forgot the extra shows it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "engine" / "testdata"
HAVE_TF = importlib.util.find_spec("tensorflow") is not None
REASON = (
    "tensorflow is not importable: install the test extra (pip install -e '.[test]') "
    "to run the ResNet50/EfficientNetB0/DenseNet121 agreement tests"
)
if not HAVE_TF:
    warnings.warn(REASON, stacklevel=1)

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not HAVE_TF, reason=REASON)]


def _gen_models() -> Any:
    sys.path.insert(0, str(TESTDATA))
    import gen_models  # type: ignore[import-not-found]

    return gen_models


@pytest.mark.parametrize("name", ["resnet50", "efficientnet_b0", "densenet121"])
def test_model_matches_tensorflow(ember_install: Path, tmp_path: Path, name: str) -> None:
    gen = _gen_models()
    manifest = gen.write_model(tmp_path / name, gen.AT_TEST_TIME[name]())
    folder = tmp_path / name
    argv = [str(ember_install / "bin" / "ember-run"), str(folder / "model.pb")]
    for feed in manifest["feeds"]:
        argv += ["--feed", f"{feed['name']}={folder / feed['file']}"]
    for fetch in manifest["fetches"]:
        argv += ["--fetch", fetch]
    out = tmp_path / "out"
    out.mkdir()
    argv += ["--out", str(out)]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, f"ember-run failed on {name} (ops {manifest['ops']}):\n{proc.stderr}"
    for i, expected_file in enumerate(manifest["expected"]):
        expected = np.load(folder / expected_file)
        got = np.load(out / f"{i}.npy")
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(
            got, expected, rtol=manifest["rtol"], atol=manifest["atol"], err_msg=f"{name} output {i}"
        )
    print(f"{name}: ember-run {elapsed:.2f}s, max abs err {np.abs(got - expected).max():.3g}")


@pytest.mark.parametrize("int8", [False, True], ids=["float", "int8"])
def test_resnet50_tflite_matches_litert(ember_install: Path, tmp_path: Path, int8: bool) -> None:
    """ResNet50 converted by TFLiteConverter: float within rtol 1e-4 of LiteRT's reference
    kernels, int8 (calibrated on random images) bit-exact with them."""
    gen = _gen_models()
    sys.path.insert(0, str(TESTDATA / "lite" / "models"))
    import generate as lite_gen  # type: ignore[import-not-found]

    fixture = gen.AT_TEST_TIME["resnet50"]()
    model = lite_gen.convert(fixture, int8)
    path = tmp_path / "resnet50.tflite"
    path.write_bytes(model)
    inputs = lite_gen.lite_inputs(model, fixture)
    want = lite_gen.run_litert(model, inputs, "ref")
    argv = [str(ember_install / "bin" / "ember-lite-run"), str(path), "--outdir", str(tmp_path)]
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"in_{i}.npy", x)
        argv += ["--input", f"{i}={tmp_path / f'in_{i}.npy'}"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for i, w in enumerate(want):
        got = np.load(tmp_path / f"output_{i}.npy")
        assert got.dtype == w.dtype and got.shape == w.shape
        if int8:
            np.testing.assert_array_equal(got, w, err_msg=f"resnet50 int8 output {i}")
        else:
            np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5, err_msg=f"resnet50 float output {i}")
