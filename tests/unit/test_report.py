"""Report rendering (Markdown + HTML, cells x suites) and verify-output parsing."""

from __future__ import annotations

import struct
from pathlib import Path

from forge import manifest, report
from forge.verify import check_macho_tree, macho_arch, parse_ctest

CTEST_OUTPUT = """\
Test project /build
    Start 1: session
1/3 Test #1: session ..........................   Passed    0.02 sec
    Start 2: lite_interpreter
2/3 Test #2: lite_interpreter .................***Failed    1.50 sec
3/3 Test #3: gpu_kernels ......................***Not Run   0.00 sec

67% tests passed, 1 tests failed out of 3
"""


def test_parse_ctest() -> None:
    results = parse_ctest(CTEST_OUTPUT)
    assert [(r.name, r.status, r.seconds) for r in results] == [
        ("session", "passed", 0.02),
        ("lite_interpreter", "failed", 1.5),
        ("gpu_kernels", "not run", 0.0),
    ]
    assert [r.passed for r in results] == [True, False, False]


def write_manifest(dist: Path, cell_id: str, result: str, suites: dict[str, str]) -> None:
    (dist / cell_id).mkdir(parents=True)
    data = {
        "schema": manifest.SCHEMA,
        "result": result,
        "toolchain": {"c++": "g++ 12"},
        "verify": {"suites": [{"name": n, "status": s, "seconds": 0.1} for n, s in suites.items()]},
    }
    manifest.write_json(dist / cell_id / manifest.MANIFEST, data)


def test_report_tables(tmp_path: Path) -> None:
    write_manifest(tmp_path, "linux-x86_64-py3.11-np2.4-gcc12-cpu", "passed", {"session": "passed", "lite": "passed"})
    write_manifest(tmp_path, "linux-aarch64-py3.11-np2.4-gcc12-cpu", "verify-failed", {"session": "failed"})
    (tmp_path / ".tmp-x-1").mkdir()  # an in-progress build is not a result
    md_path, html_path, rows = report.write_report(tmp_path)
    assert [r.cell for r in rows] == ["linux-aarch64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.11-np2.4-gcc12-cpu"]
    md = md_path.read_text()
    assert "| cell | result | lite | session |" in md
    assert "| linux-aarch64-py3.11-np2.4-gcc12-cpu | verify-failed | - | failed |" in md
    assert "| linux-x86_64-py3.11-np2.4-gcc12-cpu | passed | pass | pass |" in md
    page = html_path.read_text()
    assert page.count("<tr>") == 3 and '<td class="fail">failed</td>' in page and '<td class="none">-</td>' in page


def test_empty_report(tmp_path: Path) -> None:
    assert "No results in dist/" in report.render_markdown(report.collect(tmp_path / "missing"))


def test_macho_checks(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "bin/ember-run").write_bytes(struct.pack("<II", 0xFEEDFACF, 0x0100000C) + b"\0" * 24)
    (tmp_path / "lib/libember.dylib").write_bytes(struct.pack("<II", 0xFEEDFACF, 0x01000007) + b"\0" * 24)
    (tmp_path / "lib/libember.a").write_bytes(b"!<arch>\n")
    assert macho_arch(tmp_path / "bin/ember-run") == "arm64"
    assert macho_arch(tmp_path / "lib/libember.a") is None
    results = {r.name: r.status for r in check_macho_tree(tmp_path, "arm64")}
    assert results == {"macho:bin/ember-run": "passed", "macho:lib/libember.dylib": "not Mach-O arm64 (x86_64)"}
