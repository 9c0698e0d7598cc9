"""Compatibility report: cells x verify suites, from the manifests in dist/, as Markdown and HTML."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from forge import manifest

MARKS = {"passed": "pass"}


@dataclass(frozen=True)
class ReportRow:
    cell: str
    result: str
    toolchain: str
    suites: dict[str, str]


def collect(dist: Path) -> list[ReportRow]:
    """One row per dist/<cell-id>/manifest.json, sorted by cell id."""
    rows = []
    for cell_dir in (
        sorted(p for p in dist.iterdir() if p.is_dir() and not p.name.startswith(".")) if dist.is_dir() else []
    ):
        data = manifest.read_manifest(cell_dir)
        if data is None:
            continue
        suites = {s["name"]: s["status"] for s in data.get("verify", {}).get("suites", [])}
        compiler = (data.get("toolchain") or {}).get("c++") or "?"
        mode = data.get("verify", {}).get("mode") or "native"  # cross cells: emulated, or checked but not run
        result = str(data.get("result", "?")) + (f" ({mode})" if mode != "native" else "")
        rows.append(ReportRow(cell_dir.name, result, compiler, suites))
    return rows


def suite_names(rows: list[ReportRow]) -> list[str]:
    return sorted({name for row in rows for name in row.suites})


def _cell(status: str | None) -> str:
    if status is None:
        return "-"
    return MARKS.get(status, status)


def render_markdown(rows: list[ReportRow]) -> str:
    suites = suite_names(rows)
    header = ["cell", "result", *suites]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row.cell, row.result, *(_cell(row.suites.get(s)) for s in suites)]
        lines.append("| " + " | ".join(cells) + " |")
    if not rows:
        lines.append("\n_No results in dist/: run `invoke build` first._")
    return "# ember compatibility report\n\n" + "\n".join(lines) + "\n"


def render_html(rows: list[ReportRow]) -> str:
    suites = suite_names(rows)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["cell", "result", *suites])
    body = []
    for row in rows:
        cells = [
            f"<td>{html.escape(row.cell)}</td>",
            f'<td class="{_css(row.result.split(" (")[0])}">{html.escape(row.result)}</td>',
        ]
        for suite in suites:
            status = row.suites.get(suite)
            cells.append(f'<td class="{_css(status)}">{html.escape(_cell(status))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    style = "td.pass{background:#cfc}td.fail{background:#fcc}td,th{padding:2px 8px;border:1px solid #999}"
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>ember compatibility report</title>'
        f"<style>{style}</style></head><body><h1>ember compatibility report</h1>\n"
        f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table></body></html>\n"
    )


def _css(status: str | None) -> str:
    if status is None:
        return "none"
    return "pass" if status == "passed" else "fail"


def write_report(dist: Path) -> tuple[Path, Path, list[ReportRow]]:
    """Write dist/report.md and dist/report.html; returns their paths and the rows."""
    rows = collect(dist)
    dist.mkdir(parents=True, exist_ok=True)
    md, page = dist / "report.md", dist / "report.html"
    md.write_text(render_markdown(rows))
    page.write_text(render_html(rows))
    return md, page, rows
