"""forge.repro catches each kind of planted nondeterminism in a tiny C++ project and names the file.

tests/fixtures/nondeterministic/ plants, one CMake option each: a wall-clock timestamp in
bin/stamped, the absolute build path in lib/libpathy.a, a hash-ordered file list in
share/nondeterministic/files.txt, and the year of the wall clock in share/nondeterministic/year.txt
(which only the second build's shifted clock, through faketime, can tell apart). With nothing planted every artifact must be identical across
the variations (which also shows the variations alone do not break a clean project).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from forge import repro
from forge.backends.base import varied_command

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "nondeterministic"
TOOLS = REPO / ".cache" / "forge" / "tools"  # diffoscope's venv, shared by every run
pytestmark = pytest.mark.integration

ALL_FILES = {
    "bin/steady",
    "bin/stamped",
    "lib/libpathy.a",
    "share/nondeterministic/files.txt",
    "share/nondeterministic/year.txt",
}
PLANTS = {
    "PLANT_TIMESTAMP": "bin/stamped",
    "PLANT_BUILD_PATH": "lib/libpathy.a",
    "PLANT_UNORDERED": "share/nondeterministic/files.txt",
    "PLANT_YEAR": "share/nondeterministic/year.txt",
}


def _need_tools() -> None:
    missing = [t for t in ("cmake", "ninja", "c++") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"these tests build C++: install {', '.join(missing)} (apt-get install cmake ninja-build g++)")
    if not repro.ensure_faketime(TOOLS / "host-tools.log", print):
        pytest.fail("faketime is missing and could not be installed: apt-get install faketime")


def fixture_builder(options: list[str]) -> Callable[[repro.Variation], Path]:
    """A build function for repro_project: configure, build and install the fixture under v.root."""

    def build(v: repro.Variation) -> Path:
        shutil.rmtree(v.root, ignore_errors=True)
        build_dir, prefix = v.root / "build", v.root / "install"
        steps = [
            ["cmake", "-S", str(FIXTURE), "-B", str(build_dir), "-G", "Ninja", f"-DCMAKE_INSTALL_PREFIX={prefix}"]
            + [f"-D{o}=ON" for o in options],
            ["cmake", "--build", str(build_dir), "-j", str(v.jobs)],
            ["cmake", "--install", str(build_dir)],
        ]
        for argv in steps:  # as a backend runs them: under the variation's umask and clock
            command, env = varied_command(argv, repro.varied_env(os.environ, v))
            proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return prefix

    return build


def run_fixture(tmp_path: Path, options: list[str]) -> repro.ReproResult:
    _need_tools()
    variations = repro.default_variations(tmp_path / "a", tmp_path / "variant-b" / "deeper", 2, False)
    return repro.repro_project(
        "fixture", fixture_builder(options), variations, tmp_path / "report", TOOLS, log=lambda _: None
    )


def test_clean_fixture_is_reproducible(tmp_path: Path) -> None:
    result = run_fixture(tmp_path, [])
    assert {c.path for c in result.comparisons} == ALL_FILES
    assert result.identical == len(ALL_FILES) and not result.differing
    repro.raise_for([result])  # no error
    report = json.loads((tmp_path / "report" / repro.REPORT_JSON).read_text())
    assert report["reproducible"] is True and report["identical"] == len(ALL_FILES)


@pytest.mark.parametrize("option", sorted(PLANTS))
def test_planted_nondeterminism_is_caught_and_named(tmp_path: Path, option: str) -> None:
    result = run_fixture(tmp_path, [option])
    planted = PLANTS[option]
    assert [c.path for c in result.differing] == [planted]
    assert result.identical == len(ALL_FILES) - 1

    with pytest.raises(repro.ReproDifferentError) as caught:
        repro.raise_for([result])
    assert planted in caught.value.why

    text = (tmp_path / "report" / repro.REPORT_TXT).read_text()
    assert f"different  {planted}" in text
    data = json.loads((tmp_path / "report" / repro.REPORT_JSON).read_text())
    assert data["reproducible"] is False
    assert {f["path"]: f["outcome"] for f in data["files"]}[planted] == "different"
    diff = (tmp_path / "report" / repro.DIFFS_DIR / f"{planted}.txt").read_text()
    assert "--- " in diff and "+++ " in diff, diff[:2000]  # diffoscope's text header for the two files
    if option == "PLANT_BUILD_PATH":
        assert str(tmp_path / "a" / "build") in diff and str(tmp_path / "variant-b" / "deeper" / "build") in diff
    if option == "PLANT_UNORDERED":
        assert "kappa.cc" in diff
    if option == "PLANT_YEAR":  # the second build's clock is 397 days ahead
        first, second = (int((tmp_path / v / "install" / planted).read_text()) for v in ("a", "variant-b/deeper"))
        assert second - first in (1, 2), (first, second)
