"""Hermetic container builds against a real engine (`.ci/run` starts dockerd first).

One bookworm cell (linux-x86_64, python 3.11) is built end to end in its toolchain image; the
second build must reuse the image (no image build) and, in a fresh container, the compiler cache.
The build container has no network, and an interrupted build leaves no container or volume.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import tinyrepo

from forge import cli, daemon
from forge.backends.base import Workspace
from forge.backends.docker import SESSION_LABEL, DockerBackend
from forge.build import host_workspace, resolve_for
from forge.matrix import Cell, Request
from forge.plan import BuildOptions, StepKind, plan_build

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client() -> Any:
    """A running engine; started here (installing docker.io) when none answers."""
    return daemon.ensure_daemon(os.environ)


@pytest.fixture(scope="module")
def cell() -> Cell:
    cfg, data = cli.setup({"backend": "docker"})
    return resolve_for(Request.make("linux-x86_64", {"python": "3.11"}), data, cfg).cell


@pytest.fixture(scope="module")
def source() -> Iterator[Path]:
    """A snapshot of the sources, so edits made in the tree meanwhile cannot spoil the cache check."""
    snap = tinyrepo.readable_dir("docker-test-src-")
    for sub in ("engine", "toolchains"):
        shutil.copytree(REPO / sub, snap / sub, ignore=shutil.ignore_patterns("build*", ".cache"))
    yield snap
    shutil.rmtree(snap, ignore_errors=True)


def host_ws(source: Path, tmp_path: Path) -> Workspace:
    return Workspace(
        source=PurePosixPath(source),
        build=PurePosixPath(tmp_path / "build"),
        prefix=PurePosixPath(tmp_path / "stage"),
        verify_build=PurePosixPath(tmp_path / "verify"),
        ccache=None,
    )


def build_engine(client: Any, cell: Cell, source: Path, tmp_path: Path) -> tuple[dict[str, Any], Path, float]:
    """configure + build + install engine/ in a fresh container; (facts, installed tree, seconds)."""
    _, data = cli.setup({"backend": "docker"})
    target = data.toolchains.targets[cell.target]
    backend = DockerBackend(client)
    with backend:
        ws = backend.prepare(cell, host_ws(source, tmp_path))
        plan = plan_build(cell, target, ws, "docker", BuildOptions(source_date_epoch=1_700_000_000, jobs=2))
        start = time.monotonic()
        for step in plan.steps:
            if step.kind is StepKind.COMMAND and step.name in ("configure", "build", "install"):
                assert step.cwd is not None
                backend.run(step.argv, cwd=step.cwd, env=dict(step.env), log_path=tmp_path / f"{step.name}.log")
        seconds = time.monotonic() - start
        backend.copy_out(ws.prefix, tmp_path / "install")
        facts = backend.facts()
    return facts, tmp_path / "install", seconds


def test_bookworm_cell_builds_then_rebuilds_from_image_and_ccache(
    client: Any, cell: Cell, source: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert cell.suite == "bookworm"
    first, install, _ = build_engine(client, cell, source, tmp_path_factory.mktemp("first"))
    assert first["container_versions"]["cxx"].startswith(f"g++-{cell.gcc} (Debian {cell.gcc}.")
    assert first["container_versions"]["python"] == "Python 3.11.2"
    assert first["container_versions"]["numpy"].startswith(f"{cell.numpy}.")
    assert (REPO / first["image"]["lock"]).is_file()
    libs = [p.name for p in (install / "lib").iterdir()]
    assert any(name.startswith("libember_framework") for name in libs), libs
    assert (install / "include" / "ember" / "status.h").is_file()

    second, _, _ = build_engine(client, cell, source, tmp_path_factory.mktemp("second"))
    assert second["image"]["built_now"] is False, "an unchanged image must not be rebuilt"
    assert second["image"]["id"] == first["image"]["id"]
    assert second["ccache"]["hit_rate"] is not None and second["ccache"]["hit_rate"] >= 0.95, second["ccache"]


def probe(backend: DockerBackend, script: str) -> tuple[int, str]:
    code, out = backend._exec(["python3", "-c", script])
    return code, out.decode(errors="replace")


def test_build_container_has_no_network_readonly_source_and_no_root(
    client: Any, cell: Cell, source: Path, tmp_path: Path
) -> None:
    backend = DockerBackend(client)
    with backend:
        backend.prepare(cell, host_ws(source, tmp_path))
        code, out = probe(backend, "import socket; socket.create_connection(('deb.debian.org', 80), timeout=5)")
        assert code != 0 and ("gaierror" in out or "unreachable" in out or "Errno" in out), out
        code, out = probe(backend, "import os; print(sorted(os.listdir('/sys/class/net')))")
        assert out.strip() == "['lo']", out
        code, out = probe(backend, "import os; print(os.getuid())")
        assert out.strip() != "0"
        code, out = probe(backend, "open('/src/forge-write-probe', 'w')")
        assert code != 0 and "Read-only file system" in out, out


def _runs_sleep(client: Any, session: int) -> bool:
    """Whether the session's build container is running the child's `sleep 600` step."""
    for container in client.containers.list(filters={"label": f"{SESSION_LABEL}={session}"}):
        if any("sleep" in " ".join(row) for row in container.top().get("Processes") or []):
            return True
    return False


def forge_objects(client: Any, session: int) -> list[str]:
    label = f"{SESSION_LABEL}={session}"
    containers = [c.name for c in client.containers.list(all=True, filters={"label": label})]
    return containers + [v.name for v in client.volumes.list(filters={"label": label})]


CHILD = """
import sys
from pathlib import Path, PurePosixPath
from forge.backends.base import Workspace
from forge.backends.docker import DockerBackend
from forge.matrix import Cell
cell = Cell(**{k: (v or None) for k, v in (a.split("=", 1) for a in sys.argv[2:])})
src, logs = Path(sys.argv[1]), Path(sys.argv[1]) / "logs"
ws = Workspace(*(PurePosixPath(src / n) for n in ("", "b", "s", "v")))
backend = DockerBackend()
with backend:
    inside = backend.prepare(cell, ws)
    print("container ready", flush=True)
    backend.run(["sleep", "600"], cwd=inside.build, env={}, log_path=logs / "sleep.log")
"""


@pytest.fixture
def interrupted_build(cell: Cell, source: Path) -> Iterator[subprocess.Popen[str]]:
    """A forge process holding a build container, in the middle of a long command."""
    env = {k: v for k, v in os.environ.items() if k != "FORGE_KEEP_CONTAINER"}
    env["PYTHONPATH"] = str(REPO)
    fields = [f"{k}={v or ''}" for k, v in cell.as_dict().items() if k != "id"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(source), *fields],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_interrupted_build_leaves_no_container_or_volume(client: Any, interrupted_build: subprocess.Popen[str]) -> None:
    assert interrupted_build.stdout is not None
    seen = []
    for line in interrupted_build.stdout:  # ends when the child exits; the child prints once ready
        seen.append(line)
        if line.startswith("container ready"):
            break
    assert seen and seen[-1].startswith("container ready"), "".join(seen)[-3000:]
    assert any(name.startswith("forge-linux-x86_64") for name in forge_objects(client, interrupted_build.pid))
    # Ctrl-C while the step runs: "ready" is printed before run() starts its command, and a loaded
    # machine can deliver the signal in between (a KeyboardInterrupt outside the step, not this test)
    deadline = time.monotonic() + 120
    while not _runs_sleep(client, interrupted_build.pid):
        assert time.monotonic() < deadline, "the container's `sleep 600` never started"
        time.sleep(0.2)
    interrupted_build.send_signal(signal.SIGINT)
    output, _ = interrupted_build.communicate(timeout=120)
    assert "BuildInterrupted" in output, output[-3000:]
    assert forge_objects(client, interrupted_build.pid) == []


def test_invoke_build_records_image_lock_and_inside_versions(client: Any, cell: Cell) -> None:
    root = tinyrepo.readable_dir("docker-invoke-")  # its own dist/, never the checkout's
    for sub in ("engine", "verify", "matrix", "toolchains"):
        shutil.copytree(REPO / sub, root / sub, ignore=shutil.ignore_patterns("build*", ".cache"))
    argv = [sys.executable, "-m", "invoke", "build", "--target", "linux-x86_64", "--python", "3.11"]
    env = {**os.environ, "FORGE_ROOT": str(root), "FORGE_DEBUG_INFO": "1"}  # the cell CI checks .debug files on
    proc = subprocess.run([*argv, "--backend", "docker"], cwd=REPO, env=env, capture_output=True, text=True)
    manifest_path = root / "dist" / cell.id / "manifest.json"
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    manifest = json.loads(manifest_path.read_text())
    assert manifest["backend"] == "docker"
    assert manifest["image"]["id"].startswith("sha256:")
    assert manifest["image"]["lock"].startswith("toolchains/locks/")
    assert manifest["container_versions"]["cxx"].startswith(f"g++-{cell.gcc} ")
    assert manifest["ccache"]["hit_rate"] is not None
    # Separate .debug files (forge/debuginfo.py): one per installed library and program, none missing,
    # each on disk with the sha256 the manifest records and the installed file's build-id.
    debug = manifest["debug"]
    assert debug["missing"] == {}, debug["missing"]
    assert any(rel.startswith("lib/libember_cc.so") for rel in debug["files"]), sorted(debug["files"])
    assert any(rel.startswith("bin/ember-run") for rel in debug["files"]), sorted(debug["files"])
    for rel, entry in debug["files"].items():
        data = (root / "dist" / cell.id / debug["dir"] / f"{rel}.debug").read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert len(entry["build_id"]) >= 32
    cfg, _ = cli.setup({"backend": "docker"})
    assert host_workspace(cfg, cell).source == PurePosixPath(REPO)
    shutil.rmtree(root, ignore_errors=True)
