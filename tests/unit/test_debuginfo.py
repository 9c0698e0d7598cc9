"""Separate .debug files: the plan's -g build steps and forge/debuginfo.py on malformed input.

Real ELF pairs (a -g build matching or not matching the installed file, abidiff through the
debug files) are in tests/integration/test_debuginfo.py, compiled with g++.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest

from forge import debuginfo
from forge.backends.base import CONTAINER_WORKSPACE, Workspace
from forge.matrix import Cell
from forge.plan import BuildOptions, plan_build
from forge.toolchains import Toolchains, load_toolchains

REPO = Path(__file__).resolve().parents[2]
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True, debug_info=True)
WS = Workspace(PurePosixPath("/repo"), PurePosixPath("/c/build"), PurePosixPath("/c/stage"), PurePosixPath("/c/vb"))


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def cell(target: str, gcc: str | None = "12") -> Cell:
    return Cell(target, "bookworm", "3.11", "2.4", gcc, None, "3.25", None)


def test_debug_build_is_the_release_configuration_plus_g(toolchains: Toolchains) -> None:
    plan = plan_build(cell("host"), toolchains.targets["host"], WS, "local", OPTS)
    steps = {s.name: s for s in plan.steps}
    names = [s.name for s in plan.steps]
    assert names.index("install") < names.index("debuginfo-configure") < names.index("debuginfo-install")
    release, debug = steps["configure"].argv, steps["debuginfo-configure"].argv
    assert debug[debug.index("-B") + 1] == "/c/build/.debuginfo/build"
    # Same install prefix (RPATHs and configured paths match), same path remapping as its own build dir.
    assert "-DCMAKE_INSTALL_PREFIX=/c/stage" in debug
    flags = [a for a in debug if a.startswith("-DCMAKE_CXX_FLAGS=")]
    assert flags == [
        "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=/repo=. -ffile-prefix-map=/c/build/.debuginfo/build=build -g -gz"
    ]
    assert "-DEMBER_BUILD_TESTS=OFF" in debug and "-DEMBER_BUILD_TESTS=ON" not in debug
    only_release = {a for a in release if not a.startswith(("-B", "/c/build", "-DCMAKE_C", "-DEMBER_BUILD_TESTS"))}
    assert only_release <= set(debug)  # nothing else of the release configuration is dropped
    assert steps["debuginfo-install"].argv == (
        "cmake",
        "--install",
        "/c/build/.debuginfo/build",
        "--prefix",
        "/c/build/.debuginfo/stage",
    )
    assert steps["install"].argv == ("cmake", "--install", "/c/build")  # the installed tree: as before


def test_no_debug_build_without_the_option_or_for_macho(toolchains: Toolchains) -> None:
    plain = plan_build(cell("host"), toolchains.targets["host"], WS, "local", replace(OPTS, debug_info=False))
    assert not any(s.name.startswith("debuginfo") for s in plain.steps)
    mac = plan_build(
        cell("macos-arm64", gcc=None), toolchains.targets["macos-arm64"], CONTAINER_WORKSPACE, "docker", OPTS
    )
    assert not any(s.name.startswith("debuginfo") for s in mac.steps)


@pytest.mark.parametrize(
    "data",
    [b"", b"not an elf at all", b"\x7fELF\x02\x02" + bytes(58), b"\x7fELF\x02\x01\x01" + bytes(20)],
    ids=["empty", "text", "big-endian", "truncated"],
)
def test_malformed_files_raise_debuginfo_error(data: bytes) -> None:
    with pytest.raises(debuginfo.DebugInfoError) as info:
        debuginfo.parse(data, Path("lib/x.so"))
    assert "lib/x.so" in str(info.value)


def test_publish_records_why_a_file_has_no_debug_file(tmp_path: Path) -> None:
    install, stage = tmp_path / "install", tmp_path / "stage"
    (install / "lib").mkdir(parents=True)
    (stage / "lib").mkdir(parents=True)
    # Linked-ELF header (ET_DYN) with nothing valid behind it; the -g side is garbage, one is absent.
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + (3).to_bytes(2, "little")
    (install / "lib" / "libbroken.so").write_bytes(head + bytes(100))
    (stage / "lib" / "libbroken.so").write_bytes(b"junk")
    (install / "lib" / "libalone.so").write_bytes(head + bytes(100))
    (install / "lib" / "notes.txt").write_text("not ELF")
    record = debuginfo.publish(install, stage, tmp_path / "debug")
    assert record["files"] == {}
    assert record["missing"]["lib/libalone.so"] == "the -g build installed no such file"
    assert "does not match" in record["missing"]["lib/libbroken.so"]
    assert "lib/notes.txt" not in record["missing"]


def test_build_id_tree_skips_escaping_or_malformed_entries(tmp_path: Path) -> None:
    cell = tmp_path / "cell"
    (cell / "debug" / "lib").mkdir(parents=True)
    (cell / "debug" / "lib" / "libx.so.debug").write_bytes(b"dwarf")
    (tmp_path / "secret.debug").write_bytes(b"outside")
    record = {
        "files": {
            "lib/libx.so": {"build_id": "abcdef0123"},
            "../../secret": {"build_id": "aaaa"},
            "lib/liby.so": {"build_id": "../../etc"},
            "lib/libz.so": "not a dict",
        }
    }
    into = tmp_path / "tree"
    assert debuginfo.build_id_tree(cell, record, into) == 1
    link = into / ".build-id" / "ab" / "cdef0123.debug"
    assert link.read_bytes() == b"dwarf"
    assert debuginfo.build_id_tree(cell, "garbage", tmp_path / "t2") == 0
