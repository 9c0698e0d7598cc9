"""ember agrees with TensorFlow on real GraphDefs.

Each fixture under engine/testdata/graphs/ was written by engine/testdata/gen_graphs.py with
tensorflow-cpu: the GraphDef (binary and JSON), the fed values and TensorFlow's own outputs (or
TensorFlow's error, for the error fixtures). Here `ember-run` executes the same GraphDef in both
encodings and its outputs are compared with TensorFlow's: float32 to rtol 1e-5, integers and
bools exactly. A manifest may set its own "rtol"/"atol" (the real models of gen_models.py, where
float32 rounding accumulates over many layers, use rtol 1e-4) and the "encodings" it ships
(those models leave out the JSON copy of their weights).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
GRAPHS = REPO / "engine" / "testdata" / "graphs"
FIXTURES = sorted(p.name for p in GRAPHS.iterdir() if (p / "manifest.json").is_file())
# rtol is the contract; atol only absorbs float32 rounding of results that cancel to ~0.
RTOL = 1e-5
ATOL = 1e-6

pytestmark = pytest.mark.integration


def _manifest(name: str) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((GRAPHS / name / "manifest.json").read_text())
    return manifest


def _run_ember(prefix: Path, model: Path, manifest: dict[str, Any], out: Path) -> subprocess.CompletedProcess[str]:
    tool = prefix / "bin" / "ember-run"
    if not tool.is_file():
        pytest.fail(f"{tool} was not built: the engine build must install ember-run")
    argv = [str(tool), str(model)]
    for feed in manifest["feeds"]:
        argv += ["--feed", f"{feed['name']}={model.parent / feed['file']}"]
    for fetch in manifest["fetches"]:
        argv += ["--fetch", fetch]
    argv += ["--out", str(out)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_fixtures_exist() -> None:
    assert len(FIXTURES) >= 6, f"expected the generated fixtures under {GRAPHS}, found {FIXTURES}"


# Each fixture in each encoding it ships (a manifest's "encodings"; the real models ship .pb only).
CASES = [(name, enc) for name in FIXTURES for enc in _manifest(name).get("encodings", ["pb", "json"])]


@pytest.mark.parametrize(("name", "encoding"), CASES)
def test_matches_tensorflow(ember_install: Path, tmp_path: Path, name: str, encoding: str) -> None:
    manifest = _manifest(name)
    model = GRAPHS / name / f"model.{encoding}"
    proc = _run_ember(ember_install, model, manifest, tmp_path)
    if "expected_error" in manifest:
        want = manifest["expected_error"]
        assert proc.returncode != 0, f"ember-run succeeded where TensorFlow failed with {want}"
        line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")), "")
        assert line.startswith(f"error: {want['code']}: "), proc.stderr
        assert want["message"] in line, f"TensorFlow said {want['message']!r}; ember said {line!r}"
        return
    assert proc.returncode == 0, f"ember-run failed on {model}:\n{proc.stderr}"
    for i, (fetch, expected_file) in enumerate(zip(manifest["fetches"], manifest["expected"], strict=True)):
        expected = np.load(GRAPHS / name / expected_file)
        got = np.load(tmp_path / f"{i}.npy")
        where = f"{name}/{fetch} ({encoding})"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} vs TensorFlow's {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} vs TensorFlow's {expected.shape}"
        if np.issubdtype(expected.dtype, np.floating):
            rtol = float(manifest.get("rtol", RTOL))
            atol = float(manifest.get("atol", ATOL))
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=where)
