"""`invoke build --matrix ... --jobs 2` against a real engine, on a tiny engine/ + verify/ repository.

Two linux-x86_64 cells (python 3.11 on bookworm, 3.13 on trixie) build in two containers at the
same time; the second run with --resume finds both up to date; each manifest holds only its own
steps; `invoke report` lists both; no container of the run is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tinyrepo

from forge import daemon

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELLS = ("linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.13-np2.4-gcc14-cpu")
STEPS = [
    "image",
    "prepare",
    "configure",
    "build",
    "install",
    "verify-configure",
    "verify-build",
    "verify-run",
    "record",
]


@pytest.fixture(scope="module")
def tiny_repo() -> Iterator[Path]:
    daemon.ensure_daemon(os.environ)  # fails loudly, saying how to start one, when no engine can be had
    top = tinyrepo.readable_dir("matrix-jobs-")
    repo = tinyrepo.make(top / "repo")
    (repo / "matrix" / "two.yaml").write_text("axes:\n  target: [linux-x86_64]\n  python: ['3.11', '3.13']\n")
    tinyrepo.git(repo, "init", "-q")
    tinyrepo.git(repo, "add", ".")
    tinyrepo.git(repo, "commit", "-q", "-m", "tiny")
    yield repo
    shutil.rmtree(top, ignore_errors=True)


def _invoke(repo: Path, *args: str) -> tuple[str, int]:
    env = {**os.environ, "FORGE_ROOT": str(repo), "CI": "1"}
    env.pop("FORGE_JOBS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "invoke", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = proc.communicate(timeout=1800)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text
    return text, proc.pid


def test_two_cells_build_at_once_then_resume(tiny_repo: Path) -> None:
    matrix = str(tiny_repo / "matrix" / "two.yaml")
    text, pid = _invoke(tiny_repo, "build", "--matrix", matrix, "--jobs", "2")
    assert "building 2 cells, 2 at a time" in text
    # Both cells are in flight at once: the second starts its first step (image) before the first
    # records. Its image step counts: on a machine without the trixie image, the second cell builds
    # its image while the first cell builds ember, and reaches prepare only after that.
    first, second = sorted(CELLS, key=lambda c: text.index(f"→ {c} image"))
    assert text.index(f"→ {second} image") < text.index(f"✓ {first} record"), "the cells did not overlap"
    for cell in CELLS:
        data = json.loads((tiny_repo / "dist" / cell / "manifest.json").read_text())
        assert data["result"] == "passed" and data["cell"]["id"] == cell
        assert [s["name"] for s in data["steps"]] == STEPS  # its own steps, each once
    leftover = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=org.forge.session={pid}"], capture_output=True, text=True
    )
    assert leftover.returncode == 0 and leftover.stdout.strip() == ""

    text, _ = _invoke(tiny_repo, "build", "--matrix", matrix, "--jobs", "2", "--resume")
    for cell in CELLS:
        assert f"{cell}: up to date" in text
        assert f"→ {cell} configure" not in text  # prepared (to probe the toolchain), nothing built again

    text, _ = _invoke(tiny_repo, "report")
    for cell in CELLS:
        row = next(line for line in text.splitlines() if line.startswith(f"| {cell} | passed | docker | "))
        assert row.endswith(" | pass |"), row  # the one verify suite of the tiny repository passed
