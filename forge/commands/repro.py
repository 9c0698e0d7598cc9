"""`invoke repro`: build each cell twice with variations and compare every artifact."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from forge import cli as forge_cli
from forge import daemon, host, repro
from forge.build import resolve_for
from forge.config import Config, Data, backend_for
from forge.log import Progress
from forge.matrix import Request


def run_repro(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]
) -> None:
    """`invoke repro`: repro every requested cell, print per-file results and the summary table."""
    cfg, data = forge_cli.setup(cli)
    out = forge_cli.console()
    cfg = daemon.default_backend(cfg, cfg.environment(), lambda line: out.print(line, markup=False))
    progress = Progress(out, cfg.ci)
    results = []
    selection = forge_cli.Selection.from_cli(cli)
    matrix = selection.matrix(matrix)
    if matrix is None:
        items = forge_cli.scheduled(forge_cli.requests_from(target, matrix, pins, data, selection.cell), matrix)
    else:  # the cells `invoke build --matrix` builds with the same --only/--skip
        items = forge_cli.scheduled_pairs(forge_cli.select(target, matrix, pins, cfg, data, selection), matrix)
    if cli.get("reuse"):
        items = [item for item in items if not _reused(item, data, cfg, out.print)]
        if not items:
            out.print("repro: every cell's report in dist/ says it reproduces; nothing to rebuild", markup=False)
            return
    scopes = [(backend_for(cfg, i.target).backend, i.target) for i in items]
    host.ensure_tools("repro", env=cfg.environment(), log_path=cfg.cache / "host-tools.log", scopes=scopes)
    published_first = bool(cli.get("published_first"))  # invoke release: dist/ was just built or reused
    for item in items:
        result = repro.repro_cell(item, data, backend_for(cfg, item.target), progress, published_first)
        for comp in result.comparisons:
            style = "green" if comp.outcome is repro.Outcome.IDENTICAL else "red"
            out.print(f"  [{style}]{comp.outcome.value:>20}[/]  {comp.path}")
        results.append(result)
    out.print(repro.repro_table(results))
    repro.raise_for(results)


def _reused(request: Request, data: Data, cfg: Config, say: Callable[..., None]) -> bool:
    """True (and said) when dist/<cell-id>/ already holds a report that the cell reproduces."""
    cell_id = resolve_for(request, data, cfg).cell.id
    report = repro.reusable_report(cfg.dist / cell_id)
    if report is None:
        return False
    say(
        f"repro of {cell_id}: reused dist/{cell_id}/{repro.REPORT_JSON} ({report['identical']} identical)", markup=False
    )
    return True
