"""A running build container holds no more power than a build needs (real dockerd).

`docker inspect` of a live build container must show every capability dropped, no-new-privileges,
a read-only root filesystem and the configured pids and memory limits; inside it, the build user's
process must hold no capability, the root filesystem must refuse writes while every directory a
build writes accepts them, and the pids limit must stop a fork bomb. A tiny cell then builds,
verifies and records through `invoke build` in such a container, so nothing a build step does
needs more. On an engine shared with another forge (another checkout's owner id), a build removes
only its own abandoned containers, naming them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import tinyrepo

from forge import cli, daemon, manifest
from forge.backends.base import Workspace
from forge.backends.docker import OWNER_LABEL, DockerBackend
from forge.build import resolve_for
from forge.matrix import Cell, Request

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
LIMITS = {"FORGE_PIDS_LIMIT": "256", "FORGE_MEMORY_LIMIT": "2g"}


@pytest.fixture(scope="module")
def client() -> Any:
    return daemon.ensure_daemon(os.environ)


@pytest.fixture(scope="module")
def repo() -> Iterator[Path]:
    top = tinyrepo.readable_dir("hardening-")
    yield tinyrepo.make(top / "repo")
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def backend(client: Any, repo: Path, tmp_path: Path) -> Iterator[DockerBackend]:
    cfg, data = cli.setup({"backend": "docker"})
    cell: Cell = resolve_for(Request.make("linux-x86_64", {"python": "3.11"}), data, cfg).cell
    be = DockerBackend(client, env={**os.environ, **LIMITS})
    ws = Workspace(*(PurePosixPath(p) for p in (repo, tmp_path / "b", tmp_path / "s", tmp_path / "v")))
    with be:
        be.prepare(cell, ws)
        yield be


def sh(backend: DockerBackend, script: str) -> tuple[int, str]:
    code, out = backend._exec(["sh", "-c", script])
    return code, out.decode(errors="replace")


def test_inspect_shows_every_setting(backend: DockerBackend) -> None:
    container = backend._container
    assert container is not None
    container.reload()
    host = container.attrs["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert "no-new-privileges:true" in host["SecurityOpt"]
    assert host["ReadonlyRootfs"] is True and host["Privileged"] is False
    assert host["PidsLimit"] == 256
    assert host["Memory"] == host["MemorySwap"] == 2 * 1024**3
    assert set(host["Tmpfs"]) == {"/tmp", "/var/tmp"}
    assert host["NetworkMode"] == "none"
    assert container.labels[OWNER_LABEL]


def test_the_build_user_holds_no_power_and_writes_only_where_builds_write(backend: DockerBackend) -> None:
    _, status = sh(backend, "grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs):' /proc/self/status")
    fields = dict(line.split(":\t") for line in status.splitlines())
    assert fields == {"CapPrm": "0000000000000000", "CapEff": "0000000000000000",
                      "CapBnd": "0000000000000000", "NoNewPrivs": "1"}, status  # fmt: skip
    # The image's setuid programs (su, mount, passwd, ...) are still there; NoNewPrivs makes exec ignore the bit.
    code, out = sh(backend, "su -c 'id -u' root </dev/null")
    assert code != 0 and out.strip() != "0", out
    for path in ("/etc/forge-probe", "/usr/local/forge-probe", "/opt/forge-venv/forge-probe", "/var/forge-probe"):
        code, out = sh(backend, f"touch {path}")
        assert code != 0 and "Read-only file system" in out, (path, out)
    for path in ("/build", "/stage", "/verify-build", "/tmp", "/var/tmp", "$HOME", "/ccache"):
        code, out = sh(backend, f"touch {path}/forge-probe && rm {path}/forge-probe")
        assert code == 0, (path, out)


def test_the_pids_limit_stops_a_fork_bomb(backend: DockerBackend) -> None:
    _, out = sh(backend, "(for i in $(seq 400); do sleep 30 & done) 2>&1 | tail -1")
    assert "fork" in out.lower() or "resource" in out.lower(), out


def test_a_cell_builds_verifies_and_records_in_a_hardened_container(repo: Path) -> None:
    env = {**os.environ, **LIMITS, "FORGE_ROOT": str(repo), "CI": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--target", "linux-x86_64", "--backend", "docker", "--force"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    recorded = manifest.read_manifest(repo / "dist" / "linux-x86_64-py3.11-np2.4-gcc12-cpu")
    assert recorded is not None and recorded.result is manifest.Result.PASSED, recorded


def test_a_shared_engine_loses_only_this_forges_abandoned_containers(
    client: Any, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from forge.backends import docker as docker_backend

    cfg, data = cli.setup({"backend": "docker"})
    cell: Cell = resolve_for(Request.make("linux-x86_64", {"python": "3.11"}), data, cfg).cell
    env = {**os.environ, **LIMITS}
    instance = tmp_path / "instance-id"
    mine = docker_backend.owner_id(env, client.info(), docker_backend.instance_id(instance))
    theirs = docker_backend.owner_id(env, client.info(), "f" * 32)  # another checkout on the same engine
    dead = next(pid for pid in range(4_000_000, 4_100_000) if not docker_backend.pid_alive(pid))
    image = client.images.list(filters={"label": "org.forge.managed=toolchain"})[0].id
    planted = {}
    for who, owner in (("mine", mine), ("theirs", theirs)):
        labels = {OWNER_LABEL: owner, docker_backend.SESSION_LABEL: str(dead), "org.forge.managed": "build"}
        planted[who] = client.containers.create(image, ["true"], labels=labels, name=f"forge-planted-{who}-{dead}")
    try:
        ws = Workspace(*(PurePosixPath(p) for p in (repo, tmp_path / "b", tmp_path / "s", tmp_path / "v")))
        with DockerBackend(client, env=env, instance_file=instance) as be:
            be.prepare(cell, ws)
        names = {c.name for c in client.containers.list(all=True)}
        assert planted["mine"].name not in names and planted["theirs"].name in names
        out = capsys.readouterr().out
        assert f"removed container {planted['mine'].name}, left by forge session {dead}" in out
        assert planted["theirs"].name not in out
    finally:
        for container in planted.values():
            with contextlib.suppress(Exception):
                container.remove(force=True)
