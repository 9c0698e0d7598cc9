"""Verification results, and the reading of ctest's output into them.

A result is passed only when the runner said so for that test. Everything else ctest can say
(a failure, a crash, a timeout, a missing program, a skip) is its own status, and output the
reader does not understand, or a summary that contradicts the per-test lines, is an ERROR result:
a line dropped by a parser must never turn a crash into a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


class SuiteStatus(Enum):
    PASSED = "passed"
    FAILED = "failed"  # the test ran and said it failed (or a check found a problem)
    CRASHED = "crashed"  # ended by a signal: segfault, abort, SIGTRAP, ...
    TIMEOUT = "timeout"
    NOT_RUN = "not run"  # its program is missing, it is disabled, or it started and never ended
    SKIPPED = "skipped"  # the test skipped itself; nothing was checked, so not a pass
    NO_GPU = "not run: no GPU"  # a GPU check on a machine without a GPU: neither a pass nor a failure
    ERROR = "error"  # the runner's output was not understood or contradicts itself


@dataclass(frozen=True)
class SuiteResult:
    name: str
    status: SuiteStatus
    seconds: float = 0.0
    detail: str = ""  # why it is not passed: the crash, the failing check, the unread line

    @property
    def passed(self) -> bool:
        return self.status is SuiteStatus.PASSED

    @property
    def failed(self) -> bool:
        """Whether the result fails its cell: anything but a pass, except a GPU check that could not
        run for want of a GPU (the build machines and CI have none; it is reported as such)."""
        return self.status not in (SuiteStatus.PASSED, SuiteStatus.NO_GPU)

    @property
    def summary(self) -> str:
        """'passed', or the status with its detail: 'crashed: SegFault'."""
        return self.status.value + (f": {self.detail}" if self.detail else "")

    def describe(self) -> str:
        """'name (crashed: SegFault)' for reports and error messages."""
        return f"{self.name} ({self.summary})"

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "status": self.status.value, "seconds": self.seconds, "detail": self.detail}

    @classmethod
    def from_dict(cls, record: Mapping[str, object]) -> SuiteResult:
        """A result read back from a manifest; a status forge does not know is an ERROR, never a pass."""
        name, raw, seconds = record.get("name"), record.get("status"), record.get("seconds", 0.0)
        detail = record.get("detail", "")
        known = {s.value: s for s in SuiteStatus}
        if not isinstance(name, str) or not isinstance(raw, str) or raw not in known:
            return cls(str(name), SuiteStatus.ERROR, 0.0, f"recorded status {raw!r} is not one forge knows")
        secs = float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else 0.0
        return cls(name, known[raw], secs, detail if isinstance(detail, str) else "")


def check_result(name: str, problems: list[str], what: str = "") -> SuiteResult:
    """PASSED when `problems` is empty, else FAILED listing the first few of them."""
    if not problems:
        return SuiteResult(name, SuiteStatus.PASSED)
    shown = "; ".join(problems[:3]) + (f"; ... ({len(problems) - 3} more)" if len(problems) > 3 else "")
    return SuiteResult(name, SuiteStatus.FAILED, 0.0, f"{what}{shown}")


# ---- ctest's output ------------------------------------------------------------------------------

GPU_TEST_PREFIX = "gpu_"
"""verify/gpu's tests (verify/CMakeLists.txt names a suite's tests <suite>_<name>). They exit 77,
which ctest reports as skipped (SKIP_RETURN_CODE), exactly when no GPU is present."""

CTEST = "ctest"  # the name of results about ctest's output as a whole
_HEADER = re.compile(r"^Test project (?P<dir>.+)$")
_START = re.compile(r"^\s+Start\s+(?P<number>\d+): (?P<name>.+)$")
# "1/7 Test #1: pass ......   Passed    0.01 sec"; the status may run onto more lines (a regex in it).
_RESULT = re.compile(r"^\s*(?P<index>\d+)/(?P<total>\d+) Test\s+#(?P<number>\d+): (?P<name>.+?) \.+(?P<rest>.*)$")
_SECONDS = re.compile(r"^(?P<status>.*?)\s+(?P<secs>-?\d+\.\d+) sec$", re.DOTALL)
_SUMMARY = re.compile(r"^(?P<percent>\d+)% tests passed, (?P<failed>\d+) tests? failed out of (?P<total>\d+)$")
_LISTED = re.compile(r"^\t\s*(?P<number>\d+) - (?P<name>.+) \((?P<why>[^()]*)\)$")
_MISSING_END = re.compile(r"^Unable to find executable: (?P<path>.+)$")
# Why ctest did not run a test, printed before its "***Not Run" result.
_NOT_RUN_WHY = re.compile(r"^(Unable to find executable|Failed test dependencies): .+$")
_IGNORED = (
    re.compile(r"^Total Test time \(real\) =\s+\S+ sec$"),
    re.compile(r"^Label Time Summary:$"),  # with LABELS (verify/'s suites have them), one line per label:
    re.compile(r"^\S+\s+=\s+[\d.]+ sec\*proc \(\d+ tests?\)$"),
    re.compile(r"^Errors while running CTest$"),
    re.compile(r"^Output from these tests are in: .+$"),
    re.compile(r'^Use "--rerun-failed --output-on-failure" to re-run the failed cases verbosely\.$'),
)
_STATUS_PREFIXES = (
    ("***Timeout", SuiteStatus.TIMEOUT),
    ("***Skipped", SuiteStatus.SKIPPED),
    ("***Not Run", SuiteStatus.NOT_RUN),
    ("***Failed", SuiteStatus.FAILED),
)
_CONTINUATION_LINES = 20  # how far a result's status may run on before the line counts as unread
_OUTPUT_LINES_KEPT = 3


def ctest_status(text: str) -> tuple[SuiteStatus, str]:
    """(status, detail) of the status field of a ctest result line."""
    text = text.strip()
    if text == "Passed":
        return SuiteStatus.PASSED, ""
    if "***Exception:" in text:  # "***Exception: SegFault", "Subprocess aborted***Exception:", "SIGTRAP***Exception:"
        before, _, after = text.partition("***Exception:")
        return SuiteStatus.CRASHED, " ".join(p for p in (before.strip(), after.strip()) if p) or "exception"
    for prefix, status in _STATUS_PREFIXES:
        if text.startswith(prefix):
            return status, text[len(prefix) :].strip(" ()")
    return SuiteStatus.ERROR, f"ctest status {text!r} is not one forge knows"


@dataclass
class _Test:
    number: int
    name: str
    status: SuiteStatus
    seconds: float
    detail: str
    output: list[str] = field(default_factory=list)

    def result(self) -> SuiteResult:
        if self.status is SuiteStatus.SKIPPED and self.name.startswith(GPU_TEST_PREFIX):
            return SuiteResult(self.name, SuiteStatus.NO_GPU, self.seconds, "exit 77: this machine has no GPU")
        lines = [line.strip() for line in self.output if line.strip()][-_OUTPUT_LINES_KEPT:]
        detail = "; ".join(p for p in (self.detail, " | ".join(lines)) if p)
        return SuiteResult(self.name, self.status, self.seconds, " ".join(detail.split())[:400])


@dataclass
class _CtestReader:
    """One pass over ctest's output; `problems` collects what does not fit ctest's format."""

    header: bool = False
    started: dict[int, str] = field(default_factory=dict)
    tests: dict[int, _Test] = field(default_factory=dict)
    totals: set[int] = field(default_factory=set)
    summary: tuple[int, int] | None = None  # (failed, total)
    listed: dict[str, set[str]] = field(default_factory=lambda: {"failed": set(), "did not run": set()})
    problems: list[str] = field(default_factory=list)
    no_tests: bool = False

    def read(self, lines: list[str]) -> None:
        current: _Test | None = None  # a test whose output (--output-on-failure) may follow
        listing: str | None = None
        missing: list[str] = []  # why tests were not run, not yet given to a "***Not Run" result
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not self.header:
                if _HEADER.match(line):
                    self.header = True
                elif line.strip() and not line.startswith("$ "):  # the log's echo of the command
                    self.problems.append(f"line {i}: {line.strip()[:120]!r} before ctest's 'Test project' header")
                continue
            if match := _START.match(line):
                self.started[int(match["number"])] = match["name"]
                current = listing = None
            elif match := _RESULT.match(line):
                end = self._result_end(lines, i - 1)
                if end is None:
                    self.problems.append(f"line {i}: a result of {match['name']} with no time")
                    continue
                text = "\n".join([match["rest"], *lines[i:end]])
                i = end
                current = self._add(match, text, missing)
                listing = None
            elif line.startswith("Could not find executable "):
                i = self._skip_lookup(lines, i)
            elif _NOT_RUN_WHY.match(line):
                missing.append(line.strip())
            elif match := _SUMMARY.match(line.strip()):
                self.summary = (int(match["failed"]), int(match["total"]))
                current = listing = None
            elif line.strip() == "No tests were found!!!":
                self.no_tests = True
            elif line.startswith("The following tests FAILED:"):
                listing = "failed"
            elif line.startswith("The following tests did not run:"):
                listing = "did not run"
            elif listing is not None and (match := _LISTED.match(line)):
                self.listed[listing].add(match["name"])
            elif not line.strip() or any(p.match(line) for p in _IGNORED):
                listing = None if line.strip() else listing
            elif current is not None and current.status is not SuiteStatus.PASSED:
                current.output.append(line)  # the failing test's own output
            else:
                after = f" (after the result of {current.name})" if current else ""
                self.problems.append(f"line {i}{after}: {line.strip()[:120]!r} is not ctest output forge knows")

    def _skip_lookup(self, lines: list[str], at: int) -> int:
        """Index of the line ending ctest's list of places it looked for a missing program."""
        if at < len(lines) and lines[at] == "Looked in the following places:":
            at += 1
        structural = (_START, _RESULT, _MISSING_END)
        while at < len(lines) and lines[at].strip() and not any(p.match(lines[at]) for p in structural):
            at += 1
        return at

    def _result_end(self, lines: list[str], at: int) -> int | None:
        """Index after the last line of the result starting at `at` (its status may span lines)."""
        for end in range(at, min(len(lines), at + _CONTINUATION_LINES)):
            if end > at and any(p.match(lines[end]) for p in (_START, _RESULT, _SUMMARY)):
                return None  # the next test began: this result has no time
            if _SECONDS.match(lines[end]):
                return end + 1
        return None

    def _add(self, match: re.Match[str], text: str, missing: list[str]) -> _Test:
        seconds = _SECONDS.match(text)
        assert seconds is not None  # _result_end found the time
        status, detail = ctest_status(seconds["status"])
        if status is SuiteStatus.NOT_RUN and detail != "Disabled" and missing:
            detail = missing.pop(0)
        number = int(match["number"])
        test = _Test(number, match["name"], status, float(seconds["secs"]), detail)
        if number in self.tests:
            self.problems.append(f"test #{number} ({test.name}) has two results")
        self.tests[number] = test
        self.totals.add(int(match["total"]))
        return test

    def results(self) -> list[SuiteResult]:
        out = [self.tests[n].result() for n in sorted(self.tests)]
        for number, name in sorted(self.started.items()):
            if number not in self.tests:
                out.append(SuiteResult(name, SuiteStatus.NOT_RUN, 0.0, "started, but ctest printed no result"))
        problems = list(self.problems)
        if not self.header:
            problems.append("no 'Test project' header: this is not ctest output")
        elif self.no_tests or not self.tests:
            problems.append("ctest found no tests")
        else:
            problems += self._contradictions()
        out += [SuiteResult(CTEST, SuiteStatus.ERROR, 0.0, p) for p in problems]
        return out

    def _contradictions(self) -> list[str]:
        """Where ctest's summary and lists disagree with its per-test lines."""
        problems = []
        disabled = {t.name for t in self.tests.values() if t.detail == "Disabled"}
        counted = [t for t in self.tests.values() if t.name not in disabled]
        bad = {t.name for t in counted if t.status not in (SuiteStatus.PASSED, SuiteStatus.SKIPPED)}
        skipped = {t.name for t in counted if t.status is SuiteStatus.SKIPPED}
        if self.totals != {len(self.tests)}:
            problems.append(f"{len(self.tests)} test results, but ctest numbered them out of {sorted(self.totals)}")
        if self.summary is None:
            problems.append("no 'tests passed, N tests failed out of M' summary (was ctest interrupted?)")
        elif self.summary != (len(bad), len(counted)):
            problems.append(
                f"the summary says {self.summary[0]} of {self.summary[1]} tests failed, "
                f"the per-test lines {len(bad)} of {len(counted)}"
            )
        if self.listed["failed"] != bad:
            problems.append(f"ctest listed {sorted(self.listed['failed'])} as failed, the per-test lines {sorted(bad)}")
        if self.listed["did not run"] != skipped | disabled:
            problems.append(
                f"ctest listed {sorted(self.listed['did not run'])} as not run, "
                f"the per-test lines {sorted(skipped | disabled)}"
            )
        return problems


def parse_ctest(text: str, exited_ok: bool | None = None) -> list[SuiteResult]:
    """One result per test in `ctest` output, plus an ERROR result per thing that does not add up.

    `exited_ok` is whether ctest exited 0 (None when unknown): an exit status that disagrees
    with the per-test lines is an ERROR too.
    """
    reader = _CtestReader()
    reader.read(text.splitlines())
    results = reader.results()
    # ctest itself exits 0 when every test passed or skipped itself (a skip is still not a pass)
    all_passed = all(r.status in (SuiteStatus.PASSED, SuiteStatus.SKIPPED, SuiteStatus.NO_GPU) for r in results)
    if exited_ok is not None and exited_ok != all_passed:
        said = "exited 0" if exited_ok else "exited with an error"
        seen = "not every test passed" if exited_ok else "every test it printed passed"
        results.append(SuiteResult(CTEST, SuiteStatus.ERROR, 0.0, f"ctest {said}, but {seen}"))
    return results
