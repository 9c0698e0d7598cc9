"""One docker cell built with its wheel steps, for the wheel tests (test_wheel_*_docker.py).

Each of those modules builds its own cell once (a module fixture calling `build_wheel_cell`) and
reads the result through `WheelCell`: the published dist/<cell>/, its manifest as JSON, and the
BuildResult with the suites that ran.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from rich.console import Console

from forge import cli, daemon, manifest
from forge.build import BuildResult, build_cell
from forge.config import Config
from forge.log import Progress
from forge.matrix import Request


class WheelCell(NamedTuple):
    dist: Path
    data: dict[str, Any]
    result: BuildResult


def build_wheel_cell(factory: pytest.TempPathFactory, target: str, python: str) -> WheelCell:
    """Build `target` for `python` with --wheels into a fresh dist/, on the docker backend."""
    daemon.ensure_daemon(os.environ)
    cfg, data = cli.setup({"backend": "docker"})
    dist = factory.mktemp("dist")
    cfg = Config(cfg.repo, dist, cfg.cache, "docker", 2, True, True, 1700000000, False, False, False, wheels=True)
    result = build_cell(Request.make(target, {"python": python}), data, cfg, Progress(Console(file=io.StringIO())))
    assert result.dist is not None, result
    return WheelCell(result.dist, json.loads((result.dist / manifest.MANIFEST).read_text()), result)
