"""What a cross target needs beyond the native build: its tools, a working emulator, a reference.

- Tools: the Debian cross g++ and qemu-user for Linux ARM, zig (PyPI `ziglang`) for macOS; the
  local backend installs them on the host when missing, the docker backend bakes them into
  the image.
- Emulator: before ctest runs foreign binaries, the target's C library is started under qemu
  (glibc's libc.so.6 is an executable that prints its banner; it goes through the dynamic
  loader as every program does), so a missing or broken emulator is reported as such and not
  as failing engine tests. The loader's own `--version` is no probe: glibc before 2.33
  (bullseye's 2.31) reads it as a program name and exits 127.
- Reference: cross cells are compared with the native Linux x86_64 build of the same sources
  (headers, exported symbols, verify results); `find_reference` picks it from dist/.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge import host, manifest, proc
from forge.checks import elf, tree
from forge.errors import ToolMissingError
from forge.host import HostTool
from forge.matrix import Cell, Request
from forge.toolchains import Checker, Target
from forge.verify import SuiteResult, SuiteStatus

REFERENCE_TARGETS = ("linux-x86_64", "host")
EMULATOR_PACKAGE = host.tool("qemu-user").apt
ZIG_CACHE = "zig"  # under the compiler cache directory, so the docker ccache volume keeps it too


def verify_mode(target: Target) -> str:
    """What the manifest and report say about how a cell was verified."""
    if target.checker is Checker.MACHO:
        return "built and checked, not run"
    if target.checker is Checker.QEMU:
        return f"emulated ({emulator_argv(target)[0]})"
    return "native"


def emulator_argv(target: Target) -> list[str]:
    return shlex.split(target.emulator or "")


def emulator_probe(target: Target) -> list[str]:
    """argv that runs the target's libc.so.6 under the emulator: it prints glibc's banner and exits
    0 on every Debian suite (its dynamic loader's `--version` exits 127 before glibc 2.33)."""
    argv = emulator_argv(target)
    sysroot = argv[argv.index("-L") + 1] if "-L" in argv[:-1] else f"/usr/{target.triple}"
    return [*argv, f"{sysroot}/lib/libc.so.6"]


def _cross_compiler(cell: Cell, target: Target) -> str:
    return f"{target.triple}-g++-{cell.gcc}"


def target_tools(cell: Cell, target: Target) -> tuple[HostTool, ...]:
    """What the host needs to build `target` locally beyond forge.host's table: the cell's cross g++
    (its package depends on the cell's gcc, so toolchains/targets.yaml names it), and qemu-user."""
    if target.compiler_provider != "debian" or not target.emulator:
        return ()
    compiler = _cross_compiler(cell, target)
    package = target.compiler_package.format(gcc=cell.gcc)
    scope = frozenset({target.name})
    cross_gxx = HostTool(
        compiler, host.on_path(compiler), apt=package, tasks=host.LOCAL_TASKS, backend="local", targets=scope
    )
    return (cross_gxx, host.tool("qemu-user"))


def zig_present(python: str = sys.executable) -> bool:
    return proc.capture([python, "-m", "ziglang", "version"]) is not None


def ensure_zig(target: Target, env: Mapping[str, str], log_path: Path, install: bool) -> list[str]:
    """pip-install the pinned `ziglang` (forge.host's table) for macOS targets when python3 cannot import it."""
    if target.compiler_provider != "pypi":
        return []
    why = f"target {target.name} is compiled with zig"
    return host.ensure((host.tool("zig"),), env=env, log_path=log_path, why=why, install=install)


def ensure_target_tools(cell: Cell, target: Target, env: Mapping[str, str], log_path: Path, install: bool) -> list[str]:
    """Install what a local build of `target` needs (forge.host's table and the cell's cross g++)."""
    scopes = (("local", target.name),)
    extra = target_tools(cell, target)
    return host.ensure_tools("build", env=env, log_path=log_path, scopes=scopes, extra=extra, install=install)


def zig_cache_env(ccache: str | None) -> tuple[tuple[str, str], ...]:
    """ZIG_GLOBAL_CACHE_DIR inside the compiler cache: zig builds libc++ once per target there."""
    if ccache is None:
        return ()
    return (("ZIG_GLOBAL_CACHE_DIR", f"{ccache}/{ZIG_CACHE}"), ("ZIG_LOCAL_CACHE_DIR", f"{ccache}/{ZIG_CACHE}"))


def find_reference(dist: Path, source_tree_hash: str, exclude: str) -> tuple[Path, dict[str, Any]] | None:
    """The recorded native Linux build of the same sources (linux-x86_64 first, then host)."""
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for cell_dir in sorted(dist.iterdir()) if dist.is_dir() else []:
        data = manifest.read_manifest(cell_dir) if cell_dir.is_dir() and cell_dir.name != exclude else None
        if not data or data.get("source_tree_hash") != source_tree_hash:
            continue
        target = (data.get("cell") or {}).get("target")
        if target in REFERENCE_TARGETS and target not in found and (cell_dir / "install").is_dir():
            found[target] = (cell_dir, data)
    return next((found[t] for t in REFERENCE_TARGETS if t in found), None)


def reference_request(request: Request) -> Request:
    """The native Linux x86_64 build a cross cell is compared with: same Python/NumPy pins."""
    pins = tuple(p for p in request.pins if p[0] in ("python", "numpy", "suite"))
    return Request("linux-x86_64", pins, f"native reference for {request.target}")


def parity_checks(
    target: Target,
    prefix: Path,
    suites: list[SuiteResult],
    reference: tuple[Path, dict[str, Any]] | None,
    verify_build: Path | None = None,
) -> list[SuiteResult]:
    """A cross cell's extra verify results: binary structure (Linux) and parity with the reference."""
    results = []
    if target.os == "linux":  # the ELF machine and float ABI are toolchains/targets.yaml data
        code = target.elf_machine
        machine = (
            elf.MACHINES.get(code, f"machine 0x{code:x}") if code is not None else "(no elf_machine in targets.yaml)"
        )
        results.append(tree.check_elf_tree(prefix, machine, target.hard_float))
    if reference is None:
        missing = "no native linux-x86_64 build of these sources in dist/ to compare with"
        return [
            *results,
            *(SuiteResult(f"parity:{n}", SuiteStatus.FAILED, 0.0, missing) for n in ("headers", "symbols")),
        ]
    ref_dir, ref_data = reference
    results += [tree.check_headers(prefix, ref_dir / "install"), tree.check_symbols(prefix, ref_dir / "install")]
    if target.checker is Checker.QEMU:
        recorded = [SuiteResult.from_dict(s) for s in ref_data["verify"]["suites"]]
        ran = [s for s in suites if not s.name.startswith(("parity:", "elf:", "macho:"))]
        only_there = ("parity:", "elf:", "engine:")  # engine:* results come from the host cell only
        results.append(
            tree.check_verify_results(ran, [s for s in recorded if not s.name.startswith(only_there)], verify_build)
        )
    return results


def require_compiler(found: str | None, cell: Cell, target: Target, backend: str) -> None:
    """Fail before configuring when the target's compiler is not where the build runs."""
    if found is not None or target.compiler_provider == "host":
        return
    package = target.compiler_package.format(gcc=cell.gcc)
    where = "this host" if backend == "local" else f"the {backend} image of {cell.id}"
    if target.compiler_provider == "pypi":
        fix = f"pip install {package}" if backend == "local" else "rebuild the image: invoke images --build"
        what = f"zig ({package}) is missing from {where}"
    else:
        fix = f"apt-get install {package}" if backend == "local" else "rebuild the image: invoke images --build"
        what = f"{_cross_compiler(cell, target)} (Debian package {package}) is missing from {where}"
    raise ToolMissingError(what, f"target {target.name} is compiled with it", fix)
