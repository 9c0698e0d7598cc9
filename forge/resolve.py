"""Turn a Request into exactly one Cell, or explain every reason it is infeasible.

Pure: takes the loaded data (and, for the local backend, the host's facts) as parameters.
Candidates are enumerated from the data (suite x gcc x cuda source x numpy series); each is
checked against the pins and the constraints, and each failed check yields a sentence.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from forge import axes as registry
from forge import bazel
from forge import cuda as cuda_toolkits
from forge.errors import ConfigError, InfeasibleError
from forge.matrix import CELL_FIELDS, Cell, Request, Supported
from forge.targets.family import family_for
from forge.toolchains import CompilerProvider, Suite, Target, Toolchains
from forge.yamlio import unknown

VERSION_AXES = registry.names(lambda a: a.version)
"""The axes resolved by version specifiers (forge/axes.py; the functions below read the registry itself)."""


@dataclass(frozen=True)
class HostFacts:
    """What the host toolchain is, for the local backend (probed by forge.host)."""

    suite: str
    gcc: str
    python: str
    cmake: str
    arch: str


@dataclass(frozen=True)
class Resolution:
    cell: Cell
    sources: dict[str, str]
    """axis -> where its value comes from (pinned, suite default, newest wheel, ...)."""


@functools.lru_cache(maxsize=1024)
def pin_spec(value: str) -> SpecifierSet:
    """`3.11` means the 3.11 series (==3.11.*); operators are taken as written (>=2)."""
    text = value.strip()
    if text[:1] in "<>=!~":
        return SpecifierSet(text)
    return SpecifierSet(f"=={text}.*") if text.count(".") < 2 else SpecifierSet(f"=={text}")


@functools.lru_cache(maxsize=8192)
def _in(value: str, spec: SpecifierSet) -> bool:
    return spec.contains(Version(value), prereleases=True)


def _host_suite(host: HostFacts, toolchains: Toolchains) -> Suite:
    known = next((s for s in toolchains.suites if s.name == host.suite), None)
    bazel = known.bazel if known else "0"
    glibc = known.glibc if known else "0"
    return Suite(host.suite, known.release if known else "0", (host.gcc,), host.python, host.cmake, bazel, glibc)


def _pick(options: tuple[str, ...], pin: str | None) -> tuple[str, ...]:
    """Options matching the pin; all options' first when none match (so the mismatch is explained)."""
    if pin is None:
        return options
    matching = tuple(o for o in options if _in(o, pin_spec(pin)))
    return matching or options[:1]


def _candidates(target: Target, suites: tuple[Suite, ...], data: Toolchains, request: Request) -> Iterator[Cell]:
    cuda_pin = request.pin("cuda")
    cudas: tuple[str | None, ...] = (None,)
    if cuda_pin not in (None, "none"):
        cudas = tuple(c.version for c in data.cuda if _in(c.version, pin_spec(cuda_pin)))
    numpys = _pick(tuple(n for n, _ in reversed(data.numpy)), request.pin("numpy"))
    builds_with_bazel = request.pin("bazel") is not None  # else CMake builds the cell (bazel None)
    for suite in suites:
        bazel_version = suite.bazel if builds_with_bazel else None
        gccs: tuple[str | None, ...] = _pick(suite.gcc, request.pin("gcc")) if family_for(target).uses_gcc else (None,)
        for gcc in gccs:
            for cuda in cudas:
                extra = _extra_values(request, {"cuda": cuda})
                for numpy in numpys:
                    yield Cell(
                        target.name, suite.name, suite.python, numpy, gcc, cuda, suite.cmake, bazel_version, extra
                    )


def _extra_values(request: Request, fields: dict[str, str | None]) -> tuple[tuple[str, str | None], ...]:
    """Registry axes outside Cell's fields: the pin (its canonical spelling), else the registry's default;
    absent where the value is None or the axis' `only_with` field is (cuda_arch in a CPU cell)."""
    out: list[tuple[str, str | None]] = []
    for a in registry.all_axes():
        if a.name in CELL_FIELDS or (a.only_with is not None and fields.get(a.only_with) is None):
            continue
        pin = request.pin(a.name)
        value = (a.canonical(pin) if a.canonical is not None else pin) if pin is not None else a.default
        if value is not None:
            out.append((a.name, value))
    return tuple(out)


def format_spec(spec: SpecifierSet) -> str:
    """>=3.7,<3.11 (lower bound first), not packaging's alphabetical order."""
    return ",".join(sorted((str(s) for s in spec), key=lambda s: (not s.startswith(">"), s)))


def _violations(cell: Cell, request: Request, target: Target, data: Toolchains, host: HostFacts | None) -> list[str]:
    out = []
    suite = _host_suite(host, data) if host else data.suite(cell.suite)
    for axis in registry.names(lambda a: a.version):
        pin = request.pin(axis)
        value = cell.value(axis)
        if pin is None or (axis == "cuda" and pin == "none" and value is None):
            continue
        if axis == "cuda" and pin == "none":
            out.append(f"CPU-only was asked; this candidate has CUDA {value}")
        elif value is None:
            out.append(_no_value(axis, pin, target))
        elif not _in(value, pin_spec(pin)):
            out.append(_mismatch(axis, pin, value, suite, host, data))
    for entry in registry.all_axes():
        needs, pin = entry.only_with, request.pin(entry.name)
        if needs is not None and pin is not None and cell.value(needs) is None:
            out.append(f"{entry.name} {pin} was asked; this candidate has no {needs}")
    if request.pin("suite") and request.pin("suite") != cell.suite:
        out.append(f"suite {request.pin('suite')} was asked; this candidate is {cell.suite}")
    numpy_spec = dict(data.numpy)[cell.numpy]
    if not _in(cell.python, numpy_spec):
        out.append(
            f"numpy {cell.numpy} has wheels for python {format_spec(numpy_spec)} only; python {cell.python} has none"
        )
    if cell.cuda is not None:
        out.extend(_cuda_violations(cell, target, data))
    if cell.bazel is not None:
        out.extend(bazel.violations(cell, target))
    return out


def not_built_yet(cell: Cell, data: Toolchains, host: HostFacts | None) -> dict[str, str]:
    """Axis -> why forge cannot build `cell`'s value of it yet; requests for those are refused,
    never faked (a CUDA cell without its nvcc would be a CPU build under a cuXX name)."""
    if cell.cuda is None:
        return {}
    if host is not None:
        return {
            "cuda": "a CUDA cell's nvcc comes from its toolchain image (toolchains/cuda/wheels.yaml, debian.yaml); the local "
            "backend builds with the host's tools only, so it builds or verifies no CUDA cell (build with --backend "
            "docker; `invoke build --force` re-runs a CUDA cell's verify suites inside its container)"
        }
    if cuda_toolkits.image_toolkit(cell.cuda) is None:
        source = next(c for c in data.cuda if c.version == cell.cuda)
        built = ", ".join(c.version for c in data.cuda if cuda_toolkits.image_toolkit(c.version) is not None) or "none"
        why = cuda_toolkits.no_image_reason(cell.cuda) or (
            "neither toolchains/cuda/wheels.yaml nor toolchains/cuda/debian.yaml lists it"
        )
        return {
            "cuda": f"no forge image holds CUDA {cell.cuda}'s nvcc ({source.provider} {source.package}) yet: {why}; "
            f"a cu{cell.cuda} cell would be a CPU build under a CUDA name, so none is built "
            f"(CUDA toolkits with an image: {built}; add one to toolchains/cuda/wheels.yaml or debian.yaml)"
        }
    return {}


def _asks_for(request: Request, axis: str) -> bool:
    pin = request.pin(axis)
    return pin is not None and not (axis == "cuda" and pin == "none")


def _no_value(axis: str, pin: str, target: Target) -> str:
    if axis == "gcc":
        return f"target {target.name} is built with zig (clang), not gcc; gcc {pin} cannot apply"
    return f"{axis} {pin} was asked; this candidate has none"


def _mismatch(axis: str, pin: str, value: str, suite: Suite, host: HostFacts | None, data: Toolchains) -> str:
    if host is not None and axis in ("gcc", "python", "cmake"):
        return f"the local backend uses the host's {axis} {value} ({suite.name}); {axis} {pin} was asked (use --backend docker)"
    if axis in ("python", "cmake", "bazel", "gcc"):
        providers = [s.name for s in data.suites if any(_in(v, pin_spec(pin)) for v in _suite_values(s, axis))]
        where = (
            f"{axis} {pin} comes from {', '.join(providers)}" if providers else f"no Debian suite provides {axis} {pin}"
        )
        offered = ", ".join(_suite_values(suite, axis))
        return f"{suite.name} provides {axis} {offered}, not {pin} ({where})"
    return f"{axis} {pin} was asked; candidate has {value}"


def _suite_values(suite: Suite, axis: str) -> tuple[str, ...]:
    value = getattr(suite, axis)
    return tuple(value) if isinstance(value, tuple) else (value,)


def _cuda_violations(cell: Cell, target: Target, data: Toolchains) -> list[str]:
    if not target.cuda:
        return [f"target {target.name} has no CUDA toolkit (CUDA builds are x86_64 Linux only); drop --cuda"]
    source = next(c for c in data.cuda if c.version == cell.cuda)
    out = []
    if cell.suite not in source.suites and target.compiler_provider is not CompilerProvider.HOST:
        out.append(
            f"CUDA {cell.cuda} ({source.provider} {source.package}) is packaged for {', '.join(source.suites)}, not {cell.suite}"
        )
    if cell.gcc is not None and not _in(cell.gcc, source.host_gcc):
        out.append(
            f"nvcc {cell.cuda} accepts host gcc {format_spec(source.host_gcc)} (its crt/host_config.h); gcc {cell.gcc} would be used"
        )
    if (problem := cuda_arch_problem(source.version, cell.value("cuda_arch"))) is not None:
        out.append(problem)
    return out


def cuda_arch_problem(version: str, spec: str | None = None) -> str | None:
    """Why CUDA `version`'s nvcc cannot build the targets `spec` (a cell's cuda_arch) asks for, with
    the nearest feasible targets; None when it can (toolchains/cuda/arches.yaml). None: the default targets."""
    try:
        cuda_toolkits.cell_cuda_arch(version, spec)
    except InfeasibleError as exc:
        return f"{exc.what}: {exc.why} ({exc.fix})"
    return None


def _source_of(axis: str, request: Request, cell: Cell, host: HostFacts | None, default_gcc: str | None) -> str:
    if request.pin(axis) is not None:
        return f"pinned ({request.pin(axis)})"
    if axis == "cuda_arch":
        return "default (forge/gpu_code.py DEFAULT_CUDA_ARCH)"
    if axis not in CELL_FIELDS:
        return "default (forge/axes.py)"
    if axis == "numpy":
        return f"newest numpy series with python {cell.python} wheels"
    if axis == "cuda":
        return "not asked: CPU only"
    if host is not None:
        return f"host toolchain ({cell.suite})"
    if axis == "gcc" and cell.gcc is None:
        return "zig c++ (clang) builds macOS targets"
    if axis == "gcc":
        return (
            f"Debian {cell.suite} default"
            if cell.gcc == default_gcc
            else f"Debian {cell.suite} (newest gcc the constraints allow)"
        )
    return f"Debian {cell.suite}"


def check_request(request: Request, data: Toolchains, supported: Supported) -> Target:
    """Unknown targets/axes/values are config errors, not infeasibility."""
    if request.target not in supported.targets or request.target not in data.targets:
        raise unknown("target", request.target, supported.targets, request.origin)
    for axis, value in request.pins:
        _check_only_with(request, axis, value)
        if axis == "suite":
            if value not in [s.name for s in data.suites]:
                raise unknown("suite", value, [s.name for s in data.suites], request.origin)
            continue
        if axis == "cuda" and value == "none":
            continue
        if (canonical := registry.get(axis).canonical) is not None:  # free-form: its spelling is checked
            try:
                canonical(value)
            except ConfigError as exc:
                raise ConfigError(f"{request.origin}: {exc.what}", exc.why, exc.fix) from None
            continue
        if not registry.get(axis).version:  # a named value (not a version): one of the known ones
            if value not in _known_values(axis, data):
                raise unknown(axis, value, _known_values(axis, data), request.origin)
            continue
        try:
            spec = pin_spec(value)
        except InvalidSpecifier:
            raise unknown(f"{axis} version", value, _known_values(axis, data), request.origin) from None
        allowed = supported.specs.get(axis)
        known = _known_values(axis, data)
        if not any(_in(v, spec) for v in known):
            raise unknown(f"{axis} version", value, known, request.origin)
        if allowed is not None and not any(_in(v, spec) and _in(v, allowed) for v in known):
            raise InfeasibleError(
                f"{axis} {value} is outside what ember supports ({axis} {format_spec(allowed)}, matrix/supported.yaml)",
                _window_reason(axis, value, allowed, known),
                _window_fix(request, axis, allowed, data, supported),
            )
    return data.targets[request.target]


def _check_only_with(request: Request, axis: str, value: str) -> None:
    """A pin of an axis that exists only with another one (cuda_arch: CUDA cells) needs that one pinned."""
    needs = registry.get(axis).only_with
    if needs is None or request.pin(needs) not in (None, "none"):
        return
    raise ConfigError(
        f"{request.origin}: {axis} {value} pins the GPU targets of a CPU cell (no {needs} asked)",
        f"{axis} exists only in cells with a {needs} toolkit; without --{needs} (or `{needs}:` in the matrix "
        f"entry) the cell is CPU-only",
        f'add --{needs} X.Y (`{needs}: "X.Y"` in a matrix entry, with `{axis}` in the same entry), or drop {axis}',
    )


def _window_reason(axis: str, value: str, allowed: SpecifierSet, known: list[str]) -> str:
    inside = [v for v in known if _in(v, allowed)]
    offered = f"the toolchains offer {axis} {', '.join(inside)} inside it" if inside else "no toolchain offers one"
    return f"{axis} {value} was asked; ember builds with {axis} {format_spec(allowed)} only; {offered}"


def _window_fix(request: Request, axis: str, allowed: SpecifierSet, data: Toolchains, supported: Supported) -> str:
    """The nearest feasible cell with `axis` inside the supported window (as TensorFlow's configure
    names the Bazel to install), or the window itself when no cell fits."""
    known = [v for v in _known_values(axis, data) if v != "none" and _in(v, allowed)]
    pinned = dict(request.pins)
    asked = pinned[axis]
    for value in sorted(known, key=lambda v: _distance(v, asked)):
        cell, _ = _feasible(
            Request.make(request.target, {**pinned, axis: value}, request.origin), data, supported, None
        )
        if cell is not None:
            return f"nearest feasible: {axis} {value} -> {cell.id}\nto build it: invoke build --cell {cell.id}"
    return f"pick {axis} {format_spec(allowed)}"


def _distance(value: str, asked: str) -> tuple[float, str]:
    """How far a known version is from an asked pin (its first version), for "nearest"."""
    first = next((s.version.rstrip(".*") for s in pin_spec(asked)), "0")
    try:
        a, b = Version(value), Version(first)
    except ValueError:
        return (float("inf"), value)
    return (abs((a.major - b.major) * 1000 + (a.minor - b.minor)), value)


def _known_values(axis: str, data: Toolchains) -> list[str]:
    known = registry.get(axis).known
    if known is not None:
        return known(data)
    values = {v for s in data.suites for v in _suite_values(s, axis)}
    return sorted(values, key=Version)


def _feasible(
    request: Request, data: Toolchains, supported: Supported, host: HostFacts | None
) -> tuple[Cell | None, list[list[str]]]:
    target = data.targets[request.target]
    suites = (_host_suite(host, data),) if host else data.suites
    all_violations = []
    for cell in _candidates(target, suites, data, request):
        found = _violations(cell, request, target, data, host)
        found += _unsupported(cell, supported)
        if not found:
            return cell, []
        all_violations.append(found)
    return None, all_violations


def _unsupported(cell: Cell, supported: Supported) -> list[str]:
    """Axes outside matrix/supported.yaml ("0" marks a version the host does not have)."""
    out = []
    for axis, spec in supported.specs.items():
        value = cell.value(axis)
        if value is not None and value != "0" and not _in(value, spec):
            out.append(f"ember supports {axis} {format_spec(spec)}; {value} is outside")
    return out


def refuse_unbuilt(
    request: Request, cell: Cell, data: Toolchains, supported: Supported, host: HostFacts | None
) -> None:
    """InfeasibleError when `cell` (resolved from `request`) has an axis value forge cannot build yet."""
    reasons = {axis: why for axis, why in not_built_yet(cell, data, host).items() if _asks_for(request, axis)}
    if not reasons:
        return
    honest = request
    for axis in reasons:
        honest = honest.without(axis)
    nearest, _ = _feasible(honest, data, supported, host)
    fix = f"drop --{' --'.join(reasons)}" + (f" (nearest feasible: {nearest.id})" if nearest is not None else "")
    for other in _buildable_cuda(request, data, supported, host) if "cuda" in reasons else []:
        fix += f"\nor --cuda {other.cuda} -> {other.id}"
    if nearest is not None:
        fix += f"\nto build it: invoke build --cell {nearest.id}"
    raise InfeasibleError(
        f"{request.describe()} cannot be built yet ({request.origin})", "\n".join(reasons.values()), fix
    )


def _buildable_cuda(request: Request, data: Toolchains, supported: Supported, host: HostFacts | None) -> list[Cell]:
    """The cells the request gives with each CUDA toolkit forge can build instead of the asked one."""
    out = []
    for source in data.cuda:
        if source.version == request.pin("cuda"):
            continue
        other, _ = _feasible(_repin(request, "cuda", source.version), data, supported, host)
        if other is not None and not not_built_yet(other, data, host):
            out.append(other)
    return out


def _repin(request: Request, axis: str, value: str) -> Request:
    return Request.make(request.target, {**dict(request.pins), axis: value}, request.origin)


def resolve(
    request: Request,
    data: Toolchains,
    supported: Supported,
    host: HostFacts | None = None,
    unbuilt: bool = True,
) -> Resolution:
    """The first feasible cell in preference order, or InfeasibleError with reasons and alternatives.

    `unbuilt=False` resolves axis values forge cannot build yet (not_built_yet) as if it could:
    the constraints of a CUDA toolkit stay tested until an image holds its nvcc.
    """
    check_request(request, data, supported)
    cell, violations = _feasible(request, data, supported, host)
    if cell is not None and unbuilt:
        refuse_unbuilt(request, cell, data, supported, host)
    if cell is not None:
        default_gcc = None if host else data.suite(cell.suite).gcc[0]
        shown = tuple(
            a
            for a in registry.names(lambda a: a.version or a.name not in CELL_FIELDS)
            if a in CELL_FIELDS or cell.value(a) is not None
        )
        sources = {axis: _source_of(axis, request, cell, host, default_gcc) for axis in shown}
        sources["suite"] = (
            "host"
            if host
            else (
                f"pinned ({cell.suite})"
                if request.pin("suite")
                else "first suite that fits, in toolchains/debian.yaml order"
            )
        )
        return Resolution(cell, sources)
    fewest = min(len(v) for v in violations)
    reasons = list(dict.fromkeys(r for v in violations if len(v) == fewest for r in v))
    alternatives = nearest_alternatives(request, data, supported, host, unbuilt)
    fix = "nearest feasible: " + "; ".join(alternatives) if alternatives else "relax the pins"
    if alternatives:  # a command that can be pasted
        fix += f"\nto build the first: invoke build --cell {alternatives[0].rsplit(' -> ', 1)[-1]}"
    raise InfeasibleError(f"no cell satisfies {request.describe()} ({request.origin})", "\n".join(reasons), fix)


def nearest_alternatives(
    request: Request, data: Toolchains, supported: Supported, host: HostFacts | None, unbuilt: bool = False
) -> list[str]:
    """For each pinned axis: the cell you get by letting that one axis go. With `unbuilt`, none
    that not_built_yet refuses (`--cuda 12.4 --gcc 14` is not offered gcc 13 with CUDA 12.4)."""
    out = []
    for axis, value in request.pins:
        cell, _ = _feasible(request.without(axis), data, supported, host)
        if cell is None or (unbuilt and not_built_yet(cell, data, host)):
            continue
        if axis == "cuda_arch" and cell.cuda is not None:  # first the targets its nvcc can build nearest to the pin
            near = str(cuda_toolkits.nearest_cuda_arch(cell.cuda, value))
            other, _ = _feasible(_repin(request, axis, near), data, supported, host) if near else (None, [])
            if other is not None and near != cell.value(axis):
                out.append(f"{axis} {near} instead of {value} -> {other.id}")
        new = cell.value(axis) or "none"
        out.append(f"{axis} {new} instead of {value} -> {cell.id}")
    return list(dict.fromkeys(out))
