"""The real ember host cell (local backend) is bit-for-bit identical across repro's variations,
and its manifest and provenance hold what a rebuild needs: repro's second build is made from
the first build's manifest alone, the way `invoke rebuild` makes one.

Cost: two builds of ember; the first with the compiler cache, the second compiling everything.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from forge import provenance, repro
from forge.config import load_config, load_data
from forge.log import Progress
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def test_ember_host_cell_is_reproducible_and_rebuilds_from_its_manifest(tmp_path: Path) -> None:
    for needed in ("engine/CMakeLists.txt", "verify/CMakeLists.txt"):
        if not (REPO / needed).is_file():
            pytest.fail(f"{needed} is missing: the ember cell cannot be built")
    cfg = replace(load_config(REPO, os.environ, {"backend": "local"}), dist=tmp_path / "dist")
    log = io.StringIO()
    progress = Progress(Console(file=log, width=200), ci=True)

    result = repro.repro_cell(Request.make("host"), load_data(REPO), cfg, progress)

    report = (tmp_path / "dist" / result.name / repro.REPORT_TXT).read_text()
    assert not result.differing, report
    paths = {c.path for c in result.comparisons}
    for lib in ("ember_framework", "ember_cc", "ember_lite"):
        assert f"install/lib/lib{lib}.a" in paths and f"install/lib/lib{lib}.so.0.1.0" in paths
    assert "install/bin/ember-run" in paths and "install/lib/pkgconfig/ember_cc.pc" in paths
    assert f"{result.name}.tar.gz" in paths
    assert result.identical == len(result.comparisons) >= 30
    assert len(result.seconds) == 2 and all(s > 0 for s in result.seconds)
    print(f"\nrepro {result.name}: {result.identical}/{len(result.comparisons)} identical, builds {result.seconds}")

    manifest_path = tmp_path / "dist" / result.name / "manifest.json"
    data = json.loads(manifest_path.read_text())
    assert data["source_date_epoch"] == cfg.source_date_epoch > 0
    commit = data["source_commit"]  # HEAD when the sources were snapshotted (others may commit since)
    ancestor = subprocess.run(["git", "-C", str(REPO), "merge-base", "--is-ancestor", commit, "HEAD"], check=False)
    assert len(commit) == 40 and ancestor.returncode == 0
    names = [c["name"] for c in data["commands"]]
    assert names[:4] == ["prepare", "configure", "build", "install"]  # the local backend: no image step
    configure = next(c for c in data["commands"] if c["name"] == "configure")
    assert any(arg.startswith("-DCMAKE_CXX_FLAGS=-ffile-prefix-map=") for arg in configure["argv"])
    assert configure["env"]["SOURCE_DATE_EPOCH"] == str(cfg.source_date_epoch)

    statement = json.loads((manifest_path.parent / provenance.PROVENANCE).read_text())
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    files = {f"install/{p}": r["sha256"] for p, r in data["files"].items() if "sha256" in r}
    assert subjects == {**files, data["package"]["name"]: data["package"]["sha256"]}

    # the second build was rebuilt from the first one's manifest alone (build.rebuild_cell)
    second = json.loads(
        (cfg.cache / "repro" / "variant-b" / "deeper" / "dist" / result.name / "manifest.json").read_text()
    )
    assert second["files"] == data["files"] and second["package"] == data["package"]
    assert second["source_tree_hash"] == data["source_tree_hash"]
