"""Real ctest on planted failing tests, read by the step that runs forge's verify suites.

Each failure kind ctest knows (a failing check, a segfault, an abort, SIGTRAP, a timeout, a
missing program) must come back as a result that is not passed and names its test; the
passing test next to it must come back passed.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path, PurePosixPath

import planted_ctest
import pytest

from forge.backends.base import Workspace
from forge.backends.local import LocalBackend
from forge.build import run_step
from forge.config import load_data
from forge.plan import Step, StepKind
from forge.verify import SuiteStatus

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration
WANT = {
    "pass": SuiteStatus.PASSED,
    "fail": SuiteStatus.FAILED,
    "segfault": SuiteStatus.CRASHED,
    "abort": SuiteStatus.CRASHED,
    "sigtrap": SuiteStatus.CRASHED,
    "timeout": SuiteStatus.TIMEOUT,
    "missing": SuiteStatus.NOT_RUN,
    "dependency": SuiteStatus.NOT_RUN,
    "broken_setup": SuiteStatus.FAILED,
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if missing := [t for t in ("cmake", "ctest", "cc") if shutil.which(t) is None]:
        pytest.fail(f"missing {missing}: apt-get install cmake gcc")
    return planted_ctest.build(tmp_path_factory.mktemp("planted"))


@pytest.mark.parametrize("run", sorted(planted_ctest.fixture_runs()))
def test_forge_reads_each_failure_kind(planted: Path, tmp_path: Path, run: str) -> None:
    tests = planted_ctest.fixture_runs()[run]
    pattern = "^(" + "|".join(tests) + ")$"
    step = Step("verify-run", StepKind.CTEST, "planted", ("ctest", "--output-on-failure", "-j", "2", "-R", pattern),
                PurePosixPath(planted))  # fmt: skip
    ws = Workspace(PurePosixPath(REPO), PurePosixPath(tmp_path), PurePosixPath(tmp_path), PurePosixPath(planted))
    target = load_data(REPO).toolchains.targets["host"]
    results = run_step(step, LocalBackend(), tmp_path, ws, target)
    assert {r.name: r.status for r in results} == {name: WANT[name] for name in planted_ctest.results_of(tests)}
    for result in results:
        assert result.passed == (result.name == "pass"), result


def test_the_fixtures_match_what_ctest_prints_here(planted: Path) -> None:
    """The committed outputs have the same lines, timings and paths aside, as this machine's ctest."""
    for run, tests in planted_ctest.fixture_runs().items():
        text, _ = planted_ctest.run_ctest(planted, tests)
        fixture = (REPO / "tests/fixtures/ctest" / f"{run}.txt").read_text()
        assert shape(text) == shape(fixture), run


def shape(text: str) -> list[str]:
    """ctest's lines without times, paths and ordering (-j 2 interleaves them)."""
    lines = (re.sub(r"[\d.]+ sec|/\S+|^\d+/\d+ ", "", line).strip() for line in text.splitlines())
    return sorted(line for line in lines if line)
