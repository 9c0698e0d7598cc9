"""macOS through zig: `python -m ziglang c++ -target <arch>-macos` (a pinned PyPI wheel, in the
image's venv or on the host) compiles; the binaries cannot run on Linux, so instead of running
the verify suites forge checks the Mach-O files: CPU type, minimum macOS (`min_os`), install
names, static libraries, exported symbols, and the verify programs linked against the package."""

from __future__ import annotations

from pathlib import Path

from forge.checks import tree
from forge.matrix import Cell
from forge.targets.base import BAZEL_NATIVE_ONLY, Compiler, Family, ImageExtras, TestRun, ToolNeed
from forge.toolchains import OS, Checker, CompilerProvider, Target
from forge.verify import SuiteResult

ZIG_CACHE = "zig"  # under the compiler cache directory, so the docker ccache volume keeps it too
ZIG_TOOL = "zig"  # forge.host's table entry (the pinned ziglang wheel)
NOT_RUN = "macOS binaries cannot run on this Linux build machine (no macOS kernel or dyld here)"


class Zig(Family):
    name = "zig"
    checker = Checker.MACHO
    uses_gcc = False  # zig c++ (clang): the cell has no gcc
    debug_info = False  # no ELF: the .debug split is for ELF files

    def problems(self, target: Target) -> list[str]:
        out = []
        if target.os is not OS.MACOS:
            out.append(f"os is {target.os}, not macos")
        if target.compiler_provider is not CompilerProvider.PYPI:
            out.append(f"compiler.provider is {target.compiler_provider}, not pypi (the ziglang wheel)")
        if target.emulator is not None:
            out.append("macOS binaries have no emulator here (emulator must be null)")
        if target.min_os is None:
            out.append("checker macho needs min_os (the LC_BUILD_VERSION every Mach-O file declares)")
        return out

    def test_run(self, target: Target) -> TestRun:
        what = "check the Mach-O files (CPU type, minimum macOS, install names, exported symbols); not run"
        return TestRun(runs=False, how=what, mode="built and checked, not run", why_not=NOT_RUN)

    def compiler_probe(self, cell: Cell, target: Target, machine: str) -> list[str]:
        return ["python3", "-m", "ziglang", "version"]

    def compiler(self, cell: Cell, target: Target) -> Compiler | None:
        package = target.compiler_package
        return Compiler(f"zig ({package})", f"pip install {package}")

    def artifact_checks(self, target: Target, prefix: Path, verify_build: Path | None) -> list[SuiteResult]:
        results = tree.check_macho_tree(prefix, target.arch, target.min_os)
        if verify_build is not None:
            results.append(tree.check_consumer(verify_build, target.arch))
        return results

    def image_extras(self, cell: Cell, target: Target) -> ImageExtras:
        return ImageExtras(pip=(target.compiler_package,), arch="zig", suite_gcc=True)

    def host_tools(self, cell: Cell, target: Target) -> tuple[ToolNeed, ...]:
        return (ToolNeed(ZIG_TOOL),)

    def compiler_env(self, ccache: str | None) -> tuple[tuple[str, str], ...]:
        """ZIG_GLOBAL_CACHE_DIR inside the compiler cache: zig builds libc++ once per target there."""
        if ccache is None:
            return ()
        return (("ZIG_GLOBAL_CACHE_DIR", f"{ccache}/{ZIG_CACHE}"), ("ZIG_LOCAL_CACHE_DIR", f"{ccache}/{ZIG_CACHE}"))

    def wheel_refusal(self, target: Target) -> str | None:
        return (
            "no macOS wheel: building one needs macOS's CPython headers and a macOS NumPy, which no "
            "registry reachable here provides (zig cross-compiles the C++ libraries only)"
        )

    def bazel_refusal(self, target: Target) -> str | None:
        return BAZEL_NATIVE_ONLY.format(name=target.name)


ZIG = Zig()
