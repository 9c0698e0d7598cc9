"""The unit-test guard (tests/unit/conftest.py) stops apt-get before it reaches the mirrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge import host, proc


def test_apt_get_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="unit tests must not run apt-get"):
        proc.run_logged(["/usr/bin/apt-get", "update"], cwd=tmp_path, env=None, log_path=tmp_path / "log")
    assert not (tmp_path / "log").exists()  # refused before anything ran


def test_installing_a_missing_host_tool_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host.os, "geteuid", lambda: 0)  # as root, where forge would install
    monkeypatch.setattr(host.shutil, "which", lambda name: f"/usr/bin/{name}")
    faketime = host.tool("faketime")
    with pytest.raises(AssertionError, match="apt-get"):
        host.ensure((faketime,), env={}, why="a unit test", log_path=tmp_path / "log", present=lambda tool: False)
