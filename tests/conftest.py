"""Shared pytest fixtures.

`ember_build` builds ember once per test session (CMake + Ninja, Release, with its own
engine/tests, which tests/engine/test_engine_tests.py runs through ctest); `ember_install`
installs it into a prefix under .cache/, so engine and lite agreement tests can run the real
tools (ember-run, ember-convert, ...) without going through forge.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INSTALL = REPO / ".cache" / "test-install"

# Every Linux cell publishes separate .debug files by default, which compiles the engine a second
# time with -g. The cells the tests build leave that out unless a test asks for it
# (test_docker_build's host cell and test_upgrade_gcc do): it would double every build's cost in CI.
os.environ.setdefault("FORGE_DEBUG_INFO", "0")


def pytest_configure(config: pytest.Config) -> None:
    """Take Ctrl-C back when the tests were started with SIGINT ignored.

    A shell without job control starts its background jobs (`cmd &` in a script, `nohup`) with
    SIGINT ignored, and every child inherits that: the tests that deliver a Ctrl-C to forge (in
    this process or in an `invoke build` child) would then fail, "DID NOT RAISE
    KeyboardInterrupt", for a reason of the launcher's. They test forge's handling of Ctrl-C,
    so they get Python's own handler; a child started from here then starts with SIGINT at its
    default (exec resets handled signals, only ignored ones stay ignored).
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(argv: list[str], cwd: Path) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-4000:]
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(argv)}\n{tail}")


@pytest.fixture(scope="session")
def ember_build() -> Path:
    """Build directory of a Release build of engine/ with EMBER_BUILD_TESTS=ON (tests not run here)."""
    build = REPO / ".cache" / "test-build"
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"ember tests need {', '.join(missing)}: apt-get install cmake ninja-build")
    configure = [
        "cmake",
        "-S",
        str(REPO / "engine"),
        "-B",
        str(build),
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DEMBER_BUILD_TESTS=ON",
        f"-DCMAKE_INSTALL_PREFIX={INSTALL}",
    ]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    _run(configure, REPO)
    _run(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)], REPO)
    return build


@pytest.fixture(scope="session")
def ember_install(ember_build: Path) -> Path:
    """Install prefix of that build (bin/, lib/, include/)."""
    _run(["cmake", "--install", str(ember_build)], REPO)
    return INSTALL


RELEASE_JOB_SKIP = (
    "release job only: a long test ({cost}) that `invoke test --release` runs with FORGE_RELEASE_TESTS=1; "
    ".ci/run keeps under its time budget"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark everything under tests/integration as `integration` (select with -m, skip with -m 'not ...'),
    and skip the `release_job` tests, with the reason, unless the release job runs them."""
    integration = REPO / "tests" / "integration"
    release_job = os.environ.get("FORGE_RELEASE_TESTS") == "1"
    for item in items:
        if integration in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
        marker = item.get_closest_marker("release_job")
        if marker is not None and not release_job:
            cost = marker.kwargs.get("cost", "over 5 minutes warm")
            item.add_marker(pytest.mark.skip(reason=RELEASE_JOB_SKIP.format(cost=cost)))
