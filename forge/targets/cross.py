"""What a cross target needs beyond the native build: its host tools and a reference.

- Tools: what the target's family asks for (forge.targets.base.Family.host_tools): the Debian
  cross g++ and qemu-user for Linux under qemu, zig (PyPI `ziglang`) for macOS; the local
  backend installs them on the host when missing, the docker backend bakes them into the image.
- Compiler: a build fails before configuring when the family's compiler is not where it runs.
- Reference: cross cells are compared with the native Linux x86_64 build of the same sources
  (headers, exported symbols, verify results); `find_reference` picks it from dist/.

How the suites run (natively, under the emulator, not at all) is the family's: see
forge/targets/native.py, qemu.py and zig.py.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from forge import host, manifest, proc
from forge.checks import tree
from forge.errors import ToolMissingError
from forge.host import HostTool
from forge.matrix import Cell, Request
from forge.targets import zig
from forge.targets.family import family_for
from forge.toolchains import Target
from forge.verify import SuiteResult, SuiteStatus

REFERENCE_TARGETS = ("linux-x86_64", "host")


def verify_mode(target: Target) -> str:
    """What the manifest and report say about how a cell was verified."""
    return family_for(target).test_run(target).mode


def target_tools(cell: Cell, target: Target) -> tuple[HostTool, ...]:
    """What the host needs to build `target` locally beyond forge.host's table: what its family asks
    for (the cell's cross g++, whose package depends on the cell's gcc, and qemu-user)."""
    scope = frozenset({target.checker})
    tools = []
    for need in family_for(target).host_tools(cell, target):
        if need.package is None:
            tools.append(host.tool(need.name))
        else:
            detect = host.on_path(need.name)
            tools.append(
                HostTool(need.name, detect, apt=need.package, tasks=host.LOCAL_TASKS, backend="local", families=scope)
            )
    return tuple(tools)


def zig_present(python: str = sys.executable) -> bool:
    return proc.capture([python, "-m", "ziglang", "version"]) is not None


def ensure_zig(target: Target, env: Mapping[str, str], log_path: Path, install: bool) -> list[str]:
    """pip-install the pinned `ziglang` (forge.host's table) for macOS targets when python3 cannot import it."""
    if not isinstance(family_for(target), zig.Zig):
        return []
    why = f"target {target.name} is compiled with zig"
    return host.ensure((host.tool(zig.ZIG_TOOL),), env=env, log_path=log_path, why=why, install=install)


def ensure_target_tools(cell: Cell, target: Target, env: Mapping[str, str], log_path: Path, install: bool) -> list[str]:
    """Install what a local build of `target` needs (forge.host's table and the cell's cross g++)."""
    scopes = (("local", target.name),)
    extra = target_tools(cell, target)
    return host.ensure_tools("build", env=env, log_path=log_path, scopes=scopes, extra=extra, install=install)


def find_reference(dist: Path, source_tree_hash: str, exclude: str) -> tuple[Path, manifest.Manifest] | None:
    """The recorded native Linux build of the same sources (linux-x86_64 first, then host)."""
    found: dict[str, tuple[Path, manifest.Manifest]] = {}
    for cell_dir in sorted(dist.iterdir()) if dist.is_dir() else []:
        data = manifest.read_manifest(cell_dir) if cell_dir.is_dir() and cell_dir.name != exclude else None
        if data is None or data.source_tree_hash != source_tree_hash:
            continue
        target = data.cell.get("target")
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
    reference: tuple[Path, manifest.Manifest] | None,
    verify_build: Path | None = None,
) -> list[SuiteResult]:
    """A cross cell's extra verify results: binary structure (Linux) and parity with the reference."""
    family = family_for(target)
    tests = family.test_run(target)
    # where the suites run, the binaries' structure is checked here (ELF machine, float ABI: data);
    # where they cannot (macOS), the verify-run step already checked it
    results = family.artifact_checks(target, prefix, verify_build) if tests.runs else []
    if reference is None:
        missing = "no native linux-x86_64 build of these sources in dist/ to compare with"
        return [
            *results,
            *(SuiteResult(f"parity:{n}", SuiteStatus.FAILED, 0.0, missing) for n in ("headers", "symbols")),
        ]
    ref_dir, ref_data = reference
    results += [tree.check_headers(prefix, ref_dir / "install"), tree.check_symbols(prefix, ref_dir / "install")]
    if tests.runs:
        recorded = [SuiteResult.from_dict(s) for s in (ref_data.verify or {}).get("suites", [])]
        ran = [s for s in suites if not s.name.startswith(("parity:", "elf:", "macho:"))]
        only_there = ("parity:", "elf:", "engine:")  # engine:* results come from the host cell only
        results.append(
            tree.check_verify_results(ran, [s for s in recorded if not s.name.startswith(only_there)], verify_build)
        )
    return results


def require_compiler(found: str | None, cell: Cell, target: Target, backend: str) -> None:
    """Fail before configuring when the target's compiler is not where the build runs."""
    compiler = family_for(target).compiler(cell, target)
    if found is not None or compiler is None:
        return
    where = "this host" if backend == "local" else f"the {backend} image of {cell.id}"
    fix = compiler.install if backend == "local" else "rebuild the image: invoke images --build"
    raise ToolMissingError(f"{compiler.what} is missing from {where}", f"target {target.name} is compiled with it", fix)
