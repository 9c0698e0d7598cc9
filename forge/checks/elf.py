"""Read the parts of an ELF file forge checks: machine, ARM float ABI, SONAME, dynamic exports.

Layouts follow the System V gABI (<elf.h>); both ELF classes, little-endian only (every target
forge builds is little-endian).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
MACHINES = {0x3E: "x86_64", 0xB7: "aarch64", 0x28: "arm", 0x03: "i386"}
FILE_TYPES = {1: "relocatable", 2: "executable", 3: "shared"}
EF_ARM_ABI_FLOAT_HARD = 0x400
SHT_DYNSYM = 11
SHT_DYNAMIC = 6
DT_NEEDED = 1
DT_SONAME = 14
STB_GLOBAL = 1
STV_DEFAULT, STV_PROTECTED = 0, 3
STT_EXPORTED = {1, 2, 6, 10}  # OBJECT, FUNC, TLS, GNU_IFUNC (target_clones); not SECTION/FILE/NOTYPE


class ElfError(ValueError):
    """The file is not a (readable) ELF file; the message says what is wrong."""


@dataclass(frozen=True)
class Elf:
    path: Path
    bits: int  # 32 | 64
    machine: str  # x86_64 | aarch64 | arm | machine 0x...
    filetype: str  # executable | shared | relocatable (PIE executables read as shared)
    hard_float: bool | None  # ARM only: EF_ARM_ABI_FLOAT_HARD
    soname: str | None
    needed: tuple[str, ...] = field(default=())
    exports: frozenset[str] = field(default=frozenset())  # strong global defined dynamic symbols


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == ELF_MAGIC
    except OSError:
        return False


def _cstr(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    return data[offset : end if end >= 0 else len(data)].decode("utf-8", "replace")


def read_elf(path: Path) -> Elf:
    """Parse the ELF header, the dynamic section and .dynsym of `path`; ElfError when it cannot."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ElfError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return parse_elf(data, path)


def parse_elf(data: bytes, path: Path) -> Elf:
    """`data` (the bytes of `path`) as an Elf. Any malformed input raises ElfError and nothing else:
    a damaged binary must become a failed check, not a traceback."""
    try:
        return _parse(data, path)
    except ElfError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise ElfError(f"{path}: malformed ELF file ({exc})") from exc


def _parse(data: bytes, path: Path) -> Elf:
    if len(data) < 52 or data[:4] != ELF_MAGIC:
        raise ElfError(f"{path}: not an ELF file (magic {data[:4].hex() or 'empty'})")
    bits = {1: 32, 2: 64}.get(data[4])
    if bits is None or data[5] != 1:
        raise ElfError(f"{path}: unsupported ELF class {data[4]} / data encoding {data[5]} (want little-endian)")
    if bits == 64 and len(data) < 64:
        raise ElfError(f"{path}: truncated ELF header ({len(data)} bytes)")
    if bits == 64:
        etype, machine, _, _, _, shoff, flags, _, _, _, shentsize, shnum, _ = struct.unpack_from(
            "<HHIQQQIHHHHHH", data, 16
        )
    else:
        etype, machine, _, _, _, shoff, flags, _, _, _, shentsize, shnum, _ = struct.unpack_from(
            "<HHIIIIIHHHHHH", data, 16
        )
    if shoff + shentsize * shnum > len(data):
        raise ElfError(f"{path}: section headers run past the end of the file")
    sections = [_section(data, bits, shoff + i * shentsize) for i in range(shnum)]
    soname, needed, exports = None, [], frozenset[str]()
    for stype, offset, size, link, entsize in sections:
        if offset + size > len(data) or link >= len(sections):
            continue
        strtab = sections[link][1]
        if stype == SHT_DYNSYM:
            exports = _exports(data, bits, offset, size, entsize, strtab)
        elif stype == SHT_DYNAMIC:
            for tag, value in _dynamic(data, bits, offset, size):
                if tag == DT_SONAME:
                    soname = _cstr(data, strtab + value)
                elif tag == DT_NEEDED:
                    needed.append(_cstr(data, strtab + value))
    name = MACHINES.get(machine, f"machine 0x{machine:x}")
    return Elf(
        path=path,
        bits=bits,
        machine=name,
        filetype=FILE_TYPES.get(etype, f"type {etype}"),
        hard_float=bool(flags & EF_ARM_ABI_FLOAT_HARD) if name == "arm" else None,
        soname=soname,
        needed=tuple(needed),
        exports=exports,
    )


def _section(data: bytes, bits: int, at: int) -> tuple[int, int, int, int, int]:
    """(type, offset, size, link, entsize) of the section header at `at`."""
    if bits == 64:
        _, stype, _, _, offset, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, at)
    else:
        _, stype, _, _, offset, size, link, _, _, entsize = struct.unpack_from("<IIIIIIIIII", data, at)
    return stype, offset, size, link, entsize


def _dynamic(data: bytes, bits: int, offset: int, size: int) -> list[tuple[int, int]]:
    fmt, step = ("<qQ", 16) if bits == 64 else ("<iI", 8)
    return [struct.unpack_from(fmt, data, at) for at in range(offset, offset + size - step + 1, step)]


def _exports(data: bytes, bits: int, offset: int, size: int, entsize: int, strtab: int) -> frozenset[str]:
    """Global (not weak), defined, default/protected-visibility FUNC/OBJECT/TLS symbols."""
    names = set()
    size_of_entry = 24 if bits == 64 else 16
    step = entsize or size_of_entry
    if step < size_of_entry:
        raise ElfError(f"symbol table entries of {step} bytes are smaller than an ELF{bits} symbol")
    for at in range(offset + step, offset + size - step + 1, step):  # entry 0 is the null symbol
        if bits == 64:
            name, info, other, shndx = struct.unpack_from("<IBBH", data, at)
        else:
            name, _, _, info, other, shndx = struct.unpack_from("<IIIBBH", data, at)
        if info >> 4 != STB_GLOBAL or info & 0xF not in STT_EXPORTED or shndx == 0:
            continue
        if other & 0x3 not in (STV_DEFAULT, STV_PROTECTED):
            continue
        names.add(_cstr(data, strtab + name).split("@", 1)[0])
    return frozenset(names)


SHT_GNU_VERNEED = 0x6FFFFFFE


def version_needs(path: Path) -> dict[str, tuple[str, ...]]:
    """Symbol versions `path` requires, per needed library (.gnu.version_r): {"libstdc++.so.6": ("GLIBCXX_3.4.30", ...)}.

    Raises ElfError on a malformed file, like read_elf."""
    data = path.read_bytes()
    elf = read_elf(path)
    bits = elf.bits
    shoff, shentsize, shnum = (
        struct.unpack_from("<QHH", data, 40)[0:1] + struct.unpack_from("<HH", data, 58)
        if bits == 64
        else struct.unpack_from("<I", data, 32) + struct.unpack_from("<HH", data, 46)
    )
    sections = [_section(data, bits, shoff + i * shentsize) for i in range(shnum)]
    needs: dict[str, tuple[str, ...]] = {}
    try:
        for stype, offset, size, link, _ in sections:
            if stype != SHT_GNU_VERNEED or link >= len(sections) or offset + size > len(data):
                continue
            strtab = sections[link][1]
            at, seen = offset, 0
            while at + 16 <= offset + size and seen < 4096:
                _, count, file_name, aux, following = struct.unpack_from("<HHIII", data, at)
                names, aux_at = [], at + aux
                for _ in range(min(count, 4096)):
                    _, _, _, name, aux_next = struct.unpack_from("<IHHII", data, aux_at)
                    names.append(_cstr(data, strtab + name))
                    if not aux_next:
                        break
                    aux_at += aux_next
                needs[_cstr(data, strtab + file_name)] = tuple(sorted(names))
                seen += 1
                if not following:
                    break
                at += following
    except struct.error as exc:
        raise ElfError(f"{path}: malformed version requirements ({exc})") from None
    return needs
