"""A tiny CMake project whose tests fail in every way ctest reports, and its real ctest output.

Each planted test is one C program that passes, fails, segfaults, aborts, raises SIGTRAP or
hangs past its TIMEOUT; one more test names a program that does not exist, and one needs
a fixture whose setup fails. The integration
test runs them through the real ctest; `python tests/integration/planted_ctest.py OUTDIR`
writes the output of each kind to OUTDIR/<kind>.txt (how tests/fixtures/ctest/ was made).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KINDS = ("pass", "fail", "segfault", "abort", "sigtrap", "timeout")
MISSING = "missing"
DEPENDENCY, SETUP = "dependency", "broken_setup"

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.18)
project(planted LANGUAGES C)
enable_testing()
foreach(kind {kinds})
  add_executable(${{kind}} main.c)
  target_compile_definitions(${{kind}} PRIVATE PLANTED_${{kind}})
  add_test(NAME ${{kind}} COMMAND ${{kind}})
  set_tests_properties(${{kind}} PROPERTIES LABELS planted)  # as verify/'s suites: a label summary
endforeach()
set_tests_properties(timeout PROPERTIES TIMEOUT 1)
add_test(NAME {missing} COMMAND ${{CMAKE_CURRENT_BINARY_DIR}}/no-such-program)
# A test whose fixture's setup fails: ctest does not run it (and runs the setup even when only
# the dependent test is asked for).
add_test(NAME {setup} COMMAND fail)
set_tests_properties({setup} PROPERTIES FIXTURES_SETUP planted_fixture)
add_test(NAME {dependency} COMMAND pass)
set_tests_properties({dependency} PROPERTIES FIXTURES_REQUIRED planted_fixture)
"""

MAIN_C = """\
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
  fprintf(stderr, "planted: started\\n");
#if defined(PLANTED_fail)
  fprintf(stderr, "planted: a check failed\\n");
  return 1;
#elif defined(PLANTED_segfault)
  raise(SIGSEGV);
#elif defined(PLANTED_abort)
  abort();
#elif defined(PLANTED_sigtrap)
  raise(SIGTRAP);
#elif defined(PLANTED_timeout)
  for (;;) pause();
#endif
  return 0;
}
"""


def build(root: Path) -> Path:
    """Configure and build the planted project under root; returns its build directory."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "CMakeLists.txt").write_text(
        CMAKELISTS.format(kinds=" ".join(KINDS), missing=MISSING, setup=SETUP, dependency=DEPENDENCY)
    )
    (root / "src" / "main.c").write_text(MAIN_C)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", root / "src", "-B", root / "build", *generator], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", root / "build", "-j", "2"], check=True, capture_output=True)
    return root / "build"


def run_ctest(build_dir: Path, names: tuple[str, ...]) -> tuple[str, int]:
    """(output, exit status) of forge's ctest command run on the named planted tests."""
    pattern = "^(" + "|".join(names) + ")$"
    proc = subprocess.run(
        ["ctest", "--output-on-failure", "-j", "2", "-R", pattern],
        cwd=build_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, as in forge's step logs
        text=True,
        check=False,
    )
    return proc.stdout, proc.returncode


def fixture_runs() -> dict[str, tuple[str, ...]]:
    """Fixture name -> the planted tests it runs: each failure kind next to a passing test, and all."""
    runs = {"passed": ("pass",)}
    runs.update({kind: ("pass", kind) for kind in (*KINDS[1:], MISSING, DEPENDENCY)})
    runs["all"] = (*KINDS, MISSING, DEPENDENCY)
    return runs


def results_of(tests: tuple[str, ...]) -> tuple[str, ...]:
    """The tests ctest runs when asked for `tests`: a fixture's setup comes with its dependent."""
    return (*tests, SETUP) if DEPENDENCY in tests else tests


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="planted-ctest-") as tmp:
        build_dir = build(Path(tmp))
        for name, tests in fixture_runs().items():
            text, code = run_ctest(build_dir, tests)
            (out / f"{name}.txt").write_text(text)
            print(f"{name}.txt: ctest exited {code}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
