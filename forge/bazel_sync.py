"""Do ember's CMake and Bazel descriptions agree? Same sources compiled, same files installed,
same exported symbols, same static archive members.

CMake is the reference. Its side is read from a configured build directory
(compile_commands.json: every translation unit it compiles) and an install prefix; Bazel's from
`bazel cquery` (the source files every target under //engine and //verify depends on) and the
tree //engine:install lays out like `cmake --install`. The comparisons are pure functions over
sets of strings, so a difference reads as "only in CMake: ..., only in Bazel: ...".

Run both builds, then:
    python -m forge.bazel_sync --workspace . --cmake-build engine/build --cmake-install PREFIX \
        --verify-build verify/build --bazel-install "$(bazel info --symlink_prefix=/ bazel-bin)/engine/install"
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge.checks import ar
from forge.checks.elf import ELF_MAGIC, ElfError, _exports, _section, read_elf
from forge.errors import StepFailedError, ToolMissingError
from forge.proc import run_command

# What `bazel cquery` looks at: ember's libraries, tools, engine tests and the verify suites.
BAZEL_UNIVERSE = "//engine/... + //verify/..."
SOURCE_SUFFIXES = (".cc",)
# The parts of an install tree both builds lay out. The package files (lib/cmake) and pkg-config
# files are not Bazel's: forge/bazel_install.py writes them from Bazel's outputs.
INSTALL_DIRS = ("include", "lib", "bin")
LIBRARIES = ("libember_framework.so", "libember_cc.so", "libember_lite.so")
ARCHIVES = ("libember_framework.a", "libember_cc.a", "libember_lite.a")  # EMBER_BUILD_STATIC
OFFLINE_BAZELRC = "toolchains/bazel/debian-offline.bazelrc"
MOCK_REPOS = Path("/usr/src/bazel-bootstrap/mock_repos")  # Debian's bazel-bootstrap-source


@dataclass(frozen=True)
class SetDiff:
    """One aspect compared: what only CMake has and what only Bazel has."""

    what: str
    only_cmake: tuple[str, ...]
    only_bazel: tuple[str, ...]
    count: int = 0  # entries both have

    @property
    def same(self) -> bool:
        return not self.only_cmake and not self.only_bazel

    def describe(self, limit: int = 5) -> str:
        if self.same:
            return f"{self.what}: same ({self.count})"
        parts = []
        for label, names in (("only in CMake", self.only_cmake), ("only in Bazel", self.only_bazel)):
            if names:
                shown = ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
                parts.append(f"{len(names)} {label}: {shown}")
        return f"{self.what}: " + "; ".join(parts)


def compare(what: str, cmake: Iterable[str], bazel: Iterable[str]) -> SetDiff:
    left, right = frozenset(cmake), frozenset(bazel)
    return SetDiff(what, tuple(sorted(left - right)), tuple(sorted(right - left)), len(left & right))


# ---- sources ----


def cmake_sources(compile_commands: Sequence[dict[str, str]], source_root: Path) -> frozenset[str]:
    """Paths, relative to `source_root`, of the translation units in a compile_commands.json
    that live under it. Generated files (under an entry's build `directory`, such as
    EmberKernelAnchors.cmake's kernel_anchors.cc) are left out: Bazel generates its own, and
    `bazel query` lists only files from the tree."""
    root = Path(*_normalize_parts(source_root.absolute().parts))
    found = set()
    for entry in compile_commands:
        build = Path(*_normalize_parts(Path(entry.get("directory", "/")).parts))
        path = Path(entry["file"])
        if not path.is_absolute():
            path = build / path
        path = Path(*_normalize_parts(path.parts))
        if build != Path("/") and path.is_relative_to(build):
            continue
        if path.suffix in SOURCE_SUFFIXES and path.is_relative_to(root):
            found.add(path.relative_to(root).as_posix())
    return frozenset(found)


def _normalize_parts(parts: Sequence[str]) -> list[str]:
    """Drop '.' and resolve '..' lexically (compile_commands.json paths are absolute but not
    always canonical), without touching the file system."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if len(out) > 1:
                out.pop()
        elif part != ".":
            out.append(part)
    return out


def label_path(label: str) -> str | None:
    """'//engine:src/core/tensor.cc' -> 'engine/src/core/tensor.cc'; None for labels of other
    repositories ('@eigen//:Eigen/Core', '@bazel_tools//...') and for what is not a label."""
    if not label.startswith("//") or ":" not in label:
        return None
    package, name = label[2:].split(":", 1)
    return f"{package}/{name}" if package else name


def bazel_sources(lines: Iterable[str]) -> frozenset[str]:
    """Workspace-relative paths of the C++ translation units among `bazel cquery` output
    lines ('//engine:src/core/tensor.cc (null)': the label, then its configuration)."""
    paths = (label_path(line.split()[0]) for line in lines if line.strip())
    return frozenset(p for p in paths if p is not None and p.endswith(SOURCE_SUFFIXES))


def read_compile_commands(*build_dirs: Path) -> list[dict[str, str]]:
    entries: list[dict[str, str]] = []
    for build in build_dirs:
        path = build / "compile_commands.json"
        if not path.is_file():
            raise StepFailedError(
                f"{path} is missing",
                "the CMake side of the sync check reads it",
                "configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            )
        entries.extend(json.loads(path.read_text()))
    return entries


# ---- installed files ----


def installed_files(prefix: Path) -> frozenset[str]:
    """include/** (every file), lib/ shared libraries and their links (*.so, *.so.N...), lib/
    static archives (*.a) and bin/* under an install prefix, as prefix-relative paths."""
    found = set()
    for top in INSTALL_DIRS:
        base = prefix / top
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                continue
            rel = path.relative_to(prefix).as_posix()
            if top == "lib" and (path.parent != base or not (".so" in path.name or path.suffix == ".a")):
                continue
            found.add(rel)
    return frozenset(found)


# ---- exported symbols ----


@dataclass(frozen=True)
class LibraryFacts:
    soname: str | None
    needed: frozenset[str]
    exports: frozenset[str]


def library_facts(path: Path) -> LibraryFacts:
    elf = read_elf(path)
    return LibraryFacts(elf.soname, frozenset(elf.needed), elf.exports)


def compare_libraries(name: str, cmake: LibraryFacts, bazel: LibraryFacts) -> list[SetDiff]:
    """SONAME, DT_NEEDED and the strong global defined dynamic symbols (every one, not only
    ember's public ones: a symbol one build exports and the other hides is an ABI difference).
    Weak definitions (inline functions, template instances) are left out, as in
    forge/checks/symbols.py: whether the compiler emits one out of line follows its inlining
    choices, which Bazel's own opt flags (-ffunction-sections, -fstack-protector, ...) move."""
    return [
        compare(f"{name} SONAME", [cmake.soname or "(none)"], [bazel.soname or "(none)"]),
        compare(f"{name} NEEDED", cmake.needed, bazel.needed),
        compare(f"{name} exported symbols", cmake.exports, bazel.exports),
    ]


# ---- static archives ----

SHT_SYMTAB = 2
AR_INDEXES = frozenset({"/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"})  # the archive's symbol index


@dataclass(frozen=True)
class ArchiveFacts:
    members: frozenset[str]  # member names: CMake's <source>.o (tensor.cc.o)
    exports: frozenset[str]  # strong global defined symbols of every member


def archive_members(path: Path) -> dict[str, bytes]:
    """{member name: data} of a static library, GNU long names ("/N" into the "//" table)
    resolved and the symbol index left out; StepFailedError for an unreadable archive or two
    members of one name (a linker would take only the first)."""
    try:
        raw = ar.read_members(path)
    except ar.ArError as exc:
        raise StepFailedError(str(exc)) from exc
    long_names = next((body for name, body in raw if name == "//"), b"")
    members: dict[str, bytes] = {}
    for name, body in raw:
        if name in AR_INDEXES or name == "//":
            continue
        if name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            end = long_names.find(b"/\n", start)
            if start >= len(long_names) or end < 0:
                raise StepFailedError(f"{path}: member name {name} is not in the archive's long-name table")
            name = long_names[start:end].decode("utf-8", "replace")
        name = name.removesuffix("/")
        if name in members:
            raise StepFailedError(f"{path}: two members are named {name}")
        members[name] = body
    return members


def object_exports(data: bytes, where: str) -> frozenset[str]:
    """Strong global defined FUNC/OBJECT/TLS symbols of default or protected visibility in a
    relocatable object's .symtab: what it offers the objects it is linked with. Weak ones (inline
    functions, template instances) are left out, as for the shared libraries."""
    if data[:4] != ELF_MAGIC or len(data) < 64 or data[4] not in (1, 2) or data[5] != 1:
        raise StepFailedError(f"{where}: not a little-endian ELF object")
    bits = 64 if data[4] == 2 else 32
    try:
        if bits == 64:
            shoff, shentsize, shnum = struct.unpack_from("<Q", data, 40)[0], *struct.unpack_from("<HH", data, 58)
        else:
            shoff, shentsize, shnum = struct.unpack_from("<I", data, 32)[0], *struct.unpack_from("<HH", data, 46)
        sections = [_section(data, bits, shoff + i * shentsize) for i in range(shnum)]
        found: set[str] = set()
        for stype, offset, size, link, entsize in sections:
            if stype == SHT_SYMTAB and link < len(sections) and offset + size <= len(data):
                found |= _exports(data, bits, offset, size, entsize, sections[link][1])
    except (struct.error, ElfError, IndexError) as exc:
        raise StepFailedError(f"{where}: malformed ELF object ({exc})") from exc
    return frozenset(found)


def archive_facts(path: Path) -> ArchiveFacts:
    members = archive_members(path)
    exports: set[str] = set()
    for name, data in members.items():
        exports |= object_exports(data, f"{path}({name})")
    return ArchiveFacts(frozenset(members), frozenset(exports))


def compare_archives(name: str, cmake: ArchiveFacts, bazel: ArchiveFacts) -> list[SetDiff]:
    """The member objects (CMake names them after their sources, and so does Bazel's
    ember_static_library) and the symbols they define for a static consumer."""
    return [
        compare(f"{name} members", cmake.members, bazel.members),
        compare(f"{name} exported symbols", cmake.exports, bazel.exports),
    ]


# ---- drivers ----


def bazel_argv(bazel: str, workspace: Path, mock_repos: Path = MOCK_REPOS) -> list[str]:
    """`bazel --batch`, with Debian's repository stand-ins (debian-offline.bazelrc) where
    bazel-bootstrap-source installed them; without them WORKSPACE's own stand-ins serve."""
    argv = [bazel, "--batch"]
    rc = workspace / OFFLINE_BAZELRC
    if rc.is_file() and mock_repos.is_dir():
        argv.append(f"--bazelrc={rc}")
    return argv


def query_bazel_sources(bazel: Sequence[str], workspace: Path, universe: str = BAZEL_UNIVERSE) -> frozenset[str]:
    """The source files of every target in `universe` and what it depends on, explicit
    dependencies only (toolchains and test runners are Bazel's). `cquery`, not `query`: it
    reads the build options of the rc files, among them the coverage report generator that
    would otherwise be a download."""
    query = f'kind("source file", deps({universe}))'
    argv = [*bazel, "cquery", "--noimplicit_deps", query, "--output=label"]
    try:
        proc = run_command(argv, cwd=workspace, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ToolMissingError(
            "bazel is missing", "the sync check queries Bazel", "apt-get install bazel-bootstrap"
        ) from exc
    if proc.returncode != 0:
        raise StepFailedError(f"bazel query exited with {proc.returncode}", proc.stderr[-3000:])
    return bazel_sources(proc.stdout.splitlines())


def check(
    *,
    workspace: Path,
    cmake_builds: Sequence[Path],
    cmake_install: Path,
    bazel_install: Path,
    bazel_source_paths: frozenset[str],
) -> list[SetDiff]:
    """Every comparison: sources, installed files, per shared library SONAME/NEEDED/exports and
    per static archive its members and exports."""
    results = [
        compare("sources", cmake_sources(read_compile_commands(*cmake_builds), workspace), bazel_source_paths),
        compare("installed files", installed_files(cmake_install), installed_files(bazel_install)),
    ]
    for lib in LIBRARIES:
        cmake_lib, bazel_lib = cmake_install / "lib" / lib, bazel_install / "lib" / lib
        for path in (cmake_lib, bazel_lib):
            if not path.exists():
                raise StepFailedError(f"{path} is missing", "build and install both sides first")
        results += compare_libraries(lib, library_facts(cmake_lib), library_facts(bazel_lib))
    for archive in ARCHIVES:
        cmake_ar, bazel_ar = cmake_install / "lib" / archive, bazel_install / "lib" / archive
        for path in (cmake_ar, bazel_ar):
            if not path.is_file():
                raise StepFailedError(
                    f"{path} is missing", "both builds install static archives", "build and install both sides first"
                )
        results += compare_archives(archive, archive_facts(cmake_ar), archive_facts(bazel_ar))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forge.bazel_sync", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="repository root (Bazel workspace)")
    parser.add_argument("--cmake-build", type=Path, required=True, help="configured engine/ build dir")
    parser.add_argument("--verify-build", type=Path, help="configured verify/ build dir (its sources count too)")
    parser.add_argument("--cmake-install", type=Path, required=True, help="`cmake --install` prefix")
    parser.add_argument("--bazel-install", type=Path, required=True, help="<bazel info bazel-bin>/engine/install")
    parser.add_argument("--bazel", default="bazel", help="the bazel program")
    args = parser.parse_args(argv)
    workspace = args.workspace.resolve()
    builds = [args.cmake_build] + ([args.verify_build] if args.verify_build else [])
    sources = query_bazel_sources(bazel_argv(args.bazel, workspace), workspace)
    results = check(
        workspace=workspace,
        cmake_builds=builds,
        cmake_install=args.cmake_install,
        bazel_install=args.bazel_install,
        bazel_source_paths=sources,
    )
    for result in results:
        print(("ok    " if result.same else "DIFF  ") + result.describe())
    return 0 if all(r.same for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
