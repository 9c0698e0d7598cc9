"""A tiny engine/ + verify/ repository for integration tests whose builds must take seconds.

engine/ builds one shared library, ember_framework, and installs it with a CMake package (with
EMBER_BUILD_TESTS, as host cells configure it, also its own test); verify/ finds that package
and runs one smoke test against it. Tests plant what they check
(a timestamp, leaks of the build environment, more cells) through the arguments.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

ENGINE_HEAD = """cmake_minimum_required(VERSION 3.18)
project(ember CXX)
"""
ENGINE_LIBRARY = """add_library(ember_framework SHARED framework.cc)
install(TARGETS ember_framework EXPORT emberTargets LIBRARY DESTINATION lib)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION lib/cmake/ember FILE ember-config.cmake)
"""
ENGINE_TESTS = """if(EMBER_BUILD_TESTS)
  enable_testing()
  add_executable(framework_test framework_test.cc)
  target_link_libraries(framework_test ember_framework)
  add_test(NAME framework_test COMMAND framework_test)
endif()
"""
ENGINE = ENGINE_HEAD + ENGINE_LIBRARY + ENGINE_TESTS  # host cells run ENGINE_TESTS (a planted engine needs them)
FRAMEWORK = "int ember_answer() { return 42; }\n"
VERIFY = """cmake_minimum_required(VERSION 3.18)
project(ember_verify CXX)
find_package(ember REQUIRED)
enable_testing()
add_executable(smoke smoke.cc)
target_link_libraries(smoke ember::ember_framework)
add_test(NAME smoke COMMAND smoke)
"""
SMOKE = "int ember_answer();\nint main() { return ember_answer() == 42 ? 0 : 1; }\n"
FRAMEWORK_TEST = SMOKE
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=GIT_ENV
    ).stdout


def make(repo: Path, engine: str = ENGINE, framework: str = FRAMEWORK, commit: bool = False) -> Path:
    """Write the tiny repository at `repo` (with this checkout's matrix/ and toolchains/)."""
    for data in ("matrix", "toolchains"):
        shutil.copytree(REPO / data, repo / data)
    (repo / "engine").mkdir(parents=True)
    (repo / "engine" / "CMakeLists.txt").write_text(engine)
    (repo / "engine" / "framework.cc").write_text(framework)
    (repo / "engine" / "framework_test.cc").write_text(FRAMEWORK_TEST)
    (repo / "verify").mkdir()
    (repo / "verify" / "CMakeLists.txt").write_text(VERIFY)
    (repo / "verify" / "smoke.cc").write_text(SMOKE)
    if commit:
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "tiny")
    return repo


def readable_dir(prefix: str) -> Path:
    """A fresh directory under this checkout's .cache/ that a container's build users can read
    (pytest's temporary root is 0700 and owned by whoever runs the tests)."""
    (REPO / ".cache").mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=REPO / ".cache"))
    path.chmod(0o755)
    return path


def tree_state(*roots: Path) -> dict[str, tuple[int, int]]:
    """(mtime in ns, size) of every file under roots: equal before and after means nothing was written."""
    state = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                state[str(path)] = (st.st_mtime_ns, st.st_size)
    assert state, f"nothing under {roots}"
    return state
