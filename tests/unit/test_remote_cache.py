"""FORGE_CCACHE_REMOTE: parsed once in forge/config.py; the docker backend mounts a socket or refuses TCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.backends import docker as docker_backend
from forge.config import ccache_remote
from forge.errors import ConfigError


def test_unset_means_local_only() -> None:
    assert ccache_remote({}) is None and ccache_remote({"FORGE_CCACHE_REMOTE": " "}) is None


@pytest.mark.parametrize("bad", ["http://cache:8080", "redis:/x", "redis+unix:relative.sock", "redis://a b"])
def test_not_a_redis_url_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="is not a Redis URL"):
        ccache_remote({"FORGE_CCACHE_REMOTE": bad})


def test_a_socket_is_mounted_into_the_container() -> None:
    remote = ccache_remote({"FORGE_CCACHE_REMOTE": "redis+unix:/run/redis/redis.sock"})
    assert remote is not None and remote.socket == Path("/run/redis/redis.sock")
    mounts, env = docker_backend.remote_cache_mounts(remote)
    assert [(m["Target"], m["Source"], m["Type"]) for m in mounts] == [("/ccache-remote", "/run/redis", "bind")]
    assert env == {"CCACHE_REMOTE_STORAGE": "redis+unix:/ccache-remote/redis.sock", "CCACHE_COMPILERCHECK": "content"}


def test_tcp_redis_is_refused_for_containers_without_network() -> None:
    remote = ccache_remote({"FORGE_CCACHE_REMOTE": "redis://127.0.0.1:6379"})
    assert remote is not None and remote.socket is None
    with pytest.raises(ConfigError) as info:
        docker_backend.remote_cache_mounts(remote)
    assert "--unixsocket" in info.value.fix
