"""The docker backend against a fake engine client: no daemon is ever contacted."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import Any

import docker
import pytest

from forge import images, locks
from forge.backends import docker as docker_backend
from forge.backends.base import Workspace
from forge.errors import BuildInterrupted, StepFailedError
from forge.matrix import Cell

CELL = Cell(
    target="linux-x86_64",
    suite="bookworm",
    python="3.11",
    numpy="2.1",
    gcc="12",
    cuda=None,
    cmake="3.25",
    bazel=None,
)
HOST = Workspace(
    source=PurePosixPath("/repo"),
    build=PurePosixPath("/h/b"),
    prefix=PurePosixPath("/h/p"),
    verify_build=PurePosixPath("/h/v"),
    ccache=PurePosixPath("/h/c"),
)


class FakeContainer:
    def __init__(self, engine: FakeEngine, name: str, labels: dict[str, str], **kwargs: Any) -> None:
        self.engine, self.name, self.labels, self.kwargs = engine, name, labels, kwargs
        self.id = f"id-{name}"
        self.started = False

    def start(self) -> None:
        self.started = True

    def exec_run(self, argv: list[str], user: str) -> SimpleNamespace:
        self.engine.execs.append(argv)
        if argv[:2] == ["ccache", "--print-stats"]:
            return SimpleNamespace(exit_code=0, output=b"direct_cache_hit\t19\ncache_miss\t1\nfiles_in_cache\t40\n")
        return SimpleNamespace(exit_code=0, output=b"g++-12 (Debian 12.2.0-14) 12.2.0\n")

    def get_archive(self, path: str) -> tuple[Iterator[bytes], dict[str, Any]]:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for name, data in (("stage/lib/libember.so", b"ELF"), ("stage/include/ember/status.h", b"//")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return iter([buffer.getvalue()]), {}

    def put_archive(self, path: str, data: bytes) -> bool:
        self.engine.put.append((path, data))
        return True

    def remove(self, force: bool = False) -> None:
        self.engine.containers_by_name.pop(self.name, None)
        self.engine.removed.append(self.name)


class FakeVolume:
    def __init__(self, engine: FakeEngine, name: str, labels: dict[str, str] | None) -> None:
        self.engine, self.name = engine, name
        self.attrs = {"Labels": labels or {}}

    def remove(self, force: bool = False) -> None:
        self.engine.volumes_by_name.pop(self.name, None)
        self.engine.removed.append(self.name)


class FakeEngine:
    """Just enough of docker.DockerClient for the backend."""

    def __init__(self) -> None:
        self.containers_by_name: dict[str, FakeContainer] = {}
        self.volumes_by_name: dict[str, FakeVolume] = {}
        self.removed: list[str] = []
        self.execs: list[list[str]] = []
        self.put: list[tuple[str, bytes]] = []
        self.exec_code = 0
        self.exec_output: list[bytes] = [b"[1/2] building\n", b"[2/2] linking\n"]
        self.interrupt = False
        self.containers = SimpleNamespace(create=self._create_container, list=self._list_containers)
        self.volumes = SimpleNamespace(create=self._create_volume, list=self._list_volumes)
        self.images = SimpleNamespace(remove=lambda tag, force=False: self.removed.append(tag))
        self.info = lambda: {"CgroupVersion": "1", "CgroupDriver": "cgroupfs", "Name": "e1", "ID": "ID1"}
        self.api = SimpleNamespace(
            exec_create=self._exec_create, exec_start=self._exec_start, exec_inspect=self._inspect
        )

    def _create_container(self, image: str, command: list[str], name: str, labels: dict[str, str], **kw: Any) -> Any:
        container = FakeContainer(self, name, labels, image=image, command=command, **kw)
        self.containers_by_name[name] = container
        return container

    def _list_containers(self, all: bool, filters: dict[str, str]) -> list[FakeContainer]:
        return list(self.containers_by_name.values())

    def _create_volume(self, name: str, labels: dict[str, str] | None = None) -> FakeVolume:
        return self.volumes_by_name.setdefault(name, FakeVolume(self, name, labels))

    def _list_volumes(self, filters: dict[str, str]) -> list[FakeVolume]:
        return [v for v in self.volumes_by_name.values() if docker_backend.SESSION_LABEL in v.attrs["Labels"]]

    def _exec_create(self, container: str, argv: list[str], **kw: Any) -> dict[str, str]:
        self.execs.append(argv)
        self.last_exec = kw
        return {"Id": "exec-1"}

    def _exec_start(self, exec_id: str, stream: bool) -> Iterator[bytes]:
        if self.interrupt:
            raise KeyboardInterrupt
        yield from self.exec_output

    def _inspect(self, exec_id: str) -> dict[str, int]:
        return {"ExitCode": self.exec_code}


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any real engine call fails the test; images and locks are stubbed."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("unit tests must not talk to a docker daemon")

    monkeypatch.setattr(docker, "from_env", refuse)
    ref = images.ImageRef("forge/toolchain:bookworm-x-abc", "sha256:abc", "abc" * 8, "bookworm-x", False, 0.0)
    monkeypatch.setattr(images, "ensure_toolchain_image", lambda client, spec, mirror, **kw: (ref, ref))
    monkeypatch.setattr(
        locks, "collect_lock", lambda client, tag, name: locks.Lock(name, {"deb gcc-12:amd64": "12.2.0-14"})
    )


def backend(engine: FakeEngine, tmp_path: Path, keep: bool = False, **env: str) -> docker_backend.DockerBackend:
    return docker_backend.DockerBackend(
        engine,
        mirror="http://m/debian",
        env=env,
        lock_dir=tmp_path / "locks",
        instance_file=tmp_path / "instance-id",
        keep=keep,
    )


def test_prepare_starts_a_hermetic_container(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path) as be:
        ws = be.prepare(CELL, HOST)
        (container,) = engine.containers_by_name.values()
        kw = container.kwargs
        assert kw["network_mode"] == "none"
        assert kw["user"] == "forge"
        assert kw["image"] == "forge/toolchain:bookworm-x-abc"
        mounts = {m["Target"]: m for m in kw["mounts"]}
        assert mounts["/src"]["Source"] == "/repo" and mounts["/src"]["ReadOnly"] is True
        assert mounts["/build"]["Type"] == "volume" and mounts["/ccache"]["Type"] == "volume"
        assert all(mounts[f"/{d}"]["Type"] == "volume" for d in ("stage", "verify-build", "home"))
        assert kw["cap_drop"] == ["ALL"] and kw["cap_add"] is None
        assert kw["security_opt"] == ["no-new-privileges:true"] and kw["read_only"] is True
        assert set(kw["tmpfs"]) == {"/tmp", "/var/tmp"}
        assert kw["pids_limit"] == 4096 and kw["mem_limit"] == kw["memswap_limit"] == 8 * 1024**3
        assert container.labels[docker_backend.OWNER_LABEL] == docker_backend.owner_id(
            {}, engine.info(), (tmp_path / "instance-id").read_text().strip()
        )
        assert container.started
        assert ws.source == PurePosixPath("/src") and ws.prefix == PurePosixPath("/stage")
        assert ["ccache", "--zero-stats"] in engine.execs
        assert (tmp_path / "locks" / "bookworm-gcc12-py3.11-np2.1.txt").exists()
    assert container.name in engine.removed  # close removed the container...
    assert not [v for v in engine.volumes_by_name if "ccache" not in v]  # ...and its volumes
    assert "forge-ccache-bookworm-gcc12-py3.11-np2.1" in engine.volumes_by_name  # the cache persists


def test_a_remote_engine_gets_the_sources_by_copy_into_a_volume(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "engine").mkdir(parents=True)
    (repo / "engine" / "CMakeLists.txt").write_text("project(ember)\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref\n")
    engine = FakeEngine()
    with backend(engine, tmp_path, DOCKER_HOST="tcp://builder2:2376") as be:
        be.prepare(CELL, replace(HOST, source=PurePosixPath(repo)))
        (container,) = engine.containers_by_name.values()
        mounts = {m["Target"]: m for m in container.kwargs["mounts"]}
        assert mounts["/src"]["Type"] == "volume" and mounts["/src"]["Source"].startswith("forge-src-")
        ((dest, data),) = engine.put
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            names = tar.getnames()
        assert dest == "/src" and "engine/CMakeLists.txt" in names and not any(n.startswith(".git") for n in names)
        facts: dict[str, Any] = be.facts()
        volume = mounts["/src"]["Source"]
    assert facts["engine"]["url"] == "tcp://builder2:2376" and facts["engine"]["sources"] == "copy"
    assert facts["engine"]["name"] == "e1" and facts["engine"]["source_archive"]["files"] == 1
    assert volume in engine.removed  # the copied sources go with the container


def test_a_local_engine_mounts_the_sources_unless_told_to_copy(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path, DOCKER_HOST="unix:///run/d2.sock") as be:
        be.prepare(CELL, HOST)
        assert be.facts()["engine"]["sources"] == "mount" and not engine.put
    repo = tmp_path / "repo"
    (repo / "engine").mkdir(parents=True)
    (repo / "engine" / "CMakeLists.txt").write_text("project(ember)\n")
    engine = FakeEngine()
    with backend(engine, tmp_path, DOCKER_HOST="unix:///run/d2.sock", FORGE_SOURCES="copy") as be:
        be.prepare(CELL, replace(HOST, source=PurePosixPath(repo)))
        assert be.facts()["engine"]["sources"] == "copy" and [d for d, _ in engine.put] == ["/src"]


def test_run_streams_output_to_the_log_with_env_and_cwd(tmp_path: Path) -> None:
    engine = FakeEngine()
    log = tmp_path / "logs" / "build.log"
    with backend(engine, tmp_path) as be:
        be.prepare(CELL, HOST)
        be.run(["ninja"], cwd=PurePosixPath("/build"), env={"SOURCE_DATE_EPOCH": "1"}, log_path=log)
    assert engine.last_exec == {"workdir": "/build", "environment": {"SOURCE_DATE_EPOCH": "1"}, "user": "forge"}
    assert log.read_text().splitlines()[1:] == ["[1/2] building", "[2/2] linking"]


def test_failing_command_raises_with_the_tail_and_still_cleans_up(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.exec_code = 2
    with pytest.raises(StepFailedError) as err, backend(engine, tmp_path) as be:
        be.prepare(CELL, HOST)
        be.run(["ninja"], cwd=PurePosixPath("/build"), env={}, log_path=tmp_path / "x.log")
    assert "exited with 2" in err.value.what and "[2/2] linking" in err.value.why
    assert not engine.containers_by_name


def test_ctrl_c_removes_the_container_and_build_volume(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.interrupt = True
    be = backend(engine, tmp_path)
    be.prepare(CELL, HOST)
    with pytest.raises(BuildInterrupted):
        be.run(["ninja"], cwd=PurePosixPath("/build"), env={}, log_path=tmp_path / "x.log")
    assert not engine.containers_by_name
    assert not [v for v in engine.volumes_by_name if v.startswith("forge-build-")]


def test_keep_container_keeps_it_and_says_how_to_enter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path, keep=True) as be:
        be.prepare(CELL, HOST)
    (name,) = engine.containers_by_name
    assert f"docker exec -it {name} bash" in capsys.readouterr().out


def test_copy_out_gives_the_directory_contents(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path) as be:
        be.prepare(CELL, HOST)
        be.copy_out(PurePosixPath("/stage"), tmp_path / "install")
    assert (tmp_path / "install" / "lib" / "libember.so").read_bytes() == b"ELF"
    assert (tmp_path / "install" / "include" / "ember" / "status.h").exists()


def test_facts_carry_image_lock_versions_and_ccache_hit_rate(tmp_path: Path) -> None:
    engine = FakeEngine()
    with backend(engine, tmp_path) as be:
        be.prepare(CELL, HOST)
        facts: dict[str, Any] = be.facts()
        identity = be.identity()
    assert facts["image"]["id"] == "sha256:abc"
    assert facts["image"]["lock_status"] == "created"
    assert facts["container_versions"]["cxx"] == "g++-12 (Debian 12.2.0-14) 12.2.0"
    assert facts["ccache"]["hit_rate"] == pytest.approx(0.95)
    assert identity == {"image_id": "sha256:abc", "lock_sha256": facts["image"]["lock_sha256"]}


def test_lock_drift_fails_and_untags_the_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = FakeEngine()
    built = images.ImageRef("forge/toolchain:new", "sha256:new", "k", "n", True, 1.0)
    monkeypatch.setattr(images, "ensure_toolchain_image", lambda client, spec, mirror, **kw: (built, built))
    path = tmp_path / "locks" / "bookworm-gcc12-py3.11-np2.1.txt"
    path.parent.mkdir()
    path.write_text("deb gcc-12:amd64 12.2.0-13\n")
    with pytest.raises(locks.LockMismatchError, match="differ"):
        backend(engine, tmp_path).prepare(CELL, HOST)
    assert "forge/toolchain:new" in engine.removed
    assert not engine.containers_by_name


def test_only_this_instances_abandoned_containers_are_removed_and_named() -> None:
    engine = FakeEngine()
    mine = docker_backend.owner_id({"DOCKER_HOST": "tcp://shared:2375"}, {"ID": "E1", "Name": "eng"}, "a" * 32)
    theirs = docker_backend.owner_id({"DOCKER_HOST": "tcp://shared:2375"}, {"ID": "E1", "Name": "eng"}, "b" * 32)
    other_engine = docker_backend.owner_id({"DOCKER_HOST": "tcp://other:2375"}, {"ID": "E2", "Name": "x"}, "a" * 32)
    assert len({mine, theirs, other_engine}) == 3
    for name, owner, pid in (
        ("dead", mine, "999999"),
        ("live", mine, "1"),
        ("theirs-dead", theirs, "999999"),  # another forge on the shared engine: its pid means nothing here
        ("unowned-dead", None, "999999"),  # made by a forge before owners existed: not provably ours
    ):
        labels = {docker_backend.SESSION_LABEL: pid, **({docker_backend.OWNER_LABEL: owner} if owner else {})}
        engine._create_container("img", [], name, labels)
        engine._create_volume(f"forge-build-{name}", labels)
    said: list[str] = []
    removed = docker_backend.remove_stale(engine, alive=lambda pid: pid == 1, owner=mine, log=said.append)
    assert sorted(removed) == ["dead", "forge-build-dead"]
    assert sorted(engine.containers_by_name) == ["live", "theirs-dead", "unowned-dead"]
    assert said == [
        "forge: removed container dead, left by forge session 999999 (no longer running)",
        "forge: removed volume forge-build-dead, left by forge session 999999 (no longer running)",
    ]


def test_a_stale_container_another_cell_is_removing_is_left_to_it() -> None:
    """Two cells of one matrix start at once and find the same abandoned container: the one that
    loses the race (409 "removal already in progress", or 404 once it is gone) moves on."""
    import docker.errors

    engine = FakeEngine()
    mine = docker_backend.owner_id({}, {"ID": "E1", "Name": "eng"}, "a" * 32)
    labels = {docker_backend.SESSION_LABEL: "999999", docker_backend.OWNER_LABEL: mine}
    racing = engine._create_container("img", [], "racing", labels)
    gone = engine._create_container("img", [], "gone", labels)
    broken = engine._create_container("img", [], "broken", labels)
    response = SimpleNamespace(status_code=409, reason="Conflict", url="u")
    racing.remove = lambda force=False: (_ for _ in ()).throw(
        docker.errors.APIError("conflict", response=response, explanation="removal is already in progress")
    )
    gone.remove = lambda force=False: (_ for _ in ()).throw(docker.errors.NotFound("no such container"))
    said: list[str] = []
    removed = docker_backend.remove_stale(engine, alive=lambda pid: False, owner=mine, log=said.append)
    assert removed == ["broken"] and said == [
        "forge: removed container broken, left by forge session 999999 (no longer running)"
    ]
    # any other engine error is still raised
    response500 = SimpleNamespace(status_code=500, reason="Server Error", url="u")
    broken.remove = lambda force=False: (_ for _ in ()).throw(docker.errors.APIError("boom", response=response500))
    engine.containers_by_name["broken"] = broken
    with pytest.raises(docker.errors.APIError, match="500 Server Error"):
        docker_backend.remove_stale(engine, alive=lambda pid: False, owner=mine, log=said.append)


def test_instance_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = docker_backend.instance_id(tmp_path / "c" / "instance-id")
    assert len(first) == 32 and docker_backend.instance_id(tmp_path / "c" / "instance-id") == first
    assert docker_backend.instance_id(tmp_path / "other") != first


def test_bad_container_limits_are_config_errors(tmp_path: Path) -> None:
    from forge.errors import ConfigError

    with pytest.raises(ConfigError, match="FORGE_MEMORY_LIMIT"):
        backend(FakeEngine(), tmp_path, FORGE_MEMORY_LIMIT="lots")
    with pytest.raises(ConfigError, match="FORGE_PIDS_LIMIT"):
        backend(FakeEngine(), tmp_path, FORGE_PIDS_LIMIT="3")
    be = backend(FakeEngine(), tmp_path, FORGE_MEMORY_LIMIT="2G", FORGE_PIDS_LIMIT="500")
    assert docker_backend.hardening(be._limits)["mem_limit"] == 2 * 1024**3
    assert docker_backend.hardening(be._limits)["pids_limit"] == 500


def test_ccache_stats_parse_and_rate() -> None:
    stats = docker_backend.parse_ccache_stats("direct_cache_hit\t3\npreprocessed_cache_hit\t1\ncache_miss\t4\nx\ty\n")
    assert stats == {"direct_cache_hit": 3, "preprocessed_cache_hit": 1, "cache_miss": 4}
    assert docker_backend.ccache_hit_rate(stats) == 0.5
    assert docker_backend.ccache_hit_rate({}) is None


def test_cgroup_v1_builds_get_a_host_like_cpu_share() -> None:
    v1 = docker_backend.fair_cpu_placement({"CgroupVersion": "1", "CgroupDriver": "cgroupfs"}, 2)
    assert v1 == {"cgroup_parent": "/", "cpu_shares": 2048}
    assert docker_backend.fair_cpu_placement({"CgroupVersion": "2", "CgroupDriver": "systemd"}, 2) == {}


def test_slow_engine_during_cleanup_warns_instead_of_raising(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = FakeEngine()
    be = backend(engine, tmp_path)
    be.prepare(CELL, HOST)
    (container,) = engine.containers_by_name.values()

    def timeout(force: bool = False) -> None:
        raise OSError("Read timed out")

    container.remove = timeout  # type: ignore[method-assign]
    be.close()
    assert f"docker rm -f {container.name}" in capsys.readouterr().out
    assert not [v for v in engine.volumes_by_name if v.startswith("forge-build-")]


def test_copy_in_gives_the_files_to_the_user_that_builds(tmp_path: Path) -> None:
    """repro's second build runs as forge-b, and the host wrote the wheelhouse under umask 0077: the
    copy must belong to the container's build user, or pip cannot read it (measured: Permission denied)."""
    house = tmp_path / "wheelhouse"
    house.mkdir(mode=0o700)
    (house / "w.whl").write_bytes(b"wheel")
    (house / "w.whl").chmod(0o600)
    for user, uid in (("forge", images.BUILD_UID), ("forge-b", images.BUILD_UID + 1)):
        engine = FakeEngine()
        with backend(engine, tmp_path, FORGE_CONTAINER_USER=user) as be:
            be.prepare(CELL, HOST)
            be.copy_in(house, PurePosixPath("/build/ember-wheelhouse"))
            dest, data = engine.put[-1]
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = tar.getmembers()
        assert dest == "/build" and {m.name for m in members} == {"ember-wheelhouse", "ember-wheelhouse/w.whl"}
        assert {(m.uid, m.uname, m.gid) for m in members} == {(uid, user, images.BUILD_UID)}
