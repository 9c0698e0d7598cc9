"""Report rendering (Markdown + HTML, cells x suites); ctest parsing is in test_verify.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from forge import manifest, report


def write_manifest(dist: Path, cell_id: str, result: str, suites: dict[str, str], sha: str = "ab" * 32) -> None:
    target, py, np_, gcc = cell_id.split("-py")[0], "3.11", "2.4", "12"
    (dist / cell_id / "logs").mkdir(parents=True)
    (dist / cell_id / "logs" / "build.log").write_text("ninja: build stopped\n")
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "result": result,
        "backend": "docker",
        "cell": {"id": cell_id, "target": target, "python": py, "numpy": np_, "gcc": gcc, "cuda": None},
        "image": {"tag": "forge/bookworm-gcc12:abc123"},
        "container_versions": {"cxx": "g++ (Debian 12.2.0-14) 12.2.0", "cmake": "cmake version 3.25.1"},
        "steps": [{"name": "build", "seconds": 41.5, "status": "ok"}, {"name": "verify", "seconds": 3.3}],
        "files": {"lib/libember_cc.so": {"sha256": "00", "size": 2048}},
        "package": {"name": f"{cell_id}.tar.gz", "sha256": sha, "size": 999},
        "source_commit": "f" * 40,
        "verify": {"suites": [{"name": n, "status": s, "seconds": 0.5} for n, s in suites.items()]},
    }
    manifest.write_json(dist / cell_id / manifest.MANIFEST, data)


X86 = "linux-x86_64-py3.11-np2.4-gcc12-cpu"
ARM = "linux-aarch64-py3.11-np2.4-gcc12-cpu"


def test_report_tables(tmp_path: Path) -> None:
    write_manifest(tmp_path, X86, "passed", {"session": "passed", "lite": "passed"})
    write_manifest(tmp_path, ARM, "verify-failed", {"session": "failed"})
    (tmp_path / ".tmp-x-1").mkdir()  # an in-progress build is not a result
    md_path, html_path, result = report.write_report(tmp_path, commit="c" * 40)
    assert [r.cell for r in result.rows] == [ARM, X86]
    md = md_path.read_text()
    assert "1/2 cells passed" in md and f"commit {'c' * 40}" in md
    assert f"- **{ARM}**: verify-failed (logs: {ARM}/logs/build.log)" in md  # failures first, with their logs
    assert "cxx: g++ (Debian 12.2.0-14) 12.2.0; cmake: cmake version 3.25.1" in md
    assert "| 44.8 | 2.0 KiB | abababababab | pass | pass |" in md
    assert "| linux-aarch64 | cpu/12: verify-failed |" in md  # the target x python/numpy grid
    page = html_path.read_text()
    assert page.count("<tr data-cell=") == 2 and '<td class="fail">failed 0.50s</td>' in page
    assert f'<a href="{ARM}/manifest.json">manifest</a>' in page and f'<a href="{ARM}/logs/build.log">' in page
    assert '<td class="none">-</td>' in page  # aarch64 has no lite suite
    data = json.loads(html_path.with_suffix(".json").read_text())
    assert data["commit"] == "c" * 40 and [c["cell"] for c in data["cells"]] == [ARM, X86]


def test_changes_since_previous_report(tmp_path: Path) -> None:
    write_manifest(tmp_path, X86, "passed", {"session": "passed"})
    report.write_report(tmp_path)
    assert report.build_report(tmp_path, None).changes == []
    shutil.rmtree(tmp_path / X86)
    write_manifest(tmp_path, X86, "verify-failed", {"session": "failed"}, sha="cd" * 32)
    write_manifest(tmp_path, ARM, "passed", {"session": "passed"})
    changes = report.build_report(tmp_path, None).changes
    assert changes == [
        f"new: {ARM} (passed)",
        f"result: {X86} passed -> verify-failed",
        f"artifact: {X86} abababababab -> cdcdcdcdcdcd",
    ]


def test_report_escapes_manifest_text(tmp_path: Path) -> None:
    write_manifest(tmp_path, X86, "passed", {"<script>": "passed"})
    page = report.render_html(report.build_report(tmp_path, None))
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_empty_report(tmp_path: Path) -> None:
    assert "No results in dist/" in report.render_markdown(report.build_report(tmp_path / "missing", None))


def test_a_failed_build_is_a_row_linked_to_its_logs(tmp_path: Path) -> None:
    write_manifest(tmp_path, X86, "passed", {"session": "passed"})
    failed = tmp_path / "failed" / ARM
    (failed / "logs").mkdir(parents=True)
    (failed / "logs" / "build.log").write_text("error: boom\n")
    data = {"schema": manifest.SCHEMA, "forge": "0", "result": "failed", "cell": {"id": ARM, "target": "linux-aarch64"}}
    manifest.write_json(failed / manifest.MANIFEST, {**data, "error": {"what": "command exited with 1: ninja"}})
    rows = {r.cell: r for r in report.collect(tmp_path)}
    assert rows[ARM].result == "failed: command exited with 1: ninja" and not rows[ARM].ok
    assert rows[ARM].logs == [f"failed/{ARM}/logs/build.log"]
    page = report.render_html(report.build_report(tmp_path, None))
    assert f'<a href="failed/{ARM}/logs/build.log">build</a>' in page


def test_python_numpy_grid_of_wheels(tmp_path: Path) -> None:
    write_manifest(tmp_path, X86, "passed", {"python-wheel": "passed", "numpy-grid": "passed"})
    write_manifest(tmp_path, ARM, "passed", {"session": "passed"})
    old = "linux-x86_64-py3.11-np1.26-gcc12-cpu"
    write_manifest(tmp_path, old, "passed", {"numpy-grid": "failed"})
    rows = {
        X86: [("1.26", "1.26.4", "works as claimed", False), ("2.4", "2.4.6", "works as claimed", True)],
        old: [("1.26", "1.26.4", "works as claimed", True), ("2.4", "2.4.6", "claim wrong", False)],
    }
    for cell_id, grid in rows.items():
        data = json.loads((tmp_path / cell_id / manifest.MANIFEST).read_text())
        data["cell"]["numpy"] = cell_id.split("-np")[1].split("-")[0]
        data["wheel"] = {
            "status": "built",
            "file": "ember-0.1.0-cp311-cp311-manylinux_2_35_x86_64.whl",
            "manylinux": ["manylinux_2_35_x86_64"],
            "numpy_requires": "numpy<3,>=1.22",
            "verify": {"status": "passed", "numpy": "2.4.6"},
            "grid": {
                "rows": [
                    {"series": s, "numpy": v, "verdict": verdict, "built_with": built} for s, v, verdict, built in grid
                ]
            },
        }
        manifest.write_json(tmp_path / cell_id / manifest.MANIFEST, data)
    arm = json.loads((tmp_path / ARM / manifest.MANIFEST).read_text())
    arm["wheel"] = {"status": "not built", "reason": "no aarch64 wheel yet"}
    manifest.write_json(tmp_path / ARM / manifest.MANIFEST, arm)
    md_path, html_path, _ = report.write_report(tmp_path)
    md = md_path.read_text()
    assert "## Python wheels: Python x NumPy" in md
    assert "| numpy 1.26 | numpy 2.4 |" in md
    assert (
        "| linux-x86_64 | 3.11 | 2.4 | numpy<3,>=1.22 | manylinux_2_35_x86_64 | works (1.26.4) | "
        "works (2.4.6) [built with] |" in md
    )
    assert "| CLAIM WRONG (2.4.6) |" in md  # a claim the grid disproved shows as such
    assert "| linux-aarch64 | 3.11 | 2.4 | - | - | - | - | no aarch64 wheel yet |" in md
    page = html_path.read_text()
    assert '<table id="wheels">' in page and '<td class="fail">CLAIM WRONG (2.4.6)</td>' in page
