"""repro's container variations reach the docker backend (fake engine client, no daemon)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from test_docker_backend import CELL, HOST, FakeEngine, backend, no_daemon  # noqa: F401 - autouse fixture

from forge import repro
from forge.errors import ConfigError


def test_ordinary_build_keeps_default_hostname_and_build_dir(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path) as be:
        ws = be.prepare(CELL, HOST)
        (container,) = engine.containers_by_name.values()
        assert container.kwargs["hostname"] is None
        assert ws.build == PurePosixPath("/build")


def test_variation_b_changes_hostname_and_build_dir_inside_the_volume(tmp_path: Path) -> None:
    _, b = repro.default_variations(tmp_path / "a", tmp_path / "b", 2, True)
    env = repro.varied_env({"PATH": "/usr/bin"}, b)
    engine = FakeEngine()
    with backend(engine, tmp_path, **env) as be:
        ws = be.prepare(CELL, HOST)
        (container,) = engine.containers_by_name.values()
        assert container.kwargs["hostname"] == "forge-b-host"
        assert ws.build == PurePosixPath("/build/variant-b/deeper")
        assert ["mkdir", "-p", "/build/variant-b/deeper"] in engine.execs
        mounts = {m["Target"] for m in container.kwargs["mounts"]}
        assert "/build" in mounts  # the volume stays where the image's build user may write
        assert ws.prefix == PurePosixPath("/stage")


def test_variation_b_runs_as_the_other_user_with_its_umask_and_shifted_clock(tmp_path: Path) -> None:
    _, b = repro.default_variations(tmp_path / "a", tmp_path / "b", 2, False)
    env = repro.varied_env({"PATH": "/usr/bin"}, b)
    engine = FakeEngine()
    with backend(engine, tmp_path, **env) as be:
        ws = be.prepare(CELL, HOST)
        (container,) = engine.containers_by_name.values()
        assert container.kwargs["user"] == "forge-b"
        assert ws.ccache is None  # the cache volume is forge's; forge-b compiles (and zig builds) afresh
        be.run(["cmake", "--build", "."], cwd=ws.build, env={"LC_ALL": "C"}, log_path=tmp_path / "log")
        wrapper = ["sh", "-c", 'umask 077 && exec "$@"', "sh", "faketime", "-f", "+397d"]
        assert engine.execs[-1] == [*wrapper, "cmake", "--build", "."]
        assert engine.last_exec["user"] == "forge-b"
        assert engine.last_exec["environment"]["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"


def test_ordinary_build_runs_commands_unwrapped_as_forge(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path) as be:
        ws = be.prepare(CELL, HOST)
        be.run(["ninja"], cwd=ws.build, env={}, log_path=tmp_path / "log")
        assert engine.execs[-1] == ["ninja"] and engine.last_exec["user"] == "forge"
        assert ws.ccache == PurePosixPath("/ccache")


def test_unknown_container_user_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        backend(FakeEngine(), tmp_path, FORGE_CONTAINER_USER="root")
    assert "FORGE_CONTAINER_USER" in caught.value.what and "forge-b" in caught.value.fix
