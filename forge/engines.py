"""Where docker builds run: one engine or several, and how sources reach them.

- **Engines.** DOCKER_HOST (or the default socket) is one engine. FORGE_DOCKER_HOSTS=URL,URL,...
  (read in forge.config) spreads a matrix's docker cells over several: each cell leases an engine
  for its whole build (its native reference included), so an engine builds one cell at a time and
  `--jobs N` caps how many run at once. The docker backend builds on the leased engine and the
  manifest records which engine that was.
- **Sources.** An engine behind a local unix socket sees this machine's paths, so the checkout is
  bind-mounted read-only. Another one (tcp://, ssh://) cannot: the sources go in as a reproducible
  tarball (sorted, fixed times and owners) put into a volume with the SDK's `put_archive`. Results
  always come back with `get_archive`. FORGE_SOURCES=mount|copy forces either way.
- **Images.** A second engine has none of the first one's images. `transfer_image` moves one with
  save/load through the SDK: image ids survive it and tags are content hashes, so a moved image is
  the one forge would have built there and cells stay up to date across engines.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import queue
import tarfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge import archive, manifest
from forge.config import source_mode
from forge.errors import BackendError

DEFAULT_ENGINE = "unix:///var/run/docker.sock"
SOURCE_EPOCH = archive.ZIP_MIN_EPOCH
"""The time every copied source file carries: fixed (the tarball is the same bytes for the same tree)
and not before 1980, so a wheel zipped from the sources inside the container can hold it."""

_LEASED: contextvars.ContextVar[str | None] = contextvars.ContextVar("forge_engine", default=None)
_PEERS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("forge_engine_peers", default=())


def leased() -> str | None:
    """The engine this thread's cell was given by `EnginePool.lease`, if any."""
    return _LEASED.get()


def peers() -> tuple[str, ...]:
    """The pool's other engines while a lease is held (where a missing image may already be)."""
    return _PEERS.get()


def engine_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with DOCKER_HOST set to the leased engine (unchanged when no pool leased one)."""
    found = dict(env)
    host = leased()
    if host is not None:
        found["DOCKER_HOST"] = host
    return found


def engine_url(env: Mapping[str, str]) -> str:
    return env.get("DOCKER_HOST") or DEFAULT_ENGINE


def is_local(url: str) -> bool:
    """An engine on this machine's filesystem (a unix socket) can bind-mount the checkout."""
    return url.startswith("unix://")


def copies_sources(env: Mapping[str, str]) -> bool:
    """Whether a docker build with this environment copies its sources in (FORGE_SOURCES, else by engine)."""
    mode = source_mode(env)
    return mode == "copy" or (mode == "auto" and not is_local(engine_url(env)))


class EnginePool:
    """The engines of FORGE_DOCKER_HOSTS, each leased to one cell at a time (no hosts: no leases)."""

    def __init__(self, hosts: Iterable[str]) -> None:
        self.hosts = tuple(hosts)
        self._free: queue.Queue[str] = queue.Queue()
        for host in self.hosts:
            self._free.put(host)

    @contextlib.contextmanager
    def lease(self) -> Iterator[str | None]:
        """Wait for a free engine and build on it until the block ends; a no-op without hosts."""
        if not self.hosts:
            yield None
            return
        host = self._free.get()
        token = _LEASED.set(host)
        others = _PEERS.set(tuple(h for h in self.hosts if h != host))
        try:
            yield host
        finally:
            _PEERS.reset(others)
            _LEASED.reset(token)
            self._free.put(host)


# -- sources ------------------------------------------------------------------------------------

TOP_SKIPPED = frozenset({".benchmarks", ".venv", "venv"})
TOP_SKIPPED_PREFIXES = ("build", "bazel-")


def skipped(rel: str) -> bool:
    """What a copied source tree leaves out (`rel` relative to the checkout): VCS data, caches and
    results at any depth; virtual environments, build directories and Bazel's output links at the top."""
    parts = rel.split("/")
    if parts[-1] in manifest.SKIP_DIRS:
        return True
    return len(parts) == 1 and (parts[0] in TOP_SKIPPED or parts[0].startswith(TOP_SKIPPED_PREFIXES))


@dataclass(frozen=True)
class SourceArchive:
    data: bytes
    sha256: str
    files: int


def source_archive(repo: Path) -> SourceArchive:
    """The checkout as a build container sees it at /src, as a tarball that is the same bytes for
    the same tree (member order, times, owners and modes fixed)."""
    data = archive.tar_bytes(repo, SOURCE_EPOCH, skip=skipped)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        count = sum(1 for member in tar if not member.isdir())
    return SourceArchive(data, hashlib.sha256(data).hexdigest(), count)


def put_sources(container: Any, dest: str, sources: SourceArchive) -> None:
    """Unpack `sources` into the container's directory `dest` (a volume: the root filesystem is read-only)."""
    try:
        ok = container.put_archive(dest, sources.data)
    except Exception as err:  # docker.errors.APIError, or the connection to a remote engine dropping
        raise BackendError(f"could not copy the sources into {container.name}:{dest}", why=str(err)) from err
    if not ok:
        raise BackendError(f"the engine refused the sources for {container.name}:{dest}")


# -- images -------------------------------------------------------------------------------------


def fetch_from_peers(client: Any, spec: Any, mirror: str, env: Mapping[str, str], log: Any = print) -> list[str]:
    """Copy the base and toolchain images of `spec` from a peer engine that has them to `client`'s,
    so an engine of the pool does not build what another one already built; returns the tags moved.
    Under the image name's host-wide lock, so a peer's build of it finishes first."""
    from forge import daemon, images

    moved: list[str] = []
    with images.building(spec.name):
        for url in peers():
            peer = daemon.connect({**env, "DOCKER_HOST": url})
            if peer is None:
                continue
            try:
                base_tag, tag = images.expected_tags(peer, spec, mirror)
                if base_tag is None or tag is None or not _has(peer, tag):
                    continue
                for wanted in (base_tag, tag):
                    if not _has(client, wanted):
                        log(f"forge: copying {wanted} from {url} (docker save | docker load)")
                        transfer_image(peer, client, wanted)
                        moved.append(wanted)
                return moved
            finally:
                peer.close()
    return moved


def _has(client: Any, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def transfer_image(source: Any, dest: Any, tag: str) -> str:
    """Copy image `tag` from the engine `source` to the engine `dest` (docker save | docker load,
    through the SDK) unless `dest` has it already; returns its id there, which is the same."""
    import docker.errors

    try:
        return str(dest.images.get(tag).id)
    except docker.errors.ImageNotFound:
        pass
    try:
        image = source.images.get(tag)
    except docker.errors.ImageNotFound as err:
        raise BackendError(
            f"{tag} is on neither engine", fix="build it on the first engine: invoke images --build"
        ) from err
    loaded = dest.images.load(image.save(named=True))  # streamed: a toolchain image is about 1 GB
    if not any(tag in (img.tags or []) for img in loaded):
        raise BackendError(f"loading {tag} into the other engine did not create it")
    moved = str(dest.images.get(tag).id)
    if moved != image.id:
        raise BackendError(f"{tag} has id {moved} after the move, not {image.id}")
    return moved
