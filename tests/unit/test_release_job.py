"""The release job's check of a published release (invoke test --release)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from forge import manifest, repro
from forge.commands import release_job
from forge.errors import ConfigError


def _release(root: Path, files: dict[str, bytes], statements: int) -> Path:
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "provenance.intoto.jsonl").write_text('{"_type": "x"}\n' * statements)
    names = sorted(p.name for p in root.iterdir())
    sums = "".join(f"{hashlib.sha256((root / n).read_bytes()).hexdigest()}  {n}\n" for n in names)
    (root / "SHA256SUMS").write_text(sums)
    return root


def test_a_sound_release_checks_out_and_each_fault_is_named(tmp_path: Path) -> None:
    files = {"a.tar.gz": b"a", "b.tar.gz": b"b", "RELEASE_NOTES.md": b"notes"}
    good = _release(tmp_path / "good", files, statements=2)
    assert release_job.check_release(good, cells=2) == []
    assert release_job.check_release(good, cells=3) == ["provenance.intoto.jsonl holds 2 statements for 3 cells"]
    (good / "a.tar.gz").write_bytes(b"tampered")
    (good / "stray.txt").write_text("x")
    (good / "b.tar.gz").unlink()
    assert release_job.check_release(good, cells=2) == [
        "a.tar.gz does not have the sha256 SHA256SUMS lists",
        "b.tar.gz is listed in SHA256SUMS but missing",
        "stray.txt is not listed in SHA256SUMS",
    ]
    assert release_job.check_release(tmp_path / "none", cells=1) == [f"{tmp_path / 'none' / 'SHA256SUMS'} is missing"]


def test_release_and_unit_are_refused_together() -> None:
    with pytest.raises(ConfigError) as err:
        release_job.run_release_job(None, None, unit=True)
    assert "--unit" in err.value.what


def test_the_cost_summary_reads_each_cells_records_reused_or_not(tmp_path: Path) -> None:
    """A resumed release job reuses what an interrupted one built: the summary still counts those
    cells' builds and repro builds, from their manifests and repro reports."""
    steps = [
        {"name": "build", "seconds": 100.4, "status": "ok"},
        {"name": "verify-run", "seconds": 20.0, "status": "ok"},
    ]
    for cell_id, report in (("built", {"build_seconds": [0.5, 300.2]}), ("no-repro", None)):
        cell = tmp_path / cell_id
        cell.mkdir()
        data = {"schema": manifest.SCHEMA, "forge": "0", "cell": {}, "result": "passed", "files": {}, "steps": steps}
        manifest.write_json(cell / manifest.MANIFEST, data)
        if report is not None:
            (cell / repro.REPORT_JSON).write_text(json.dumps(report))
    (tmp_path / "no-repro" / repro.REPORT_JSON).write_text("{")  # unreadable: no record, not a crash
    costs = release_job.cell_costs(tmp_path, ["built", "no-repro", "missing"])
    assert [(c.build_s, c.repro_s) for c in costs] == [(120.4, 300.2), (120.4, None), (None, None)]
    lines = release_job.cost_lines(costs)
    assert lines[0] == "  built: build 120 s, repro second build 300 s"
    assert lines[2] == "  missing: build no record, repro second build no record"
    assert (
        lines[-1]
        == "recorded cost of 3 cells: builds 241 s + repro second builds 300 s = 541 s (0.2 h); 2 cells lack a record"
    )
