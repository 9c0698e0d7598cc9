"""The `docker` backend: every step runs in a throwaway container of the cell's toolchain image.

The container has no network, the repository mounted read-only at /src, temporary volumes at
/build (the engine build), /stage, /verify-build and /home, and a persistent compiler cache volume
per toolchain image at /ccache (FORGE_CCACHE_VOLUME names another); it runs as the image's
non-root user `forge`, with every capability dropped, no-new-privileges (the image's setuid
programs cannot raise anyone), a read-only root filesystem (tmpfs at /tmp and /var/tmp) and the
pids and memory limits of `forge.config.container_limits`. Commands run with `docker exec`,
artifacts leave with `copy_out`. `close` (also on Ctrl-C and failure) removes the container and its
volumes; `FORGE_KEEP_CONTAINER=1` keeps them and prints how to enter.

Sources on an engine that cannot see this machine's paths (DOCKER_HOST not a unix socket, or
FORGE_SOURCES=copy) are copied into a volume at /src instead of bind-mounted (forge.engines); a
matrix spread over FORGE_DOCKER_HOSTS builds each cell on the engine its thread leased. The
manifest's `engine` names the engine and how the sources went in.

Containers and volumes carry an owner label (a hash of the engine's identity and this forge
instance's id) and a session label (the pid), so the ones a killed forge left are removed the next
time a docker backend of the same forge starts, with a message; nobody else's are touched, even on
an engine shared through DOCKER_HOST.
"""

from __future__ import annotations

import hashlib
import io
import os
import shlex
import tarfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import docker.errors
from docker.types import Mount

from forge import daemon, engines, images, locks
from forge.backends.base import (
    CONTAINER_WORKSPACE,
    FAKETIME_ENV,
    UMASK_ENV,
    Backend,
    Workspace,
    check_variation_env,
    varied_command,
)
from forge.config import ContainerLimits, RemoteCache, ccache_remote, container_limits, process_environment
from forge.errors import BackendError, BuildInterrupted, ConfigError, StepFailedError
from forge.matrix import Cell
from forge.proc import tail
from forge.toolchains import load_toolchains

MANAGED = images.MANAGED_LABEL
SESSION_LABEL = "org.forge.session"
OWNER_LABEL = "org.forge.owner"
INSTANCE_FILE = locks.REPO / ".cache" / "forge" / "instance-id"
CAP_ADD: tuple[str, ...] = ()
"""Capabilities a build needs back after dropping ALL: none. Every step runs as the non-root build
user, whose processes hold no effective capability anyway (measured: a full cell build, verify and
repro's umask/faketime/other-user variation pass with none)."""
TMPFS = {"/tmp": "rw,nosuid,nodev,size=2g", "/var/tmp": "rw,nosuid,nodev,size=256m"}
SCRATCH = ("stage", "verify-build", "home")
"""Container directories a build writes besides /build and /ccache: a volume each (a fresh named
volume starts as a copy of the image's directory, owners and modes included)."""
INSIDE = CONTAINER_WORKSPACE  # /build, /stage and /verify-build are volumes of the container's session

# Probes whose first output line goes into the manifest: versions found inside the container.
VERSION_PROBES: dict[str, tuple[str, ...]] = {
    "cc": ("sh", "-c", '"$CC" --version'),
    "cxx": ("sh", "-c", '"$CXX" --version'),
    "cmake": ("cmake", "--version"),
    "ninja": ("ninja", "--version"),
    "python": ("python", "--version"),
    "numpy": ("python", "-c", "import numpy; print(numpy.__version__)"),
    "ccache": ("ccache", "--version"),
    "glibc": ("ldd", "--version"),
}


@dataclass(frozen=True)
class ImageChoice:
    """The toolchain image a build used, and its lock."""

    tag: str
    id: str
    key: str
    built: bool
    build_seconds: float
    base_built: bool
    base_seconds: float
    lock_path: Path
    lock_sha256: str
    lock_status: str


def parse_ccache_stats(text: str) -> dict[str, int]:
    """`ccache --print-stats` (tab-separated name/value lines) as a dict."""
    stats: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition("\t")
        if value.strip().isdigit():
            stats[name.strip()] = int(value)
    return stats


def ccache_hit_rate(stats: Mapping[str, int]) -> float | None:
    """Cacheable compilations served from the cache (0..1); None when nothing was compiled."""
    hits = stats.get("direct_cache_hit", 0) + stats.get("preprocessed_cache_hit", 0)
    total = hits + stats.get("cache_miss", 0)
    return hits / total if total else None


def instance_id(path: Path = INSTANCE_FILE) -> str:
    """This forge checkout's id on this machine: random, made once and kept under its cache."""
    try:
        found = path.read_text().strip()
    except OSError:
        found = ""
    if len(found) == 32 and all(c in "0123456789abcdef" for c in found):
        return found
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(uuid.uuid4().hex + "\n")
    try:
        os.link(tmp, path)  # the first writer wins; parallel cells then read the same id
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text().strip()


def owner_id(env: Mapping[str, str], info: Mapping[str, Any], instance: str) -> str:
    """Who owns forge's containers on this engine: the engine (DOCKER_HOST and the daemon's ID and
    name) and this forge instance, hashed. Another checkout, user or machine gets another owner."""
    engine = f"{env.get('DOCKER_HOST') or 'unix:///var/run/docker.sock'}|{info.get('ID', '')}|{info.get('Name', '')}"
    return hashlib.sha256(f"{engine}\0{instance}".encode()).hexdigest()[:24]


def _abandoned(labels: Mapping[str, str] | None, owner: str, alive: Callable[[int], bool]) -> str | None:
    """The dead session pid when these labels are this owner's and not kept; else None."""
    labels = labels or {}
    pid = labels.get(SESSION_LABEL, "")
    if labels.get(OWNER_LABEL) != owner or labels.get("org.forge.keep") == "1" or not pid.isdigit():
        return None
    return None if alive(int(pid)) else pid


def remove_stale(
    client: Any, alive: Callable[[int], bool], owner: str, log: Callable[[str], None] = print
) -> list[str]:
    """Remove this forge instance's containers and volumes whose session (a pid here) is gone,
    naming each; containers of other owners (another checkout, user or machine) are left alone."""
    removed: list[str] = []
    for container in client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"}):
        pid = _abandoned(container.labels, owner, alive)
        if pid is None:
            continue
        try:
            container.remove(force=True)
        except docker.errors.NotFound:  # another cell of this run, or another forge, removed it first
            continue
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # "removal ... is already in progress": another remover has it
                continue
            raise
        removed.append(container.name)
        log(f"forge: removed container {container.name}, left by forge session {pid} (no longer running)")
    for volume in client.volumes.list(filters={"label": f"{OWNER_LABEL}={owner}"}):
        pid = _abandoned(volume.attrs.get("Labels"), owner, alive)
        if pid is None:
            continue
        try:
            volume.remove(force=True)
        except docker.errors.APIError:  # a kept container still uses it
            continue
        removed.append(volume.name)
        log(f"forge: removed volume {volume.name}, left by forge session {pid} (no longer running)")
    return removed


REMOTE_CACHE_DIR = "/ccache-remote"


def remote_cache_mounts(remote: RemoteCache | None) -> tuple[list[Mount], dict[str, str]]:
    """The mount and environment that give a build container ccache's shared Redis storage.

    A build container has no network, so the server must listen on a unix socket, whose directory
    is mounted. ccache hashes the compiler's contents (compiler_check=content), so only builds with
    identical compilers share entries."""
    if remote is None:
        return [], {}
    if remote.socket is None:
        raise ConfigError(
            f"FORGE_CCACHE_REMOTE={remote.url}: build containers have no network, so they cannot reach a TCP Redis",
            "the docker backend shares the compiler cache through a unix socket mounted into the container",
            "start redis with --unixsocket PATH --unixsocketperm 777 and set FORGE_CCACHE_REMOTE=redis+unix:PATH",
        )
    mount = Mount(REMOTE_CACHE_DIR, str(remote.socket.parent), type="bind")
    inside = f"redis+unix:{REMOTE_CACHE_DIR}/{remote.socket.name}"
    return [mount], {"CCACHE_REMOTE_STORAGE": inside, "CCACHE_COMPILERCHECK": "content"}


def hardening(limits: ContainerLimits) -> dict[str, Any]:
    """containers.create options that leave a build no more power than it needs."""
    return {
        "cap_drop": ["ALL"],
        "cap_add": list(CAP_ADD) or None,
        "security_opt": ["no-new-privileges:true"],
        "read_only": True,
        "tmpfs": dict(TMPFS),
        "pids_limit": limits.pids,
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,  # no swap beyond the memory limit
    }


def fair_cpu_placement(info: Mapping[str, Any], cpus: int) -> dict[str, Any]:
    """Container options that give a build the CPU share it would have on the host.

    With cgroup v1 and the cgroupfs driver, every container lives under /docker, a group that
    weighs as much as ONE host process: on a busy shared machine a 2-job build in a container
    then gets half of what the same build gets on the host. A container group directly under the
    root, weighted like `cpus` processes, competes like the host build does.
    """
    if str(info.get("CgroupVersion", "")) == "1" and info.get("CgroupDriver") == "cgroupfs":
        return {"cgroup_parent": "/", "cpu_shares": 1024 * max(cpus, 1)}
    return {}


def toolchain_spec(cell: Cell) -> images.ToolchainSpec:
    """The image spec of a cell, with the cross compiler and qemu its target needs."""
    target = load_toolchains(images.TOOLCHAINS).targets.get(cell.target)
    return images.ToolchainSpec.from_cell(cell, target=target)


def bazel_volume(image_name: str) -> str:
    """The Bazel cache volume of a toolchain image (output bases and disk cache), named like ccache's."""
    return f"forge-bazel-{image_name}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DockerBackend(Backend):
    """Builds one cell inside a container of its toolchain image."""

    name = "docker"

    def __init__(
        self,
        client: Any | None = None,
        *,
        mirror: str | None = None,
        env: Mapping[str, str] | None = None,
        update_locks: bool = False,
        keep: bool = False,
        lock_dir: Path = locks.LOCK_DIR,
        instance_file: Path = INSTANCE_FILE,
    ) -> None:
        self._env = engines.engine_env(process_environment() if env is None else env)  # the leased engine, if any
        self._client = client
        self._mirror = mirror
        self._keep = keep  # FORGE_KEEP_CONTAINER and FORGE_UPDATE_LOCKS are read in config.py, once
        self._update_locks = update_locks
        self._lock_dir = lock_dir
        self._container: Any | None = None
        self._volumes: list[Any] = []
        self._limits = container_limits(self._env)
        self._remote = ccache_remote(self._env)
        self._instance_file = instance_file
        self._copy_sources = engines.copies_sources(self._env)
        self._sources: engines.SourceArchive | None = None
        self._engine: dict[str, object] = {}
        self.image: ImageChoice | None = None
        # forge.repro varies these between its two builds; an ordinary build leaves them unset.
        self._hostname = self._env.get("FORGE_CONTAINER_HOSTNAME") or None
        self._build_dir = PurePosixPath(self._env.get("FORGE_CONTAINER_BUILD_DIR") or str(INSIDE.build))
        self._user = self._env.get("FORGE_CONTAINER_USER") or images.BUILD_USERS[0]
        if self._user not in images.BUILD_USERS:
            raise ConfigError(
                f"FORGE_CONTAINER_USER={self._user!r} is not a user of the toolchain images",
                fix=f"use one of {', '.join(images.BUILD_USERS)}, or unset it",
            )
        check_variation_env(self._env)
        # What every command runs with besides the step's environment (umask and clock, if varied).
        self._variation = {k: self._env[k] for k in (FAKETIME_ENV, UMASK_ENV) if self._env.get(k)}

    @property
    def client(self) -> Any:
        """The engine client, connecting (and starting dockerd where allowed) on first use."""
        if self._client is None:
            self._client = daemon.ensure_daemon(self._env)
        return self._client

    # -- image -------------------------------------------------------------------------------

    def choose_image(self, cell: Cell) -> ImageChoice:
        """Find or build the cell's toolchain image and reconcile its lock."""
        spec = toolchain_spec(cell)
        mirror = self._mirror or images.debian_mirror(self._env)
        if engines.peers():  # a matrix spread over FORGE_DOCKER_HOSTS: another engine may have built it
            engines.fetch_from_peers(self.client, spec, mirror, self._env)
        base, image = images.ensure_toolchain_image(
            self.client, spec, mirror, lock_dir=self._lock_dir, update_locks=self._update_locks
        )
        path, status = locks.check_image_lock(
            self.client, image.tag, spec.name, image.built, self._update_locks, self._lock_dir
        )
        if image.built:  # a no-op unless the lock now pins what plain requirements installed
            image = images.adopt_lock(self.client, spec, base, image, lock_dir=self._lock_dir)
        lock_sha = locks.Lock(spec.name, locks.parse_lock(path.read_text(), spec.name, str(path)).packages).digest()
        return ImageChoice(
            tag=image.tag,
            id=image.id,
            key=image.key,
            built=image.built,
            build_seconds=image.seconds,
            base_built=base.built,
            base_seconds=base.seconds,
            lock_path=path,
            lock_sha256=lock_sha,
            lock_status=status,
        )

    # -- Backend -----------------------------------------------------------------------------

    def provide_image(self, cell: Cell) -> None:
        self.image = self.choose_image(cell)

    def prepare(self, cell: Cell, host: Workspace) -> Workspace:
        info = self.client.info()
        self._engine = {
            "url": engines.engine_url(self._env),
            "name": info.get("Name"),
            "id": info.get("ID"),  # dockerds sharing /etc/docker share it; the root directory tells them apart
            "root_dir": info.get("DockerRootDir"),
            "version": info.get("ServerVersion"),
            "sources": "copy" if self._copy_sources else "mount",
        }
        owner = owner_id(self._env, info, instance_id(self._instance_file))
        remove_stale(self.client, pid_alive, owner)
        if self.image is None:  # a caller that skipped the image step
            self.image = self.choose_image(cell)
        spec = toolchain_spec(cell)
        session = {MANAGED: "build", OWNER_LABEL: owner, SESSION_LABEL: str(os.getpid()), "org.forge.cell": cell.id}
        if self._keep:
            session["org.forge.keep"] = "1"
        suffix = uuid.uuid4().hex[:8]
        try:
            build = self.client.volumes.create(name=f"forge-build-{suffix}", labels=session)
            self._volumes.append(build)
            scratch = []
            for name in SCRATCH:
                self._volumes.append(self.client.volumes.create(name=f"forge-{name}-{suffix}", labels=session))
                scratch.append(Mount(f"/{name}", self._volumes[-1].name, type="volume"))
            ccache = self._env.get("FORGE_CCACHE_VOLUME") or f"forge-ccache-{spec.name}"
            self.client.volumes.create(name=ccache, labels={MANAGED: "ccache"})
            caches = [Mount(str(INSIDE.ccache), ccache, type="volume")]
            if cell.bazel:  # Bazel's output bases and disk cache, kept per image like ccache's
                volume = bazel_volume(spec.name)
                self.client.volumes.create(name=volume, labels={MANAGED: "bazel-cache"})
                caches.append(Mount(str(INSIDE.bazel_cache), volume, type="volume"))
            shared, shared_env = remote_cache_mounts(self._remote)
            source = Mount(str(INSIDE.source), str(host.source), type="bind", read_only=True)
            if self._copy_sources:  # the engine cannot see host.source: a volume the sources are put into
                self._volumes.append(self.client.volumes.create(name=f"forge-src-{suffix}", labels=session))
                source = Mount(str(INSIDE.source), self._volumes[-1].name, type="volume")
            placement = fair_cpu_placement(info, os.cpu_count() or 1)
            self._container = self.client.containers.create(
                self.image.tag,
                ["sleep", "infinity"],
                name=f"forge-{cell.id}-{suffix}",
                init=True,
                network_mode="none",
                user=self._user,
                **placement,
                **hardening(self._limits),
                hostname=self._hostname,
                working_dir=str(INSIDE.build),
                labels=session,
                mounts=[
                    source,
                    Mount(str(INSIDE.build), build.name, type="volume"),
                    *caches,
                    *scratch,
                    *shared,
                ],
                environment=shared_env,
            )
            self._container.start()
        except docker.errors.APIError as err:
            self.close()
            raise BackendError(f"could not start a build container for {cell.id}", why=str(err)) from err
        if self._copy_sources:
            try:
                self._sources = engines.source_archive(Path(host.source))
                engines.put_sources(self._container, str(INSIDE.source), self._sources)
            except BaseException:
                self.close()
                raise
        if self._exec(["test", "-r", f"{INSIDE.source}/engine/CMakeLists.txt"])[0] != 0:
            self.close()
            raise BackendError(
                f"the build user in the container cannot read the sources at {host.source}",
                why=f"they are mounted at {INSIDE.source} for uid {images.BUILD_UID}, which needs read access",
                fix=f"make the tree world-readable (chmod -R o+rX {host.source}) or build from a copy that is",
            )
        inside = INSIDE if cell.bazel else replace(INSIDE, bazel_cache=None)
        if self._user == images.BUILD_USERS[0]:
            self._exec(["ccache", "--zero-stats"])
            if cell.bazel:
                self._own_bazel_cache()
        else:
            # The cache volumes belong to the first user; another one (repro's second build) works
            # without them: no compiler cache, zig builds its runtime afresh in the user's home,
            # Bazel starts from an empty output base and disk cache in the build volume.
            inside = replace(inside, ccache=None, bazel_cache=None)
        if self._build_dir != INSIDE.build:  # a path inside the build volume, so the build user may write it
            self._exec(["mkdir", "-p", str(self._build_dir)])
            inside = replace(inside, build=self._build_dir)
        return inside

    def _own_bazel_cache(self) -> None:
        """Let the build user write the Bazel cache volume: the image has no /bazel-cache (adding one
        would change every image's hash), so the volume's root is root's. Root with no capability
        may still chmod what it owns; the build user's own directories inside keep its modes."""
        assert self._container is not None
        result = self._container.exec_run(["chmod", "1777", str(INSIDE.bazel_cache)], user="0")
        if result.exit_code != 0:
            self.close()
            raise BackendError(
                f"cannot open the Bazel cache volume {INSIDE.bazel_cache} to the build user",
                why=bytes(result.output or b"").decode(errors="replace").strip(),
                fix="remove the volume (docker volume ls --filter label=org.forge.managed=bazel-cache) and build again",
            )

    def _exec(self, argv: Sequence[str]) -> tuple[int, bytes]:
        if self._container is None:
            raise BackendError("the docker backend was not prepared", fix="call prepare() before run()")
        result = self._container.exec_run(list(argv), user=self._user)
        return int(result.exit_code), bytes(result.output or b"")

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: PurePosixPath,
        env: Mapping[str, str],
        log_path: Path,
    ) -> None:
        if self._container is None:
            raise BackendError("the docker backend was not prepared", fix="call prepare() before run()")
        api = self.client.api
        command = shlex.join(argv)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            log.write(f"$ {command}  # in {self._container.name}\n".encode())
            try:
                wrapped, full = varied_command(argv, {**env, **self._variation})
                exec_id = api.exec_create(
                    self._container.id, wrapped, workdir=str(cwd), environment=full, user=self._user
                )["Id"]
                for chunk in api.exec_start(exec_id, stream=True):
                    log.write(chunk)
                code = api.exec_inspect(exec_id)["ExitCode"]
            except KeyboardInterrupt:
                self.close()  # removing the container ends every process in it
                raise BuildInterrupted("interrupted", f"while running in a container: {command}") from None
        if code != 0:
            raise StepFailedError(
                f"command exited with {code} in container {self._container.name}: {command}",
                f"last lines of {log_path}:\n{tail(log_path)}",
                f"read the full log: {log_path}; FORGE_KEEP_CONTAINER=1 keeps the container to look inside",
            )

    def output(self, argv: Sequence[str]) -> str | None:
        code, out = self._exec(argv)
        return out.decode(errors="replace") if code == 0 else None

    def copy_out(self, src: PurePosixPath, dest: Path) -> None:
        if self._container is None:
            raise BackendError("the docker backend was not prepared", fix="call prepare() before copy_out()")
        try:
            stream, _ = self._container.get_archive(str(src))
        except docker.errors.NotFound as err:
            raise BackendError(f"{src} does not exist in container {self._container.name}") from err
        dest.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO(b"".join(stream))
        with tarfile.open(fileobj=buffer) as archive:
            members = []
            for member in archive.getmembers():
                # The archive's top directory is src's basename; strip it so dest receives src's contents.
                _, _, rest = member.name.partition("/")
                if not rest:
                    continue
                member.name = rest
                members.append(member)
            archive.extractall(dest, members=members, filter="tar")

    def copy_in(self, src: Path, dest: PurePosixPath) -> None:
        """`src` into the container as `dest` (its parent must exist), owned by the container's build
        user (repro's second build runs as `forge-b`, and the host may have written `src` under its
        umask 0077): a tar stream through the engine API, so it works on a remote engine too."""
        if self._container is None:
            raise BackendError("the docker backend was not prepared", fix="call prepare() before copy_in()")
        uid = images.BUILD_UID + images.BUILD_USERS.index(self._user)  # the images' useradd order
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:

            def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
                info.uid, info.gid = uid, images.BUILD_UID  # both users are in the group `forge`
                info.uname, info.gname = self._user, images.BUILD_USERS[0]
                return info

            archive.add(src, arcname=dest.name, filter=owned)
        self._exec(["rm", "-rf", str(dest)])
        try:
            self._container.put_archive(str(dest.parent), buffer.getvalue())
        except docker.errors.APIError as err:
            raise BackendError(f"could not copy {src} into {self._container.name}:{dest}", why=str(err)) from err

    def identity(self) -> dict[str, str]:
        if self.image is None:
            return {}
        return {"image_id": self.image.id, "lock_sha256": self.image.lock_sha256}

    def facts(self) -> dict[str, object]:
        """Manifest facts: the image, its lock, versions found inside, compiler cache statistics."""
        versions = {}
        for name, argv in VERSION_PROBES.items():
            out = self.output(argv)
            versions[name] = out.strip().splitlines()[0] if out and out.strip() else None
        stats = parse_ccache_stats(self.output(["ccache", "--print-stats"]) or "")
        rate = ccache_hit_rate(stats)
        counted = {k: v for k, v in stats.items() if v and not k.endswith("_timestamp")}
        facts: dict[str, Any] = {"container_versions": versions, "ccache": {"hit_rate": rate, "stats": counted}}
        if self._engine:
            facts["engine"] = dict(self._engine)
            if self._sources is not None:
                facts["engine"]["source_archive"] = {"sha256": self._sources.sha256, "files": self._sources.files}
        if self._remote is not None:
            facts["ccache"]["remote"] = {
                "url": self._remote.url,
                "hits": stats.get("remote_storage_hit", 0),
                "misses": stats.get("remote_storage_miss", 0),
            }
        if self.image is not None:
            facts["image"] = {
                "tag": self.image.tag,
                "id": self.image.id,
                "key": self.image.key,
                "built_now": self.image.built,
                "build_seconds": round(self.image.build_seconds, 1),
                "lock": str(self.image.lock_path.relative_to(locks.REPO))
                if self.image.lock_path.is_relative_to(locks.REPO)
                else str(self.image.lock_path),
                "lock_sha256": self.image.lock_sha256,
                "lock_status": self.image.lock_status,
            }
        return facts

    def close(self) -> None:
        container, volumes = self._container, self._volumes
        self._container, self._volumes = None, []
        names = " ".join(v.name for v in volumes)
        if self._keep and container is not None:
            print(
                f"forge: kept container {container.name} (FORGE_KEEP_CONTAINER=1); enter it with\n"
                f"  docker exec -it {container.name} bash\n"
                f"remove it with: docker rm -f {container.name} && docker volume rm {names}"
            )
            return
        if container is not None:
            _remove(container, f"docker rm -f {container.name}")
        for volume in volumes:
            _remove(volume, f"docker volume rm -f {volume.name}")


def _remove(obj: Any, command: str) -> None:
    """Remove a container or volume; never let a slow engine turn cleanup into a second failure."""
    for attempt in (1, 2):
        try:
            obj.remove(force=True)
            return
        except docker.errors.NotFound:
            return
        except (docker.errors.APIError, OSError) as err:
            if attempt == 2:
                print(f"forge: could not remove {obj.name} ({err}); the next build removes it, or run: {command}")
