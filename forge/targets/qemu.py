"""Foreign Linux run under qemu-user: the suite's cross g++ (a Debian package named in
toolchains/targets.yaml), ctest running every verify program through the target's `emulator`
(CMAKE_CROSSCOMPILING_EMULATOR, so binfmt_misc is not needed).

Before the suites, the target's C library is started under the emulator (glibc's libc.so.6 is
an executable that prints its banner; it goes through the dynamic loader as every program does),
so a missing or broken emulator is reported as such and not as failing engine tests. The
loader's own `--version` is no probe: glibc before 2.33 (bullseye's 2.31) reads it as a program
name and exits 127.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from forge.matrix import Cell
from forge.targets.base import (
    BAZEL_NATIVE_ONLY,
    Compiler,
    Family,
    ImageExtras,
    TestRun,
    ToolNeed,
    debian_gcc,
    elf_checks,
    gcc_name,
    linux_problems,
)
from forge.toolchains import Checker, CompilerProvider, Target
from forge.verify import SuiteResult

EMULATOR_PACKAGE = "qemu-user"  # the Debian package, and forge.host's table entry, of every qemu-* emulator


def target_python_package(python: str, debian_arch: str) -> str:
    """The multiarch package whose headers and libpython a cross wheel is built against and run with."""
    return f"libpython{python}-dev:{debian_arch}"


def emulator_argv(target: Target) -> list[str]:
    return shlex.split(target.emulator or "")


def emulator_probe(target: Target) -> list[str]:
    """argv that runs the target's libc.so.6 under the emulator: it prints glibc's banner and exits
    0 on every Debian suite (its dynamic loader's `--version` exits 127 before glibc 2.33)."""
    argv = emulator_argv(target)
    sysroot = argv[argv.index("-L") + 1] if "-L" in argv[:-1] else f"/usr/{target.triple}"
    return [*argv, f"{sysroot}/lib/libc.so.6"]


class Qemu(Family):
    name = "qemu"
    checker = Checker.QEMU

    def problems(self, target: Target) -> list[str]:
        out = linux_problems(target, (CompilerProvider.DEBIAN,))
        if not target.emulator:
            out.append("checker qemu needs an emulator (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu)")
        if target.elf_machine is None:
            out.append("checker qemu needs elf_machine (the ELF e_machine of its binaries)")
        return out

    def test_run(self, target: Target) -> TestRun:
        probe = tuple(emulator_probe(target))
        fix = (
            f"install {EMULATOR_PACKAGE} and the cross compiler package (its libc is the sysroot /usr/{target.triple})"
        )
        return TestRun(
            runs=True, how=f"under {EMULATOR_PACKAGE}", mode=f"emulated ({probe[0]})", probe=probe, probe_fix=fix
        )

    def compiler_probe(self, cell: Cell, target: Target, machine: str) -> list[str]:
        return [gcc_name(cell, target, machine), "--version"]

    def compiler(self, cell: Cell, target: Target) -> Compiler | None:
        return debian_gcc(cell, target)

    def artifact_checks(self, target: Target, prefix: Path, verify_build: Path | None) -> list[SuiteResult]:
        return elf_checks(target, prefix)

    def image_extras(self, cell: Cell, target: Target) -> ImageExtras:
        cross = (target.compiler_package.format(gcc=cell.gcc), EMULATOR_PACKAGE)
        if not target.debian_arch:
            return ImageExtras(cross=cross, arch=target.arch)
        foreign = (target_python_package(cell.python, target.debian_arch),)
        return ImageExtras(
            cross=cross, arch=target.arch, dpkg_arch=target.debian_arch, foreign=foreign, multiarch=target.triple
        )

    def host_tools(self, cell: Cell, target: Target) -> tuple[ToolNeed, ...]:
        compiler = f"{target.triple}-g++-{cell.gcc}"
        return (ToolNeed(compiler, target.compiler_package.format(gcc=cell.gcc)), ToolNeed(EMULATOR_PACKAGE))

    def wheel_refusal(self, target: Target) -> str | None:
        if target.debian_arch:
            return None
        return (
            f"no {target.arch} wheel yet: its image has no target Python (toolchains/targets.yaml gives "
            f"{target.name} no debian_arch, the dpkg architecture of its multiarch libpython-dev), so there "
            "are no target Python headers to build against and no Python to test under qemu with"
        )

    def bazel_refusal(self, target: Target) -> str | None:
        return BAZEL_NATIVE_ONLY.format(name=target.name)


QEMU = Qemu()
