"""Report rendering (Markdown + HTML, cells x suites); ctest parsing is in test_verify.py."""

from __future__ import annotations

from pathlib import Path

from forge import manifest, report


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
