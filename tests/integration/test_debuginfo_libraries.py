"""Separate .debug files (forge/debuginfo.py) on real libraries compiled here with the host's g++.

Each side is built as a cell builds it: the installed library without -g, and the same source
again with -g -gz for its debug file. The installed bytes must not change; abidiff must see a
public struct that grew only through the debug files; a -g build of other code gets no debug file.
Cost: six small g++ links and two abidiff runs, a few seconds.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import needs
import pytest

from forge import compare, debuginfo, manifest
from forge.compare import Severity

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

HEADER = """#pragma once
#include <string>
namespace ember {
struct Options { int threads; %s std::string name; };
int Run(const Options& o);
}
"""
SOURCE = """#include "ember/api.h"
namespace ember { int Run(const Options& o) { return o.threads + static_cast<int>(o.name.size()); } }
"""


def _link(src: Path, include: Path, out: Path, *flags: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = ["g++", "-O2", *flags, "-shared", "-fPIC", f"-I{include}", "-Wl,-soname,libember_cc.so.0"]
    subprocess.run([*argv, str(src), "-o", str(out)], check=True)


def _cell(root: Path, name: str, field: str = "", debug_source: str | None = None) -> Path:
    """dist/<name>/ with install/ (no -g) and debug/ published from a -g build of the same source
    (or of `debug_source`, to plant a mismatch)."""
    cell = root / name
    include = cell / "install" / "include"
    (include / "ember").mkdir(parents=True)
    (include / "ember" / "api.h").write_text(HEADER % field)
    src = root / f"{name}.cc"
    src.write_text(SOURCE)
    _link(src, include, cell / "install" / "lib" / "libember_cc.so.0")
    other = root / f"{name}-debug.cc"
    other.write_text(debug_source or SOURCE)
    _link(other, include, root / f"{name}-stage" / "lib" / "libember_cc.so.0", "-g", "-gz")
    before = hashlib.sha256((cell / "install" / "lib" / "libember_cc.so.0").read_bytes()).hexdigest()
    record = debuginfo.publish(cell / "install", root / f"{name}-stage", cell / debuginfo.DEBUG_DIR)
    assert hashlib.sha256((cell / "install" / "lib" / "libember_cc.so.0").read_bytes()).hexdigest() == before
    files = manifest.file_records(cell / "install")
    data = {"schema": manifest.SCHEMA, "forge": "0", "cell": {}, "result": "passed", "files": files, "debug": record}
    manifest.write_json(cell / manifest.MANIFEST, data)
    return cell


def test_debug_file_matches_the_installed_library_by_build_id(tmp_path: Path) -> None:
    cell = _cell(tmp_path, "a")
    data = manifest.read_manifest(cell)
    assert data is not None
    entry = data.extra["debug"]["files"]["lib/libember_cc.so.0"]
    installed = debuginfo.parse((cell / "install/lib/libember_cc.so.0").read_bytes(), cell)
    debug_path = cell / "debug" / "lib" / "libember_cc.so.0.debug"
    debug = debuginfo.parse(debug_path.read_bytes(), debug_path)
    ours, theirs = installed.build_id(), debug.build_id()
    assert ours is not None and theirs is not None
    assert entry["build_id"] == ours[1].hex() == theirs[1].hex()
    assert entry["sha256"] == hashlib.sha256(debug_path.read_bytes()).hexdigest()
    assert any(s.name == ".debug_info" for s in debug.sections)
    assert not any(s.name.startswith(".debug_") for s in installed.sections)
    # readelf (binutils, independent of forge's reader) sees DWARF and the same build-id.
    notes = subprocess.run(["readelf", "-n", str(debug_path)], capture_output=True, text=True, check=True).stdout
    assert entry["build_id"] in notes


def test_a_debug_build_of_other_code_gets_no_debug_file(tmp_path: Path) -> None:
    other = SOURCE.replace("o.threads +", "2 * o.threads +")
    cell = _cell(tmp_path, "a", debug_source=other)
    data = manifest.read_manifest(cell)
    assert data is not None and data.extra["debug"]["files"] == {}
    assert "does not match" in data.extra["debug"]["missing"]["lib/libember_cc.so.0"]
    assert not (cell / "debug" / "lib" / "libember_cc.so.0.debug").exists()


def test_abidiff_sees_a_grown_struct_through_the_debug_files(tmp_path: Path) -> None:
    abidiff = needs.program("abidiff")
    base, cand = _cell(tmp_path, "a"), _cell(tmp_path, "b", field="long long reserved;")
    fixtures = REPO / "engine" / "testdata" / "graphs"
    result = compare.compare(base, cand, fixtures, abidiff=abidiff, run_programs=False)
    abi = [f for f in result.findings if f.section == "abi" and f.severity is not Severity.NOT_RUN]
    assert abi, result.findings
    assert "Options" in abi[0].message and "size changed" in abi[0].message, abi[0].message

    # The same pair without the debug files: the installed libraries carry no types, abidiff sees
    # the same exports, and the grown struct goes unseen (and the comparison says why).
    for cell in (base, cand):
        shutil.rmtree(cell / "debug")
    blind = compare.compare(base, cand, fixtures, abidiff=abidiff, run_programs=False)
    assert not [f for f in blind.findings if f.section == "abi" and f.severity is not Severity.NOT_RUN]
    assert any("no .debug files" in f.message for f in blind.findings if f.severity is Severity.NOT_RUN)
