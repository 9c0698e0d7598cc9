"""engine/tests (ember's own C++ tests of its internals), run through ctest and read by forge.

Every *_test.cc under engine/tests is built by the `ember_build` fixture; each must be a ctest
test here and pass. forge's own ctest reader decides, so a crash cannot read as a pass.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from forge.verify import parse_ctest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def engine_test_names(tests: Path) -> set[str]:
    """ctest names engine/CMakeLists.txt gives its tests: lite/model_test.cc -> lite_model_test."""
    return {p.relative_to(tests).with_suffix("").as_posix().replace("/", "_") for p in tests.rglob("*_test.cc")}


def test_every_engine_test_is_run_and_passes(ember_build: Path) -> None:
    proc = subprocess.run(
        ["ctest", "--output-on-failure", "-j", "2"],
        cwd=ember_build,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    results = parse_ctest(proc.stdout, exited_ok=proc.returncode == 0)
    assert sorted(r.describe() for r in results if not r.passed) == []
    expected = engine_test_names(REPO / "engine" / "tests")
    assert len(expected) >= 11 and {r.name for r in results} == expected
