"""ember's aarch64 wheel: cross-built in the linux-aarch64 docker cell against the target's Python
(Debian multiarch libpython3.11-dev:arm64) and NumPy headers (the aarch64 NumPy wheel of the
cell's locked target wheelhouse), repaired by auditwheel for manylinux aarch64, then installed
and tested by the target's Python under qemu-aarch64: verify/python and the NumPy grid.

Cost (measured on the shared 2-core build machine, load average about 4, toolchain image and
compiler cache present): 4 to 5 minutes (3m58s and 4m56s), half of it the native reference cell
(built first, with its own wheel and grid), then the aarch64 wheel ~30 s, verify/python under
qemu ~20 s and the NumPy grid under qemu ~70 s. Over the ~3 minutes the default run allows, so it
is a release-job test. The first run also downloads both wheelhouses and builds the multiarch image.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from wheel_cell import WheelCell, build_wheel_cell

from forge import manifest
from forge.checks import elf
from forge.verify import SuiteStatus

pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.release_job(cost="aarch64 wheel under qemu, 4-5 min warm"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> WheelCell:
    return build_wheel_cell(tmp_path_factory, "linux-aarch64", "3.11")


def test_the_wheel_is_tagged_and_built_for_aarch64(built: WheelCell) -> None:
    dist, data, _ = built
    entry = data["wheel"]
    assert entry["status"] == "built"
    wheel = dist / "wheel" / entry["file"]
    assert manifest.sha256_file(wheel) == entry["sha256"]
    assert entry["file"].startswith("ember-0.1.0-cp311-cp311-manylinux_")
    assert entry["manylinux"] and all(
        t.startswith("manylinux_2_") and t.endswith("_aarch64") for t in entry["manylinux"]
    )
    assert "Requires-Dist: numpy<3,>=1.22" in zipfile.ZipFile(wheel).read("ember-0.1.0.dist-info/METADATA").decode()
    with zipfile.ZipFile(wheel) as archive:
        [extension] = [n for n in archive.namelist() if n.startswith("ember/_ember.") and n.endswith(".so")]
        assert extension == "ember/_ember.cpython-311-aarch64-linux-gnu.so"
        binary = elf.parse_elf(archive.read(extension), Path(extension))
    assert binary.machine == "aarch64" and binary.filetype == "shared"


def test_verify_python_passed_under_qemu_with_the_targets_python(built: WheelCell) -> None:
    _, data, result = built
    verify = data["wheel"]["verify"]
    assert verify["status"] == "passed" and verify["counts"]["passed"] >= 90 and verify["counts"]["failed"] == 0
    assert verify["numpy"].startswith("2.4.")
    assert {s.name: s for s in result.suites}["python-wheel"].status is SuiteStatus.PASSED


def test_numpy_grid_under_qemu(built: WheelCell) -> None:
    _, data, result = built
    rows = data["wheel"]["grid"]["rows"]
    assert [r["series"] for r in rows] == ["1.23", "1.24", "1.25", "1.26", "2.0", "2.1", "2.2", "2.3", "2.4"]
    assert [r["verdict"] for r in rows] == ["works as claimed"] * len(rows), rows
    assert {s.name: s for s in result.suites}["numpy-grid"].status is SuiteStatus.PASSED
