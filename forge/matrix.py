"""The frozen `Cell` value: one concrete point of the build matrix, and its stable id."""

from __future__ import annotations

import fnmatch
import itertools
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from packaging.specifiers import SpecifierSet

from forge import axes as registry
from forge.errors import ConfigError
from forge.toolchains import specifier
from forge.yamlio import LocDict, LocList, check_keys, load_yaml, require, unknown

AXES: tuple[str, ...] = registry.names()
"""Every axis a cell has, in display order (forge/axes.py). `suite` is the Debian suite the toolchain comes from."""


@dataclass(frozen=True)
class Cell:
    """A fully resolved build configuration.

    Versions are strings as the provider spells them ("3.11", "12", "11.8"); compare them with
    `packaging.version.Version`, never as strings. `gcc` is None for targets built with zig
    (macOS); `cuda` is None for CPU-only cells; `bazel` is the Bazel that builds the engine, None
    for cells CMake builds (every cell unless Bazel was asked for: forge.bazel).
    """

    target: str
    suite: str
    python: str
    numpy: str
    gcc: str | None
    cuda: str | None
    cmake: str
    bazel: str | None
    """The Bazel that builds the cell; None: CMake builds it."""
    extra: tuple[tuple[str, str | None], ...] = ()
    """Registry axes that are not fields above (forge/axes.py), as (axis, value) in registry order."""

    def value(self, axis: str) -> str | None:
        """The cell's value of any registry axis."""
        if axis in CELL_FIELDS:
            value: str | None = getattr(self, axis)
            return value
        return dict(self.extra).get(axis)

    @staticmethod
    def from_values(values: Mapping[str, str | None]) -> Cell:
        """A cell from axis -> value (fields and registry axes alike), e.g. a manifest's `cell`."""
        known = [a for a in registry.names() if a not in CELL_FIELDS]
        extra = tuple((a, values.get(a)) for a in known if a in values)
        return Cell(**{a: values[a] for a in CELL_FIELDS}, extra=extra)  # type: ignore[arg-type]

    @property
    def compiler(self) -> str:
        """Short compiler tag used in the id: gcc12, or zig for macOS cells."""
        return f"gcc{self.gcc}" if self.gcc else "zig"

    @property
    def accelerator(self) -> str:
        """cpu, or cu<version> for CUDA cells."""
        return f"cu{self.cuda}" if self.cuda else "cpu"

    @property
    def builder(self) -> str:
        """Id part naming the engine's build system: "" for CMake, -bz<version> for Bazel."""
        return f"-bz{self.bazel}" if self.bazel else ""

    @property
    def id(self) -> str:
        """Stable, filesystem-safe id, e.g. linux-aarch64-py3.11-np2.1-gcc12-cpu, or
        linux-x86_64-py3.11-np2.4-gcc12-bz4.2.3-cpu for a cell Bazel builds."""
        parts = (a.id_format(self.value(a.name)) for a in registry.all_axes() if a.id_format is not None)
        return "-".join(p for p in parts if p)

    def as_dict(self) -> dict[str, str | None]:
        """Plain mapping (for JSON and manifests), including the id."""
        data: dict[str, str | None] = {k: v for k, v in asdict(self).items() if k != "extra"}
        data.update(self.extra)
        data["id"] = self.id
        return data


CELL_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Cell) if f.name != "extra")


CELL_ID = re.compile(r"[a-z0-9](?:[a-z0-9_+-]|\.(?!\.))*")
"""The grammar of a cell id (and of every axis value in it): lower-case letters, digits, `._+-`,
never `..` and never a `/`, so an id is always one plain name inside forge's directories."""


def check_cell_id(value: object, where: str) -> str:
    """`value` as a cell id, or a ConfigError naming where it came from."""
    if not isinstance(value, str) or CELL_ID.fullmatch(value) is None:
        raise ConfigError(
            f"{where}: {value!r} is not a cell id",
            "a cell id is lower-case letters, digits and . _ + - (no '..', no '/'), e.g. linux-x86_64-py3.11-np2.4-gcc12-cpu",
            "use the manifest.json forge wrote for the cell",
        )
    return value


REQUEST_AXES: tuple[str, ...] = registry.names(lambda a: a.request)
"""Axes a request (CLI flags or a matrix entry) may pin (forge/axes.py; the functions below read the registry
itself, so an entry added there reaches them)."""


@dataclass(frozen=True)
class Request:
    """What a user asked for: a target and any pinned axes (version or specifier strings).

    `cuda="none"` pins a CPU-only cell; an unpinned cuda also resolves to CPU-only.
    `origin` says where the request came from (a matrix file line, or "command line").
    """

    target: str
    pins: tuple[tuple[str, str], ...] = ()
    origin: str = "command line"

    def pin(self, axis: str) -> str | None:
        return dict(self.pins).get(axis)

    def without(self, axis: str) -> Request:
        return Request(self.target, tuple(p for p in self.pins if p[0] != axis), self.origin)

    def describe(self) -> str:
        parts = [f"target {self.target}", *(f"{axis} {value}" for axis, value in self.pins)]
        return ", ".join(parts)

    @staticmethod
    def make(target: str, pins: Mapping[str, str | None] | None = None, origin: str = "command line") -> Request:
        """Build a request from axis pins, dropping the None ones, in axis order."""
        pins = pins or {}
        ordered = tuple(
            (axis, str(pins[axis])) for axis in registry.names(lambda a: a.request) if pins.get(axis) is not None
        )
        return Request(target=target, pins=ordered, origin=origin)


def cell_id_parts() -> re.Pattern[str]:
    """The parts of a Cell.id (target, python, numpy, compiler: gcc N or zig, accelerator, ...), from the registry."""
    pattern = ""
    for a in registry.all_axes():
        if a.id_pattern is not None:
            pattern += a.id_pattern if a.id_optional or not pattern else f"-{a.id_pattern}"
    return re.compile(pattern)


def request_for_cell_id(cell_id: str, origin: str = "--cell") -> Request:
    """The request that pins every axis a cell id names (ConfigError naming the grammar when it is not one)."""
    match = cell_id_parts().fullmatch(cell_id.strip())
    if match is None:
        raise ConfigError(
            f"{origin}: `{cell_id}` is not a cell id",
            "a cell id reads TARGET-pyX.Y-npX.Y-(gccN|zig)[-bzX.Y.Z]-(cpu|cuX.Y[-ARCH]), e.g. linux-aarch64-py3.11-np2.4-gcc12-cpu;"
            " ARCH names pinned GPU targets: sm80.90+ptx90 is sm_80,sm_90,compute_90",
            "copy one from `invoke plan --matrix matrix/release.yaml` or `ls dist/`",
        )
    named = [a for a in registry.all_axes() if a.id_pattern is not None and a.name != "target"]
    pins = {a.name: _id_value(a, match.group(a.name)) for a in named}
    return Request.make(match.group("target"), pins, origin=f"{origin} {cell_id}")


def _id_value(axis: registry.Axis, group: str | None) -> str | None:
    """The pin an id's part gives (its canonical spelling for a free-form axis)."""
    if not group:
        return axis.id_absent
    return axis.canonical(group) if axis.canonical is not None else group


@dataclass(frozen=True)
class Supported:
    """What ember supports: a specifier per version axis, and the target names."""

    specs: dict[str, SpecifierSet]
    targets: tuple[str, ...]


def load_supported(path: Path) -> Supported:
    """Load matrix/supported.yaml."""
    data = load_yaml(path)
    version_axes = registry.names(lambda a: a.supported)
    check_keys(data, [*version_axes, "targets"], "axis")
    targets = require(data, "targets", LocList)
    specs = {axis: specifier(data, axis) for axis in version_axes if axis in data}
    return Supported(specs=specs, targets=tuple(str(t) for t in targets))


@dataclass(frozen=True)
class Excluded:
    """A matrix combination removed by an exclude entry."""

    request: Request
    reason: str


def _entry_pins(entry: LocDict, targets: tuple[str, ...]) -> dict[str, str]:
    """Validate one include/exclude mapping: known axes, quoted versions, known targets."""
    check_keys(entry, registry.names(lambda a: a.request), "axis")
    pins = {}
    for axis, value in entry.items():
        if isinstance(value, (list, dict)):
            raise ConfigError(
                f"{entry.where(axis)}: `{axis}` must be one value, not a {'list' if isinstance(value, list) else 'mapping'}",
                "an include/exclude entry pins each axis to one value or pattern; a list would match nothing",
                f'write one entry per value, or one pattern (e.g. `{axis}: "3.1*"`)',
            )
        if isinstance(value, float):
            raise ConfigError(f"{entry.where(axis)}: `{axis}: {value}` must be quoted", "YAML reads 3.10 as 3.1")
        pins[axis] = str(value)
    target = pins.get("target")
    if target is not None and not any(fnmatch.fnmatchcase(t, target) for t in targets):
        raise unknown("target", target, targets, entry.where("target"))
    return pins


def _axes(data: LocDict, targets: tuple[str, ...]) -> dict[str, list[str]]:
    axes = require(data, "axes", LocDict)
    check_keys(axes, registry.names(lambda a: a.request), "axis")
    if "target" not in axes:
        raise ConfigError(f"{axes.where()}: `axes` needs a `target` list", "", "add `target: [linux-x86_64]`")
    result: dict[str, list[str]] = {}
    for axis, values in axes.items():
        if not isinstance(values, LocList) or not values:
            raise ConfigError(f"{axes.where(axis)}: axis `{axis}` must be a non-empty list")
        for i, value in enumerate(values):
            _entry_pins(_located({axis: value}, values.path, values.lines[i]), targets)
        result[axis] = [str(v) for v in values]
    return result


def _located(values: dict[str, object], path: Path, line: int) -> LocDict:
    result = LocDict(values)
    result.path, result.line, result.lines = path, line, dict.fromkeys(values, line)
    return result


def _entries(data: LocDict, key: str, targets: tuple[str, ...]) -> list[tuple[dict[str, str], str]]:
    """(pins, where) per entry; an exclude entry's `reason:` is appended to where (after " -- ")."""
    if key not in data:
        return []
    items = require(data, key, LocList)
    result = []
    for i, entry in enumerate(items):
        if not isinstance(entry, LocDict):
            raise ConfigError(f"{items.where(i)}: each `{key}` entry must be a mapping of axis: value")
        reason = entry.pop("reason", None) if key == "exclude" else None
        result.append((_entry_pins(entry, targets), items.where(i) + (f" -- {reason}" if reason else "")))
    return result


def _matches(pins: dict[str, str], pattern: dict[str, str]) -> bool:
    return all(axis in pins and fnmatch.fnmatchcase(pins[axis], value) for axis, value in pattern.items())


def expand_matrix(path: Path, targets: tuple[str, ...]) -> list[Request | Excluded]:
    """Expand a named matrix file into requests (axes product, minus exclude, plus include)."""
    data = load_yaml(path)
    check_keys(data, ["axes", "include", "exclude"])
    axes = _axes(data, targets)
    excludes = _entries(data, "exclude", targets)
    result: list[Request | Excluded] = []
    for combo in itertools.product(*axes.values()):
        pins = dict(zip(axes.keys(), combo, strict=True))
        origin = f"{path} (axes)"
        request = Request.make(pins.pop("target"), pins, origin)
        rule = next(
            (where for pattern, where in excludes if _matches({"target": request.target, **pins}, pattern)), None
        )
        result.append(Excluded(request, f"excluded by {rule}") if rule else request)
    used = {r.reason for r in result if isinstance(r, Excluded)}
    for pattern, where in excludes:  # combinations the axes never produce, listed with their reason
        if f"excluded by {where}" not in used and "target" in pattern:
            pins = dict(pattern)
            result.append(Excluded(Request.make(pins.pop("target"), pins, str(path)), f"excluded by {where}"))
    for pins, where in _entries(data, "include", targets):
        if "target" not in pins:
            raise ConfigError(f"{where}: include entry needs a `target`", "", "add `target: linux-x86_64`")
        result.append(Request.make(pins.pop("target"), pins, f"{where} (include)"))
    return result
