"""CUDA toolkits as data: what each one can target, which ones forge puts in an image, and a
cell's `cuda_arch`.

The architectures a toolkit accepts are its own nvcc's `--list-gpu-code` (SASS, `sm_XX`) and
`--list-gpu-arch` (PTX, `compute_XX`), recorded into `toolchains/cuda/arches.yaml` by
`toolchains/cuda/record_arches.py` (never typed from memory). A cell asks for SASS and PTX
targets, `sm_80,sm_90,compute_90` by default (SASS for Ampere and Hopper, plus PTX of the newest
so later GPUs can JIT it); `check_cuda_arch` refuses a target the toolkit cannot build, naming
the nearest feasible request. After the install step, toolchains/cuda/check_embedded.py runs
cuobjdump in the cell's container over the installed libraries (forge/gpu_code.py parses it)
and fails the cell when an asked-for target is missing.

The toolkits forge can put in an image come from one of two sources, each a data file:
`toolchains/cuda/wheels.yaml`, PyPI's `nvidia-cuda-nvcc` and the wheels it needs, pinned exactly
(the image's lock adds their sha256, and pip installs them with `--require-hashes` from then on),
and `toolchains/cuda/debian.yaml`, Debian's non-free `nvidia-cuda-toolkit` of one suite (the
image's lock pins every package's version). wheels.yaml's `no_image` says, per toolkit, why
neither gives one (the resolver refuses their cells with it).

Pure: no process, no environment (the recorder script and the build run the tools).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from forge.errors import ConfigError, InfeasibleError
from forge.gpu_code import (
    DEFAULT_CUDA_ARCH,
    LISTINGS_PREFIX,
    CudaArch,
    GpuTarget,
    cuobjdump_listing,
    embedded_arches,
    embedded_problems,
    missing_arches,
    nvcc_release,
    parse_cuda_arch,
    parse_target,
    sorted_targets,
)

__all__ = [
    "DEFAULT_CUDA_ARCH",
    "CudaArch",
    "GpuTarget",
    "cuobjdump_listing",
    "embedded_arches",
    "embedded_problems",
    "missing_arches",
    "parse_cuda_arch",
    "parse_target",
]

ARCHES_FILE = Path(__file__).resolve().parent.parent / "toolchains" / "cuda" / "arches.yaml"


@dataclass(frozen=True)
class ToolkitArches:
    """What one toolkit's nvcc reported."""

    cuda: Version  # major.minor
    nvcc_version: str  # the full release nvcc printed, e.g. "13.0.88"
    gpu_code: frozenset[GpuTarget]  # --list-gpu-code (sm_XX)
    gpu_arch: frozenset[GpuTarget]  # --list-gpu-arch (compute_XX)

    def accepts(self, target: GpuTarget) -> bool:
        return target in (self.gpu_code if target.kind == "sm" else self.gpu_arch)


def _toolkits(
    path: Path, fix: str, mapping: str = "toolkits", optional: bool = False
) -> Iterator[tuple[str, Version, Any]]:
    """(where, version, entry) for each entry of a toolchains/cuda/*.yaml mapping keyed by toolkit
    version (`toolkits`, or `no_image` of wheels.yaml; an `optional` one may be absent)."""
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read {path}", str(e), fix) from e
    toolkits = raw.get(mapping) if isinstance(raw, dict) else None
    if toolkits is None and optional and isinstance(raw, dict):
        return
    if not isinstance(toolkits, dict):
        raise ConfigError(f"{path}: no '{mapping}' mapping", fix=fix)
    for key, entry in toolkits.items():
        where = f"{path}: {mapping}.{key}"
        try:
            version = Version(str(key))
        except InvalidVersion as e:
            raise ConfigError(f"{where}: '{key}' is not a version", fix=fix) from e
        yield where, version, entry


@functools.lru_cache(maxsize=8)
def load_arches(path: Path = ARCHES_FILE) -> dict[Version, ToolkitArches]:
    """toolchains/cuda/arches.yaml -> toolkit version -> what its nvcc can target (read once per path)."""
    out: dict[Version, ToolkitArches] = {}
    for where, version, entry in _toolkits(path, "regenerate it with toolchains/cuda/record_arches.py"):
        if not isinstance(entry, dict) or set(entry) != {"nvcc", "gpu_code", "gpu_arch"}:
            raise ConfigError(f"{where}: expected exactly the keys nvcc, gpu_code, gpu_arch")
        code = frozenset(parse_target(str(t), origin=where) for t in entry["gpu_code"])
        arch = frozenset(parse_target(str(t), origin=where) for t in entry["gpu_arch"])
        if any(t.kind != "sm" for t in code) or any(t.kind != "compute" for t in arch):
            raise ConfigError(f"{where}: gpu_code holds sm_XX only and gpu_arch compute_XX only")
        out[version] = ToolkitArches(version, str(entry["nvcc"]), code, arch)
    return out


def _toolkit(cuda: str, table: dict[Version, ToolkitArches]) -> ToolkitArches:
    try:
        version = Version(cuda)
    except InvalidVersion as e:
        raise ConfigError(f"cuda '{cuda}' is not a version") from e
    key = Version(f"{version.major}.{version.minor}")
    if key not in table:
        known = ", ".join(str(v) for v in sorted(table)) or "none"
        raise InfeasibleError(
            f"no recorded GPU architectures for CUDA {cuda}",
            f"toolchains/cuda/arches.yaml holds {known}",
            f"run toolchains/cuda/record_arches.py with CUDA {key}'s nvcc",
        )
    return table[key]


def _nearest(target: GpuTarget, accepted: frozenset[GpuTarget]) -> GpuTarget | None:
    """The accepted target of the same kind closest in number (the lower one on a tie)."""
    same = [t for t in accepted if t.kind == target.kind]
    if not same:
        return None
    return min(same, key=lambda t: (abs(t.number - target.number), t.number, t.suffix))


def check_cuda_arch(cuda: str, spec: str, table: dict[Version, ToolkitArches]) -> CudaArch:
    """The request resolved against what CUDA `cuda`'s nvcc can target, or InfeasibleError
    with every impossible target and the nearest feasible request."""
    arch = parse_cuda_arch(spec)
    toolkit = _toolkit(cuda, table)
    bad = [t for t in arch.targets if not toolkit.accepts(t)]
    if not bad:
        return arch
    why = []
    for t in bad:
        listing = ", ".join(
            str(x) for x in sorted_targets(set(toolkit.gpu_code if t.kind == "sm" else toolkit.gpu_arch))
        )
        why.append(f"CUDA {toolkit.cuda} (nvcc {toolkit.nvcc_version}) cannot target {t}; it accepts {listing}")
    nearest = _replace_infeasible(arch, toolkit)
    fix = f"nearest feasible: cuda_arch={nearest}" if nearest.targets else "ask for targets this toolkit lists"
    raise InfeasibleError(f"cuda_arch={arch} cannot be built with CUDA {cuda}", "\n".join(why), fix)


def _replace_infeasible(arch: CudaArch, toolkit: ToolkitArches) -> CudaArch:
    """`arch` with each target the toolkit cannot build replaced by the nearest it can (dropped when none)."""
    replaced: list[GpuTarget] = []
    for t in arch.targets:
        near = t if toolkit.accepts(t) else _nearest(t, toolkit.gpu_code if t.kind == "sm" else toolkit.gpu_arch)
        if near is not None:
            replaced.append(near)
    return CudaArch(sorted_targets(replaced))


def nearest_cuda_arch(cuda: str, spec: str, table: dict[Version, ToolkitArches] | None = None) -> CudaArch:
    """The targets of `spec` that CUDA `cuda`'s nvcc can build, each other one replaced by the nearest
    it can (what check_cuda_arch's refusal names); `spec` itself when it can build them all."""
    return _replace_infeasible(parse_cuda_arch(spec), _toolkit(cuda, load_arches() if table is None else table))


def configure_args(arch: CudaArch) -> list[str]:
    """The CMake arguments that build ember's CUDA kernels for `arch`."""
    return ["-DEMBER_CUDA=ON", f"-DCMAKE_CUDA_ARCHITECTURES={arch.cmake_architectures()}"]


# ---------------------------------------------------------------------------------------------
# Toolkits in images

WHEELS_FILE = ARCHES_FILE.parent / "wheels.yaml"
IMAGE_ROOT = PurePosixPath("/opt/cuda")
"""Where a CUDA cell's image links the toolkit (dockerfiles/debian-cuda.Dockerfile)."""
IMAGE_NVCC = IMAGE_ROOT / "bin" / "nvcc"
IMAGE_CUOBJDUMP = IMAGE_ROOT / "bin" / "cuobjdump"
CHECK_SCRIPT = "toolchains/cuda/check_embedded.py"
"""Runs in the cell's container after install (relative to the source root the backend sees)."""


class ToolkitSource(Enum):
    """Where an image's CUDA toolkit comes from: the data file that lists it, and its template."""

    PYPI = "toolchains/cuda/wheels.yaml"  # pinned wheels in the venv (dockerfiles/debian-cuda.Dockerfile)
    DEBIAN = "toolchains/cuda/debian.yaml"  # apt, non-free (dockerfiles/debian-cuda-apt.Dockerfile)

    @property
    def family(self) -> str:
        """The dockerfiles/<family>.Dockerfile template of its images."""
        return "debian-cuda" if self is ToolkitSource.PYPI else "debian-cuda-apt"


@dataclass(frozen=True)
class ImageToolkit:
    """A CUDA toolkit forge installs into an image: from PyPI (exact wheel pins, and where they
    land) or from one Debian suite's archive (its components and packages), and where its nvcc
    and cuobjdump are inside the image."""

    cuda: Version
    source: ToolkitSource
    nvcc: PurePosixPath = IMAGE_NVCC
    cuobjdump: PurePosixPath = IMAGE_CUOBJDUMP
    root: str = ""  # PYPI: the wheels' layout under site-packages
    wheels: tuple[str, ...] = ()  # PYPI: exact pins
    suite: str = ""  # DEBIAN: the suite whose archive holds this release
    components: tuple[str, ...] = ()  # DEBIAN: enabled besides main, for this image only
    packages: tuple[str, ...] = ()  # DEBIAN: what apt installs (the lock pins their versions)


DEBIAN_FILE = ARCHES_FILE.parent / "debian.yaml"
DEBIAN_KEYS = {"suite", "components", "packages", "nvcc", "cuobjdump"}


@functools.lru_cache(maxsize=8)
def load_image_toolkits(path: Path = WHEELS_FILE, debian: Path = DEBIAN_FILE) -> dict[Version, ImageToolkit]:
    """toolchains/cuda/wheels.yaml and debian.yaml -> toolkit version -> how an image gets it (read
    once per pair of paths). A toolkit in both files is an error."""
    out: dict[Version, ImageToolkit] = {}
    for where, version, entry in _toolkits(
        path, "each entry: toolkits.<version>: {root, wheels: [exact ==X.Y.Z pins]}"
    ):
        if not isinstance(entry, dict) or set(entry) != {"root", "wheels"} or not isinstance(entry["wheels"], list):
            raise ConfigError(f"{where}: expected exactly the keys root and wheels (a list)")
        wheels = tuple(_exact_pin(str(w), where) for w in entry["wheels"])
        out[version] = ImageToolkit(version, ToolkitSource.PYPI, root=str(entry["root"]), wheels=wheels)
    for where, version, entry in _toolkits(
        debian, f"each entry: toolkits.<version>: {{{', '.join(sorted(DEBIAN_KEYS))}}}"
    ):
        if version in out:
            raise ConfigError(
                f"{where}: CUDA {version} is also in {path}", fix="one source per toolkit: drop one of the entries"
            )
        out[version] = _debian_toolkit(where, version, entry)
    return out


def _debian_toolkit(where: str, version: Version, entry: Any) -> ImageToolkit:
    if not isinstance(entry, dict) or set(entry) != DEBIAN_KEYS:
        got = ", ".join(sorted(entry)) if isinstance(entry, dict) else type(entry).__name__
        raise ConfigError(f"{where}: expected exactly the keys {', '.join(sorted(DEBIAN_KEYS))}, found {got}")
    suite, components, packages = entry["suite"], entry["components"], entry["packages"]
    if not isinstance(suite, str) or not isinstance(components, list) or not isinstance(packages, list) or not packages:
        raise ConfigError(
            f"{where}: suite is one Debian suite, components and packages lists of names (packages non-empty)"
        )
    for name in [suite, *map(str, components), *map(str, packages)]:
        if not re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", name):
            raise ConfigError(
                f"{where}: {name!r} is not a Debian suite, component or package name", fix="names only, no versions"
            )
    tools = {}
    for key in ("nvcc", "cuobjdump"):
        tools[key] = PurePosixPath(str(entry[key]))
        if not tools[key].is_absolute() or ".." in tools[key].parts:
            raise ConfigError(f"{where}: {key} {entry[key]!r} is not an absolute path inside the image")
    return ImageToolkit(
        version,
        ToolkitSource.DEBIAN,
        nvcc=tools["nvcc"],
        cuobjdump=tools["cuobjdump"],
        suite=suite,
        components=tuple(str(c) for c in components),
        packages=tuple(str(p) for p in packages),
    )


def _exact_pin(text: str, where: str) -> str:
    """A wheel requirement pinned to one release (`name==1.2.3`); anything looser is an error."""
    try:
        req = Requirement(text)
    except InvalidRequirement as e:
        raise ConfigError(f"{where}: {text!r} is not a requirement", str(e)) from e
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
        raise ConfigError(f"{where}: {text!r} is not pinned to one release", fix="write name==X.Y.Z")
    return text


@functools.lru_cache(maxsize=8)
def load_no_image(path: Path = WHEELS_FILE, debian: Path = DEBIAN_FILE) -> dict[Version, str]:
    """toolchains/cuda/wheels.yaml's `no_image` -> toolkit version -> why no image holds its nvcc.
    A toolkit both there and under `toolkits` (or in debian.yaml) is an error."""
    out: dict[Version, str] = {}
    for where, version, entry in _toolkits(path, "each entry: no_image.<version>: <why>", "no_image", optional=True):
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigError(f"{where}: expected the reason no image holds this toolkit, as text")
        out[version] = " ".join(entry.split())
    if both := sorted(set(out) & set(load_image_toolkits(path, debian))):
        raise ConfigError(
            f"{path}: CUDA {', '.join(map(str, both))} both under toolkits (or in {debian.name}) and no_image",
            fix="a toolkit with pinned wheels or Debian packages has an image: drop its no_image entry",
        )
    return out


def no_image_reason(cuda: str, table: dict[Version, str] | None = None) -> str | None:
    """Why no image holds CUDA `cuda`'s nvcc (toolchains/cuda/wheels.yaml no_image), or None."""
    table = load_no_image() if table is None else table
    version = Version(cuda)
    return table.get(Version(f"{version.major}.{version.minor}"))


def image_toolkit(cuda: str, table: dict[Version, ImageToolkit] | None = None) -> ImageToolkit | None:
    """The toolkit an image of a CUDA `cuda` cell gets, or None when forge has none for it yet."""
    table = load_image_toolkits() if table is None else table
    version = Version(cuda)
    return table.get(Version(f"{version.major}.{version.minor}"))


def image_tools(cuda: str, table: dict[Version, ImageToolkit] | None = None) -> tuple[PurePosixPath, PurePosixPath]:
    """(nvcc, cuobjdump) inside the image of a CUDA `cuda` cell (the PyPI layout's when forge has no
    image for it: the resolver refuses such cells before anything runs)."""
    toolkit = image_toolkit(cuda, table)
    return (toolkit.nvcc, toolkit.cuobjdump) if toolkit is not None else (IMAGE_NVCC, IMAGE_CUOBJDUMP)


def cell_cuda_arch(cuda: str, spec: str | None = None, table: dict[Version, ToolkitArches] | None = None) -> CudaArch:
    """A CUDA cell's targets (its `cuda_arch`; None: DEFAULT_CUDA_ARCH), checked against what its
    toolkit's nvcc lists (InfeasibleError if not)."""
    return check_cuda_arch(cuda, spec or DEFAULT_CUDA_ARCH, load_arches() if table is None else table)


def compiler_args(
    arch: CudaArch, keep_dir: PurePosixPath, nvcc: PurePosixPath = IMAGE_NVCC, ccache: bool = False
) -> list[str]:
    """configure_args plus the CUDA compiler the image holds (and the compiler cache for it).

    `--keep --keep-dir` makes nvcc name its intermediate files after the source: without it they
    are tmpxft_<pid>_..., and that name ends up in every object (a FILE symbol and the static
    initialiser's name), so no two builds were alike (seen by invoke repro; with it, two nvcc
    runs give identical objects whatever the keep directory). The directory must exist: the
    build directory does."""
    args = [*configure_args(arch), f"-DCMAKE_CUDA_COMPILER={nvcc}", f"-DCMAKE_CUDA_FLAGS=--keep --keep-dir={keep_dir}"]
    return args + (["-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"] if ccache else [])


def check_argv(
    prefix: PurePosixPath,
    source: PurePosixPath,
    nvcc: PurePosixPath = IMAGE_NVCC,
    cuobjdump: PurePosixPath = IMAGE_CUOBJDUMP,
) -> list[str]:
    """The command that lists, with the image's cuobjdump and nvcc, what the installed libraries
    embed (into its log, read by manifest_record)."""
    script = str(source / CHECK_SCRIPT)
    return ["python3", script, "--prefix", str(prefix), "--cuobjdump", str(cuobjdump), "--nvcc", str(nvcc)]


def manifest_record(asked: CudaArch, nvcc_probe: str | None, check_log: str) -> dict[str, Any]:
    """The manifest's `cuda` entry from the cuda-arches step's log (its one LISTINGS_PREFIX line):
    the release of the nvcc inside the image (`nvcc`, e.g. 13.0.88; `nvcc_probe` is the build's
    own probe of it), the targets asked for, what each installed library embeds, and `problems`:
    a library lacking one of `asked`, or none embedding GPU code at all (the cell then fails)."""
    lines = [line for line in check_log.splitlines() if line.startswith(LISTINGS_PREFIX)]
    if len(lines) != 1:
        raise ConfigError(
            f"the cuda-arches log holds {len(lines)} '{LISTINGS_PREFIX.strip()}' lines, not one",
            fix=f"read the log; {CHECK_SCRIPT} prints exactly one",
        )
    try:
        found: Any = json.loads(lines[0].removeprefix(LISTINGS_PREFIX))
        nvcc_rc, nvcc_out, nvcc_err = found["nvcc"]
        raw = {path: (entry["elf"], entry["ptx"]) for path, entry in found["libraries"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConfigError("the cuda-arches log's listings are not what check_embedded.py writes", str(e)) from e
    if nvcc_rc != 0:
        raise ConfigError(f"the image's nvcc --version exited {nvcc_rc}", str(nvcc_err)[-500:])
    listings: dict[str, tuple[str, str]] = {}
    for path, (elf, ptx) in sorted(raw.items()):
        elf_text, ptx_text = (cuobjdump_listing(int(rc), str(out), str(err), path=path) for rc, out, err in (elf, ptx))
        listings[path] = (elf_text, ptx_text)
    return {
        "nvcc": nvcc_release(str(nvcc_out)),
        "nvcc_probe": nvcc_probe,
        "asked": str(asked),
        "embedded": {path: str(embedded_arches(elf, ptx)) for path, (elf, ptx) in listings.items()},
        "problems": embedded_problems(asked, listings),
    }
