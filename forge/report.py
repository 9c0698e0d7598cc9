"""The compatibility report a release manager opens: every cell of dist/ as Markdown, HTML and JSON.

One `ReportRow` per dist/<cell-id>/manifest.json (failed builds record one too), read here and
nowhere else. The rows carry what the manifest knows (backend, image, toolchain versions found
inside the image, step and suite times, artifact size and sha256) and the pages link to each
cell's logs and manifest. A target x Python x NumPy grid (and CUDA where present) sums the
results up, and the previous report's JSON gives the "changed since" list.
"""

from __future__ import annotations

import datetime
import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from forge import __version__, manifest
from forge.log import human_size

REPORT_SCHEMA = 1
PASSED = "passed"
FAILED = "failed"  # dist/failed/<cell-id>/: a failed build's manifest and logs (forge/build.py)
UP_TO_DATE = "up to date"
NO_GPU = "not run: no GPU"  # forge/verify.py SuiteStatus.NO_GPU: a GPU check on a machine without one
# Toolchain versions shown per cell, in this order, from the versions found inside the image
# (container_versions) and, for local builds, the host toolchain the manifest recorded.
TOOL_ORDER = ("cxx", "cc", "c++", "zig", "cmake", "bazel", "ninja", "python", "numpy", "nvcc", "cuda", "glibc")


@dataclass(frozen=True)
class SuiteCell:
    status: str
    seconds: float | None


@dataclass(frozen=True)
class ReportRow:
    """What the report shows about one cell."""

    cell: str
    result: str
    axes: dict[str, str | None]
    backend: str
    image: str | None
    toolchain: dict[str, str]
    steps: dict[str, float]
    suites: dict[str, SuiteCell]
    package: dict[str, Any] | None
    size: int
    commit: str | None
    mode: str
    logs: list[str] = field(default_factory=list)
    wheel: dict[str, Any] | None = None  # the manifest's "wheel" (forge/wheel.py): file, claim, NumPy grid

    @property
    def ok(self) -> bool:
        return self.result in (PASSED, UP_TO_DATE)

    @property
    def shown_result(self) -> str:
        """The result, with how a cross cell was verified (emulated, or checked but not run)."""
        return self.result + (f" ({self.mode})" if self.mode != "native" else "")

    @property
    def seconds(self) -> float:
        return round(sum(self.steps.values()), 1)


@dataclass(frozen=True)
class Report:
    generated: str
    forge: str
    commit: str | None
    rows: list[ReportRow]
    changes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "generated": self.generated,
            "forge": self.forge,
            "commit": self.commit,
            "cells": [asdict(row) for row in self.rows],
            "changes": self.changes,
        }


def _first_line_version(text: object) -> str | None:
    """'g++ (Debian 12.2.0-14) 12.2.0' -> the line itself, trimmed; None stays None."""
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().splitlines()[0][:80]


def toolchain_of(data: manifest.Manifest) -> dict[str, str]:
    """Versions found inside the cell's image, else the host toolchain recorded by a local build."""
    found: dict[str, str] = {}
    for source in (data.toolchain, data.extra.get("container_versions")):
        if isinstance(source, Mapping):
            for name, value in source.items():
                line = _first_line_version(value)
                if line is not None:
                    found[str(name)] = line
    cuda = data.extra.get("cuda")  # a CUDA cell: the nvcc release its cuda-arches step read in the image
    if isinstance(cuda, Mapping) and isinstance(cuda.get("nvcc"), str):
        found["nvcc"] = f"nvcc {cuda['nvcc']}"
    order = {name: i for i, name in enumerate(TOOL_ORDER)}
    return dict(sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _suites(data: manifest.Manifest) -> dict[str, SuiteCell]:
    suites: dict[str, SuiteCell] = {}
    for suite in (data.verify or {}).get("suites") or []:
        if isinstance(suite, Mapping) and isinstance(suite.get("name"), str):
            seconds = suite.get("seconds")
            suites[suite["name"]] = SuiteCell(
                str(suite.get("status", "?")), float(seconds) if isinstance(seconds, int | float) else None
            )
    return suites


def _steps(data: manifest.Manifest) -> dict[str, float]:
    steps: dict[str, float] = {}
    for step in data.steps:
        if isinstance(step, Mapping) and isinstance(step.get("name"), str):
            seconds = step.get("seconds")
            steps[step["name"]] = round(float(seconds), 1) if isinstance(seconds, int | float) else 0.0
    return steps


def row_from_manifest(cell_dir: Path, data: manifest.Manifest, dist: Path | None = None) -> ReportRow:
    """The row of one manifest; log links are relative to `dist` (default: the cell directory's parent)."""
    axes = {str(k): (None if v is None else str(v)) for k, v in data.cell.items() if k != "id"}
    image = data.extra.get("image") if isinstance(data.extra.get("image"), Mapping) else None
    size = sum(int(r.get("size", 0)) for r in (data.files or {}).values() if isinstance(r, Mapping))
    package = data.package
    logs_dir = cell_dir / "logs"
    base = dist or cell_dir.parent
    logs = sorted(p.relative_to(base).as_posix() for p in logs_dir.glob("*.log")) if logs_dir.is_dir() else []
    mode = str((data.verify or {}).get("mode") or "native")
    return ReportRow(
        cell=cell_dir.name,
        result=data.result.value,
        axes=axes,
        backend=data.backend.value if data.backend else "?",
        image=str(image.get("tag")) if image and image.get("tag") else None,
        toolchain=toolchain_of(data),
        steps=_steps(data),
        suites=_suites(data),
        package=dict(package) if package else None,
        size=size,
        commit=str(data.extra["source_commit"]) if data.extra.get("source_commit") else None,
        mode=mode,
        logs=logs,
        wheel=dict(data.extra["wheel"]) if isinstance(data.extra.get("wheel"), Mapping) else None,
    )


def _cell_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


def collect(dist: Path) -> list[ReportRow]:
    """One row per dist/<cell-id>/manifest.json, and per failed build's dist/failed/<cell-id>/ (a
    failure newer than the cell's last good result replaces its row), sorted by cell id."""
    rows: dict[str, ReportRow] = {}
    for cell_dir in _cell_dirs(dist):
        data = manifest.read_manifest(cell_dir)
        if data is not None:
            rows[cell_dir.name] = row_from_manifest(cell_dir, data, dist)
    for cell_dir in _cell_dirs(dist / FAILED):
        data = manifest.read_manifest(cell_dir)
        if data is not None:
            error = data.error or {}
            row = row_from_manifest(cell_dir, data, dist)
            rows[cell_dir.name] = replace(row, result=f"failed: {error.get('what', '?')}" if error else "failed")
    return [rows[name] for name in sorted(rows)]


def suite_names(rows: Iterable[ReportRow]) -> list[str]:
    return sorted({name for row in rows for name in row.suites})


def _grid_key(row: ReportRow) -> tuple[str, str, str]:
    column = f"py{row.axes.get('python') or '?'} np{row.axes.get('numpy') or '?'}"
    cuda = row.axes.get("cuda")
    return (row.axes.get("target") or row.cell, column, f"cu{cuda}" if cuda else "cpu")


def grid(rows: Iterable[ReportRow]) -> tuple[list[str], list[str], dict[tuple[str, str], list[ReportRow]]]:
    """Targets (rows) x Python/NumPy (columns) -> the cells there, CUDA and compilers side by side."""
    cells: dict[tuple[str, str], list[ReportRow]] = {}
    for row in rows:
        target, column, _ = _grid_key(row)
        cells.setdefault((target, column), []).append(row)
    targets = sorted({t for t, _ in cells})
    columns = sorted({c for _, c in cells})
    return targets, columns, cells


def changes_since(previous: Mapping[str, Any] | None, rows: Iterable[ReportRow]) -> list[str]:
    """What differs from the previous report: new, gone, and changed results or package hashes."""
    if previous is None:
        return []
    before = {str(c["cell"]): c for c in previous.get("cells", []) if isinstance(c, Mapping) and c.get("cell")}
    now = {row.cell: row for row in rows}
    lines = []
    for cell in sorted(now.keys() - before.keys()):
        lines.append(f"new: {cell} ({now[cell].result})")
    for cell in sorted(before.keys() - now.keys()):
        lines.append(f"gone: {cell}")
    for cell in sorted(now.keys() & before.keys()):
        old, new = before[cell], now[cell]
        if old.get("result") != new.result:
            lines.append(f"result: {cell} {old.get('result')} -> {new.result}")
        old_sha = (old.get("package") or {}).get("sha256")
        new_sha = (new.package or {}).get("sha256")
        if old_sha and new_sha and old_sha != new_sha:
            lines.append(f"artifact: {cell} {old_sha[:12]} -> {new_sha[:12]}")
    return lines


def _mark(status: str | None) -> str:
    return "-" if status is None else ("pass" if status == PASSED else status)


def render_markdown(report: Report) -> str:
    rows = report.rows
    lines = [
        "# ember compatibility report",
        "",
        f"Generated {report.generated} by forge {report.forge}, commit {report.commit or 'unknown'}.",
        f"{sum(r.ok for r in rows)}/{len(rows)} cells passed.",
        "",
    ]
    if not rows:
        lines.append("_No results in dist/: run `invoke build` first._")
        return "\n".join(lines) + "\n"
    failed = [r for r in rows if not r.ok]
    if failed:
        lines += ["## Failed", ""] + [
            f"- **{r.cell}**: {r.result} (logs: {', '.join(r.logs) or 'none'})" for r in failed
        ]
        lines.append("")
    if report.changes:
        lines += ["## Changed since the previous report", ""] + [f"- {c}" for c in report.changes] + [""]
    suites = suite_names(rows)
    header = ["cell", "result", "backend", "toolchain", "time (s)", "size", "sha256", *suites]
    lines += ["## Cells", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        tools = "; ".join(f"{k}: {v}" for k, v in r.toolchain.items()) or "?"
        sha = (r.package or {}).get("sha256", "")[:12] or "-"
        marks = [_mark(r.suites[s].status if s in r.suites else None) for s in suites]
        lines.append(
            "| "
            + " | ".join([r.cell, r.shown_result, r.backend, tools, f"{r.seconds}", human_size(r.size), sha, *marks])
            + " |"
        )
    targets, columns, cells = grid(rows)
    lines += ["", "## Target x Python x NumPy", "", "| target | " + " | ".join(columns) + " |"]
    lines.append("|" + "---|" * (len(columns) + 1))
    for target in targets:
        entries = [
            ", ".join(f"{_grid_key(r)[2]}/{r.axes.get('gcc') or 'zig'}: {r.result}" for r in cells.get((target, c), []))
            or "-"
            for c in columns
        ]
        lines.append(f"| {target} | " + " | ".join(entries) + " |")
    lines += render_wheel_markdown(rows)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The Python x NumPy grid of ember's wheels (one row per cell with a wheel entry)

GRID_MARKS = {
    "works as claimed": "works",
    "excluded, fails as claimed": "pip refuses; fails",
    "excluded, yet works": "pip refuses; works",
    "claim wrong": "CLAIM WRONG",
}


@dataclass(frozen=True)
class WheelRow:
    target: str
    python: str
    built_with: str
    claim: str
    tag: str
    results: dict[str, str]  # NumPy series -> mark
    ok: bool
    note: str = ""


def wheel_rows(rows: Iterable[ReportRow]) -> tuple[list[str], list[WheelRow]]:
    """NumPy series (columns) and one row per cell's wheel: built with, claimed, tag, grid results."""
    out: list[WheelRow] = []
    series: set[str] = set()
    for row in rows:
        wheel = row.wheel or {}
        if not wheel:
            continue
        target, python = row.axes.get("target") or row.cell, row.axes.get("python") or "?"
        if wheel.get("status") != "built":
            reason = str(wheel.get("reason", "no wheel"))
            out.append(WheelRow(target, python, row.axes.get("numpy") or "?", "-", "-", {}, True, reason))
            continue
        grid_rows = (wheel.get("grid") or {}).get("rows") or []
        results: dict[str, str] = {}
        built_with = row.toolchain.get("numpy") or row.axes.get("numpy") or "?"  # the image's exact NumPy
        for entry in grid_rows:
            if not isinstance(entry, Mapping):
                continue
            key = str(entry.get("series", "?"))
            series.add(key)
            mark = GRID_MARKS.get(str(entry.get("verdict")), str(entry.get("verdict")))
            results[key] = f"{mark} ({entry.get('numpy')})" + (" [built with]" if entry.get("built_with") else "")
        verify = wheel.get("verify") or {}
        note = f"verify/python with numpy {verify.get('numpy', '?')}: {verify.get('status', '?')}"
        ok = verify.get("status") == "passed" and all(not v.startswith("CLAIM WRONG") for v in results.values())
        tag = ", ".join(wheel.get("manylinux") or []) or str(wheel.get("platform_tag", "?"))
        claim = str(wheel.get("numpy_requires", "?"))
        out.append(WheelRow(target, python, built_with, claim, tag, results, ok, note))
    return sorted(series, key=lambda s: tuple(int(p) for p in s.split(".") if p.isdigit())), out


def render_wheel_markdown(rows: Iterable[ReportRow]) -> list[str]:
    series, wheels = wheel_rows(rows)
    if not wheels:
        return []
    header = ["target", "python", "built with numpy", "claims", "manylinux", *[f"numpy {s}" for s in series], "notes"]
    lines = ["", "## Python wheels: Python x NumPy (tested with each)", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for w in wheels:
        marks = [w.results.get(s, "-") for s in series]
        lines.append("| " + " | ".join([w.target, w.python, w.built_with, w.claim, w.tag, *marks, w.note]) + " |")
    return lines


def render_wheel_html(rows: Iterable[ReportRow]) -> list[str]:
    series, wheels = wheel_rows(rows)
    if not wheels:
        return []
    heads = ["target", "python", "built with numpy", "claims", "manylinux", *[f"numpy {s}" for s in series], "notes"]
    parts = ['<h2>Python wheels: Python x NumPy (tested with each)</h2><table id="wheels"><thead><tr>']
    parts.append("".join(f"<th>{html.escape(h)}</th>" for h in heads) + "</tr></thead><tbody>")
    for w in wheels:
        tds = [_td(w.target), _td(w.python), _td(w.built_with), _td(w.claim), _td(w.tag)]
        for s in series:
            mark = w.results.get(s)
            css = "none" if mark is None else ("fail" if mark.startswith("CLAIM WRONG") else "pass")
            tds.append(_td(mark or "-", css))
        tds.append(_td(w.note, "" if w.ok else "fail"))
        parts.append("<tr>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table>")
    return parts


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:3px 8px;border:1px solid #bbb;vertical-align:top;font-size:14px}
th{background:#eee}
.pass,.ok{background:#d8f5d0}.fail{background:#f8d0d0}.none{color:#999}.nogpu{background:#eee;color:#555}
code{font-size:12px}
"""


def _css(status: str | None) -> str:
    if status is None:
        return "none"
    if status == NO_GPU:  # neither a pass nor a failure: said as it is, in grey
        return "nogpu"
    return "pass" if status in (PASSED, UP_TO_DATE) else "fail"


def _td(text: str, css: str = "", raw: bool = False) -> str:
    klass = f' class="{css}"' if css else ""
    return f"<td{klass}>{text if raw else html.escape(text)}</td>"


def _links(row: ReportRow) -> str:
    links = [f'<a href="{html.escape(row.cell)}/manifest.json">manifest</a>']
    links += [f'<a href="{html.escape(log)}">{html.escape(Path(log).stem)}</a>' for log in row.logs]
    return " ".join(links)


def render_html(report: Report) -> str:
    rows = report.rows
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>ember compatibility report</title>',
        f"<style>{STYLE}</style></head><body><h1>ember compatibility report</h1>",
        f'<p id="summary">Generated <time>{html.escape(report.generated)}</time> by forge '
        f"{html.escape(report.forge)}, commit <code>{html.escape(report.commit or 'unknown')}</code>. "
        f"<strong>{sum(r.ok for r in rows)}/{len(rows)} cells passed.</strong></p>",
    ]
    if not rows:
        parts.append("<p>No results in dist/: run <code>invoke build</code> first.</p></body></html>\n")
        return "\n".join(parts)
    if report.changes:
        items = "".join(f"<li>{html.escape(c)}</li>" for c in report.changes)
        parts.append(f'<h2>Changed since the previous report</h2><ul id="changes">{items}</ul>')
    suites = suite_names(rows)
    head = "".join(
        f"<th>{html.escape(h)}</th>"
        for h in ["cell", "result", "backend", "image", "toolchain", "steps (s)", "size", "sha256", *suites, "links"]
    )
    body = []
    for r in rows:
        tools = "<br>".join(f"{html.escape(k)}: {html.escape(v)}" for k, v in r.toolchain.items()) or "?"
        steps = "<br>".join(f"{html.escape(k)} {v}" for k, v in r.steps.items())
        package = r.package or {}
        sha = f'<code title="{html.escape(str(package.get("sha256", "")))}">{html.escape(str(package.get("sha256", "-"))[:16])}</code>'
        cells = [
            _td(r.cell),
            _td(r.shown_result, _css(r.result)),
            _td(r.backend),
            _td(f"<code>{html.escape(r.image or '-')}</code>", raw=True),
            _td(tools, raw=True),
            _td(steps, raw=True),
            _td(human_size(r.size)),
            _td(sha, raw=True),
        ]
        for s in suites:
            suite = r.suites.get(s)
            label = _mark(suite.status if suite else None) + (
                f" {suite.seconds:.2f}s" if suite and suite.seconds else ""
            )
            cells.append(_td(label, _css(suite.status if suite else None)))
        cells.append(_td(_links(r), raw=True))
        body.append(f'<tr data-cell="{html.escape(r.cell)}">' + "".join(cells) + "</tr>")
    parts.append(f'<h2>Cells</h2><table id="cells"><thead><tr>{head}</tr></thead><tbody>')
    parts += body
    parts.append("</tbody></table>")
    targets, columns, cells_at = grid(rows)
    parts.append('<h2>Target x Python x NumPy</h2><table id="grid"><thead><tr><th>target</th>')
    parts.append("".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr></thead><tbody>")
    for target in targets:
        tds = []
        for column in columns:
            here = cells_at.get((target, column), [])
            text = "<br>".join(
                f"{html.escape(_grid_key(r)[2])}/{html.escape(r.axes.get('gcc') or 'zig')}: {html.escape(r.result)}"
                for r in here
            )
            css = "none" if not here else ("pass" if all(r.ok for r in here) else "fail")
            tds.append(_td(text or "-", css, raw=True))
        parts.append(f"<tr><th>{html.escape(target)}</th>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table>")
    parts += render_wheel_html(rows)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def read_previous(path: Path) -> dict[str, Any] | None:
    """The previous report.json, or None when there is none (or it is not one forge wrote)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == REPORT_SCHEMA else None


def build_report(dist: Path, commit: str | None, now: datetime.datetime | None = None) -> Report:
    rows = collect(dist)
    moment = (now or datetime.datetime.now(datetime.timezone.utc)).replace(microsecond=0)
    return Report(
        moment.isoformat(), __version__, commit, rows, changes_since(read_previous(dist / "report.json"), rows)
    )


def write_report(dist: Path, commit: str | None = None) -> tuple[Path, Path, Report]:
    """Write dist/report.md, report.html and report.json (each atomically); returns the paths and report."""
    report = build_report(dist, commit)
    dist.mkdir(parents=True, exist_ok=True)
    md, page, data = dist / "report.md", dist / "report.html", dist / "report.json"
    for path, text in (
        (md, render_markdown(report)),
        (page, render_html(report)),
        (data, json.dumps(report.as_dict(), indent=2, sort_keys=True) + "\n"),
    ):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return md, page, report
