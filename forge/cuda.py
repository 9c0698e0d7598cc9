"""GPU architectures as data: what each CUDA toolkit can target, and a cell's `cuda_arch`.

The architectures a toolkit accepts are its own nvcc's `--list-gpu-code` (SASS, `sm_XX`) and
`--list-gpu-arch` (PTX, `compute_XX`), recorded into `toolchains/cuda/arches.yaml` by
`toolchains/cuda/record_arches.py` (never typed from memory). A cell asks for SASS and PTX
targets, `sm_80,sm_90,compute_90` by default (SASS for Ampere and Hopper, plus PTX of the newest
so later GPUs can JIT it); `check_cuda_arch` refuses a target the toolkit cannot build, naming
the nearest feasible request. After a build, `embedded_arches` reads `cuobjdump --list-elf` /
`--list-ptx` output and `missing_arches` says which asked-for targets a library lacks.

Pure: no process, no environment (the recorder script and the build run the tools).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from packaging.version import InvalidVersion, Version

from forge.errors import ConfigError, InfeasibleError

DEFAULT_CUDA_ARCH = "sm_80,sm_90,compute_90"
ARCHES_FILE = Path(__file__).resolve().parent.parent / "toolchains" / "cuda" / "arches.yaml"

_ITEM = re.compile(r"^(sm|compute)_(\d{2,3})([af]?)$")


@dataclass(frozen=True)
class GpuTarget:
    """One compilation target: SASS for `sm_XX` (kind "sm") or PTX for `compute_XX`."""

    kind: str  # "sm" | "compute"
    number: int  # 80, 90, 100, ...
    suffix: str = ""  # "a" / "f": architecture- or family-specific variants (sm_90a)

    def __str__(self) -> str:
        return f"{self.kind}_{self.number}{self.suffix}"

    def sort_key(self) -> tuple[bool, int, str]:
        """SASS before PTX, then by architecture."""
        return (self.kind != "sm", self.number, self.suffix)


def _sorted(targets: set[GpuTarget] | list[GpuTarget]) -> tuple[GpuTarget, ...]:
    return tuple(sorted(set(targets), key=GpuTarget.sort_key))


@dataclass(frozen=True)
class CudaArch:
    """A cell's requested targets, sorted and without duplicates."""

    targets: tuple[GpuTarget, ...]

    @property
    def sass(self) -> tuple[GpuTarget, ...]:
        return tuple(t for t in self.targets if t.kind == "sm")

    @property
    def ptx(self) -> tuple[GpuTarget, ...]:
        return tuple(t for t in self.targets if t.kind == "compute")

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.targets)

    def cmake_architectures(self) -> str:
        """CMAKE_CUDA_ARCHITECTURES for these targets: `80-real;90-real;90-virtual`."""
        parts = [f"{t.number}{t.suffix}-real" for t in self.sass]
        parts += [f"{t.number}{t.suffix}-virtual" for t in self.ptx]
        return ";".join(parts)


@dataclass(frozen=True)
class ToolkitArches:
    """What one toolkit's nvcc reported."""

    cuda: Version  # major.minor
    nvcc_version: str  # the full release nvcc printed, e.g. "13.0.88"
    gpu_code: frozenset[GpuTarget]  # --list-gpu-code (sm_XX)
    gpu_arch: frozenset[GpuTarget]  # --list-gpu-arch (compute_XX)

    def accepts(self, target: GpuTarget) -> bool:
        return target in (self.gpu_code if target.kind == "sm" else self.gpu_arch)


def parse_target(item: str, *, origin: str = "cuda_arch") -> GpuTarget:
    """`sm_90` / `compute_90` / `sm_90a` -> GpuTarget; anything else is a ConfigError."""
    m = _ITEM.match(item.strip().lower())
    if m is None:
        raise ConfigError(
            f"{origin}: '{item}' is not a GPU target",
            "a target is sm_XX (SASS for one architecture) or compute_XX (PTX, JIT-compiled by the driver)",
            f"write e.g. {DEFAULT_CUDA_ARCH}",
        )
    return GpuTarget(m.group(1), int(m.group(2)), m.group(3))


def parse_cuda_arch(spec: str, *, origin: str = "cuda_arch") -> CudaArch:
    """A comma-separated list of targets; empty means the default."""
    items = [s for s in spec.replace(";", ",").split(",") if s.strip()] or DEFAULT_CUDA_ARCH.split(",")
    return CudaArch(_sorted([parse_target(s, origin=origin) for s in items]))


def load_arches(path: Path = ARCHES_FILE) -> dict[Version, ToolkitArches]:
    """toolchains/cuda/arches.yaml -> toolkit version -> what its nvcc can target."""
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read {path}", str(e), "regenerate it with toolchains/cuda/record_arches.py") from e
    toolkits = raw.get("toolkits") if isinstance(raw, dict) else None
    if not isinstance(toolkits, dict):
        raise ConfigError(f"{path}: no 'toolkits' mapping", fix="regenerate it with toolchains/cuda/record_arches.py")
    out: dict[Version, ToolkitArches] = {}
    for key, entry in toolkits.items():
        where = f"{path}: toolkits.{key}"
        try:
            version = Version(str(key))
        except InvalidVersion as e:
            raise ConfigError(f"{where}: '{key}' is not a version") from e
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
    replaced: list[GpuTarget] = []
    for t in arch.targets:
        if toolkit.accepts(t):
            replaced.append(t)
            continue
        near = _nearest(t, toolkit.gpu_code if t.kind == "sm" else toolkit.gpu_arch)
        listing = ", ".join(str(x) for x in _sorted(set(toolkit.gpu_code if t.kind == "sm" else toolkit.gpu_arch)))
        why.append(f"CUDA {toolkit.cuda} (nvcc {toolkit.nvcc_version}) cannot target {t}; it accepts {listing}")
        if near is not None:
            replaced.append(near)
    nearest = CudaArch(_sorted(replaced))
    fix = f"nearest feasible: cuda_arch={nearest}" if nearest.targets else "ask for targets this toolkit lists"
    raise InfeasibleError(f"cuda_arch={arch} cannot be built with CUDA {cuda}", "\n".join(why), fix)


_ELF = re.compile(r"^ELF file\s+\d+:\s+\S*\.(sm_\d{2,3}[af]?)\.cubin\s*$")
_PTX = re.compile(r"^PTX file\s+\d+:\s+\S*\.(sm_\d{2,3}[af]?)\.ptx\s*$")


def embedded_arches(list_elf: str, list_ptx: str) -> CudaArch:
    """What a library embeds, from `cuobjdump --list-elf` and `--list-ptx` output.

    cuobjdump names PTX by the virtual architecture's number as sm_XX; it becomes compute_XX.
    A line that is neither empty nor a listing is an error, so a changed format is noticed."""
    found: set[GpuTarget] = set()
    for text, pattern, kind in ((list_elf, _ELF, "sm"), (list_ptx, _PTX, "compute")):
        for line in text.splitlines():
            if not line.strip():
                continue
            m = pattern.match(line.strip())
            if m is None:
                raise ConfigError(f"unrecognised cuobjdump line: {line!r}")
            t = parse_target(m.group(1))
            found.add(GpuTarget(kind, t.number, t.suffix))
    return CudaArch(_sorted(found))


def cuobjdump_listing(returncode: int, stdout: str, stderr: str, *, path: str) -> str:
    """The listing of one cuobjdump run: its stdout, or "" for a file without device code (which
    cuobjdump reports on stderr with exit status 255); any other failure is an error."""
    if returncode == 0:
        return stdout
    if "does not contain device code" in stderr:
        return ""
    raise ConfigError(f"cuobjdump failed on {path} (exit {returncode})", stderr.strip()[-2000:])


def missing_arches(asked: CudaArch, embedded: CudaArch) -> list[GpuTarget]:
    """Targets asked for but absent from the binary (the cell fails when any is)."""
    have = set(embedded.targets)
    return [t for t in asked.targets if t not in have]


def configure_args(arch: CudaArch) -> list[str]:
    """The CMake arguments that build ember's CUDA kernels for `arch`."""
    return ["-DEMBER_CUDA=ON", f"-DCMAKE_CUDA_ARCHITECTURES={arch.cmake_architectures()}"]


def embedded_problems(asked: CudaArch, listings: dict[str, tuple[str, str]]) -> list[str]:
    """One message per installed library that lacks an asked-for target.

    `listings` maps a library's path (relative to the install tree) to its cuobjdump
    (--list-elf, --list-ptx) output. A CUDA build whose libraries embed no device code at all
    is a problem too: the kernels were not built in."""
    problems = []
    seen_any = False
    for path, (elf, ptx) in sorted(listings.items()):
        embedded = embedded_arches(elf, ptx)
        seen_any = seen_any or bool(embedded.targets)
        if embedded.targets:
            missing = missing_arches(asked, embedded)
            if missing:
                problems.append(f"{path} lacks {', '.join(str(t) for t in missing)} (it embeds {embedded})")
    if not seen_any:
        problems.append(f"no installed library embeds GPU code (asked for {asked})")
    return problems
