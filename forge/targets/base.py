"""What every target family answers: the interface the stages ask instead of branching on a target.

A family is a kind of target: native Linux (forge.targets.native), Linux run under qemu-user
(forge.targets.qemu), macOS compiled by zig and checked, not run (forge.targets.zig). Build,
plan, images, wheel and Bazel ask a target's family (forge.targets.family.family_for) what to
install, how to probe the compiler, how the verify suites run and what to check in the
artifacts. A family answers from the target's data (toolchains/targets.yaml), never from its
name, so a new architecture of an existing family is a targets.yaml entry and a CMake
toolchain file.

Families are leaves of forge's import graph (toolchains, matrix, checks, verify, errors): the
stages import them, never the reverse.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from forge.checks import elf, tree
from forge.matrix import Cell
from forge.toolchains import OS, Checker, CompilerProvider, Target
from forge.verify import SuiteResult


@dataclass(frozen=True)
class ImageExtras:
    """What a target adds to its cell's toolchain image (forge.images.ToolchainSpec)."""

    cross: tuple[str, ...] = ()  # Debian packages: the cross g++ and the emulator
    pip: tuple[str, ...] = ()  # PyPI requirements: the compiler, when it is a wheel
    arch: str = ""  # the image name's foreign part ("" for native images)
    suite_gcc: bool = False  # the cell has no gcc: the suite's first gcc is the image's host compiler
    dpkg_arch: str = ""  # a foreign dpkg architecture the image adds (Debian multiarch), "" for none
    foreign: tuple[str, ...] = ()  # Debian packages of that architecture: the target's libpython-dev
    multiarch: str = ""  # their multiarch triple, also the cross sysroot's name (/usr/<triple>)


@dataclass(frozen=True)
class TestRun:
    """How a cell's verify suites run, or what is done instead and why."""

    runs: bool
    how: str  # "natively", "under qemu-user"; for suites that do not run: what the verify-run step checks
    mode: str  # the manifest's verify.mode and the report's note
    probe: tuple[str, ...] = ()  # argv run before the suites to show the emulator starts
    why_not: str = ""  # why the suites cannot run (families whose suites do not run)
    probe_fix: str = ""  # what to install when the probe fails


@dataclass(frozen=True)
class ToolNeed:
    """A host program a local build of the target needs: forge.host's table entry called `name`
    (package None), or a program of that name from the Debian package `package`."""

    name: str
    package: str | None = None


@dataclass(frozen=True)
class Compiler:
    """The target's compiler, for the error when it is missing."""

    what: str  # "arm-linux-gnueabihf-g++-12 (Debian package g++-12-arm-linux-gnueabihf)"
    install: str  # how to install it on the host: "apt-get install g++-12-arm-linux-gnueabihf"


BAZEL_NATIVE_ONLY = (
    "ember's Bazel build is native Linux only (no cross toolchains in engine/BUILD.bazel); "
    "target {name} is not (drop --bazel: CMake builds it)"
)


class Family(ABC):
    """One kind of target. Subclasses are stateless; each answers from the Target it is given."""

    name: ClassVar[str]
    checker: ClassVar[Checker]  # the targets.yaml `checker` value that selects the family
    uses_gcc: ClassVar[bool] = True  # the cell's gcc axis applies (False: the compiler is not gcc)
    debug_info: ClassVar[bool] = True  # ELF: the -g build and separate .debug files apply

    def problems(self, target: Target) -> list[str]:
        """What in the target's data does not fit this family (empty when it fits)."""
        return []

    @abstractmethod
    def test_run(self, target: Target) -> TestRun:
        """How the verify suites run for the target."""

    @abstractmethod
    def compiler_probe(self, cell: Cell, target: Target, machine: str) -> list[str]:
        """argv whose first output line names the compiler, on a build machine of `machine`."""

    @abstractmethod
    def compiler(self, cell: Cell, target: Target) -> Compiler | None:
        """The compiler a build needs (None: whatever c++ the build machine has)."""

    @abstractmethod
    def artifact_checks(self, target: Target, prefix: Path, verify_build: Path | None) -> list[SuiteResult]:
        """Structure checks of the installed tree (and the verify programs linked to it)."""

    def image_extras(self, cell: Cell, target: Target) -> ImageExtras:
        return ImageExtras()

    def host_tools(self, cell: Cell, target: Target) -> tuple[ToolNeed, ...]:
        """What a local build needs beyond forge.host's table for every build."""
        return ()

    def compiler_env(self, ccache: str | None) -> tuple[tuple[str, str], ...]:
        """Environment the compiler needs in every step, given the compiler cache directory."""
        return ()

    def wheel_refusal(self, target: Target) -> str | None:
        """Why no Python wheel is built for the target (None: the family allows one)."""
        return None

    def bazel_refusal(self, target: Target) -> str | None:
        """Why Bazel cannot build for the target (None: it can)."""
        return None


# ---- helpers the Linux families share ------------------------------------------------------------


def gcc_name(cell: Cell, target: Target, machine: str) -> str:
    """The cell's g++ for the target: triple-prefixed unless the build machine is the target's arch."""
    prefix = "" if target.arch == machine else f"{target.triple}-"
    return f"{prefix}g++-{cell.gcc}"


def debian_gcc(cell: Cell, target: Target) -> Compiler:
    package = target.compiler_package.format(gcc=cell.gcc)
    return Compiler(f"{target.triple}-g++-{cell.gcc} (Debian package {package})", f"apt-get install {package}")


def elf_checks(target: Target, prefix: Path) -> list[SuiteResult]:
    """Every installed binary is ELF for the target's machine (and float ABI): targets.yaml data."""
    code = target.elf_machine
    machine = elf.MACHINES.get(code, f"machine 0x{code:x}") if code is not None else "(no elf_machine in targets.yaml)"
    return [tree.check_elf_tree(prefix, machine, target.hard_float)]


def linux_problems(target: Target, providers: tuple[CompilerProvider, ...]) -> list[str]:
    out = []
    if target.os is not OS.LINUX:
        out.append(f"os is {target.os}, not linux")
    if target.compiler_provider not in providers:
        out.append(f"compiler.provider is {target.compiler_provider}, not {' or '.join(map(str, providers))}")
    return out
