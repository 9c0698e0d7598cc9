"""Host programs an integration test needs, installed through forge's host-tool table (forge/host.py).

A program forge cannot install here (no root, no apt-get) skips the test loudly with the command
that would install it; it is never silently passed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from forge import host
from forge.errors import ToolMissingError


def program(name: str) -> str:
    """The path of `name` (an entry of forge.host.TOOLS), installing it first when it is missing."""
    entry = host.tool(name)
    log = Path(tempfile.gettempdir()) / "forge-test-host-tools.log"
    try:
        host.ensure((entry,), env=os.environ, why="an integration test needs it", log_path=log)
    except ToolMissingError as exc:
        pytest.skip(f"{name} is missing and cannot be installed here: {exc.fix or entry.source()}")
    found = shutil.which(entry.executables[0] if entry.executables else name)
    if found is None:
        pytest.skip(f"{name} is still missing after installing {entry.source()} (see {log})")
    return found
