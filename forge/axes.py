"""The axis registry: every axis of a cell declared once.

Each entry says where the axis' values come from, whether matrix/supported.yaml bounds it, how
the value reaches the build, its part of the cell id (and how that part reads back), whether
`invoke plan` shows it, and the CLI option with its help. matrix.py (AXES, REQUEST_AXES,
load_supported, the cell id and its parser), resolve.py (VERSION_AXES, known values) and
tasks.py (the axis flags of plan, build, verify, upgrade, repro and their help) read it.

Adding an axis: one entry here plus its data (a supported.yaml key, a toolchains/*.yaml list).
An axis that is not a field of `matrix.Cell` travels in `Cell.extra` and is resolved generically
(the pin if it is a known value, or its `canonical` spelling for a free-form one, else the entry's
default); one with `only_with` exists only in cells that have that axis (cuda_arch: CUDA cells).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import Version

from forge import gpu_code

if TYPE_CHECKING:
    from forge.toolchains import Toolchains


def _suite_values(axis: str) -> Callable[[Toolchains], list[str]]:
    def values(data: Toolchains) -> list[str]:
        found: set[str] = set()
        for suite in data.suites:
            value = getattr(suite, axis)
            found.update(value if isinstance(value, tuple) else (value,))
        return sorted(found, key=Version)

    return values


@dataclass(frozen=True)
class Axis:
    name: str
    help: str
    """The CLI option's help (`invoke build --help`)."""
    values: str
    """Where the values come from, in words (toolchains/debian.yaml, toolchains/numpy.yaml, ...)."""
    image: str
    """How the value reaches the build (an image package, a wheel, the toolchain file, ...)."""
    known: Callable[[Toolchains], list[str]] | None = None
    """The values the data offers (for errors naming the choices); None: not a versioned axis."""
    supported: bool = False
    """matrix/supported.yaml may bound it with a PEP 440 specifier (key = the axis name)."""
    version: bool = False
    """Resolved against version specifiers (`3.11` means the 3.11 series)."""
    request: bool = True
    """A request (CLI flag, matrix entry, include/exclude) may pin it."""
    option: bool = True
    """`invoke build/plan --NAME` pins it."""
    plan: bool = True
    """`invoke plan` shows it in the cell's table."""
    id_format: Callable[[str | None], str] | None = None
    """Its part of the cell id (None: the id does not name it)."""
    id_pattern: str | None = None
    """The regex of that part, with a group named after the axis, for reading an id back."""
    id_absent: str | None = None
    """The pin a cell id implies when the group did not match (cuda: `cpu` pins "none")."""
    id_optional: bool = False
    """The part may be absent (its format gives "" and its pattern carries its own "-" and "?")."""
    default: str | None = None
    """For axes outside `matrix.Cell`'s fields: the value when nothing pins it."""
    canonical: Callable[[str], str] | None = None
    """A free-form value (not one of `known`): its one spelling, from a pin or the id's group (ConfigError if
    malformed); the cell holds that spelling."""
    only_with: str | None = None
    """The axis exists only in cells with a value of this axis; elsewhere it is absent and a pin is refused."""


def _numpy_values(data: Toolchains) -> list[str]:
    return [n for n, _ in data.numpy]


def _cuda_values(data: Toolchains) -> list[str]:
    return [c.version for c in data.cuda] + ["none"]


REGISTRY: list[Axis] = [
    Axis(
        "target",
        "target: host, linux-x86_64, linux-aarch64, linux-armv7, macos-x86_64, macos-arm64",
        values="matrix/supported.yaml `targets`, toolchains/targets.yaml",
        image="the toolchain file, the cross gcc or zig, the emulator",
        version=False,
        id_format=lambda v: str(v),
        id_pattern=r"(?P<target>[a-z0-9_]+(?:-[a-z0-9_]+)*?)",
    ),
    Axis(
        "suite",
        "pin the Debian suite the toolchain comes from",
        values="toolchains/debian.yaml",
        image="the base image (debootstrap of the suite)",
        option=False,
    ),
    Axis(
        "python",
        "pin the Python version (e.g. 3.11)",
        values="toolchains/debian.yaml (each suite's python3)",
        image="the suite's python3 package",
        known=_suite_values("python"),
        supported=True,
        version=True,
        id_format=lambda v: f"py{v}",
        id_pattern=r"py(?P<python>\d+\.\d+)",
    ),
    Axis(
        "numpy",
        "pin the NumPy series (e.g. 2.1)",
        values="toolchains/numpy.yaml",
        image="a NumPy wheel installed with pip (hash-locked)",
        known=_numpy_values,
        supported=True,
        version=True,
        id_format=lambda v: f"np{v}",
        id_pattern=r"np(?P<numpy>\d+\.\d+)",
    ),
    Axis(
        "gcc",
        "pin the GCC major version (e.g. 12)",
        values="toolchains/debian.yaml (each suite's gcc packages)",
        image="the suite's gcc-N/g++-N packages (none for zig targets)",
        known=_suite_values("gcc"),
        supported=True,
        version=True,
        id_format=lambda v: f"gcc{v}" if v else "zig",
        id_pattern=r"(?:gcc(?P<gcc>\d+)|zig)",
    ),
    Axis(
        "bazel",
        "build engine/ with this Bazel (the suite's bazel-bootstrap: 3.5.1 or 4.2.3) instead of CMake",
        values="toolchains/debian.yaml (each suite's bazel-bootstrap)",
        image="the suite's bazel-bootstrap package, in Bazel cells' images only",
        known=_suite_values("bazel"),
        supported=True,
        version=True,
        id_format=lambda v: f"bz{v}" if v else "",
        id_pattern=r"(?:-bz(?P<bazel>\d+(?:\.\d+)*))?",
        id_optional=True,
    ),
    Axis(
        "cuda",
        "pin the CUDA version (e.g. 12.4), or none",
        values="toolchains/cuda.yaml",
        image="the toolkit in its own image: pinned PyPI wheels (debian-cuda, toolchains/cuda/wheels.yaml) or Debian non-free packages (debian-cuda-apt, toolchains/cuda/debian.yaml)",
        known=_cuda_values,
        supported=True,
        version=True,
        id_format=lambda v: f"cu{v}" if v else "cpu",
        id_pattern=r"(?:cpu|cu(?P<cuda>\d+\.\d+))",
        id_absent="none",
    ),
    Axis(
        "cuda_arch",
        "pin a CUDA cell's GPU targets, e.g. sm_90 or sm_80,sm_90,compute_90 (SASS sm_XX, PTX compute_XX; "
        f"default {gpu_code.DEFAULT_CUDA_ARCH})",
        values="what the toolkit's nvcc lists (toolchains/cuda/arches.yaml)",
        image="CMAKE_CUDA_ARCHITECTURES; the cuda-arches step checks the installed libraries embed them",
        id_format=gpu_code.cuda_arch_id,
        id_pattern=rf"(?:-(?P<cuda_arch>{gpu_code.ID_PATTERN}))?",
        id_optional=True,
        default=gpu_code.DEFAULT_CUDA_ARCH,
        canonical=gpu_code.canonical_cuda_arch,
        only_with="cuda",
    ),
    Axis(
        "cmake",
        "pin the CMake version",
        values="toolchains/debian.yaml (each suite's cmake)",
        image="the suite's cmake package",
        known=_suite_values("cmake"),
        supported=True,
        version=True,
    ),
]
"""Every axis, in display order (the cell id's parts follow this order too)."""


def all_axes() -> tuple[Axis, ...]:
    return tuple(REGISTRY)


def names(predicate: Callable[[Axis], bool] = lambda a: True) -> tuple[str, ...]:
    return tuple(a.name for a in REGISTRY if predicate(a))


def get(name: str) -> Axis:
    for axis in REGISTRY:
        if axis.name == name:
            return axis
    raise KeyError(name)


def cli_help() -> dict[str, str]:
    """option name -> help, for every axis with a CLI option."""
    return {a.name: a.help for a in REGISTRY if a.option}
