"""ember's wheel for Python 3.9: the bullseye cell (gcc 10, GNU ld 2.35) with the cp39 pins of
toolchains/wheel.yaml (nanobind 2.9.2, pip 26.0.1 for --config-settings, auditwheel 6.4.2, pytest
8.4.2, LiteRT 2.1.0 as the live oracle), built, repaired, verified and NumPy-grid-tested.

It guards what only this cell exercises: the bindings under nanobind 2, and the extension linked
without `-Wl,-s` and stripped afterwards where GNU ld is older than 2.40 (ld 2.35 stripping while
linking mis-links the target_clones kernels: lite's float ADD returned zeros; verify/python's lite
checks catch it).

Cost (measured on the shared 2-core build machine, toolchain image and compiler cache present):
1m40s to 2m30s at load 3-5. Over what the default run allows beside the 3.11 wheel test, so it is
a release-job test; the first run also downloads the cp39 wheelhouse (~15 s).
"""

from __future__ import annotations

import zipfile

import pytest
from wheel_cell import WheelCell, build_wheel_cell

from forge import manifest
from forge.verify import SuiteStatus

pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.release_job(cost="Python 3.9 wheel cell, 2-2.5 min warm"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> WheelCell:
    return build_wheel_cell(tmp_path_factory, "linux-x86_64", "3.9")


def test_cp39_wheel_claims_the_numpy_it_supports(built: WheelCell) -> None:
    dist, data, _ = built
    entry = data["wheel"]
    assert entry["status"] == "built"
    assert entry["file"].startswith("ember-0.1.0-cp39-cp39-manylinux_"), entry["file"]
    wheel = dist / "wheel" / entry["file"]
    assert manifest.sha256_file(wheel) == entry["sha256"]
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("ember-0.1.0.dist-info/METADATA").decode()
        names = archive.namelist()
    assert "Requires-Dist: numpy<3,>=1.22" in metadata  # built against NumPy 2.0's headers
    assert any(n.startswith("ember/_ember.cpython-39-x86_64-linux-gnu") for n in names), names
    assert any(n.endswith(".pyi") for n in names)


def test_verify_python_ran_with_the_cp39_oracle(built: WheelCell) -> None:
    _, data, result = built
    verify = data["wheel"]["verify"]
    assert verify["status"] == "passed" and verify["counts"]["passed"] >= 90 and verify["counts"]["failed"] == 0
    assert verify["oracle"] == "ai-edge-litert==2.1.0", verify.get("oracle")
    assert not [r for r in verify["skipped_because"] if "LiteRT" in r], verify["skipped_because"]
    assert {s.name: s for s in result.suites}["python-wheel"].status is SuiteStatus.PASSED


def test_numpy_grid_of_python_39(built: WheelCell) -> None:
    _, data, result = built
    rows = {r["series"]: r["verdict"] for r in data["wheel"]["grid"]["rows"]}
    assert rows["1.21"] == "excluded, fails as claimed"  # below the claimed 1.22: measured to fail
    works = [s for s, verdict in rows.items() if verdict == "works as claimed"]
    assert works == ["1.22", "1.23", "1.24", "1.25", "1.26", "2.0"], rows
    assert {s.name: s for s in result.suites}["numpy-grid"].status is SuiteStatus.PASSED
