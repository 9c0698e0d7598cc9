"""The local build pipeline end to end on a tiny CMake project (seconds, real cmake/ninja/c++).

It exercises exactly what `invoke build --backend local` does for ember: configure, build,
install into a staging prefix, build verify/ against it with find_package, run ctest, and
publish dist/<cell-id>/ atomically; plus up-to-date detection, damaged results, verify
failures and Ctrl-C (sent to a child process running `invoke build`, never to pytest itself).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import tinyrepo
from rich.console import Console
from tinyrepo import ENGINE, VERIFY

from forge.build import build_cell, verify_dist
from forge.config import Config, load_data
from forge.errors import StepFailedError, VerifyFailedError
from forge.log import Progress
from forge.manifest import sha256_file
from forge.matrix import Request
from forge.verify import SuiteStatus

REPO = Path(__file__).resolve().parents[2]
PASSED = SuiteStatus.PASSED
pytestmark = pytest.mark.integration


@pytest.fixture
def project(tmp_path: Path) -> Path:
    if missing := [t for t in ("cmake", "ninja", "c++") if shutil.which(t) is None]:
        pytest.fail(f"missing {missing}: apt-get install cmake ninja-build g++")
    return tinyrepo.make(tmp_path / "repo")


def config(repo: Path) -> Config:
    return Config(
        repo,
        repo / "dist",
        repo / ".cache/forge",
        "local",
        2,
        False,
        False,
        1700000000,
        False,
        False,
        False,
        debug_info=False,
    )


def build(repo: Path) -> tuple[str, Path]:
    progress = Progress(Console(file=io.StringIO()))
    result = build_cell(Request.make("host"), load_data(repo), config(repo), progress)
    assert result.dist is not None
    return result.result, result.dist


def test_build_records_dist_and_is_then_up_to_date(project: Path) -> None:
    result, dist = build(project)
    assert result == "passed"
    manifest = json.loads((dist / "manifest.json").read_text())
    assert manifest["cell"]["target"] == "host" and manifest["source_date_epoch"] == 1700000000
    verify = manifest["verify"]
    assert (verify["passed"], verify["failed"]) == (2, 0)
    assert [(v["name"], v["status"]) for v in verify["suites"]] == [
        ("engine:framework_test", "passed"),
        ("smoke", "passed"),
    ]
    assert [s["name"] for s in manifest["steps"]] == [
        "prepare",
        "configure",
        "build",
        "install",
        "engine-tests",
        "verify-configure",
        "verify-build",
        "verify-run",
        "record",
    ]
    assert manifest["toolchain"]["cmake"].startswith("cmake version")
    lib = dist / "install/lib/libember_framework.so"
    assert manifest["files"]["lib/libember_framework.so"]["size"] == lib.stat().st_size
    assert (dist / "logs/build.log").read_text().startswith("$ cmake --build")
    work = project / ".cache/forge" / dist.name
    before = tinyrepo.tree_state(work / "build", work / "stage", work / "verify-build")
    again, _ = build(project)
    assert again == "up to date"
    assert tinyrepo.tree_state(work / "build", work / "stage", work / "verify-build") == before  # no step ran
    (project / "engine/framework.cc").write_text("int ember_answer() { return 40 + 2; }\n")
    assert build(project)[0] == "passed"
    suites = verify_dist(
        Request.make("host"), load_data(project), config(project), Progress(Console(file=io.StringIO()))
    )
    assert [(s.name, s.status) for s in suites] == [("installed-files", PASSED), ("smoke", PASSED)]


def test_damaged_dist_is_rebuilt_and_fails_verify(project: Path) -> None:
    """The issue's corruption: bytes of a library overwritten in place (same size), a file deleted."""
    _, dist = build(project)
    lib = dist / "install/lib/libember_framework.so"
    recorded = json.loads((dist / "manifest.json").read_text())["files"]["lib/libember_framework.so"]["sha256"]
    data = bytearray(lib.read_bytes())
    data[100:164] = b"\xcc" * 64
    lib.write_bytes(bytes(data))
    progress_out = io.StringIO()
    result = build_cell(Request.make("host"), load_data(project), config(project), Progress(Console(file=progress_out)))
    assert result.result == "passed", progress_out.getvalue()
    assert "rebuilding: the installed tree differs from its manifest: lib/libember_framework.so: changed" in " ".join(
        progress_out.getvalue().split()
    )
    assert sha256_file(lib) == recorded
    (dist / "install/lib/cmake/ember/ember-config.cmake").unlink()
    lib.write_bytes(bytes(data))
    with pytest.raises(VerifyFailedError) as info:
        verify_dist(Request.make("host"), load_data(project), config(project), Progress(Console(file=io.StringIO())))
    assert info.value.what.endswith("/install does not match its manifest")
    assert info.value.why.splitlines() == [
        "lib/cmake/ember/ember-config.cmake: missing",
        "lib/libember_framework.so: changed (sha256 differs from the manifest)",
    ]
    assert not (project / ".cache/forge" / dist.name / "verify-dist").exists()  # no suite ran on the damaged tree


def test_failing_suite_is_recorded(project: Path) -> None:
    (project / "verify/CMakeLists.txt").write_text(VERIFY + 'add_test(NAME broken COMMAND sh -c "exit 3")\n')
    result, dist = build(project)
    assert result == "verify-failed"
    suites = {s["name"]: s["status"] for s in json.loads((dist / "manifest.json").read_text())["verify"]["suites"]}
    assert suites == {"engine:framework_test": "passed", "smoke": "passed", "broken": "failed"}


def test_failed_build_keeps_previous_result(project: Path) -> None:
    _, dist = build(project)
    before = (dist / "manifest.json").read_text()
    (project / "engine/framework.cc").write_text("this is not C++\n")
    with pytest.raises(StepFailedError) as info:
        build(project)
    assert "framework.cc" in info.value.why and "error:" in info.value.why, info.value.why
    assert (dist / "manifest.json").read_text() == before
    # nothing half-written: the previous result, and the failure's own record under dist/failed/
    assert sorted(p.name for p in dist.parent.iterdir()) == ["failed", dist.name]
    failure = json.loads((dist.parent / "failed" / dist.name / "manifest.json").read_text())
    assert failure["result"] == "failed" and failure["error"]["what"] == info.value.what
    assert (dist.parent / "failed" / dist.name / "logs" / "build.log").is_file()
    (project / "engine/framework.cc").write_text(tinyrepo.FRAMEWORK)
    assert build(project)[0] == "up to date"  # the sources of the kept result again
    assert not (dist.parent / "failed" / dist.name).exists()  # a good build clears the failure's record


def _plant_slow_child(project: Path) -> Path:
    """Make the engine build start a minute-long child that writes its pid; returns the pid file."""
    pidfile = project / "child.pid"
    (project / "engine/slow.sh").write_text(f"echo $$ > {pidfile}\nexec sleep 60\n")
    (project / "engine/CMakeLists.txt").write_text(
        ENGINE + "add_custom_target(slow ALL COMMAND sh ${CMAKE_SOURCE_DIR}/slow.sh)\n"
    )
    return pidfile


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_exits_130_on_interrupt(project: Path, sig: signal.Signals) -> None:
    """The whole `invoke build` path: Ctrl-C (or a CI's SIGTERM) ends ninja's children, leaves dist/, exits 130."""
    _, dist = build(project)
    before = (dist / "manifest.json").read_text()
    pidfile = _plant_slow_child(project)
    env = {**os.environ, "FORGE_ROOT": str(project), "SOURCE_DATE_EPOCH": "1700000000", "FORGE_NO_CCACHE": "1"}
    argv = [sys.executable, "-m", "invoke", "build", "--target", "host", "--backend", "local"]
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not pidfile.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "error: interrupted" in out
    assert not _alive(int(pidfile.read_text())), "the build's child process survived"
    assert (dist / "manifest.json").read_text() == before
    assert sorted(p.name for p in dist.parent.iterdir()) == [dist.name]  # an interrupt records no failure


def test_build_runs_the_commands_plan_shows(project: Path) -> None:
    """`invoke build` and `invoke plan` plan one cell by one route (build.plan_cell): the manifest's
    commands (argv, cwd, env of every step) are `invoke plan --json`'s steps. Costs one tiny build (seconds)."""
    env = {
        **os.environ,
        "FORGE_ROOT": str(project),
        "SOURCE_DATE_EPOCH": "1700000000",
        "FORGE_NO_CCACHE": "1",
        "FORGE_JOBS": "2",
        "PYTHONPATH": str(REPO),
    }
    flags = ["--target", "host", "--backend", "local", "--json"]

    def invoke(task: str) -> dict[str, Any]:
        argv = [sys.executable, "-m", "invoke", task, *flags]
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    planned = invoke("plan")["cells"]
    built = invoke("build")["cells"]
    assert len(planned) == 1 and len(built) == 1 and built[0]["result"] == "passed"
    manifest = json.loads((Path(built[0]["dist"]) / "manifest.json").read_text())
    assert manifest["cell"]["id"] == planned[0]["id"]
    assert manifest["commands"] == planned[0]["steps"]
    assert any(step["argv"] for step in manifest["commands"]), "the comparison covers real commands"
