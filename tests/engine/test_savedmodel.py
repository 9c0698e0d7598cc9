"""ember-run on TF2 SavedModel directories agrees with TensorFlow (outputs saved by
engine/testdata/savedmodels/gen_savedmodels.py from the reloaded SavedModels), and hostile
directories fail with one clear error line and a non-zero exit, never a crash."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "engine" / "testdata" / "savedmodels"
FIXTURES = ["module_two_signatures", "keras_small", "mobilenet_v2", "tiny_bert"]

pytestmark = pytest.mark.integration


def _cases() -> list[tuple[str, str]]:
    cases = []
    for name in FIXTURES:
        manifest = json.loads((DATA / name / "manifest.json").read_text())
        cases += [(name, sig) for sig in sorted(manifest)]
    return cases


def _ember_run(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(prefix / "bin" / "ember-run"), *args], capture_output=True, text=True, timeout=300
    )


def _run_signature(prefix: Path, model: Path, sig: str, entry: dict[str, Any], out: Path):
    args = [str(model), "--signature", sig, "--out", str(out)]
    for key, file in entry["inputs"].items():
        args += ["--feed", f"{key}={DATA / model.name / file}"]
    keys = sorted(entry["outputs"])
    for key in keys:
        args += ["--fetch", key]
    return _ember_run(prefix, *args), keys


def test_fixtures_exist() -> None:
    for name in FIXTURES:
        assert (DATA / name / "saved_model.pb").is_file(), name
        assert (DATA / name / "variables" / "variables.index").is_file(), name


@pytest.mark.parametrize("name,sig", _cases())
def test_matches_tensorflow(ember_install: Path, tmp_path: Path, name: str, sig: str) -> None:
    entry = json.loads((DATA / name / "manifest.json").read_text())[sig]
    proc, keys = _run_signature(ember_install, DATA / name, sig, entry, tmp_path)
    if proc.returncode != 0 and "ember cannot run this model: op '" in proc.stderr:
        # Ops that another change adds (Rsqrt, StridedSlice, Erf, ...): say which, clearly.
        pytest.xfail(f"{name}/{sig} needs ops ember lacks: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    for i, key in enumerate(keys):
        want = np.load(DATA / name / entry["outputs"][key])
        got = np.load(tmp_path / f"{i}.npy")
        assert got.shape == want.shape, (key, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name}/{sig}/{key}")


def _copy(tmp_path: Path, name: str = "module_two_signatures") -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def _expect_error(prefix: Path, model: Path, *needles: str) -> str:
    x = DATA / "module_two_signatures" / "in_serving_default_x.npy"
    proc = _ember_run(prefix, str(model), "--feed", f"x={x}")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_truncated_saved_model_pb(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    pb = model / "saved_model.pb"
    data = pb.read_bytes()
    for cut in (1, 7, len(data) // 3, len(data) - 5):
        pb.write_bytes(data[:cut])
        _expect_error(ember_install, model, "saved_model.pb")


def test_empty_saved_model_pb(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    (model / "saved_model.pb").write_bytes(b"")
    _expect_error(ember_install, model, "saved_model.pb", "empty")


def test_corrupt_variables_index(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    index = model / "variables" / "variables.index"
    data = bytearray(index.read_bytes())
    data[len(data) // 4] ^= 0x5A  # inside a block: its crc32c no longer matches
    index.write_bytes(bytes(data))
    _expect_error(ember_install, model, "variables.index")
    index.write_bytes(bytes(data[:20]))  # shorter than the footer
    _expect_error(ember_install, model, "variables.index")


def test_missing_data_shard(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    (model / "variables" / "variables.data-00000-of-00001").unlink()
    _expect_error(ember_install, model, "variables.data-00000-of-00001")


def test_corrupt_data_shard(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    shard = model / "variables" / "variables.data-00000-of-00001"
    data = bytearray(shard.read_bytes())
    data[5] ^= 0xFF
    shard.write_bytes(bytes(data))
    _expect_error(ember_install, model, "crc32c")


def test_unknown_signature(ember_install: Path) -> None:
    x = DATA / "module_two_signatures" / "in_serving_default_x.npy"
    proc = _ember_run(ember_install, str(DATA / "module_two_signatures"), "--signature", "nope",
                      "--feed", f"x={x}")
    assert proc.returncode == 1
    assert "serving_default" in proc.stderr and "scores" in proc.stderr


def test_empty_graphdef_names_file(ember_install: Path, tmp_path: Path) -> None:
    pb = tmp_path / "empty.pb"
    pb.write_bytes(b"")
    proc = _ember_run(ember_install, str(pb))
    assert proc.returncode == 1
    assert str(pb) in proc.stderr and "empty" in proc.stderr, proc.stderr
