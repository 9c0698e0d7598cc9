"""A cell built on a second Docker engine through the copy path gives the bind-mount build's files.

The test starts its own dockerd (own --data-root, --exec-root, --pidfile and unix socket under a
temporary directory; no iptables, no bridge), builds the tiny cell once on the usual engine (sources
bind-mounted), then again with FORGE_DOCKER_HOSTS listing the second engine first and
FORGE_SOURCES=copy: the cell leases the second engine, which has no images, so forge copies the base
and toolchain images over from its peer (docker save | docker load through the SDK), puts a tarball
of the sources into the container and takes the results out with get_archive.

Cost: the tiny cell's image (bookworm, gcc 12, Python 3.11; about 0.9 GB with its base) crosses
from one engine to the other, about a minute on a quiet 2-core machine, plus two builds of the tiny
cell (seconds each) and the second dockerd's start (a few seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest
import tinyrepo

from forge import daemon

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-cpu"


@pytest.fixture
def second_engine() -> Iterator[str]:
    """DOCKER_HOST of a dockerd of the test's own, stopped and removed afterwards."""
    dockerd = needs.program("dockerd")
    if os.geteuid() != 0:
        pytest.skip("starting a second dockerd needs root (this test runs one next to the usual engine)")
    top = Path(tempfile.mkdtemp(prefix="forge-engine2-"))
    url = f"unix://{top}/docker.sock"
    argv = [
        dockerd,
        *daemon.DOCKERD_FLAGS,
        f"--data-root={top}/data",
        f"--exec-root={top}/exec",
        f"--pidfile={top}/docker.pid",
        f"--host={url}",
    ]
    with (top / "dockerd.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while (client := daemon.connect({"DOCKER_HOST": url}, timeout_s=2.0)) is None:
            log_tail = (top / "dockerd.log").read_text(errors="replace")[-2000:]
            assert proc.poll() is None and time.monotonic() < deadline, f"the second dockerd did not start:\n{log_tail}"
            time.sleep(0.5)
        client.close()
        yield url
    finally:
        daemon.stop_dockerd(proc)
        shutil.rmtree(top, ignore_errors=True)


def _build(repo: Path, env: dict[str, str]) -> dict[str, object]:
    argv = [sys.executable, "-m", "invoke", "build", "--target", "linux-x86_64", "--python", "3.11", "--force"]
    proc = subprocess.run(
        [*argv, "--backend", "docker"],
        cwd=REPO,
        env={**os.environ, "FORGE_ROOT": str(repo), **env},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data: dict[str, object] = json.loads((repo / "dist" / CELL / "manifest.json").read_text())
    return data


def _sha256s(data: dict[str, object]) -> dict[str, str]:
    files = data["files"]
    assert isinstance(files, dict) and files, data
    return {path: str(record.get("sha256") or f"link:{record.get('link')}") for path, record in files.items()}


def test_a_second_engine_builds_through_the_copy_path_what_the_first_builds_by_mount(second_engine: str) -> None:
    first_engine = daemon.ensure_daemon(os.environ)
    top = tinyrepo.readable_dir("remote-engine-")
    repo = tinyrepo.make(top / "repo", commit=True)
    try:
        mounted = _build(repo, {})
        engine = mounted["engine"]
        assert isinstance(engine, dict) and engine["sources"] == "mount", engine
        first_url = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        copied = _build(repo, {"FORGE_DOCKER_HOSTS": f"{second_engine},{first_url}", "FORGE_SOURCES": "copy"})
        engine = copied["engine"]
        assert isinstance(engine, dict), copied
        assert engine["url"] == second_engine and engine["sources"] == "copy", engine
        second = daemon.connect({"DOCKER_HOST": second_engine})
        assert second is not None
        root = second.info()["DockerRootDir"]  # the engines share an ID (both read /etc/docker), not a root
        assert engine["root_dir"] == root != first_engine.info()["DockerRootDir"], engine
        image = copied["image"]
        assert isinstance(image, dict) and second.images.get(image["tag"]).id == image["id"]
        second.close()
        assert engine["source_archive"]["files"] > 0, engine
        assert _sha256s(copied) == _sha256s(mounted)  # the same installed tree, byte for byte
        assert image["id"] == mounted["image"]["id"]  # type: ignore[index]
        assert image["built_now"] is False  # moved from the first engine, not rebuilt
    finally:
        shutil.rmtree(top, ignore_errors=True)
