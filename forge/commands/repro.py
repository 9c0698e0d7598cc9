"""`invoke repro`: build each cell twice with variations and compare every artifact."""

from __future__ import annotations

from collections.abc import Mapping

from forge import cli as forge_cli
from forge import daemon, host, repro
from forge.config import backend_for
from forge.log import Progress


def run_repro(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]
) -> None:
    """`invoke repro`: repro every requested cell, print per-file results and the summary table."""
    cfg, data = forge_cli.setup(cli)
    out = forge_cli.console()
    cfg = daemon.default_backend(cfg, cfg.environment(), lambda line: out.print(line, markup=False))
    progress = Progress(out, cfg.ci)
    results = []
    items = forge_cli.scheduled(forge_cli.requests_from(target, matrix, pins, data), matrix)
    scopes = [(backend_for(cfg, i.target).backend, i.target) for i in items]
    host.ensure_tools("repro", env=cfg.environment(), log_path=cfg.cache / "host-tools.log", scopes=scopes)
    for item in items:
        result = repro.repro_cell(item, data, backend_for(cfg, item.target), progress)
        for comp in result.comparisons:
            style = "green" if comp.outcome is repro.Outcome.IDENTICAL else "red"
            out.print(f"  [{style}]{comp.outcome.value:>20}[/]  {comp.path}")
        results.append(result)
    out.print(repro.repro_table(results))
    repro.raise_for(results)
