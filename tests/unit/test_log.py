"""Progress output: CI fold groups with the step's log, timings, and the summary table."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from forge.log import Progress, SummaryRow, human_size, in_ci, summary_table


def test_ci_folds_each_step_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("[1/2] compiling a.cc\n[2/2] linking\n")
    out = io.StringIO()
    progress = Progress(Console(file=out, width=200), ci=True)
    with progress.step("build", "build engine/", log):
        pass
    with pytest.raises(RuntimeError), progress.step("install", "install", None):
        raise RuntimeError("boom")
    text = out.getvalue()
    assert text.index("::group::build: build engine/") < text.index("[2/2] linking") < text.index("::endgroup::")
    assert [(t.name, t.status) for t in progress.timings] == [("build", "ok"), ("install", "failed")]


def test_ci_detection_and_sizes() -> None:
    assert in_ci({"CI": "true"}) and not in_ci({}) and not in_ci({"CI": "false"})
    assert human_size(512) == "512 B" and human_size(6.3 * 1024 * 1024) == "6.3 MiB"


def test_summary_table_has_every_column() -> None:
    out = io.StringIO()
    rows = [SummaryRow("host-py3.11-np2.4-gcc12-cpu", "passed", 12.5, 6 * 1024 * 1024, 42, "2/2 passed")]
    Console(file=out, width=200).print(summary_table(rows))
    text = out.getvalue()
    for expected in ("cell", "result", "time", "artifacts", "verify", "12.5s", "6.0 MiB in 42 files", "2/2 passed"):
        assert expected in text
