"""The HTML report as a user sees it: rendered by a real headless browser (Debian's chromium).

The DOM chromium builds from dist/report.html must show what a release manager looks for: the
run's commit and pass count, one row per cell with its toolchain, links to the manifest and
logs, the failed cell marked as failed, and the target x Python x NumPy grid. The screenshot is
kept for CI under $FORGE_CI_ARTIFACTS (default .ci/artifacts/ in the checkout, ignored by git).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import needs
import pytest

from forge import report

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

PASSED_CELL = "linux-x86_64-py3.11-np2.4-gcc12-cpu"
FAILED_CELL = "linux-aarch64-py3.11-np2.4-gcc12-cpu"


def _chromium() -> str:
    return needs.program("chromium")


def _plant(dist: Path) -> None:
    sys.path.insert(0, str(REPO / "tests" / "unit"))  # the unit tests' manifest writer, one copy
    from test_report import write_manifest

    write_manifest(dist, PASSED_CELL, "passed", {"session": "passed", "lite": "passed"})
    write_manifest(dist, FAILED_CELL, "verify-failed", {"session": "failed", "lite": "passed"})


def _headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=120, check=False)


def test_report_in_a_real_browser(tmp_path: Path) -> None:
    browser = _chromium()
    dist = tmp_path / "dist"
    _plant(dist)
    _, page, _ = report.write_report(dist, commit="0123456789abcdef0123456789abcdef01234567")

    dom = _headless(browser, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    assert "1/2 cells passed." in text and "0123456789abcdef0123456789abcdef01234567" in text
    assert text.count("<tr data-cell=") == 2
    assert f'<a href="{FAILED_CELL}/logs/build.log">build</a>' in text
    assert f'<a href="{PASSED_CELL}/manifest.json">manifest</a>' in text
    assert '<td class="fail">verify-failed</td>' in text  # the failed cell reads as failed
    assert "cxx: g++ (Debian 12.2.0-14) 12.2.0" in text
    assert '<table id="grid">' in text and "py3.11 np2.4" in text

    artifacts = Path(os.environ.get("FORGE_CI_ARTIFACTS", REPO / ".ci" / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "report.png"
    taken = _headless(browser, f"--screenshot={shot}", "--window-size=1400,900", page.as_uri())
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
