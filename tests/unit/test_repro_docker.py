"""repro's container variations reach the docker backend (fake engine client, no daemon)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from test_docker_backend import CELL, HOST, FakeEngine, backend, no_daemon  # noqa: F401 - autouse fixture

from forge import repro


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
