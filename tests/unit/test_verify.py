"""forge.verify: ctest's output read into results, on real output of planted failures.

tests/fixtures/ctest/ holds what ctest printed for a passing test next to one test failing in
each way (see its README); a crash, a timeout or a missing program must never read as a pass,
and neither may output that is cut short, edited, or not ctest's at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

import pytest

from forge.backends.base import Workspace
from forge.build import run_step
from forge.config import load_data
from forge.errors import StepFailedError
from forge.plan import ENGINE_TESTS, Step, StepKind
from forge.verify import CTEST, SuiteResult, SuiteStatus, parse_ctest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "ctest"
EXPECTED = {
    "fail": (SuiteStatus.FAILED, "planted: a check failed"),
    "segfault": (SuiteStatus.CRASHED, "SegFault"),
    "abort": (SuiteStatus.CRASHED, "Subprocess aborted"),
    "sigtrap": (SuiteStatus.CRASHED, "SIGTRAP"),
    "timeout": (SuiteStatus.TIMEOUT, "planted: started"),
    "missing": (SuiteStatus.NOT_RUN, "Unable to find executable: "),
    "dependency": (SuiteStatus.NOT_RUN, "Failed test dependencies: broken_setup"),
}
ALSO_RUN = {"dependency": {"broken_setup"}}  # ctest runs a fixture's setup with the test needing it


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def by_name(results: list[SuiteResult]) -> dict[str, SuiteResult]:
    return {r.name: r for r in results}


def test_fixtures_are_the_planted_runs() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.txt")) == sorted(["passed", "all", *EXPECTED])


def test_all_passed() -> None:
    results = parse_ctest(fixture("passed"), exited_ok=True)
    assert [(r.name, r.status) for r in results] == [("pass", SuiteStatus.PASSED)]


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_failure_kind_names_the_test(kind: str) -> None:
    results = by_name(parse_ctest(fixture(kind), exited_ok=False))
    assert set(results) == {"pass", kind, *ALSO_RUN.get(kind, ())}  # no ERROR: the output is understood and adds up
    status, detail = EXPECTED[kind]
    assert results[kind].status is status and detail in results[kind].detail
    assert results["pass"].passed and not results[kind].passed


def test_every_kind_in_one_run() -> None:
    results = by_name(parse_ctest(fixture("all"), exited_ok=False))
    assert set(results) == {"pass", "broken_setup", *EXPECTED}
    for kind, (status, detail) in EXPECTED.items():
        assert results[kind].status is status and detail in results[kind].detail, results[kind]


def test_the_three_lines_the_old_parser_dropped() -> None:
    text = fixture("all")
    for line in ("***Exception: SegFault", "SIGTRAP***Exception:", "Subprocess aborted***Exception:"):
        assert line in text
    crashed = {r.name: r.detail for r in parse_ctest(text) if r.status is SuiteStatus.CRASHED}
    assert crashed == {"segfault": "SegFault; planted: started", "abort": "Subprocess aborted; planted: started",
                       "sigtrap": "SIGTRAP; planted: started"}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_dropping_any_one_line_never_makes_it_pass(kind: str) -> None:
    lines = fixture(kind).splitlines()
    for i in range(len(lines)):
        results = parse_ctest("\n".join(lines[:i] + lines[i + 1 :]))
        assert not all(r.passed for r in results), f"passes without line {i + 1}: {lines[i]!r}"


def test_output_cut_short_is_an_error_naming_the_unfinished_test() -> None:
    text = fixture("sigtrap")
    cut = text[: text.index("2/2 Test #5")]  # ctest killed while sigtrap ran
    results = by_name(parse_ctest(cut))
    assert results["pass"].passed
    assert results["sigtrap"].status is SuiteStatus.NOT_RUN and "no result" in results["sigtrap"].detail
    assert results[CTEST].status is SuiteStatus.ERROR and "summary" in results[CTEST].detail


def test_a_summary_that_disagrees_with_the_tests_is_an_error() -> None:
    text = fixture("passed").replace("   Passed    0.", "***Failed    0.", 1)
    assert text != fixture("passed")
    results = parse_ctest(text)
    assert by_name(results)["pass"].status is SuiteStatus.FAILED
    errors = [r.detail for r in results if r.name == CTEST]
    assert any("summary says 0 of 1" in e for e in errors), errors


def test_a_passing_summary_with_a_crash_line_is_an_error() -> None:
    text = fixture("segfault").replace(
        "50% tests passed, 1 tests failed out of 2", "100% tests passed, 0 tests failed out of 2"
    )
    assert text != fixture("segfault")
    results = by_name(parse_ctest(text))
    assert results["segfault"].status is SuiteStatus.CRASHED and results[CTEST].status is SuiteStatus.ERROR


def test_an_unknown_line_between_tests_is_an_error_with_its_line_number() -> None:
    lines = fixture("passed").splitlines()
    lines.insert(3, "warning: something ctest never prints")
    results = parse_ctest("\n".join(lines))
    assert [r.name for r in results] == ["pass", CTEST] and results[0].passed
    assert results[1].status is SuiteStatus.ERROR
    assert results[1].detail.startswith("line 4 (after the result of pass): 'warning: something")


def test_a_result_line_without_its_time_does_not_swallow_the_next_one() -> None:
    text = re.sub(r"   Passed +[\d.]+ sec", "   Passed", fixture("sigtrap"), count=1)
    assert text != fixture("sigtrap")
    results = parse_ctest(text)
    assert "sigtrap" in {r.name for r in results if r.status is SuiteStatus.CRASHED}
    assert any("a result of pass with no time" in r.detail for r in results if r.name == CTEST)


def test_an_unknown_status_is_an_error() -> None:
    text = fixture("passed").replace("   Passed    0.", "   Passed-ish    0.", 1)
    assert text != fixture("passed")
    results = by_name(parse_ctest(text))
    assert results["pass"].status is SuiteStatus.ERROR and "Passed-ish" in results["pass"].detail


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not ctest output"),
        ("make: *** No rule to make target\n", "before ctest's 'Test project' header"),
        ("Test project /b\nNo tests were found!!!\n", "ctest found no tests"),
        ("$ ctest --output-on-failure\nTest project /b\n", "ctest found no tests"),
    ],
)
def test_no_results_is_never_a_pass(text: str, why: str) -> None:
    results = parse_ctest(text)
    assert results and not any(r.passed for r in results)
    assert any(why in r.detail for r in results), results


def test_exit_status_must_agree_with_the_output() -> None:
    assert all(r.passed for r in parse_ctest(fixture("passed"), exited_ok=True))
    disagrees = by_name(parse_ctest(fixture("passed"), exited_ok=False))
    assert disagrees[CTEST].detail == "ctest exited with an error, but every test it printed passed"
    assert any(r.detail.startswith("ctest exited 0") for r in parse_ctest(fixture("fail"), exited_ok=True))


def test_log_echo_line_before_the_header_is_accepted() -> None:
    results = parse_ctest("$ ctest --output-on-failure -j 2\n" + fixture("passed"), exited_ok=True)
    assert [r.status for r in results] == [SuiteStatus.PASSED]


def test_results_round_trip_through_the_manifest_and_unknown_statuses_fail() -> None:
    crash = SuiteResult("session", SuiteStatus.CRASHED, 0.5, "SegFault")
    assert SuiteResult.from_dict(crash.as_dict()) == crash
    for record in ({"name": "x", "status": "ok"}, {"name": "x", "status": "failed: old style"}, {"name": "x"}):
        read = SuiteResult.from_dict(record)
        assert read.status is SuiteStatus.ERROR and not read.passed


class ReplayBackend:
    """Stands in for a backend: 'runs' ctest by writing recorded output to the step's log."""

    def __init__(self, output: str, exit_ok: bool) -> None:
        self.output, self.exit_ok = output, exit_ok

    def run(self, argv: Sequence[str], *, cwd: PurePosixPath, env: Mapping[str, str], log_path: Path) -> None:
        log_path.write_text(f"$ {' '.join(argv)}\n{self.output}")
        if not self.exit_ok:
            raise StepFailedError(f"{argv[0]} exited 8", "")


@pytest.mark.parametrize("step_name", ["verify-run", ENGINE_TESTS])
def test_a_crash_in_a_ctest_step_is_recorded_by_name(tmp_path: Path, step_name: str) -> None:
    target = load_data(REPO).toolchains.targets["host"]
    ws = Workspace(*(PurePosixPath(tmp_path / n) for n in ("src", "build", "stage", "verify")))
    step = Step(step_name, StepKind.CTEST, "replayed", ("ctest", "--output-on-failure"), ws.verify_build)
    results = run_step(step, ReplayBackend(fixture("sigtrap"), False), tmp_path, ws, target)  # type: ignore[arg-type]
    prefix = "engine:" if step_name == ENGINE_TESTS else ""
    assert [(r.name, r.status) for r in results] == [
        (f"{prefix}pass", SuiteStatus.PASSED),
        (f"{prefix}sigtrap", SuiteStatus.CRASHED),
    ]


# ctest 3.25's output (real, reformatted by nothing) for a passing test, verify/gpu's test exiting
# 77 with SKIP_RETURN_CODE 77 (no GPU) and another test skipping itself; ctest exited 0.
SKIPS = """Test project /tmp/skipct/b
    Start 1: session_pass
    Start 2: gpu_gpu_kernels_test
1/3 Test #1: session_pass .....................   Passed    0.01 sec
    Start 3: lite_skipself
2/3 Test #2: gpu_gpu_kernels_test .............***Skipped   0.01 sec
3/3 Test #3: lite_skipself ....................***Skipped   0.01 sec

100% tests passed, 0 tests failed out of 3

Label Time Summary:
gpu    =   0.01 sec*proc (1 test)

Total Test time (real) =   0.01 sec

The following tests did not run:
\t  2 - gpu_gpu_kernels_test (Skipped)
\t  3 - lite_skipself (Skipped)
"""


def test_a_gpu_test_skipped_for_want_of_a_gpu_is_not_run_no_gpu() -> None:
    results = by_name(parse_ctest(SKIPS, exited_ok=True))
    assert set(results) == {"session_pass", "gpu_gpu_kernels_test", "lite_skipself"}  # no ERROR: ctest exited 0
    gpu = results["gpu_gpu_kernels_test"]
    assert gpu.status is SuiteStatus.NO_GPU and gpu.summary.startswith("not run: no GPU")
    assert not gpu.passed and not gpu.failed  # never a pass, never a failure
    other = results["lite_skipself"]  # a skip of anything else still checked nothing: not a pass, it fails
    assert other.status is SuiteStatus.SKIPPED and other.failed
    assert results["session_pass"].passed and not results["session_pass"].failed


def test_skips_with_a_failing_exit_status_are_an_error() -> None:
    results = parse_ctest(SKIPS, exited_ok=False)
    assert [r.detail for r in results if r.name == CTEST] == [
        "ctest exited with an error, but every test it printed passed"
    ]


def test_not_run_no_gpu_round_trips_through_the_manifest() -> None:
    result = SuiteResult("gpu_gpu_kernels_test", SuiteStatus.NO_GPU, 0.01, "exit 77: this machine has no GPU")
    assert result.as_dict()["status"] == "not run: no GPU"
    assert SuiteResult.from_dict(result.as_dict()) == result
