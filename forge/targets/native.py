"""Native Linux: the host's own c++ (the `host` target) or the suite's g++ for the build machine's
architecture (linux-x86_64). The verify suites run as they are; nothing is refused."""

from __future__ import annotations

from pathlib import Path

from forge.matrix import Cell
from forge.targets.base import Compiler, Family, TestRun, debian_gcc, elf_checks, gcc_name, linux_problems
from forge.toolchains import Checker, CompilerProvider, Target
from forge.verify import SuiteResult


class Native(Family):
    name = "native"
    checker = Checker.RUN

    def problems(self, target: Target) -> list[str]:
        out = linux_problems(target, (CompilerProvider.HOST, CompilerProvider.DEBIAN))
        if target.emulator is not None:
            out.append("a native target has no emulator (checker: qemu runs under one)")
        return out

    def test_run(self, target: Target) -> TestRun:
        return TestRun(runs=True, how="natively", mode="native")

    def compiler_probe(self, cell: Cell, target: Target, machine: str) -> list[str]:
        if target.compiler_provider is CompilerProvider.HOST:
            return ["c++", "--version"]
        return [gcc_name(cell, target, machine), "--version"]

    def compiler(self, cell: Cell, target: Target) -> Compiler | None:
        return None if target.compiler_provider is CompilerProvider.HOST else debian_gcc(cell, target)

    def artifact_checks(self, target: Target, prefix: Path, verify_build: Path | None) -> list[SuiteResult]:
        return elf_checks(target, prefix)


NATIVE = Native()
