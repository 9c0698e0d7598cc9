"""ember's wheel built, repaired, verified and NumPy-grid-tested inside one docker cell.

Cost (measured on the 2-core build machine, toolchain image and compiler cache present): about
4 minutes: the engine build is mostly cache hits, the wheel ~1.5 min, verify/python ~20 s, the
NumPy grid (9 fresh venvs for Python 3.11) ~1.5 min; the first run also downloads the ~150 MB
wheelhouse (once, sha256-locked). It is the one wheel cell: linux-x86_64, Python 3.11, the newest
NumPy.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from wheel_cell import WheelCell, build_wheel_cell

from forge import manifest
from forge.verify import SuiteStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> WheelCell:
    return build_wheel_cell(tmp_path_factory, "linux-x86_64", "3.11")


def test_wheel_is_an_artifact_with_its_sha256_and_manylinux_tag(built: WheelCell) -> None:
    dist, data, _ = built
    entry = data["wheel"]
    assert entry["status"] == "built"
    wheel = dist / "wheel" / entry["file"]
    assert manifest.sha256_file(wheel) == entry["sha256"]
    assert entry["manylinux"] and all(t.startswith("manylinux_2_") for t in entry["manylinux"])
    assert entry["file"].startswith("ember-0.1.0-cp311-cp311-manylinux_")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("ember-0.1.0.dist-info/METADATA").decode()
    # Built against NumPy 2 headers with NPY_TARGET_VERSION 1.22: 1.22 up to, not including, 3.
    assert "Requires-Dist: numpy<3,>=1.22" in metadata
    assert entry["numpy_requires"] == "numpy<3,>=1.22"


def test_verify_python_passed_against_the_installed_wheel(built: WheelCell) -> None:
    _, data, result = built
    verify = data["wheel"]["verify"]
    assert verify["status"] == "passed" and verify["counts"]["passed"] >= 90 and verify["counts"]["failed"] == 0
    assert verify["numpy"].startswith("2.4.")
    # LiteRT, the live oracle, was installed beside the wheel: its checks ran instead of being skipped
    assert verify["oracle"] == "ai-edge-litert==2.3.0", verify.get("oracle")
    assert not [r for r in verify["skipped_because"] if "LiteRT" in r], verify["skipped_because"]
    suites = {s.name: s for s in result.suites}
    assert suites["python-wheel"].status is SuiteStatus.PASSED


def test_numpy_grid_measures_every_series_of_the_cells_python(built: WheelCell) -> None:
    _, data, result = built
    rows = data["wheel"]["grid"]["rows"]
    assert [r["series"] for r in rows] == ["1.23", "1.24", "1.25", "1.26", "2.0", "2.1", "2.2", "2.3", "2.4"]
    assert [r["verdict"] for r in rows] == ["works as claimed"] * len(rows), rows
    assert [r["series"] for r in rows if r["built_with"]] == ["2.4"]
    assert {s.name: s for s in result.suites}["numpy-grid"].status is SuiteStatus.PASSED
