"""`invoke upgrade --target linux-x86_64 --gcc 12 --to-gcc 14`: the bookworm gcc 12 and trixie gcc 14
cells of ember, built in their toolchain images and compared (real dockerd).

What a gcc 14 / trixie build changes, as measured (2026-11-30): libember_framework requires
GLIBC_2.38 instead of GLIBC_2.34 (trixie's headers route strtol & co. to __isoc23_* symbols), a
regression for users on older systems; abidiff, reading both cells' .debug files, reports
template instantiations gcc 14 no longer emits. On a bookworm host (glibc 2.36) the gcc 14
build's programs cannot run, so numeric drift and benchmarks are "not run" with that reason.

Cost: two docker cell builds, each a Release build plus the -g build for the .debug files. With
the shared compiler cache warm (any earlier build of the same sources in these images) about
5 minutes in all; cold, about 15 minutes per cell on 2 busy cores. The compare itself: ~100 s.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_local_build import snapshot

from forge import daemon

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.release_job(cost="gcc 12 vs 14 upgrade, 6 min warm and about 30 min cold"),
]
BASE, CAND = "linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.13-np2.4-gcc14-cpu"


def test_gcc12_to_gcc14_upgrade_reports_the_raised_glibc_through_debug_files(tmp_path: Path) -> None:
    daemon.ensure_daemon(os.environ)
    root = snapshot(tmp_path / "repo")
    env = {**os.environ, "FORGE_ROOT": str(root), "SOURCE_DATE_EPOCH": "1700000000", "PYTHONPATH": str(REPO)}
    env["FORGE_DEBUG_INFO"] = "1"  # tests/conftest.py leaves the -g build out; this test reads its .debug files
    argv = [sys.executable, "-m", "invoke", "upgrade", "--target", "linux-x86_64", "--gcc", "12", "--to-gcc", "14"]
    start = time.monotonic()
    done = subprocess.run([*argv, "--rounds", "1"], cwd=REPO, env=env, capture_output=True, text=True, timeout=5400)
    print(f"\ninvoke upgrade gcc 12 -> 14: exit {done.returncode} in {time.monotonic() - start:.0f} s")
    assert done.returncode in (0, 12), done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr

    for cell in (BASE, CAND):
        manifest = json.loads((root / "dist" / cell / "manifest.json").read_text())
        debug = manifest["debug"]
        assert debug["missing"] == {}, debug["missing"]  # every ELF file's -g twin held the same code
        assert any(name.startswith("lib/libember_framework.so") for name in debug["files"])

    report = json.loads((root / "dist" / "compare" / f"{BASE}--{CAND}.json").read_text())
    findings = [(f["severity"], f["section"], f["message"]) for f in report["findings"]]
    assert not [f for f in findings if "no .debug files" in f[2]], findings  # abidiff saw the types
    raised = [f for f in findings if f[1] == "requirements" and "now requires GLIBC_" in f[2]]
    assert raised and raised[0][0] == "regression", findings
    assert (done.returncode == 12) == bool(report["regressions"])
    if platform.libc_ver()[1] and tuple(map(int, platform.libc_ver()[1].split("."))) < (2, 38):
        numerics = [f for f in findings if f[1] == "numerics"]
        assert numerics and all(s == "not run" and "requires GLIBC_" in m for s, _, m in numerics), numerics
