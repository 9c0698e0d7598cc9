"""Host probing helpers and the missing-tool error (no tool is installed by these tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.errors import ToolMissingError
from forge.host import HostTool, ensure_host_tools, first_version, os_codename


def test_missing_tool_names_it_and_the_install_command(tmp_path: Path) -> None:
    tools = (HostTool("ninja", "ninja-build", lambda: False), HostTool("cmake", "cmake", lambda: True))
    with pytest.raises(ToolMissingError) as info:
        ensure_host_tools({}, tmp_path / "log", install=False, tools=tools)
    assert info.value.what == "missing host tools: ninja"
    assert info.value.fix == "sudo apt-get install -y --no-install-recommends ninja-build"
    assert info.value.exit_code == 4


def test_nothing_to_do_when_present(tmp_path: Path) -> None:
    assert ensure_host_tools({}, tmp_path / "log", tools=(HostTool("sh", "dash", lambda: True),)) == []


def test_version_and_codename_parsing(tmp_path: Path) -> None:
    assert first_version("cmake version 3.25.1\n\nCMake suite") == "3.25.1"
    assert first_version("ninja 1.11") == "1.11"
    assert first_version(None) is None
    release = tmp_path / "os-release"
    release.write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\n')
    assert os_codename(release) == "bookworm"
    assert os_codename(tmp_path / "missing") == "unknown"
