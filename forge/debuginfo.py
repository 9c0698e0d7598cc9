"""Separate debug files for a cell's installed ELF files: `dist/<cell>/debug/<path>.debug`.

The installed tree is the Release build exactly as before (no `-g`, nothing stripped or
relinked, so its bytes do not change). A second configuration of the same sources, with the
same flags plus `-g -gz`, builds into its own directory (plan.py's `debuginfo` steps). GCC's
code generation does not depend on `-g`, and the link then only adds `.debug_*` sections and
a different GNU build-id (ld hashes the whole output, debug sections included). So, per file:

1. check that the `-g` build's file has the same ELF header, program headers and allocated
   sections (address, size, bytes) as the installed file, the build-id note aside: its DWARF
   then describes exactly the installed code; a file that differs gets no debug file, and the
   manifest says why;
2. write the `-g` file, with its build-id replaced by the installed file's, as the debug file.
   Debuggers and libabigail (`abidiff --d1/--d2`) find a debug file by that build-id, through
   a `.build-id/xx/yyyy.debug` tree (`build_id_tree`).

The debug file keeps the code sections too (an `objcopy --only-keep-debug` would need the
target's binutils on the host for foreign cells); its DWARF is zlib-compressed (`-gz`).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEBUG_DIR = "debug"
SUFFIX = ".debug"
ELF_MAGIC = b"\x7fELF"
SHF_ALLOC = 0x2
SHT_NOBITS = 8
SHT_NOTE = 7
NT_GNU_BUILD_ID = 3
ET_EXEC, ET_DYN = 2, 3


class DebugInfoError(ValueError):
    """A file that is not the ELF file it should be, or two files that do not match."""


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int


@dataclass(frozen=True)
class ElfImage:
    """The parts of an ELF file this module compares: header fields, program headers, sections."""

    data: bytes
    bits: int
    etype: int
    machine: int
    entry: int
    phdrs: bytes
    sections: tuple[Section, ...]

    def build_id(self) -> tuple[int, bytes] | None:
        """(file offset, bytes) of the GNU build-id, or None when the file has none."""
        for section in self.sections:
            if section.type != SHT_NOTE or section.offset + section.size > len(self.data):
                continue
            at, end = section.offset, section.offset + section.size
            while at + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", self.data, at)
                name_at = at + 12
                desc_at = name_at + (namesz + 3) // 4 * 4
                if ntype == NT_GNU_BUILD_ID and self.data[name_at : name_at + namesz] == b"GNU\0":
                    return desc_at, self.data[desc_at : desc_at + descsz]
                at = desc_at + (descsz + 3) // 4 * 4
        return None


def parse(data: bytes, path: Path) -> ElfImage:
    """The ELF file `data` (read from `path`); DebugInfoError when it is not a little-endian ELF file."""
    try:
        return _parse(data)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise DebugInfoError(f"{path}: malformed ELF file ({exc})") from None
    except DebugInfoError as exc:
        raise DebugInfoError(f"{path}: {exc}") from None


def _parse(data: bytes) -> ElfImage:
    if data[:4] != ELF_MAGIC or data[5] != 1 or data[4] not in (1, 2):
        raise DebugInfoError("not a little-endian ELF file")
    bits = 64 if data[4] == 2 else 32
    if bits == 64:
        etype, machine, _, entry, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
            "<HHIQQQIHHHHHH", data, 16
        )
        shfmt = "<IIQQQQIIQQ"
    else:
        etype, machine, _, entry, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(
            "<HHIIIIIHHHHHH", data, 16
        )
        shfmt = "<IIIIIIIIII"
    if shoff + shentsize * shnum > len(data) or phoff + phentsize * phnum > len(data) or shstrndx >= max(shnum, 1):
        raise DebugInfoError("section or program headers run past the end of the file")
    raw = [struct.unpack_from(shfmt, data, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4] if raw else 0
    sections = []
    for name, stype, flags, addr, offset, size, *_ in raw:
        end = data.index(b"\0", names_at + name)
        sections.append(Section(data[names_at + name : end].decode(), stype, flags, addr, offset, size))
    phdrs = data[phoff : phoff + phentsize * phnum]
    return ElfImage(data, bits, etype, machine, entry, phdrs, tuple(sections))


def code_difference(installed: ElfImage, debug: ElfImage) -> str | None:
    """None when `debug` has the installed file's code and data (build-id aside), else the first difference."""
    if (installed.bits, installed.etype, installed.machine, installed.entry) != (
        debug.bits,
        debug.etype,
        debug.machine,
        debug.entry,
    ):
        return "ELF header differs (class, type, machine or entry point)"
    if installed.phdrs != debug.phdrs:
        return "program headers differ"
    ours = [s for s in installed.sections if s.flags & SHF_ALLOC]
    theirs = [s for s in debug.sections if s.flags & SHF_ALLOC]
    if [(s.name, s.type, s.addr, s.size) for s in ours] != [(s.name, s.type, s.addr, s.size) for s in theirs]:
        return "allocated sections differ in name, address or size"
    id_a, id_b = installed.build_id(), debug.build_id()
    for a, b in zip(ours, theirs, strict=True):
        if a.type == SHT_NOBITS:
            continue
        left = bytearray(installed.data[a.offset : a.offset + a.size])
        right = bytearray(debug.data[b.offset : b.offset + b.size])
        for blob, section, found in ((left, a, id_a), (right, b, id_b)):
            if found is not None and section.offset <= found[0] < section.offset + section.size:
                at = found[0] - section.offset
                blob[at : at + len(found[1])] = bytes(len(found[1]))
        if left != right:
            return f"section {a.name} differs"
    if (id_a is None) != (id_b is None) or (id_a and id_b and len(id_a[1]) != len(id_b[1])):
        return "build-id notes differ in presence or length"
    return None


def debug_file(installed_path: Path, debug_build_path: Path) -> bytes:
    """The debug file for `installed_path`: the `-g` build's file with the installed build-id.

    Raises DebugInfoError when the two do not hold the same code, or the installed file has no build-id.
    """
    installed = parse(installed_path.read_bytes(), installed_path)
    debug = parse(debug_build_path.read_bytes(), debug_build_path)
    if (why := code_difference(installed, debug)) is not None:
        raise DebugInfoError(why)
    ours, theirs = installed.build_id(), debug.build_id()
    if ours is None or theirs is None:
        raise DebugInfoError("no GNU build-id note (link with --build-id) to find the debug file by")
    out = bytearray(debug.data)
    out[theirs[0] : theirs[0] + len(theirs[1])] = ours[1]
    return bytes(out)


def is_linked_elf(path: Path) -> bool:
    """A regular file that is an ELF executable or shared object (not an archive, object or link)."""
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as handle:
        head = handle.read(18)
    if len(head) < 18 or head[:4] != ELF_MAGIC or head[5] != 1:
        return False
    return struct.unpack_from("<H", head, 16)[0] in (ET_EXEC, ET_DYN)


def publish(install: Path, debug_stage: Path, out: Path) -> dict[str, Any]:
    """Write `out/<path>.debug` for every linked ELF file of `install` that `debug_stage` (the `-g`
    build's install tree) matches. Returns the manifest's "debug" record: the files (sha256, size,
    build-id) and, for each file without a debug file, why."""
    files: dict[str, dict[str, Any]] = {}
    missing: dict[str, str] = {}
    for path in sorted(p for p in install.rglob("*") if is_linked_elf(p)):
        rel = path.relative_to(install).as_posix()
        counterpart = debug_stage / rel
        if not counterpart.is_file():
            missing[rel] = "the -g build installed no such file"
            continue
        try:
            data = debug_file(path, counterpart)
        except (DebugInfoError, OSError) as exc:
            missing[rel] = f"the -g build's file does not match: {exc}"
            continue
        target = out / f"{rel}{SUFFIX}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        found = parse(data, target).build_id()
        assert found is not None  # debug_file put the installed build-id there
        files[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "build_id": found[1].hex()}
    return {"dir": DEBUG_DIR, "files": files, "missing": missing}


def build_id_tree(cell_dir: Path, record: Any, into: Path) -> int:
    """Link each published debug file of `cell_dir` as `into/.build-id/xx/yyyy.debug`, where
    debuggers and libabigail look for it; returns how many. Entries whose file is absent, or whose
    name or build-id is malformed, are left out (the manifest check reports damaged trees)."""
    files = record.get("files") if isinstance(record, dict) else None
    count = 0
    for rel, entry in (files or {}).items():
        build_id = entry.get("build_id") if isinstance(entry, dict) else None
        if not isinstance(build_id, str) or len(build_id) < 4 or any(c not in "0123456789abcdef" for c in build_id):
            continue
        source = (cell_dir / DEBUG_DIR / f"{rel}{SUFFIX}").resolve()
        if not source.is_relative_to((cell_dir / DEBUG_DIR).resolve()) or not source.is_file():
            continue
        link = into / ".build-id" / build_id[:2] / f"{build_id[2:]}{SUFFIX}"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(source)
            count += 1
    return count
