"""Toolchain data: Debian suites, CUDA sources, numpy wheels and targets, validated on load."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from forge.errors import ConfigError
from forge.yamlio import LocDict, LocList, check_keys, load_yaml, require, unknown


class Checker(Enum):
    """How a target's artifacts are verified."""

    RUN = "run"
    QEMU = "qemu"
    MACHO = "macho"


class _Named(str, Enum):
    """A closed set of names read from toolchains/*.yaml: compares and formats as its string."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class OS(_Named):
    """A target's operating system (`os` in toolchains/targets.yaml)."""

    LINUX = "linux"
    MACOS = "macos"


class CompilerProvider(_Named):
    """Where a target's compiler comes from (`compiler.provider` in toolchains/targets.yaml)."""

    HOST = "host"  # whatever c++ the host has
    DEBIAN = "debian"  # a Debian package of the cell's suite
    PYPI = "pypi"  # a wheel (zig, for macOS)


@dataclass(frozen=True)
class Suite:
    name: str
    release: str
    gcc: tuple[str, ...]
    python: str
    cmake: str
    bazel: str
    glibc: str


@dataclass(frozen=True)
class CudaSource:
    version: str
    provider: str
    package: str
    suites: tuple[str, ...]
    host_gcc: SpecifierSet


@dataclass(frozen=True)
class Target:
    name: str
    triple: str
    os: OS
    arch: str
    compiler_provider: CompilerProvider
    compiler_package: str
    toolchain_file: str | None
    emulator: str | None
    checker: Checker
    cuda: bool
    min_os: str | None = None  # the minimum OS version binaries must declare (macOS LC_BUILD_VERSION)
    elf_machine: int | None = None  # e_machine of every ELF file a Linux cross cell installs (0xB7: aarch64)
    hard_float: bool | None = None  # 32-bit ARM: every ELF file uses the hard-float ABI
    dynamic_loader: str | None = None  # under <sysroot>/lib/: the PT_INTERP programs of the target name
    debian_arch: str | None = None  # dpkg's name of the architecture: its multiarch Python goes in the image


@dataclass(frozen=True)
class Toolchains:
    suites: tuple[Suite, ...]
    cuda: tuple[CudaSource, ...]
    numpy: tuple[tuple[str, SpecifierSet], ...]
    targets: dict[str, Target]

    def suite(self, name: str) -> Suite:
        return next(s for s in self.suites if s.name == name)


def version_str(data: LocDict | LocList, key: Any) -> str:
    """A version written as a string; numbers are rejected because YAML reads 3.10 as 3.1."""
    value = data[key]
    where = data.where(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ConfigError(
            f"{where}: version {value!r} must be quoted", "YAML reads 3.10 as the number 3.1", f'write "{value}"'
        )
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a version string, found {type(value).__name__}")
    try:
        Version(value)
    except InvalidVersion as exc:
        raise ConfigError(f"{where}: `{value}` is not a version", "versions look like 3.11 or 12") from exc
    return value


def specifier(data: LocDict, key: str) -> SpecifierSet:
    value = require(data, key, str)
    try:
        return SpecifierSet(value)
    except InvalidSpecifier as exc:
        raise ConfigError(f"{data.where(key)}: `{value}` is not a version specifier", "write e.g. >=3.9,<3.13") from exc


def version_list(data: LocDict, key: str) -> tuple[str, ...]:
    items = require(data, key, LocList)
    return tuple(version_str(items, i) for i in range(len(items)))


def _load_suites(path: Path) -> tuple[Suite, ...]:
    data = load_yaml(path)
    check_keys(data, ["suites"])
    suites = require(data, "suites", LocDict)
    result = []
    for name, entry in suites.items():
        if not isinstance(entry, LocDict):
            raise ConfigError(f"{suites.where(name)}: suite `{name}` must be a mapping")
        check_keys(entry, ["release", "gcc", "python", "cmake", "bazel", "glibc"])
        fields = {k: version_str(entry, k) for k in ("release", "python", "cmake", "bazel", "glibc") if k in entry}
        missing = {"release", "python", "cmake", "bazel", "glibc"} - fields.keys()
        if missing:
            raise ConfigError(f"{entry.where()}: suite `{name}` lacks {', '.join(sorted(missing))}")
        result.append(Suite(name=name, gcc=version_list(entry, "gcc"), **fields))
    return tuple(result)


def _load_cuda(path: Path, suite_names: list[str]) -> tuple[CudaSource, ...]:
    data = load_yaml(path)
    check_keys(data, ["sources"])
    items = require(data, "sources", LocList)
    result = []
    for entry in items:
        if not isinstance(entry, LocDict):
            raise ConfigError(f"{items.where()}: each CUDA source must be a mapping")
        check_keys(entry, ["version", "provider", "package", "suites", "host_gcc"])
        suites = require(entry, "suites", LocList)
        for i, suite in enumerate(suites):
            if suite not in suite_names:
                raise unknown("suite", str(suite), suite_names, suites.where(i))
        provider = require(entry, "provider", str)
        if provider not in ("debian", "pypi"):
            raise unknown("provider", provider, ["debian", "pypi"], entry.where("provider"))
        result.append(
            CudaSource(
                version=version_str(entry, "version"),
                provider=provider,
                package=require(entry, "package", str),
                suites=tuple(suites),
                host_gcc=specifier(entry, "host_gcc"),
            )
        )
    return tuple(result)


def _load_numpy(path: Path) -> tuple[tuple[str, SpecifierSet], ...]:
    data = load_yaml(path)
    check_keys(data, ["series"])
    series = require(data, "series", LocDict)
    for key in series:
        try:
            Version(key)
        except InvalidVersion as exc:
            raise ConfigError(f"{series.where(key)}: numpy series `{key}` is not a version") from exc
    return tuple((key, specifier(series, key)) for key in series)


def _load_target(name: str, entry: LocDict) -> Target:
    check_keys(
        entry,
        [
            "triple", "os", "arch", "compiler", "toolchain_file", "emulator", "checker", "cuda", "min_os",
            "elf_machine", "hard_float", "dynamic_loader", "debian_arch",
        ],
    )  # fmt: skip
    compiler = require(entry, "compiler", LocDict)
    check_keys(compiler, ["provider", "package"])
    checker = require(entry, "checker", str)
    if checker not in [c.value for c in Checker]:
        raise unknown("checker", checker, [c.value for c in Checker], entry.where("checker"))
    return Target(
        name=name,
        triple=require(entry, "triple", str),
        os=_named(OS, entry, "os"),
        arch=require(entry, "arch", str),
        compiler_provider=_named(CompilerProvider, compiler, "provider"),
        compiler_package=require(compiler, "package", str),
        toolchain_file=require(entry, "toolchain_file", (str, type(None))),
        emulator=require(entry, "emulator", (str, type(None))),
        checker=Checker(checker),
        cuda=require(entry, "cuda", bool),
        min_os=version_str(entry, "min_os") if "min_os" in entry else None,
        elf_machine=require(entry, "elf_machine", int) if "elf_machine" in entry else None,
        hard_float=require(entry, "hard_float", bool) if "hard_float" in entry else None,
        dynamic_loader=require(entry, "dynamic_loader", str) if "dynamic_loader" in entry else None,
        debian_arch=require(entry, "debian_arch", str) if "debian_arch" in entry else None,
    )


def load_toolchains(root: Path) -> Toolchains:
    """Load and validate toolchains/{debian,cuda,numpy,targets}.yaml under `root` (cached per content)."""
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.glob("*.yaml")))
    return _load_toolchains(root, stamp)


@functools.lru_cache(maxsize=8)
def _load_toolchains(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> Toolchains:
    suites = _load_suites(root / "debian.yaml")
    cuda = _load_cuda(root / "cuda.yaml", [s.name for s in suites])
    data = load_yaml(root / "targets.yaml")
    check_keys(data, ["targets"])
    entries = require(data, "targets", LocDict)
    targets = {}
    for name, entry in entries.items():
        if not isinstance(entry, LocDict):
            raise ConfigError(f"{entries.where(name)}: target `{name}` must be a mapping")
        targets[name] = _load_target(name, entry)
    return Toolchains(suites=suites, cuda=cuda, numpy=_load_numpy(root / "numpy.yaml"), targets=targets)


def _named(kind: type[_Named], entry: LocDict, key: str) -> Any:
    value = require(entry, key, str)
    choices = [member.value for member in kind]
    if value not in choices:
        raise unknown(key, value, choices, entry.where(key))
    return kind(value)
