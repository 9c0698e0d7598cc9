"""`invoke compare` (two builds) and `invoke upgrade` (a cell as it is and with a new toolchain, compared)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from rich.table import Table

from forge import cli as forge_cli
from forge import compare, host
from forge.build import resolve_for
from forge.commands.build import build_all, summary_row
from forge.config import Config, backend_for
from forge.errors import ConfigError, RegressionFoundError, StepFailedError
from forge.log import Progress, summary_table
from forge.matrix import Request


def _side_path(text: str, cfg: Config) -> Path:
    """A dist/<cell-id> directory given as a path, or a cell id looked up in dist/."""
    path = Path(text)
    return path if path.is_dir() or "/" in text else cfg.dist / text


def run_compare(base: str, candidate: str, options: Mapping[str, object]) -> None:
    """Compare two built cells; the findings first, then where the reports are; exit 12 on a regression."""

    cfg, _ = forge_cli.setup({"debug": options.get("debug")})
    host.ensure_tools("compare", env=cfg.environment(), log_path=cfg.cache / "host-tools.log")
    rounds = int(str(options.get("rounds") or 3))
    threshold = float(str(options.get("threshold") or 0.10))
    if rounds < 1 or not 0 <= threshold < 10:
        raise ConfigError(
            f"--rounds {rounds} / --threshold {threshold}",
            "rounds must be >= 1 and the threshold a fraction (0.1 = 10%)",
            "e.g. --rounds 3 --threshold 0.1",
        )
    result = compare.compare(
        _side_path(base, cfg),
        _side_path(candidate, cfg),
        cfg.repo / "engine" / "testdata" / "graphs",
        abidiff=shutil.which("abidiff"),
        run_programs=not options.get("no_run"),
        rounds=rounds,
        threshold=threshold,
    )
    out = forge_cli.console()
    table = Table(title=f"{result.base.name} -> {result.candidate.name}")
    for column in ("severity", "section", "finding"):
        table.add_column(column)
    colors = {compare.Severity.REGRESSION: "red", compare.Severity.NOT_RUN: "yellow"}
    for finding in compare.ordered(result.findings):
        color = colors.get(finding.severity, "white")
        table.add_row(f"[{color}]{finding.severity.value}[/]", finding.section, finding.message)
    out.print(table)
    written = compare.write_reports(result, Path(str(options["out"])) if options.get("out") else cfg.dist / "compare")
    out.print("reports: " + ", ".join(str(p) for p in written), markup=False)
    if result.regressions:
        raise RegressionFoundError(
            f"{len(result.regressions)} regressions from {result.base.name} to {result.candidate.name}",
            "\n".join(f"{f.section}: {f.message}" for f in result.regressions[:10]),
            f"read {written[0]}",
        )


UPGRADE_AXES = ("gcc", "python", "numpy", "cmake", "suite")


def upgrade_requests(
    target: str, pins: Mapping[str, str | None], to: Mapping[str, str | None]
) -> tuple[Request, Request]:
    """The baseline request (the pins as given) and the candidate (the same pins with each --to-AXIS applied)."""
    changed = {axis: value for axis, value in to.items() if value is not None}
    if not changed:
        raise ConfigError(
            "invoke upgrade needs what to upgrade to",
            "the candidate is the baseline with one or more axes changed",
            "e.g. invoke upgrade --target linux-x86_64 --gcc 12 --to-gcc 14",
        )
    unknown_axes = sorted(set(changed) - set(UPGRADE_AXES))
    if unknown_axes:
        raise ConfigError(f"cannot upgrade {', '.join(unknown_axes)}", f"upgradable axes: {', '.join(UPGRADE_AXES)}")
    base = Request.make(target, pins, origin="invoke upgrade (baseline)")
    cand = Request.make(target, {**pins, **changed}, origin="invoke upgrade (candidate)")
    return base, cand


def run_upgrade(
    target: str | None, pins: Mapping[str, str | None], to: Mapping[str, str | None], cli: Mapping[str, object]
) -> None:
    """Build the baseline and the candidate cell (or find them up to date), then compare them."""
    base, cand = upgrade_requests(target or "host", pins, to)
    cfg, data = forge_cli.setup({k: v for k, v in cli.items() if k in ("backend", "debug", "force")})
    out = forge_cli.console()
    if cfg.backend is None:
        from forge import daemon

        cfg = daemon.default_backend(cfg, cfg.environment(), lambda line: out.print(line, markup=False))
    ids = [resolve_for(r, data, backend_for(cfg, r.target)).cell.id for r in (base, cand)]
    if ids[0] == ids[1]:
        raise ConfigError(
            f"the baseline and the candidate are the same cell ({ids[0]})",
            "nothing would change",
            "pin a different --to-* value",
        )
    out.print(f"upgrade: {ids[0]} -> {ids[1]}", markup=False)
    results = build_all(
        [base, cand], data, cfg, Progress(out, cfg.ci), lambda exc: out.print(exc.render(), markup=False)
    )
    out.print(summary_table([summary_row(r) for r in results]))
    failed = [r for r in results if r.dist is None]
    if failed:
        raise StepFailedError(
            f"cannot compare: {', '.join(r.cell_id for r in failed)} did not build", "", "see the errors above"
        )
    run_compare(str(results[0].dist), str(results[1].dist), cli)
