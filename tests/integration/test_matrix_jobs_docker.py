"""`invoke build --matrix ... --jobs 2` against a real engine, on a tiny engine/ + verify/ repository.

Two linux-x86_64 cells (python 3.11 on bookworm, 3.13 on trixie) build in two containers at the
same time; the second run with --resume finds both up to date; each manifest holds only its own
steps; `invoke report` lists both; no container of the run is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge import daemon

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
CELLS = ("linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.13-np2.4-gcc14-cpu")
STEPS = ["prepare", "configure", "build", "install", "verify-configure", "verify-build", "verify-run", "record"]

ENGINE = """cmake_minimum_required(VERSION 3.18)
project(ember CXX)
add_library(ember_framework SHARED framework.cc)
install(TARGETS ember_framework EXPORT emberTargets LIBRARY DESTINATION lib)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION lib/cmake/ember FILE ember-config.cmake)
"""
VERIFY = """cmake_minimum_required(VERSION 3.18)
project(ember_verify CXX)
find_package(ember REQUIRED)
enable_testing()
add_executable(smoke smoke.cc)
target_link_libraries(smoke ember::ember_framework)
add_test(NAME smoke COMMAND smoke)
"""


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)


@pytest.fixture(scope="module")
def tiny_repo() -> Iterator[Path]:
    daemon.ensure_daemon(os.environ)  # fails loudly, saying how to start one, when no engine can be had
    # Not under pytest's 0700 temp root: the container's non-root user must be able to read it.
    (REPO / ".cache").mkdir(exist_ok=True)
    repo = Path(tempfile.mkdtemp(prefix="matrix-jobs-", dir=REPO / ".cache"))
    repo.chmod(0o755)
    for data in ("matrix", "toolchains"):
        shutil.copytree(REPO / data, repo / data)
    (repo / "engine").mkdir()
    (repo / "engine" / "CMakeLists.txt").write_text(ENGINE)
    (repo / "engine" / "framework.cc").write_text("int ember_answer() { return 42; }\n")
    (repo / "verify").mkdir()
    (repo / "verify" / "CMakeLists.txt").write_text(VERIFY)
    (repo / "verify" / "smoke.cc").write_text(
        "int ember_answer();\nint main() { return ember_answer() == 42 ? 0 : 1; }\n"
    )
    (repo / "matrix" / "two.yaml").write_text("axes:\n  target: [linux-x86_64]\n  python: ['3.11', '3.13']\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "tiny")
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


def _invoke(repo: Path, *args: str) -> tuple[str, int]:
    env = {**os.environ, "FORGE_ROOT": str(repo), "CI": "1"}
    env.pop("FORGE_JOBS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = proc.communicate(timeout=1800)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text
    return text, proc.pid


def test_two_cells_build_at_once_then_resume(tiny_repo: Path) -> None:
    matrix = str(tiny_repo / "matrix" / "two.yaml")
    text, pid = _invoke(tiny_repo, "build", "--matrix", matrix, "--jobs", "2")
    assert "building 2 cells, 2 at a time" in text
    first, second = sorted(CELLS, key=lambda c: text.index(f"→ {c} prepare"))
    assert text.index(f"→ {second} prepare") < text.index(f"✓ {first} record"), "the cells did not overlap"
    for cell in CELLS:
        data = json.loads((tiny_repo / "dist" / cell / "manifest.json").read_text())
        assert data["result"] == "passed" and data["cell"]["id"] == cell
        assert [s["name"] for s in data["steps"]] == STEPS  # its own steps, each once
    leftover = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=org.forge.session={pid}"], capture_output=True, text=True
    )
    assert leftover.returncode == 0 and leftover.stdout.strip() == ""

    text, _ = _invoke(tiny_repo, "build", "--matrix", matrix, "--jobs", "2", "--resume")
    for cell in CELLS:
        assert f"{cell}: up to date" in text
        assert f"→ {cell} configure" not in text  # prepared (to probe the toolchain), nothing built again

    text, _ = _invoke(tiny_repo, "report")
    for cell in CELLS:
        assert f"| {cell} | passed | pass |" in text
