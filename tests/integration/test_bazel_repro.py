"""`invoke repro` on a Bazel cell: the host cell built with the machine's Bazel (local backend)
twice, the second from the first's manifest alone under repro's variations (another directory,
so another output base and execroot, umask 077, another zone, locale and user; not the clock,
which libfaketime cannot shift for Bazel's actions, as the report says), gives bit-identical
artifacts: the installed tree (shared libraries, static archives, tools, the generated CMake and pkg-config files) and the package.

Cost: two cold Bazel builds of ember (each build directory holds its own output base and
nothing is shared between them) plus the engine tests and verify/ once (the second build makes
only what is compared): about 15 minutes on 2 cores. Run by the release job (FORGE_RELEASE_TESTS=1).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from forge import bazel_sync, repro
from forge.config import load_config, load_data
from forge.log import Progress
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration, pytest.mark.release_job(cost="two cold Bazel builds of ember, about 20 min")]
BAZEL = "4.2.3"  # the host's bazel-bootstrap (bookworm and trixie)


def test_a_bazel_cell_is_bit_identical_across_repro_variations(tmp_path: Path) -> None:
    if shutil.which("bazel") is None:
        pytest.fail(f"no bazel on this machine: apt-get install bazel-bootstrap (Bazel {BAZEL})")
    cfg = replace(load_config(REPO, os.environ, {"backend": "local"}), dist=tmp_path / "dist")
    log = io.StringIO()
    progress = Progress(Console(file=log, width=200), ci=True)

    result = repro.repro_cell(Request.make("host", {"bazel": BAZEL}), load_data(REPO), cfg, progress)

    assert f"-bz{BAZEL}-" in result.name, result.name
    report = (tmp_path / "dist" / result.name / repro.REPORT_TXT).read_text()
    assert not result.differing, report
    paths = {c.path for c in result.comparisons}
    for lib in bazel_sync.LIBRARIES:
        assert f"install/lib/{lib}.0.1.0" in paths, sorted(paths)
    for archive in bazel_sync.ARCHIVES:
        assert f"install/lib/{archive}" in paths, sorted(paths)
    for rel in ("bin/ember-run", "lib/cmake/ember/emberTargets.cmake", "lib/pkgconfig/ember_cc.pc"):
        assert f"install/{rel}" in paths, rel
    assert f"{result.name}.tar.gz" in paths
    assert result.identical == len(result.comparisons) >= 40
    assert "clock shifted" not in report and "Bazel runs its actions" in report
    print(f"\nrepro {result.name}: {result.identical}/{len(result.comparisons)} identical, builds {result.seconds}")

    # the second build ran from the first one's manifest, with the same Bazel steps
    first = json.loads((tmp_path / "dist" / result.name / "manifest.json").read_text())
    second_dir = cfg.cache / "repro" / "variant-b" / "deeper" / "dist" / result.name
    second = json.loads((second_dir / "manifest.json").read_text())
    names = [c["name"] for c in second["commands"]]
    assert names == ["prepare", "bazel-build", "install", "record"], names  # what is compared, no checks
    assert [c["name"] for c in first["commands"]][:4] == ["prepare", "bazel-build", "install", "bazel-test"]
    assert second["files"] == first["files"] and second["package"] == first["package"]
    assert second["bazel"]["version"].startswith(BAZEL) and first["bazel"]["version"] == second["bazel"]["version"]
