"""Toolchain images built locally: debootstrap base, rendered Dockerfile layer, content-hash tags.

Nothing is pulled from a registry. A base image is a `debootstrap --variant=minbase` root
filesystem of a Debian suite, fetched from the machine's configured mirror and imported. A
toolchain image is `dockerfiles/<family>.Dockerfile` rendered for one cell and built on that base.
Its tag is a hash of everything that went in (template text, arguments, base image id, pins): an
unchanged image is found and reused, a changed input gives a new tag and a new build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import docker
import docker.errors
from packaging.version import Version

from forge import bazel, cuda, filelock, host, locks, pkgcache
from forge.errors import BackendError, ConfigError, StepFailedError
from forge.proc import run_command
from forge.targets.base import ImageExtras
from forge.targets.family import family_for
from forge.toolchains import Suite, Target, load_toolchains

REPO = Path(__file__).resolve().parent.parent
DOCKERFILES = REPO / "dockerfiles"
TOOLCHAINS = REPO / "toolchains"
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")
KEY_FORMAT = "1"  # bump to force every image to rebuild when the hashing scheme changes
MANAGED_LABEL = "org.forge.managed"
BUILD_UID = 1000
# The image's build users: `forge` (uid BUILD_UID) builds; `forge-b` (the next uid, same group)
# is the other user repro's second build runs as.
BUILD_USERS = ("forge", "forge-b")


def suite_facts(suite: str, toolchains_dir: Path = TOOLCHAINS) -> Suite:
    """What Debian `suite` ships (gcc versions, python, cmake), from toolchains/debian.yaml."""
    suites = {s.name: s for s in load_toolchains(toolchains_dir).suites}
    if suite not in suites:
        raise ConfigError(f"unknown Debian suite {suite!r}", fix=f"use one of {', '.join(sorted(suites))}")
    return suites[suite]


APT_BASE_PACKAGES: tuple[str, ...] = (
    "ca-certificates",
    "ccache",
    "faketime",  # repro's second build runs under a shifted wall clock
    "file",
    "libeigen3-dev",
    "make",
    "ninja-build",
    "pkg-config",
    "python3",
    "python3-dev",
    "python3-venv",
)


# ---------------------------------------------------------------------------------------------
# The Debian mirror, from the machine's apt sources


def parse_apt_sources(text: str, deb822: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(URI, suites) of every `deb` entry in a sources.list (one-line) or .sources (deb822) text."""
    entries: list[tuple[str, tuple[str, ...]]] = []
    if not deb822:
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            line = re.sub(r"\[[^\]]*\]", " ", line)  # drop [arch=... signed-by=...] options
            words = line.split()
            if len(words) >= 3 and words[0] == "deb":
                entries.append((words[1], (words[2],)))
        return entries
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for raw in stanza.splitlines():
            if raw.startswith("#") or ":" not in raw or raw[:1].isspace():
                continue
            name, value = raw.split(":", 1)
            fields[name.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
            continue
        for uri in fields.get("uris", "").split():
            entries.append((uri, tuple(fields.get("suites", "").split())))
    return entries


def debian_mirror(env: Mapping[str, str], apt_dir: Path = Path("/etc/apt")) -> str:
    """The Debian archive URI this machine's apt uses (FORGE_DEBIAN_MIRROR overrides it)."""
    if env.get("FORGE_DEBIAN_MIRROR"):
        return env["FORGE_DEBIAN_MIRROR"]
    files = [(apt_dir / "sources.list", False)]
    files += [(p, False) for p in sorted((apt_dir / "sources.list.d").glob("*.list"))]
    files += [(p, True) for p in sorted((apt_dir / "sources.list.d").glob("*.sources"))]
    known = {"buster", "bullseye", "bookworm", "trixie", "forky", "sid", "unstable", "testing", "stable"}
    for path, deb822 in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for uri, suites in parse_apt_sources(text, deb822):
            if any(s in known for s in suites) and "security" not in uri:
                return uri.rstrip("/")
    raise ConfigError(
        f"no Debian mirror found in {apt_dir}/sources.list or {apt_dir}/sources.list.d/",
        why="base images are debootstrapped from the mirror apt already uses; none names a Debian suite",
        fix="add a Debian entry to apt's sources, or set FORGE_DEBIAN_MIRROR=<archive URI>",
    )


# ---------------------------------------------------------------------------------------------
# What goes into a toolchain image (pure)


@dataclass(frozen=True)
class ToolchainSpec:
    """The inputs of one toolchain image; cells that agree on these share the image."""

    suite: str
    gcc: str
    python: str
    numpy: str
    cmake: str
    pip: tuple[str, ...] = field(default=())
    family: str = "debian"
    cross: tuple[str, ...] = field(default=())  # Debian cross compiler + qemu-user for foreign targets
    arch: str = ""  # the foreign architecture those are for ("" for native images)
    bazel: str = ""  # the suite's bazel-bootstrap version, for cells Bazel builds ("" for CMake cells)
    cuda: str = ""  # the CUDA toolkit in the image (its wheels are in `pip`; "" for CPU cells)
    cuda_apt: tuple[str, ...] = field(default=())  # ... or its Debian packages (toolchains/cuda/debian.yaml)
    apt_components: tuple[str, ...] = field(default=())  # the suite's components those need besides main
    dpkg_arch: str = ""  # the foreign dpkg architecture of `foreign` (debian-multiarch.Dockerfile)
    foreign: tuple[str, ...] = field(default=())  # packages of that architecture: the target's libpython-dev
    multiarch: str = ""  # their multiarch triple, the cross sysroot's name

    @classmethod
    def from_cell(cls, cell: Any, pip: Iterable[str] = (), target: Target | None = None) -> ToolchainSpec:
        """The spec of a resolved `forge.cell.Cell` (checked against what its suite ships)."""
        extras = family_for(target).image_extras(cell, target) if target is not None else ImageExtras()
        gcc = cell.gcc
        if gcc is None and extras.suite_gcc:
            # the compiler is a pinned wheel in the venv (zig); the suite's gcc is only the image's host compiler
            gcc = suite_facts(cell.suite).gcc[0]
        if gcc is None:
            raise ConfigError(
                f"cell {cell.id} has no gcc", why="Debian toolchain images are gcc images", fix="use the zig path"
            )
        family, cuda_pins, cuda_apt, components = cuda_image(cell)
        if extras.dpkg_arch:  # a CPU cross cell: the same image plus the target's multiarch packages
            family = "debian-multiarch"
        spec = cls(
            suite=cell.suite,
            gcc=str(gcc),
            python=str(cell.python),
            numpy=str(cell.numpy),
            cmake=str(cell.cmake),
            pip=(*pip, *extras.pip, *cuda_pins),
            family=family,
            cross=extras.cross,
            arch=extras.arch,
            bazel=str(cell.bazel or ""),
            cuda=str(cell.cuda or ""),
            cuda_apt=cuda_apt,
            apt_components=components,
            dpkg_arch=extras.dpkg_arch,
            foreign=extras.foreign,
            multiarch=extras.multiarch,
        )
        spec.check()
        return spec

    def check(self) -> None:
        facts = suite_facts(self.suite)
        if self.gcc not in facts.gcc:
            raise ConfigError(
                f"gcc {self.gcc} is not packaged in Debian {self.suite}",
                fix=f"{self.suite} has gcc {', '.join(facts.gcc)}",
            )
        if self.python != facts.python:
            raise ConfigError(
                f"python {self.python} is not Debian {self.suite}'s python",
                why=f"toolchain images use the suite's python3 ({facts.python})",
                fix=f"pick the suite whose python is {self.python}",
            )
        toolkit = cuda.image_toolkit(self.cuda) if self.cuda_apt else None
        if toolkit is not None and toolkit.suite != self.suite:
            raise ConfigError(
                f"CUDA {self.cuda} is packaged in Debian {toolkit.suite}, not {self.suite}",
                why=f"{cuda.ToolkitSource.DEBIAN.value} installs it from that suite's archive",
                fix=f"build the CUDA {self.cuda} cell on {toolkit.suite}",
            )
        if self.bazel and self.bazel != facts.bazel:
            raise ConfigError(
                f"Bazel {self.bazel} is not Debian {self.suite}'s {bazel.PACKAGE}",
                why=f"Bazel cells use the suite's {bazel.PACKAGE} ({facts.bazel})",
                fix=f"pick the suite whose {bazel.PACKAGE} is {self.bazel}",
            )

    @property
    def pip_cmake(self) -> bool:
        """True when the cell pins a cmake the suite does not ship: it then comes from PyPI."""
        ours, theirs = Version(self.cmake), Version(suite_facts(self.suite).cmake)
        return (ours.major, ours.minor) != (theirs.major, theirs.minor)

    @property
    def name(self) -> str:
        """Readable part of the tag, e.g. bookworm-gcc12-py3.11-np2.1."""
        name = f"{self.suite}-gcc{self.gcc}-py{self.python}-np{self.numpy}"
        name += f"-cmake{self.cmake}" if self.pip_cmake else ""
        name += f"-bz{self.bazel}" if self.bazel else ""
        name += f"-cu{self.cuda}" if self.cuda else ""
        return name + (f"-{self.arch}" if self.arch else "")

    def apt_packages(self) -> list[str]:
        extra = [f"gcc-{self.gcc}", f"g++-{self.gcc}"] + ([] if self.pip_cmake else ["cmake"])
        extra += [bazel.PACKAGE] if self.bazel else []
        return sorted(set(APT_BASE_PACKAGES) | set(extra) | set(self.cross) | set(self.cuda_apt))

    def pip_requirements(self) -> list[str]:
        reqs = [pin(self.numpy, "numpy")]
        if self.pip_cmake:
            reqs.append(pin(self.cmake, "cmake"))
        return reqs + list(self.pip)


def cuda_image(cell: Any) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(template family, pinned CUDA wheels, CUDA apt packages, apt components besides main) of a
    cell's image: the plain template for a CPU cell; for a CUDA cell, what its toolkit's source
    needs (forge/cuda.py ToolkitSource: debian-cuda.Dockerfile with the wheels of
    toolchains/cuda/wheels.yaml, or debian-cuda-apt.Dockerfile with the packages of
    toolchains/cuda/debian.yaml)."""
    if cell.cuda is None:
        return "debian", (), (), ()
    toolkit = cuda.image_toolkit(str(cell.cuda))
    if toolkit is None:
        raise ConfigError(
            f"no image holds CUDA {cell.cuda}'s nvcc",
            "toolchains/cuda/wheels.yaml and debian.yaml list the toolkits forge installs into images",
            "resolve the cell first: the resolver refuses such a request with the nearest feasible cell",
        )
    return toolkit.source.family, toolkit.wheels, toolkit.packages, toolkit.components


def pin(version: str, package: str) -> str:
    """`numpy==2.1.*` for a minor version, `numpy==2.1.3` for a full one."""
    parts = version.split(".")
    return f"{package}=={version}" if len(parts) >= 3 else f"{package}=={version}.*"


def toolchain_args(spec: ToolchainSpec, base_ref: str, hashed: bool = False) -> dict[str, str]:
    foreign = {
        "DPKG_ARCH": spec.dpkg_arch,
        "FOREIGN_PACKAGES": " ".join(sorted(spec.foreign)),
        "MULTIARCH": spec.multiarch,
    }
    toolkit = cuda.image_toolkit(spec.cuda) if spec.cuda_apt else None
    apt_cuda = {
        "APT_COMPONENTS": " ".join(spec.apt_components),
        "NVCC": str(toolkit.nvcc if toolkit else ""),
        "CUOBJDUMP": str(toolkit.cuobjdump if toolkit else ""),
    }
    return {
        **(foreign if spec.dpkg_arch else {}),
        **(apt_cuda if spec.cuda_apt else {}),
        "BASE": base_ref,
        "SUITE": spec.suite,
        "GCC": spec.gcc,
        "PYTHON": spec.python,
        "UID": str(BUILD_UID),
        "UID_B": str(BUILD_UID + 1),
        "APT_PACKAGES": " ".join(spec.apt_packages()),
        "PIP_HASH_FLAGS": "--require-hashes" if hashed else "",
    }


def pip_requirements_file(
    spec: ToolchainSpec, lock_dir: Path = locks.LOCK_DIR, update: bool = False
) -> tuple[str, bool]:
    """(requirements.txt of the image, whether it pins wheels by sha256).

    Pinned from the image's lock when the lock records a wheel for every requirement; the plain
    requirements for a first build and for `--update-locks` (the lock then records the hashes).
    """
    lock = None if update else locks.read_lock(locks.lock_path(spec.name, lock_dir), spec.name)
    pinned = locks.requirements_from_lock(lock, spec.pip_requirements())
    if pinned is not None:
        return pinned, True
    return "".join(f"{r}\n" for r in spec.pip_requirements()), False


PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def render_dockerfile(template: str, args: Mapping[str, str], source: str = "template") -> str:
    """Replace every @NAME@; an unknown placeholder or an unused argument is an error."""
    used = set(PLACEHOLDER.findall(template))
    if missing := sorted(used - set(args)):
        raise ConfigError(
            f"{source}: placeholder(s) {', '.join(missing)} have no value",
            fix="add them to forge.images.toolchain_args or remove them from the template",
        )
    if unused := sorted(set(args) - used):
        raise ConfigError(
            f"{source}: argument(s) {', '.join(unused)} are not used by the template",
            fix="use @NAME@ in the template, or stop passing the argument",
        )
    return PLACEHOLDER.sub(lambda m: args[m.group(1)], template)


def host_ca_certificates(ca_dir: Path = HOST_CA_DIR) -> dict[str, bytes]:
    """The host's locally added CA certificates (name -> PEM), copied into toolchain images."""
    if not ca_dir.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(ca_dir.glob("*.crt")) if p.is_file()}


def image_key(
    template: str,
    args: Mapping[str, str],
    base_id: str,
    pins: Iterable[str],
    context: Mapping[str, bytes] | None = None,
) -> str:
    """sha256 of everything that goes into an image, in a canonical encoding."""
    files = {name: hashlib.sha256(data).hexdigest() for name, data in sorted((context or {}).items())}
    doc = {
        "format": KEY_FORMAT,
        "template": template,
        "args": dict(sorted(args.items())),
        "base": base_id,
        "pins": sorted(pins),
        "context": files,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def base_key(suite: str, mirror: str, debootstrap_version: str) -> str:
    doc = {
        "format": KEY_FORMAT,
        "suite": suite,
        "mirror": mirror,
        "variant": "minbase",
        "debootstrap": debootstrap_version,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def toolchain_tag(spec: ToolchainSpec, key: str) -> str:
    return f"forge/toolchain:{spec.name}-{key[:12]}"


@dataclass(frozen=True)
class PlannedImage:
    """What a toolchain image of `spec` on a base is made of now: its inputs, content key and tag."""

    template_path: Path
    template: str
    args: dict[str, str]
    context: dict[str, bytes]
    key: str
    tag: str


def plan_image(
    spec: ToolchainSpec,
    base_tag: str,
    base_id: str,
    template_dir: Path = DOCKERFILES,
    lock_dir: Path = locks.LOCK_DIR,
    update: bool = False,
) -> PlannedImage:
    """The inputs, key and tag `ensure_toolchain_image` uses for `spec` (it builds the tag when missing)."""
    template_path = template_dir / f"{spec.family}.Dockerfile"
    template = template_path.read_text()
    context, hashed = image_context(spec, lock_dir, update)
    args = toolchain_args(spec, base_tag, hashed)
    key = image_key(template, args, base_id, spec.pip_requirements(), context)
    return PlannedImage(template_path, template, args, context, key, toolchain_tag(spec, key))


# ---------------------------------------------------------------------------------------------
# Doing: base images, toolchain builds, listing and pruning


@dataclass(frozen=True)
class ImageRef:
    """An image forge built or found: its tag, engine id, content key, and what it cost now."""

    tag: str
    id: str
    key: str
    name: str
    built: bool
    seconds: float


def _find(client: docker.DockerClient, tag: str) -> Any | None:
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def _run_host(argv: list[str], what: str) -> None:
    print(f"+ {' '.join(argv)}", flush=True)
    proc = run_command(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise StepFailedError(
            f"{what} failed (exit {proc.returncode}): {' '.join(argv)}", why=(proc.stdout + proc.stderr)[-3000:]
        )


def debootstrap_version() -> str:
    proc = run_command(["debootstrap", "--version"], capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def ensure_base_image(client: docker.DockerClient, suite: str, mirror: str) -> ImageRef:
    """`forge/base:<suite>-<key>`: a minbase debootstrap of `suite` from `mirror`, imported."""
    with building(f"base-{suite}"):
        return _ensure_base_image(client, suite, mirror)


def _ensure_base_image(client: docker.DockerClient, suite: str, mirror: str) -> ImageRef:
    host.require(host.tool("debootstrap"), "base images are debootstrapped")
    key = base_key(suite, mirror, debootstrap_version())
    tag = f"forge/base:{suite}-{key[:12]}"
    if (found := _find(client, tag)) is not None:
        return ImageRef(tag, found.id, key, suite, built=False, seconds=0.0)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"forge-base-{suite}-") as tmp:
        rootfs, tarball = Path(tmp) / "rootfs", Path(tmp) / "rootfs.tar"
        _run_host(["debootstrap", "--variant=minbase", suite, str(rootfs), mirror], f"debootstrap of {suite}")
        _run_host(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."], "packing the rootfs")
        changes = [f"LABEL {MANAGED_LABEL}=base org.forge.suite={suite} org.forge.key={key}", 'CMD ["/bin/bash"]']
        client.api.import_image_from_file(
            str(tarball), repository="forge/base", tag=tag.split(":", 1)[1], changes=changes
        )
    found = _find(client, tag)
    if found is None:
        raise BackendError(f"importing the {suite} root filesystem did not create {tag}")
    return ImageRef(tag, found.id, key, suite, built=True, seconds=time.monotonic() - start)


def build_image(
    client: docker.DockerClient,
    dockerfile: str,
    tag: str,
    labels: Mapping[str, str],
    context: Mapping[str, bytes],
    files: Mapping[str, Path] | None = None,
    network: str = "host",
    fresh: bool = False,
) -> None:
    """Build `dockerfile` with the host network so apt and pip reach the mirrors; `context` holds
    the other files of the build context (ca/<name>.crt, requirements.txt), `files` more of them
    copied from disk (an offline build's packages, with `network="none"`). `fresh` ignores the
    engine's layer cache, so apt and pip resolve again (a cached `apt-get install` layer would
    replay what the mirror held when it was made)."""
    with tempfile.TemporaryDirectory(prefix="forge-ctx-") as ctx:
        (Path(ctx) / "Dockerfile").write_text(dockerfile)
        (Path(ctx) / "ca").mkdir()
        for name, data in context.items():
            (Path(ctx) / name).write_bytes(data)
        for name, source in (files or {}).items():
            (Path(ctx) / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, Path(ctx) / name)
        log: list[str] = []
        print(f"+ docker build --network {network} -t {tag}", flush=True)
        for chunk in client.api.build(
            path=ctx,
            tag=tag,
            network_mode=network,
            labels=dict(labels),
            rm=True,
            forcerm=True,
            decode=True,
            nocache=fresh,
        ):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                raise StepFailedError(
                    f"building image {tag} failed",
                    why="".join(log)[-3000:] + chunk["error"],
                    fix="read the output above; a mirror or PyPI pin may be unavailable",
                )
    if _find(client, tag) is None:
        raise BackendError(f"docker build finished but {tag} does not exist")


def build_from_cache(
    client: docker.DockerClient,
    spec: ToolchainSpec,
    base_tag: str,
    tag: str,
    labels: Mapping[str, str],
    *,
    cache: Path = pkgcache.CACHE_DIR,
    template_dir: Path = DOCKERFILES,
    lock_dir: Path = locks.LOCK_DIR,
) -> None:
    """Build `spec`'s image as `tag` with no network, from the package cache's copy of its lock
    (`<family>-offline.Dockerfile`). Raises DistError when the cache lacks part of the lock."""
    lock = locks.read_lock(locks.lock_path(spec.name, lock_dir), spec.name)
    if lock is None:
        raise ConfigError(f"{spec.name} has no lock to restore", fix="build it online first: invoke images --build")
    files = pkgcache.offline_files(cache, lock)
    template_path = template_dir / f"{spec.family}-offline.Dockerfile"
    context, hashed = image_context(spec, lock_dir, update_locks=False)
    dockerfile = render_dockerfile(
        template_path.read_text(), toolchain_args(spec, base_tag, hashed), source=str(template_path)
    )
    build_image(
        client, dockerfile, tag, {**labels, "org.forge.source": "package-cache"}, context, files, network="none"
    )


def building(name: str) -> contextlib.AbstractContextManager[None]:
    """Hold a host-wide lock on one image name, so parallel cells build a shared image once."""
    return filelock.exclusive(Path(tempfile.gettempdir()) / f"forge-image-{name}.lock")


def ensure_toolchain_image(
    client: docker.DockerClient,
    spec: ToolchainSpec,
    mirror: str,
    template_dir: Path = DOCKERFILES,
    *,
    lock_dir: Path = locks.LOCK_DIR,
    update_locks: bool = False,
) -> tuple[ImageRef, ImageRef]:
    """(base, toolchain) images for `spec`, building only what is missing."""
    with building(spec.name):
        return _ensure_toolchain_image(client, spec, mirror, template_dir, lock_dir, update_locks)


def image_context(spec: ToolchainSpec, lock_dir: Path, update_locks: bool) -> tuple[dict[str, bytes], bool]:
    """The build context's files besides the Dockerfile, and whether pip checks wheel hashes."""
    requirements, hashed = pip_requirements_file(spec, lock_dir, update_locks)
    context = {f"ca/{n}": d for n, d in host_ca_certificates().items()}
    context["requirements.txt"] = requirements.encode()
    return context, hashed


def _ensure_toolchain_image(
    client: docker.DockerClient, spec: ToolchainSpec, mirror: str, template_dir: Path, lock_dir: Path, update: bool
) -> tuple[ImageRef, ImageRef]:
    spec.check()
    base = ensure_base_image(client, spec.suite, mirror)
    planned = plan_image(spec, base.tag, base.id, template_dir, lock_dir, update)
    tag, key = planned.tag, planned.key
    if (found := _find(client, tag)) is not None:
        return base, ImageRef(tag, found.id, key, spec.name, built=False, seconds=0.0)
    start = time.monotonic()
    dockerfile = render_dockerfile(planned.template, planned.args, source=str(planned.template_path))
    labels = {
        MANAGED_LABEL: "toolchain",
        "org.forge.key": key,
        "org.forge.name": spec.name,
        "org.forge.suite": spec.suite,
    }
    if restorable(spec, lock_dir, update):
        print(f"{spec.name}: building offline from the package cache ({pkgcache.CACHE_DIR})", flush=True)
        build_from_cache(client, spec, base.tag, tag, labels, template_dir=template_dir, lock_dir=lock_dir)
    else:
        build_image(client, dockerfile, tag, labels, planned.context)
    found = _find(client, tag)
    assert found is not None
    return base, ImageRef(tag, found.id, key, spec.name, built=True, seconds=time.monotonic() - start)


def adopt_lock(
    client: docker.DockerClient,
    spec: ToolchainSpec,
    base: ImageRef,
    image: ImageRef,
    template_dir: Path = DOCKERFILES,
    lock_dir: Path = locks.LOCK_DIR,
) -> ImageRef:
    """The image just built, tagged also under the key its freshly written lock gives.

    A first build (or `--update-locks`) installs from plain requirements and then writes the lock
    read from the image; from then on the requirements are pinned by that lock, which changes the
    image key. The image already holds exactly what the lock pins (the lock was read from it), so
    it is given that key's tag instead of being built a second time on the next run, with every
    cell on it.
    """
    planned = plan_image(spec, base.tag, base.id, template_dir, lock_dir, update=False)
    if planned.tag == image.tag:
        return image
    repository, _, tag = planned.tag.rpartition(":")
    client.images.get(image.id).tag(repository, tag)
    print(f"{spec.name}: lock written; image {image.id[:19]} tagged {planned.tag} for the next runs", flush=True)
    return replace(image, tag=planned.tag, key=planned.key)


def restorable(spec: ToolchainSpec, lock_dir: Path, update: bool, cache: Path = pkgcache.CACHE_DIR) -> bool:
    """Whether `spec`'s image can be built offline from the package cache: its lock is committed,
    not being refreshed, and every deb and wheel of it is cached with the right sha256."""
    lock = None if update else locks.read_lock(locks.lock_path(spec.name, lock_dir), spec.name)
    return lock is not None and pkgcache.index_path(cache, lock.name).is_file() and not pkgcache.missing(cache, lock)


@dataclass(frozen=True)
class ImageInfo:
    tag: str
    id: str
    kind: str
    name: str
    size_bytes: int
    created: str


def list_images(client: docker.DockerClient) -> list[ImageInfo]:
    """Every image forge made (base and toolchain), by tag."""
    infos: list[ImageInfo] = []
    for image in client.images.list(filters={"label": MANAGED_LABEL}):
        labels = image.labels or {}
        # Untagged ones are layers left by failed builds (they inherit the base's labels).
        kind = labels.get(MANAGED_LABEL, "?") if image.tags else "dangling"
        for tag in image.tags or [image.id]:
            infos.append(
                ImageInfo(
                    tag=tag,
                    id=image.short_id,
                    kind=kind,
                    name=labels.get("org.forge.name", labels.get("org.forge.suite", "")),
                    size_bytes=int(image.attrs.get("Size", 0)),
                    created=str(image.attrs.get("Created", ""))[:19],
                )
            )
    return sorted(infos, key=lambda i: (i.kind, i.tag))


def prune_images(client: docker.DockerClient, keep: Iterable[str]) -> list[str]:
    """Remove forge images whose tag is not in `keep`."""
    keep_set = set(keep)
    removed: list[str] = []
    for info in list_images(client):
        if info.tag not in keep_set:
            try:
                client.images.remove(info.tag)
                removed.append(info.tag)
            except docker.errors.APIError as err:  # still used by a container: say so, keep going
                print(f"forge: kept {info.tag}: {err.explanation}")
    return removed


# ---------------------------------------------------------------------------------------------
# `invoke images`


def expected_tags(client: docker.DockerClient, spec: ToolchainSpec, mirror: str) -> tuple[str | None, str | None]:
    """The base and toolchain tags `spec` would use now, without building anything."""
    base_tag = f"forge/base:{spec.suite}-{base_key(spec.suite, mirror, debootstrap_version())[:12]}"
    base = _find(client, base_tag)
    if base is None:
        return None, None
    return base_tag, plan_image(spec, base_tag, base.id).tag


def has_image(cell: Any, target: Target | None) -> bool:
    """Whether a docker build of `cell` runs in a forge toolchain image: a Debian gcc, or a compiler
    from PyPI (zig, for macOS) installed into the suite's image."""
    return cell.gcc is not None or (target is not None and family_for(target).image_extras(cell, target).suite_gcc)


def cell_lock(cell: Any, target: Target | None) -> str | None:
    """The toolchain lock a docker build of `cell` uses (None for cells without a Debian image)."""
    if not has_image(cell, target):
        return None
    try:
        spec = ToolchainSpec.from_cell(cell, target=target)
    except ConfigError as exc:
        return f"none ({exc.what})"
    return locks.describe_lock(locks.lock_path(spec.name))
