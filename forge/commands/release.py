"""`invoke release` (dist/release/<version>/ from a matrix's cells) and `invoke ci --github` (the matrix as CI jobs)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from forge import __version__, ci_export, host, provenance, release
from forge import cli as forge_cli
from forge.commands.build import run_build
from forge.commands.repro import run_repro
from forge.errors import ConfigError


def run_ci(github: bool, matrix: str | None, out_path: str | None, cli: Mapping[str, object]) -> None:
    """Write a CI workflow for a matrix: one job per scheduled cell, then one that assembles the release."""

    if not github:
        raise ConfigError("invoke ci needs a CI system", "GitHub Actions is the one forge writes", "invoke ci --github")
    cfg, data = forge_cli.setup({"debug": cli.get("debug")})
    matrix = matrix or str(forge_cli.REPO / "matrix" / "release.yaml")
    entries = forge_cli.plan_entries(
        None, matrix, {}, replace(cfg, backend="docker"), data, forge_cli.Selection.from_cli(cli)
    )
    shown = os.path.relpath(matrix, cfg.repo) if Path(matrix).is_absolute() else matrix
    text = ci_export.render(ci_export.workflow(entries, shown), shown)
    path = Path(out_path) if out_path else cfg.repo / ".github" / "workflows" / "forge-matrix.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    scheduled = sum(e["status"] == "scheduled" for e in entries)
    forge_cli.console().print(
        f"wrote {path}: {scheduled} cell jobs and a release job ({len(entries) - scheduled} cells skipped, see `invoke plan --matrix {shown}`)",
        markup=False,
    )


def run_release(matrix: str | None, from_artifacts: str | None, version: str | None, cli: Mapping[str, object]) -> None:
    """Build (or reuse), verify and repro-check a matrix's cells, or take built cells from a directory of
    artifacts, then assemble dist/release/<version>/ from them: all cells or nothing."""

    cfg, data = forge_cli.setup({"debug": cli.get("debug")})
    commit = provenance.git_commit(cfg.repo)
    version = version or f"{__version__}+g{(commit or 'unknown')[:12]}"
    if from_artifacts is not None:
        if matrix is not None:
            raise ConfigError(
                "--from-artifacts cannot be combined with --matrix", "it assembles cells built elsewhere", "use one"
            )
        cells = release.cells_in(Path(from_artifacts))
    else:
        matrix = matrix or str(forge_cli.REPO / "matrix" / "release.yaml")
        # every cell that can build a wheel builds it (a refused one says why and ships its archive);
        # repro gets the same flag: its first build is what dist/<cell-id>/ holds afterwards, wheel included
        wheels = {} if cli.get("no_wheels") else {"wheels": True}
        picked = ("backend", "jobs", "debug", "only", "skip")
        run_build(None, matrix, {}, {**{k: cli.get(k) for k in picked}, **wheels})
        if not cli.get("no_repro"):
            # the cells just built or reused, each repro-checked once: a report in dist/<cell>/ that
            # says it reproduces is taken (a rebuild of the cell replaces the directory and its report);
            # the others are built once more, under variation b, and compared with what dist/ holds
            repro_cli = {k: cli.get(k) for k in ("backend", "debug", "only", "skip")}
            run_repro(None, matrix, {}, {**repro_cli, "reuse": True, "published_first": True, **wheels})
        plan_cfg = replace(cfg, backend=str(cli.get("backend") or "docker"))
        entries = forge_cli.plan_entries(None, matrix, {}, plan_cfg, data, forge_cli.Selection.from_cli(cli))
        cells = [cfg.dist / e["id"] for e in entries if e["status"] == "scheduled"]
    key = cfg.signing_key
    if key:
        host.ensure_tools("release", env=cfg.environment(), log_path=cfg.cache / "host-tools.log")
    path = release.assemble(cells, cfg.dist / "release", version, commit, cfg.source_date_epoch, key)
    forge_cli.console().print(
        f"release {version}: {path} ({len(cells)} cells{', SHA256SUMS signed' if key else ''})", markup=False
    )
