"""invoke compare on planted pairs of real shared libraries, compiled here with the host's g++.

Each pair differs in one way a toolchain upgrade can change a build: an export removed or added,
a public struct's layout (which only abidiff sees, from the debug info), a higher GLIBCXX
requirement. Each must be found, with the right severity, and the CLI must exit 12.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import needs
import pytest

from forge import compare, manifest
from forge.compare import Severity

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

HEADER = """#pragma once
struct Options { int threads; %s };
extern "C" int ember_run(const Options* o);
"""
SOURCE = """#include "ember/api.h"
%s
extern "C" int ember_run(const Options* o) { return o->threads; }
"""


def _abidiff() -> str:
    return needs.program("abidiff")


def _cell(root: Path, name: str, field: str = "", body: str = "", suites: str = "passed") -> Path:
    cell = root / name
    include, lib = cell / "install" / "include" / "ember", cell / "install" / "lib"
    include.mkdir(parents=True)
    lib.mkdir(parents=True)
    (include / "api.h").write_text(HEADER % field)
    src = cell / "api.cc"
    src.write_text(SOURCE % body)
    out = lib / "libember_cc.so.0"
    subprocess.run(
        [
            "g++",
            "-g",
            "-O1",
            "-shared",
            "-fPIC",
            f"-I{cell / 'install' / 'include'}",
            "-Wl,-soname,libember_cc.so.0",
            str(src),
            "-o",
            str(out),
        ],
        check=True,
    )
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "cell": {},
        "result": "passed",
        "files": manifest.file_records(cell / "install"),
        "verify": {"suites": [{"name": "session", "status": suites, "seconds": 1.0}]},
    }
    manifest.write_json(cell / manifest.MANIFEST, data)
    return cell


def _findings(base: Path, cand: Path) -> compare.Comparison:
    return compare.compare(base, cand, REPO / "engine" / "testdata" / "graphs", abidiff=_abidiff(), run_programs=False)


def test_same_source_same_compiler_finds_nothing(tmp_path: Path) -> None:
    result = _findings(_cell(tmp_path, "a"), _cell(tmp_path, "b"))
    assert [f for f in result.findings if f.severity in (Severity.REGRESSION, Severity.CHANGE)] == []


def test_exports_removed_and_added(tmp_path: Path) -> None:
    base = _cell(tmp_path, "a", body="namespace ember { int Old() { return 1; } }")
    cand = _cell(tmp_path, "b", body="namespace ember { int New() { return 2; } }")
    result = _findings(base, cand)
    messages = {(f.severity, f.section, f.message.split(": ")[-1]) for f in result.findings}
    assert (Severity.REGRESSION, "symbols", "ember::Old()") in messages, result.findings
    assert (Severity.CHANGE, "symbols", "ember::New()") in messages, result.findings


def test_struct_layout_change_is_caught_by_abidiff(tmp_path: Path) -> None:
    base = _cell(tmp_path, "a")
    cand = _cell(tmp_path, "b", field="long long reserved;")
    result = _findings(base, cand)
    abi = [f for f in result.findings if f.section == "abi" and f.severity is not Severity.NOT_RUN]
    assert abi and abi[0].severity in (Severity.REGRESSION, Severity.CHANGE), result.findings
    assert "Options" in abi[0].message and "size" in abi[0].message


def test_raised_glibcxx_requirement_is_a_regression(tmp_path: Path) -> None:
    base = _cell(tmp_path, "a")
    cand = _cell(
        tmp_path,
        "b",
        body='#include <string>\nextern "C" int ember_len(const char* s) { return static_cast<int>(std::string(s).size()); }',
    )
    result = _findings(base, cand)
    raised = [f.message for f in result.regressions if f.section == "requirements"]
    assert any("now requires GLIBCXX_3.4." in m and "(was none)" in m for m in raised), result.findings


def test_cli_exits_12_with_findings_first(tmp_path: Path) -> None:
    _abidiff()
    dist = tmp_path / "dist"
    _cell(dist, "base-cell")
    _cell(dist, "cand-cell", suites="failed")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "invoke",
            "compare",
            str(dist / "base-cell"),
            str(dist / "cand-cell"),
            "--no-run",
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 12, proc.stdout + proc.stderr
    assert "error: 1 regressions from base-cell to cand-cell" in proc.stderr + proc.stdout
    assert "verify: session failed (passed in the baseline)" in proc.stderr + proc.stdout
    assert json.loads((tmp_path / "out" / "base-cell--cand-cell.json").read_text())["regressions"] == 1
