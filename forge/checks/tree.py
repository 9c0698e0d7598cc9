"""Checks of an installed ember tree (the staging prefix of one cell), as verify results.

Cross cells are compared with a native Linux build of the same sources (the *reference*):
the same public headers, the same public exported symbols, the same verify results. macOS
cells cannot run here, so their Mach-O files are checked instead: CPU type, minimum macOS,
install names, static libraries, and the verify programs that were linked against the package.
Every check returns a SuiteResult: PASSED, or FAILED with what differs.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable
from pathlib import Path

from forge.checks import ar, elf, macho, symbols
from forge.verify import SuiteResult, check_result

LIBRARIES = ("ember_framework", "ember_cc", "ember_lite")
_SHARED = re.compile(r"^lib(?P<name>ember_\w+?)(\.so(\.\d+)*|(\.\d+)*\.dylib)$")
_ABSOLUTE_BUILD_PATH = re.compile(r"^/(?!usr/lib/|System/)")


def binaries(tree: Path) -> list[Path]:
    """Regular files (not symlinks) under bin/ and lib/ that are not data (.a, .cmake, .pc, headers)."""
    found = []
    for sub in ("bin", "lib"):
        base = tree / sub
        if base.is_dir():
            found += [
                p
                for p in sorted(base.rglob("*"))
                if p.is_file() and not p.is_symlink() and p.suffix not in (".a", ".cmake", ".pc", ".h")
            ]
    return found


def shared_libraries(tree: Path) -> dict[str, Path]:
    """ember library name -> its real shared library file (the versioned one, not a symlink)."""
    libs: dict[str, Path] = {}
    for path in sorted((tree / "lib").glob("libember_*")) if (tree / "lib").is_dir() else []:
        match = _SHARED.match(path.name)
        if match and path.is_file() and not path.is_symlink():
            libs[match.group("name")] = path
    return libs


def exports(path: Path) -> frozenset[str]:
    """Strong exported symbols of a shared library, ELF or Mach-O."""
    return elf.read_elf(path).exports if elf.is_elf(path) else macho.read_macho(path).exports


def public_symbol_table(tree: Path) -> dict[str, frozenset[str]]:
    """ember library name -> its normalized public symbols (see checks/symbols.py)."""
    return {name: symbols.public_symbols(exports(path)) for name, path in shared_libraries(tree).items()}


def header_digests(tree: Path) -> dict[str, str]:
    """include/ relative path -> sha256 of every installed header."""
    base = tree / "include"
    files = sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []
    return {p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


# ---- parity with the native reference ------------------------------------------------------------


def check_headers(tree: Path, reference: Path) -> SuiteResult:
    mine, theirs = header_digests(tree), header_digests(reference)
    problems = [f"missing {p}" for p in sorted(theirs.keys() - mine.keys())]
    problems += [f"extra {p}" for p in sorted(mine.keys() - theirs.keys())]
    problems += [f"differs {p}" for p in sorted(theirs.keys() & mine.keys()) if theirs[p] != mine[p]]
    if not theirs:
        problems.append(f"the reference {reference} has no include/")
    return check_result("parity:headers", problems)


def check_symbols(tree: Path, reference: Path) -> SuiteResult:
    """Each ember library exports the same public symbols as the reference build's."""
    try:
        mine, theirs = public_symbol_table(tree), public_symbol_table(reference)
    except (elf.ElfError, macho.MachOError) as exc:
        return check_result("parity:symbols", [str(exc)])
    problems = [f"lib{name} missing" for name in sorted(theirs.keys() - mine.keys())]
    problems += [f"lib{name} extra" for name in sorted(mine.keys() - theirs.keys())]
    if not theirs:
        problems.append(f"the reference {reference} has no shared ember libraries")
    for name in sorted(theirs.keys() & mine.keys()):
        diff = symbols.compare(theirs[name], mine[name])
        if not diff.same:
            problems.append(f"lib{name}: {diff.describe()}")
        elif not theirs[name]:
            problems.append(f"lib{name} exports no public symbols")
    return check_result("parity:symbols", problems)


def check_verify_results(
    suites: Iterable[SuiteResult], reference: Iterable[SuiteResult], verify_build: Path | None = None
) -> SuiteResult:
    """The same verify suites with the same outcome (passed or not) as the reference cell.

    With `verify_build`, a reference suite missing here counts only when its program was built
    here: suites that run host tools (verify/lite's ember-convert fixtures) are not registered
    in cross builds, since the tools are not run under the emulator.
    """
    mine = {s.name: s.passed for s in suites}
    theirs = {s.name: s.passed for s in reference}
    built = {p.name for p in verify_build.rglob("*") if p.is_file()} if verify_build else None
    missing = [n for n in sorted(theirs.keys() - mine.keys()) if built is None or n in built]
    problems = [f"{n} not run here" for n in missing]
    problems += [f"{n} not in the reference" for n in sorted(mine.keys() - theirs.keys())]
    for name in sorted(theirs.keys() & mine.keys()):
        if theirs[name] != mine[name]:
            problems.append(f"{name} {'passed' if mine[name] else 'failed'} here, not in the reference")
    if not theirs:
        problems.append("the reference recorded no verify suites")
    return check_result("parity:verify", problems)


# ---- structure of foreign binaries ---------------------------------------------------------------


def check_elf_tree(tree: Path, machine: str, hard_float: bool | None) -> SuiteResult:
    """Every binary under bin/ and lib/ is ELF for `machine` (and hard-float for 32-bit ARM)."""
    problems = []
    files = binaries(tree)
    for path in files:
        rel = path.relative_to(tree).as_posix()
        if not elf.is_elf(path):
            problems.append(f"{rel} is not ELF")
            continue
        try:
            info = elf.read_elf(path)
        except elf.ElfError as exc:
            problems.append(str(exc))
            continue
        if info.machine != machine:
            problems.append(f"{rel} is {info.machine}, not {machine}")
        elif hard_float is not None and info.hard_float != hard_float:
            problems.append(f"{rel} is {'hard' if info.hard_float else 'soft'}-float")
    if not files:
        problems.append(f"no binaries under {tree}/bin or lib")
    return check_result("elf:arch", problems)


def _macho_files(tree: Path) -> tuple[list[macho.MachO], list[str]]:
    found, problems = [], []
    for path in binaries(tree):
        rel = path.relative_to(tree).as_posix()
        kind = macho.sniff(path)
        if kind != "macho":
            problems.append(f"{rel} is {'a fat (universal) file' if kind else 'not Mach-O'}")
            continue
        try:
            found.append(macho.read_macho(path))
        except macho.MachOError as exc:
            problems.append(str(exc))
    return found, problems


def check_macho_tree(tree: Path, arch: str, min_os: str | None) -> list[SuiteResult]:
    """Mach-O magic + CPU type, minimum macOS, install names, static libraries, CMake package."""
    files, problems = _macho_files(tree)
    if not files:
        problems.append(f"no Mach-O binaries under {tree}/bin or lib")
    wrong = [f"{f.path.name} is {f.arch}" for f in files if f.arch != arch]
    results = [check_result("macho:arch", problems + wrong, f"want {arch}: ")]
    minos = [f"{f.path.name} has minos {f.minos}" for f in files if f.platform != 1 or f.minos != min_os]
    results.append(check_result("macho:minos", minos, f"want LC_BUILD_VERSION macOS {min_os}: "))
    results.append(check_result("macho:install-names", _install_name_problems(tree, files)))
    results.append(check_result("macho:static-libs", _static_lib_problems(tree, arch)))
    package = [p for p in ("lib/cmake/ember/ember-config.cmake", "include/ember/session.h") if not (tree / p).is_file()]
    results.append(check_result("package", [f"missing {p}" for p in package]))
    return results


def _install_name_problems(tree: Path, files: list[macho.MachO]) -> list[str]:
    """Dylibs are named @rpath/<file in lib/>; nothing refers to a build machine's absolute path."""
    problems = []
    dylibs = [f for f in files if f.filetype == "dylib"]
    if not dylibs:
        problems.append("no .dylib installed")
    for lib in dylibs:
        want = "@rpath/"
        if not lib.install_name or not lib.install_name.startswith(want):
            problems.append(f"{lib.path.name}: install name {lib.install_name!r} is not @rpath/...")
        elif not (tree / "lib" / lib.install_name[len(want) :]).exists():
            problems.append(f"{lib.path.name}: install name {lib.install_name} names no file in lib/")
    for item in files:
        for ref in (*item.dylibs, *item.rpaths):
            if _ABSOLUTE_BUILD_PATH.match(ref) or ref.startswith("$ORIGIN"):
                problems.append(f"{item.path.name} refers to {ref}")
        relative = [r for r in item.rpaths if r.startswith(("@loader_path", "@executable_path"))]
        if item.filetype == "executable" and any(d.startswith("@rpath/") for d in item.dylibs) and not relative:
            problems.append(f"{item.path.name} loads @rpath/ libraries but has no @loader_path rpath")
    return problems


def _static_lib_problems(tree: Path, arch: str) -> list[str]:
    problems = []
    cpu = {v: k for k, v in macho.CPU_TYPES.items()}[arch]
    for name in LIBRARIES:
        path = tree / "lib" / f"lib{name}.a"
        if not path.is_file():
            problems.append(f"missing lib/{path.name}")
            continue
        try:
            members = ar.read_members(path)
        except ar.ArError as exc:
            problems.append(str(exc))
            continue
        if not any(member.startswith("__.SYMDEF") for member, _ in members):
            problems.append(
                f"lib/{path.name} has no __.SYMDEF index (Apple's ld rejects it; use an Apple-format ranlib)"
            )
        objects = [body for member, body in members if member.endswith(".o")]
        bad = [b for b in objects if len(b) < 8 or struct.unpack_from("<II", b) != (macho.MH_MAGIC_64, cpu)]
        if not objects or bad:
            problems.append(f"lib/{path.name}: {len(bad)} of {len(objects)} objects are not Mach-O {arch}")
    return problems


def check_consumer(verify_build: Path, arch: str, library: str = "ember_cc") -> SuiteResult:
    """The verify programs, compiled and linked against the installed package, are Mach-O `arch`
    executables that load lib<library> through @rpath."""
    programs, problems = [], []
    for path in sorted(verify_build.glob("*")) if verify_build.is_dir() else []:
        if path.is_file() and macho.sniff(path) == "macho":
            try:
                info = macho.read_macho(path)
            except macho.MachOError as exc:
                problems.append(str(exc))
                continue
            if info.filetype == "executable":
                programs.append(info)
    problems += [f"{p.path.name} is {p.arch}" for p in programs if p.arch != arch]
    problems += [
        f"{p.path.name} does not load @rpath/lib{library}"
        for p in programs
        if not any(d.startswith(f"@rpath/lib{library}") for d in p.dylibs)
    ]
    if not programs:
        problems.append(f"no Mach-O executables in {verify_build} (did verify-build link?)")
    return check_result("macho:consumer", problems)
