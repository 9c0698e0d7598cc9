"""A compiler cache shared through Redis (FORGE_CCACHE_REMOTE): a fresh container with an empty
local cache volume is served from the shared one.

The test starts its own redis-server on a unix socket in a temporary directory (build containers
have no network; the socket's directory is mounted into them), builds the tiny cell once with one
cache volume, then again (--force) with another, empty one: the second build's manifest records
its hits from Redis.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest
import tinyrepo

from forge import daemon

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-cpu"


def _redis_server() -> str:
    return needs.program("redis-server")


@pytest.fixture
def redis_socket() -> Iterator[Path]:
    top = tinyrepo.readable_dir("redis-")
    top.chmod(0o755)  # the container's build user must reach the socket
    socket = top / "redis.sock"
    server = subprocess.Popen(
        [
            _redis_server(),
            "--port",
            "0",
            "--unixsocket",
            str(socket),
            "--unixsocketperm",
            "777",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if socket.exists() or server.poll() is not None:
                break
            time.sleep(0.1)
        assert socket.exists(), f"redis-server did not create {socket} (exit {server.poll()})"
        yield socket
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(top, ignore_errors=True)


def _build(repo: Path, socket: Path, volume: str, *flags: str) -> dict[str, object]:
    env = {
        **os.environ,
        "FORGE_ROOT": str(repo),
        "FORGE_CCACHE_REMOTE": f"redis+unix:{socket}",
        "FORGE_CCACHE_VOLUME": volume,
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "invoke",
            "build",
            "--target",
            "linux-x86_64",
            "--python",
            "3.11",
            "--backend",
            "docker",
            *flags,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data: dict[str, object] = json.loads((repo / "dist" / CELL / "manifest.json").read_text())
    return data


def test_second_build_in_a_fresh_container_is_served_from_redis(redis_socket: Path) -> None:
    daemon.ensure_daemon(os.environ)
    top = tinyrepo.readable_dir("shared-ccache-")
    repo = tinyrepo.make(top / "repo", commit=True)
    volumes = [f"forge-ccache-test-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    try:
        first = _build(repo, redis_socket, volumes[0])
        cache = first["ccache"]
        assert isinstance(cache, dict) and cache["remote"]["misses"] > 0 and cache["remote"]["hits"] == 0, cache
        second = _build(repo, redis_socket, volumes[1], "--force")  # a new container, an empty local cache
        cache = second["ccache"]
        assert isinstance(cache, dict), second
        assert cache["remote"]["hits"] > 0 and cache["remote"]["misses"] == 0, cache
        assert cache["hit_rate"] is not None and cache["hit_rate"] >= 0.95, cache
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", *volumes], capture_output=True, check=False)
        shutil.rmtree(top, ignore_errors=True)
