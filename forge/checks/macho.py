"""Read the parts of a Mach-O file forge checks: CPU type, minimum OS, install names, exports.

Only thin (single-architecture) 64-bit little-endian files are read in detail; that is what
zig produces for x86_64-macos and aarch64-macos. Layouts follow Apple's <mach-o/loader.h> and
<mach-o/nlist.h>.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

MH_MAGIC_64 = 0xFEEDFACF
FAT_MAGIC = 0xCAFEBABE
CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64"}
FILE_TYPES = {1: "object", 2: "executable", 6: "dylib", 8: "bundle"}

LC_SYMTAB = 0x2
LC_LOAD_DYLIB = 0xC
LC_ID_DYLIB = 0xD
LC_VERSION_MIN_MACOSX = 0x24
LC_BUILD_VERSION = 0x32
LC_RPATH = 0x8000001C
LC_REEXPORT_DYLIB = 0x8000001F
PLATFORM_MACOS = 1

N_STAB = 0xE0
N_PEXT = 0x10
N_TYPE = 0x0E
N_EXT = 0x01
N_SECT = 0x0E
N_WEAK_DEF = 0x0080


class MachOError(ValueError):
    """The file is not a (readable) Mach-O file; the message says what is wrong."""


@dataclass(frozen=True)
class MachO:
    path: Path
    arch: str  # x86_64 | arm64 | cpu 0x...
    filetype: str  # executable | dylib | object | ...
    platform: int | None  # LC_BUILD_VERSION platform (1 = macOS)
    minos: str | None  # "11.0" from LC_BUILD_VERSION (or LC_VERSION_MIN_MACOSX)
    install_name: str | None  # LC_ID_DYLIB
    dylibs: tuple[str, ...] = field(default=())  # LC_LOAD_DYLIB / LC_REEXPORT_DYLIB names
    rpaths: tuple[str, ...] = field(default=())
    exports: frozenset[str] = field(default=frozenset())  # strong external definitions, no leading "_"


def _version(packed: int) -> str:
    """xxxx.yy.zz nibble-packed version as "major.minor" (plus ".patch" when non-zero)."""
    major, minor, patch = packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def _cstr(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    return data[offset : end if end >= 0 else len(data)].decode("utf-8", "replace")


def sniff(path: Path) -> str | None:
    """'macho' (thin 64-bit LE), 'fat', or None for anything else (unreadable included)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    except OSError:
        return None
    if len(head) < 4:
        return None
    if struct.unpack("<I", head)[0] == MH_MAGIC_64:
        return "macho"
    if struct.unpack(">I", head)[0] == FAT_MAGIC:
        return "fat"
    return None


def read_macho(path: Path) -> MachO:
    """Parse header, load commands and the symbol table of a thin 64-bit Mach-O file; MachOError when it cannot."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MachOError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return parse_macho(data, path)


def parse_macho(data: bytes, path: Path) -> MachO:
    """`data` (the bytes of `path`) as a MachO. Any malformed input raises MachOError and nothing
    else: a damaged binary must become a failed check, not a traceback."""
    try:
        return _parse(data, path)
    except MachOError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise MachOError(f"{path}: malformed Mach-O file ({exc})") from exc


def _parse(data: bytes, path: Path) -> MachO:
    if len(data) < 32 or struct.unpack_from("<I", data)[0] != MH_MAGIC_64:
        raise MachOError(f"{path}: not a 64-bit little-endian Mach-O file (magic {data[:4].hex() or 'empty'})")
    _, cputype, _, filetype, ncmds, sizeofcmds, _, _ = struct.unpack_from("<IiIIIIII", data)
    if 32 + sizeofcmds > len(data):
        raise MachOError(f"{path}: load commands ({sizeofcmds} bytes) run past the end of the file")
    info: dict[str, object] = {"platform": None, "minos": None, "install_name": None}
    dylibs: list[str] = []
    rpaths: list[str] = []
    exports: frozenset[str] = frozenset()
    offset = 32
    for _ in range(ncmds):
        if offset + 8 > len(data):
            raise MachOError(f"{path}: truncated load command at offset {offset}")
        cmd, cmdsize = struct.unpack_from("<II", data, offset)
        if cmdsize < 8 or offset + cmdsize > len(data):
            raise MachOError(f"{path}: load command 0x{cmd:x} at offset {offset} has bad size {cmdsize}")
        if cmd == LC_BUILD_VERSION:
            platform, minos = struct.unpack_from("<II", data, offset + 8)
            info["platform"], info["minos"] = platform, _version(minos)
        elif cmd == LC_VERSION_MIN_MACOSX and info["minos"] is None:
            info["platform"], info["minos"] = PLATFORM_MACOS, _version(struct.unpack_from("<I", data, offset + 8)[0])
        elif cmd in (LC_ID_DYLIB, LC_LOAD_DYLIB, LC_REEXPORT_DYLIB, LC_RPATH):
            name = _cstr(data[: offset + cmdsize], offset + struct.unpack_from("<I", data, offset + 8)[0])
            if cmd == LC_ID_DYLIB:
                info["install_name"] = name
            elif cmd == LC_RPATH:
                rpaths.append(name)
            else:
                dylibs.append(name)
        elif cmd == LC_SYMTAB:
            exports = _exports(path, data, *struct.unpack_from("<IIII", data, offset + 8))
        offset += cmdsize
    return MachO(
        path=path,
        arch=CPU_TYPES.get(cputype & 0xFFFFFFFF, f"cpu 0x{cputype & 0xFFFFFFFF:x}"),
        filetype=FILE_TYPES.get(filetype, f"type {filetype}"),
        platform=info["platform"],  # type: ignore[arg-type]
        minos=info["minos"],  # type: ignore[arg-type]
        install_name=info["install_name"],  # type: ignore[arg-type]
        dylibs=tuple(dylibs),
        rpaths=tuple(rpaths),
        exports=exports,
    )


def _exports(path: Path, data: bytes, symoff: int, nsyms: int, stroff: int, strsize: int) -> frozenset[str]:
    """Names of external, non-private, non-weak symbols defined in a section."""
    if symoff + 16 * nsyms > len(data) or stroff + strsize > len(data):
        raise MachOError(f"{path}: symbol table runs past the end of the file")
    names = set()
    for i in range(nsyms):
        strx, ntype, _, desc, _ = struct.unpack_from("<IBBHQ", data, symoff + 16 * i)
        if ntype & N_STAB or not ntype & N_EXT or ntype & N_PEXT or (ntype & N_TYPE) != N_SECT:
            continue
        if desc & N_WEAK_DEF:
            continue
        name = _cstr(data, stroff + strx)
        names.add(name[1:] if name.startswith("_") else name)
    return frozenset(names)
