"""`invoke plan`: the resolved cell(s) and their ordered steps, running nothing."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import replace

from forge import cli as forge_cli


def run_plan(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], as_json: bool, cli: Mapping[str, object]
) -> None:
    cfg, data = forge_cli.setup(cli)
    fallback = cfg.backend is None
    if fallback:  # what `invoke build` tries first (forge.daemon.default_backend); planning starts nothing
        cfg = replace(cfg, backend="docker")
    entries = forge_cli.plan_entries(target, matrix, pins, cfg, data, forge_cli.Selection.from_cli(cli))
    if as_json:
        sys.stdout.write(json.dumps({"cells": entries}, indent=2) + "\n")
        return
    forge_cli.print_plan(entries, forge_cli.console())
    if fallback and any(e.get("cell", {}).get("target") == "host" for e in entries):
        forge_cli.console().print(
            "note: no --backend given; where no container engine can be started, `invoke build` builds the host target with the local backend (`invoke plan --backend local` shows that plan)"
        )
