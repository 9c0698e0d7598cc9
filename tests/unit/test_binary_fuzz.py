"""Fuzzing forge's binary readers: any bytes are read, or refused with the reader's own error.

The ELF, Mach-O and ar readers must never raise struct.error, IndexError or a bare ValueError
on a damaged or hostile file, and the tree checks built on them must turn such a file into a
failed check result, never a traceback. Inputs are arbitrary bytes, bytes behind each
format's magic (so parsing goes past the first check), and truncations and byte flips of
well-formed files. No deadline: how fast a reader is is not what is tested.
"""

from __future__ import annotations

import struct
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_macho import ARM64, EXECUTE, OBJECT, build_macho

from forge.checks import ar, elf, macho, tree
from forge.verify import SuiteStatus

FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
PATH = Path("fuzzed")
REAL_ELF = Path(sys.executable).resolve().read_bytes()  # a well-formed ELF executable to mutate
ELF_HEAD = st.sampled_from([b"\x7fELF\x01\x01\x01", b"\x7fELF\x02\x01\x01"])
MACHO = build_macho(
    symbols=(("_EMBER_Version", macho.N_SECT | macho.N_EXT, 0),),
    loads=("@rpath/libember_framework.0.dylib",),
    rpaths=("@loader_path/../lib",),
)


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    out = ar.MAGIC
    for name, body in members:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(body):<10}".encode() + ar.HEADER_END + body
        out += b"\n" if len(body) % 2 else b""
    return out


AR = ar_archive([("__.SYMDEF", b"\0" * 8), ("a.cc.o", build_macho(ARM64, OBJECT, (13, 0), None))])


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` cut short somewhere and/or with a few bytes changed."""
    out = bytearray(data[: draw(st.integers(0, len(data)))] if draw(st.booleans()) else data)
    for _ in range(draw(st.integers(0, 8))):
        if out:
            out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    return bytes(out)


def elf_or_error(data: bytes) -> None:
    try:
        info = elf.parse_elf(data, PATH)
    except elf.ElfError as exc:
        assert str(exc).startswith(f"{PATH}: ")
    else:
        assert info.bits in (32, 64)


def macho_or_error(data: bytes) -> None:
    try:
        info = macho.parse_macho(data, PATH)
    except macho.MachOError as exc:
        assert str(exc).startswith(f"{PATH}: ")
    else:
        assert isinstance(info.exports, frozenset)


def ar_or_error(data: bytes) -> None:
    try:
        members = ar.parse_members(data, PATH)
    except ar.ArError as exc:
        assert str(exc).startswith(f"{PATH}: ")
    else:
        assert sum(len(body) for _, body in members) <= len(data)


@FUZZ
@given(st.binary(max_size=512))
def test_any_bytes(data: bytes) -> None:
    elf_or_error(data)
    macho_or_error(data)
    ar_or_error(data)


@FUZZ
@given(ELF_HEAD, st.binary(min_size=40, max_size=400))
def test_bytes_behind_the_elf_magic(head: bytes, rest: bytes) -> None:
    elf_or_error(head + rest)


@FUZZ
@given(mutated(REAL_ELF[:16384]))
def test_damaged_real_elf(data: bytes) -> None:
    elf_or_error(data)


@FUZZ
@given(st.binary(min_size=24, max_size=400))
def test_bytes_behind_the_macho_magic(rest: bytes) -> None:
    macho_or_error(struct.pack("<I", macho.MH_MAGIC_64) + rest)


@FUZZ
@given(mutated(MACHO))
def test_damaged_macho(data: bytes) -> None:
    macho_or_error(data)


@FUZZ
@given(st.lists(st.tuples(st.text("abc#1/ .o", max_size=16), st.binary(max_size=40)), max_size=4), st.data())
def test_damaged_ar(members: list[tuple[str, bytes]], data: st.DataObject) -> None:
    ar_or_error(data.draw(mutated(ar_archive(members))))


@FUZZ
@given(mutated(AR))
def test_damaged_static_library(data: bytes) -> None:
    ar_or_error(data)


def test_well_formed_inputs_are_read() -> None:
    """The seeds the fuzzers mutate are themselves read (so the fuzzers start from valid files)."""
    assert elf.parse_elf(REAL_ELF, PATH).machine in elf.MACHINES.values()
    assert macho.parse_macho(MACHO, PATH).exports == {"EMBER_Version"}
    assert [name for name, _ in ar.parse_members(AR, PATH)] == ["__.SYMDEF", "a.cc.o"]


@FUZZ
@given(st.binary(max_size=300), mutated(REAL_ELF[:8192]))
def test_elf_tree_check_fails_on_damaged_binaries(junk: bytes, damaged: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lib").mkdir()
        (root / "lib/libember_cc.so.0.1.0").write_bytes(b"\x7fELF" + junk)
        (root / "lib/libember_framework.so.0.1.0").write_bytes(damaged)
        result = tree.check_elf_tree(root, "aarch64", None)  # never the machine of REAL_ELF
        assert result.status is SuiteStatus.FAILED and "libember_cc.so.0.1.0" in result.detail


@FUZZ
@given(mutated(MACHO), mutated(AR), mutated(build_macho(ARM64, EXECUTE, (13, 0), None)))
def test_macho_tree_checks_fail_on_damaged_files(dylib: bytes, archive: bytes, program: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lib").mkdir()
        (root / "bin").mkdir()
        (root / "lib/libember_cc.0.1.0.dylib").write_bytes(dylib)
        (root / "bin/ember-run").write_bytes(program)
        for name in tree.LIBRARIES:
            (root / f"lib/lib{name}.a").write_bytes(archive)
        results = {r.name: r for r in tree.check_macho_tree(root, "arm64", "13.0")}
        assert not all(r.passed for r in results.values())  # no package files, at least
        assert results["package"].status is SuiteStatus.FAILED
        consumer = tree.check_consumer(root / "bin", "arm64")
        assert consumer.status in (SuiteStatus.PASSED, SuiteStatus.FAILED)
