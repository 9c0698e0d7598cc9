"""Mach-O reader and macOS tree checks, on Mach-O files assembled byte by byte in the test.

The layouts are Apple's <mach-o/loader.h> and <mach-o/nlist.h>; the builder below writes only
what forge reads: the header, LC_BUILD_VERSION, dylib/rpath commands and LC_SYMTAB.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from forge.checks import macho, tree

ARM64, X86_64 = 0x0100000C, 0x01000007
EXECUTE, DYLIB, OBJECT = 2, 6, 1


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 8)


def _name_command(cmd: int, name: str) -> bytes:
    text = _pad(name.encode() + b"\0")
    return struct.pack("<IIIIII", cmd, 24 + len(text), 24, 0, 0, 0) + text


def build_macho(
    cputype: int = ARM64,
    filetype: int = DYLIB,
    minos: tuple[int, int] | None = (13, 0),
    install_name: str | None = "@rpath/libember_cc.0.dylib",
    loads: tuple[str, ...] = (),
    rpaths: tuple[str, ...] = (),
    symbols: tuple[tuple[str, int, int], ...] = (),  # (name, n_type, n_desc)
) -> bytes:
    commands = []
    if minos is not None:
        packed = (minos[0] << 16) | (minos[1] << 8)
        commands.append(struct.pack("<IIIIII", macho.LC_BUILD_VERSION, 24, macho.PLATFORM_MACOS, packed, packed, 0))
    if install_name is not None:
        commands.append(_name_command(macho.LC_ID_DYLIB, install_name))
    commands += [_name_command(macho.LC_LOAD_DYLIB, name) for name in loads]
    for rpath in rpaths:
        text = _pad(rpath.encode() + b"\0")
        commands.append(struct.pack("<III", macho.LC_RPATH, 12 + len(text), 12) + text)
    sizeofcmds = sum(len(c) for c in commands) + 24
    symoff = 32 + sizeofcmds
    strings = b"\0"
    table = b""
    for name, ntype, desc in symbols:
        table += struct.pack("<IBBHQ", len(strings), ntype, 1, desc, 0x1000)
        strings += name.encode() + b"\0"
    stroff = symoff + len(table)
    commands.append(struct.pack("<IIIIII", macho.LC_SYMTAB, 24, symoff, len(symbols), stroff, len(strings)))
    header = struct.pack("<IiIIIIII", macho.MH_MAGIC_64, cputype, 0, filetype, len(commands), sizeofcmds, 0, 0)
    return header + b"".join(commands) + table + strings


EXT_SECT = macho.N_SECT | macho.N_EXT


def test_reads_header_load_commands_and_exports(tmp_path: Path) -> None:
    path = tmp_path / "libember_cc.0.1.0.dylib"
    path.write_bytes(
        build_macho(
            loads=("@rpath/libember_framework.0.dylib", "/usr/lib/libc++.1.dylib"),
            rpaths=("@loader_path/../lib",),
            symbols=(
                ("__ZN5ember6Status2OKEv", EXT_SECT, 0),  # strong, exported
                ("__ZN5ember6TensorD1Ev", EXT_SECT, macho.N_WEAK_DEF),  # weak: left out
                ("__ZN5ember8internal1fEv", EXT_SECT | macho.N_PEXT, 0),  # private extern: left out
                ("__ZN5ember5localEv", macho.N_SECT, 0),  # local: left out
                ("_malloc", macho.N_EXT, 0),  # undefined: left out
                ("_EMBER_Version", EXT_SECT, 0),
            ),
        )
    )
    info = macho.read_macho(path)
    assert (info.arch, info.filetype, info.platform, info.minos) == ("arm64", "dylib", 1, "13.0")
    assert info.install_name == "@rpath/libember_cc.0.dylib"
    assert info.dylibs == ("@rpath/libember_framework.0.dylib", "/usr/lib/libc++.1.dylib")
    assert info.rpaths == ("@loader_path/../lib",)
    assert info.exports == {"_ZN5ember6Status2OKEv", "EMBER_Version"}


def test_rejects_non_macho_and_truncated_files(tmp_path: Path) -> None:
    elf = tmp_path / "lib.so"
    elf.write_bytes(b"\x7fELF" + b"\0" * 60)
    assert macho.sniff(elf) is None
    with pytest.raises(macho.MachOError, match="not a 64-bit little-endian Mach-O"):
        macho.read_macho(elf)
    cut = tmp_path / "cut.dylib"
    cut.write_bytes(build_macho()[:40])
    with pytest.raises(macho.MachOError, match="run past the end"):
        macho.read_macho(cut)
    fat = tmp_path / "fat"
    fat.write_bytes(struct.pack(">II", macho.FAT_MAGIC, 2))
    assert macho.sniff(fat) == "fat"


def _ar(members: list[tuple[str, bytes]]) -> bytes:
    """A BSD-style ar archive (long names as #1/N), as Apple's and zig's ar write them."""
    out = b"!<arch>\n"
    for name, body in members:
        data = _pad(name.encode()) + body
        header = f"#1/{len(_pad(name.encode()))}".ljust(16) + "0".ljust(12) + "0".ljust(6) + "0".ljust(6)
        header += "644".ljust(8) + str(len(data)).ljust(10) + "`\n"
        out += header.encode() + data + (b"\n" if len(data) % 2 else b"")
    return out


def _macos_tree(root: Path, cputype: int = ARM64, minos: tuple[int, int] = (13, 0), abs_ref: bool = False) -> Path:
    (root / "lib/cmake/ember").mkdir(parents=True)
    (root / "include/ember").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "lib/cmake/ember/ember-config.cmake").write_text("# package\n")
    (root / "include/ember/session.h").write_text("#pragma once\n")
    for lib in tree.LIBRARIES:
        name = f"lib{lib}.0.dylib"
        loads = ("/tmp/build/libember_framework.0.dylib",) if abs_ref and lib == "ember_cc" else ()
        (root / "lib" / f"lib{lib}.0.1.0.dylib").write_bytes(
            build_macho(cputype, DYLIB, minos, f"@rpath/{name}", loads=loads)
        )
        (root / "lib" / name).symlink_to(f"lib{lib}.0.1.0.dylib")
        obj = build_macho(cputype, OBJECT, minos, None)
        (root / "lib" / f"lib{lib}.a").write_bytes(_ar([("__.SYMDEF SORTED", b"\0" * 8), ("a.cc.o", obj)]))
    (root / "bin/ember-run").write_bytes(
        build_macho(
            cputype, EXECUTE, minos, None, loads=("@rpath/libember_cc.0.dylib",), rpaths=("@loader_path/../lib",)
        )
    )
    return root


def test_macho_tree_checks_pass_on_a_good_tree(tmp_path: Path) -> None:
    results = {r.name: r.summary for r in tree.check_macho_tree(_macos_tree(tmp_path), "arm64", "13.0")}
    assert results == {
        "macho:arch": "passed",
        "macho:minos": "passed",
        "macho:install-names": "passed",
        "macho:static-libs": "passed",
        "package": "passed",
    }


def test_macho_tree_checks_name_each_problem(tmp_path: Path) -> None:
    root = _macos_tree(tmp_path, X86_64, (11, 0), abs_ref=True)
    (root / "lib/libember_lite.a").unlink()
    results = {r.name: r.summary for r in tree.check_macho_tree(root, "arm64", "13.0")}
    assert results["macho:arch"].startswith("failed: want arm64: ") and "ember-run is x86_64" in results["macho:arch"]
    assert "has minos 11.0" in results["macho:minos"]
    assert "refers to /tmp/build/libember_framework.0.dylib" in results["macho:install-names"]
    assert "missing lib/libember_lite.a" in results["macho:static-libs"]
    assert "0 objects are not Mach-O arm64" not in results["macho:static-libs"]
    assert "1 of 1 objects are not Mach-O arm64" in results["macho:static-libs"]


def test_install_name_must_be_rpath_and_exist(tmp_path: Path) -> None:
    root = _macos_tree(tmp_path)
    lib = root / "lib/libember_cc.0.1.0.dylib"
    lib.write_bytes(build_macho(install_name="/Users/ci/build/libember_cc.0.dylib"))
    status = {r.name: r.summary for r in tree.check_macho_tree(root, "arm64", "13.0")}["macho:install-names"]
    assert "install name '/Users/ci/build/libember_cc.0.dylib' is not @rpath/" in status


def test_consumer_check(tmp_path: Path) -> None:
    good = build_macho(ARM64, EXECUTE, (13, 0), None, loads=("@rpath/libember_cc.0.dylib",))
    (tmp_path / "session_client_session_test").write_bytes(good)
    assert tree.check_consumer(tmp_path, "arm64").summary == "passed"
    (tmp_path / "static_test").write_bytes(build_macho(ARM64, EXECUTE, (13, 0), None))
    assert "static_test does not load @rpath/libember_cc" in tree.check_consumer(tmp_path, "arm64").summary
    assert "no Mach-O executables" in tree.check_consumer(tmp_path / "missing", "arm64").summary


def test_programs_need_a_loader_path_rpath_and_archives_an_index(tmp_path: Path) -> None:
    root = _macos_tree(tmp_path)
    (root / "bin/ember-run").write_bytes(
        build_macho(ARM64, EXECUTE, (13, 0), None, loads=("@rpath/libember_cc.0.dylib",), rpaths=("$ORIGIN/../lib",))
    )
    obj = build_macho(ARM64, OBJECT, (13, 0), None)
    (root / "lib/libember_cc.a").write_bytes(_ar([("a.cc.o", obj)]))  # no __.SYMDEF (GNU ranlib's result)
    results = {r.name: r.summary for r in tree.check_macho_tree(root, "arm64", "13.0")}
    assert "ember-run refers to $ORIGIN/../lib" in results["macho:install-names"]
    assert "ember-run loads @rpath/ libraries but has no @loader_path rpath" in results["macho:install-names"]
    assert "lib/libember_cc.a has no __.SYMDEF index" in results["macho:static-libs"]
