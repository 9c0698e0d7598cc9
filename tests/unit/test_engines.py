"""forge.engines without an engine: settings, leases over FORGE_DOCKER_HOSTS, the copied source tarball."""

from __future__ import annotations

import io
import os
import tarfile
import threading
import time
from pathlib import Path

import pytest

from forge import engines
from forge.config import docker_hosts, load_config, source_mode
from forge.errors import ConfigError


def test_docker_hosts_are_urls_listed_once() -> None:
    assert docker_hosts({}) == () and docker_hosts({"FORGE_DOCKER_HOSTS": " "}) == ()
    hosts = docker_hosts({"FORGE_DOCKER_HOSTS": "unix:///a.sock, tcp://b:2376"})
    assert hosts == ("unix:///a.sock", "tcp://b:2376")
    for bad in ("b:2376", "tcp://", "unix:///a.sock,,tcp://b", "tcp://b,tcp://b"):
        with pytest.raises(ConfigError) as err:
            docker_hosts({"FORGE_DOCKER_HOSTS": bad})
        assert "FORGE_DOCKER_HOSTS" in err.value.what, bad


def test_source_mode_is_checked_before_any_work(tmp_path: Path) -> None:
    assert source_mode({}) == "auto" and source_mode({"FORGE_SOURCES": "copy"}) == "copy"
    (tmp_path / "toolchains").mkdir()
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {"FORGE_SOURCES": "rsync", "SOURCE_DATE_EPOCH": "1"}, {})
    assert "FORGE_SOURCES='rsync'" in err.value.what and "mount, copy" in err.value.fix
    cfg = load_config(tmp_path, {"FORGE_DOCKER_HOSTS": "unix:///a.sock", "SOURCE_DATE_EPOCH": "1"}, {})
    assert cfg.docker_hosts == ("unix:///a.sock",)


def test_sources_are_copied_unless_the_engine_is_a_local_socket() -> None:
    assert not engines.copies_sources({})  # the default socket
    assert not engines.copies_sources({"DOCKER_HOST": "unix:///tmp/d2/docker.sock"})
    assert engines.copies_sources({"DOCKER_HOST": "tcp://builder:2376"})
    assert engines.copies_sources({"DOCKER_HOST": "ssh://ci@builder"})
    assert engines.copies_sources({"FORGE_SOURCES": "copy"})
    assert not engines.copies_sources({"DOCKER_HOST": "tcp://builder:2376", "FORGE_SOURCES": "mount"})


def test_each_engine_builds_one_cell_at_a_time() -> None:
    pool = engines.EnginePool(["unix:///a.sock", "tcp://b:2376"])
    seen: list[tuple[str | None, tuple[str, ...], dict[str, str]]] = []
    busy: dict[str, int] = {}
    most = {"at_once": 0, "per_engine": 0}
    lock = threading.Lock()

    def cell() -> None:
        with pool.lease() as host:
            assert host is not None
            with lock:
                busy[host] = busy.get(host, 0) + 1
                most["per_engine"] = max(most["per_engine"], busy[host])
                most["at_once"] = max(most["at_once"], sum(busy.values()))
                seen.append((engines.leased(), engines.peers(), engines.engine_env({"DOCKER_HOST": "x"})))
            time.sleep(0.05)
            with lock:
                busy[host] -= 1

    threads = [threading.Thread(target=cell) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == {"at_once": 2, "per_engine": 1}
    assert {leased for leased, _, _ in seen} == {"unix:///a.sock", "tcp://b:2376"}
    for leased, peers, env in seen:
        assert env["DOCKER_HOST"] == leased and leased not in peers and len(peers) == 1
    assert engines.leased() is None and engines.peers() == ()  # nothing leaks out of the leases


def test_no_hosts_means_no_lease_and_the_environment_as_it_is() -> None:
    with engines.EnginePool([]).lease() as host:
        assert host is None and engines.engine_env({"DOCKER_HOST": "tcp://x:1"}) == {"DOCKER_HOST": "tcp://x:1"}


def _tree(root: Path, order: list[str]) -> None:
    for rel in order:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
    (root / "engine" / "run.sh").chmod(0o700)


FILES = ["engine/CMakeLists.txt", "engine/run.sh", "verify/a.cc", "WORKSPACE"]
JUNK = [".git/HEAD", "dist/x/manifest.json", ".cache/forge/x", "build-host/CMakeCache.txt", "engine/__pycache__/a.pyc"]


def test_the_source_tarball_is_the_same_bytes_for_the_same_tree(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        _tree(tmp_path / "a", FILES + JUNK)
    finally:
        os.umask(old)
    _tree(tmp_path / "b", list(reversed(FILES)))
    os.utime(tmp_path / "b" / "WORKSPACE", (1, 1))
    first, second = engines.source_archive(tmp_path / "a"), engines.source_archive(tmp_path / "b")
    assert first.data == second.data and first.sha256 == second.sha256 and first.files == len(FILES)
    with tarfile.open(fileobj=io.BytesIO(first.data)) as tar:
        members = {m.name: m for m in tar}
    assert sorted(n for n, m in members.items() if m.isfile()) == sorted(FILES)  # no VCS data, results, caches
    assert members["engine/run.sh"].mode == 0o755 and members["verify/a.cc"].mode == 0o644
    assert {m.mtime for m in members.values()} == {engines.SOURCE_EPOCH} and {m.uid for m in members.values()} == {0}
    (tmp_path / "b" / "verify" / "a.cc").write_text("changed")
    assert engines.source_archive(tmp_path / "b").sha256 != first.sha256
