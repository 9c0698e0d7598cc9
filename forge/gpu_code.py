"""GPU compilation targets and what a binary embeds: `sm_XX` SASS and `compute_XX` PTX.

Reads what toolchains/cuda/check_embedded.py listed inside a CUDA cell's container (cuobjdump's
and nvcc's output, unread there); forge/cuda.py adds the toolkits' recorded lists, the
resolver's check and the manifest record. Pure: no process, no environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forge.errors import ConfigError

DEFAULT_CUDA_ARCH = "sm_80,sm_90,compute_90"

LISTINGS_PREFIX = "forge-cuda-listings: "
"""Starts the line of toolchains/cuda/check_embedded.py's output holding the tools' output, as JSON."""

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


def sorted_targets(targets: set[GpuTarget] | list[GpuTarget]) -> tuple[GpuTarget, ...]:
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
    return CudaArch(sorted_targets([parse_target(s, origin=origin) for s in items]))


_ID_NUMBERS = r"\d{2,3}[af]?(?:\.\d{2,3}[af]?)*"
ID_PATTERN = rf"(?:sm{_ID_NUMBERS}(?:\+ptx{_ID_NUMBERS})?|ptx{_ID_NUMBERS})"
"""A cuda_arch's part of a cell id: `sm` and the SASS architectures joined by `.`, then `+ptx` and
the PTX ones (sm_80,sm_90,compute_90 -> sm80.90+ptx90; sm_90 -> sm90; compute_90 -> ptx90)."""


def cuda_arch_id(spec: str | None) -> str:
    """The cell id's part for a cuda_arch (ID_PATTERN); "" for none or the default targets, so the
    ids of cells that pin nothing stay as they were."""
    if spec is None:
        return ""
    arch = parse_cuda_arch(spec)
    if arch == parse_cuda_arch(DEFAULT_CUDA_ARCH):
        return ""
    parts = [
        prefix + ".".join(f"{t.number}{t.suffix}" for t in group)
        for prefix, group in (("sm", arch.sass), ("ptx", arch.ptx))
        if group
    ]
    return "+".join(parts)


def canonical_cuda_arch(spec: str, *, origin: str = "cuda_arch") -> str:
    """A cuda_arch pin in its one spelling (`sm_80,sm_90,compute_90`: lower case, SASS first, sorted,
    no duplicates), from that spelling or the cell id's (`sm80.90+ptx90`); ConfigError if malformed."""
    text = spec.strip().lower()
    if re.fullmatch(ID_PATTERN, text):
        items = []
        for part in text.split("+"):
            kind, numbers = ("sm", part[2:]) if part.startswith("sm") else ("compute", part[3:])
            items += [f"{kind}_{n}" for n in numbers.split(".")]
        text = ",".join(items)
    return str(parse_cuda_arch(text, origin=origin))


_ELF = re.compile(r"^ELF file\s+\d+:\s+\S*\.(sm_\d{2,3}[af]?)\.cubin\s*$")
_PTX = re.compile(r"^PTX file\s+\d+:\s+\S*\.(sm_\d{2,3}[af]?)\.ptx\s*$")
_MEMBER = re.compile(r"^member \S+:\S+:$")  # a static archive's object, before its listing


def embedded_arches(list_elf: str, list_ptx: str) -> CudaArch:
    """What a library embeds, from `cuobjdump --list-elf` and `--list-ptx` output.

    cuobjdump names PTX by the virtual architecture's number as sm_XX; it becomes compute_XX.
    A line that is neither empty nor a listing is an error, so a changed format is noticed."""
    found: set[GpuTarget] = set()
    for text, pattern, kind in ((list_elf, _ELF, "sm"), (list_ptx, _PTX, "compute")):
        for line in text.splitlines():
            if not line.strip() or _MEMBER.match(line.strip()):
                continue
            m = pattern.match(line.strip())
            if m is None:
                raise ConfigError(f"unrecognised cuobjdump line: {line!r}")
            t = parse_target(m.group(1))
            found.add(GpuTarget(kind, t.number, t.suffix))
    return CudaArch(sorted_targets(found))


def cuobjdump_listing(returncode: int, stdout: str, stderr: str, *, path: str) -> str:
    """The listing of one cuobjdump run: its stdout, or "" for a file without device code (which
    cuobjdump reports on stderr with exit status 255); any other failure is an error."""
    if returncode == 0:
        return stdout
    if "does not contain device code" in stderr:
        return ""
    raise ConfigError(f"cuobjdump failed on {path} (exit {returncode})", stderr.strip()[-2000:])


_NVCC_RELEASE = re.compile(r"^Cuda compilation tools, release \d+\.\d+, V(?P<version>\d+\.\d+\.\d+)$")


def nvcc_release(version_output: str) -> str:
    """`13.0.88` from `nvcc --version` (its "Cuda compilation tools, release 13.0, V13.0.88" line)."""
    found = [m["version"] for line in version_output.splitlines() if (m := _NVCC_RELEASE.match(line.strip()))]
    if len(found) != 1:
        raise ConfigError(
            "nvcc --version printed no 'Cuda compilation tools, release X.Y, VX.Y.Z' line", version_output[-500:]
        )
    return found[0]


def missing_arches(asked: CudaArch, embedded: CudaArch) -> list[GpuTarget]:
    """Targets asked for but absent from the binary (the cell fails when any is)."""
    have = set(embedded.targets)
    return [t for t in asked.targets if t not in have]


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
