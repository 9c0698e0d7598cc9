"""`invoke test --release`: the scheduled job that keeps the release matrix green (outside `.ci/run`).

It runs what a release engineer runs, in order, timing each stage:

1. `invoke release --matrix matrix/release.yaml [--jobs N]`: every scheduled cell built (or reused
   when up to date) and verified in its container, repro-checked, then `dist/release/<version>/`
   assembled, all cells or nothing;
2. `invoke report`;
3. a check of the published release: every file SHA256SUMS lists has that sha256, nothing else
   lies there, and the provenance bundle holds one statement per scheduled cell.

It ends with each stage's wall time and the machine's load (a release on a shared machine is slow
for reasons of its own), then each cell's recorded cost (its build from the manifest, its repro's
second build from the report) and their sum: a run that resumes an interrupted one reuses the cells
that run finished, and the sum still covers the whole matrix. On 2 cores the whole matrix with repro takes hours: run it nightly on a
bigger runner, or spread it with FORGE_DOCKER_HOSTS.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge import __version__, manifest, provenance, repro
from forge import cli as forge_cli
from forge.commands import release as release_cmd
from forge.commands import report as report_cmd
from forge.config import process_environment
from forge.errors import ConfigError, ReleaseError
from forge.proc import run_command

SUMS = "SHA256SUMS"
BUNDLE = "provenance.intoto.jsonl"


def check_release(path: Path, cells: int) -> list[str]:
    """What is wrong with a published release directory (nothing: an empty list)."""
    sums = path / SUMS
    if not sums.is_file():
        return [f"{sums} is missing"]
    problems: list[str] = []
    listed: set[str] = set()
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        listed.add(name)
        if not (path / name).is_file():
            problems.append(f"{name} is listed in {SUMS} but missing")
        elif manifest.sha256_file(path / name) != digest:
            problems.append(f"{name} does not have the sha256 {SUMS} lists")
    extra = sorted(p.name for p in path.iterdir() if p.name not in listed and p.name not in (SUMS, f"{SUMS}.asc"))
    problems += [f"{name} is not listed in {SUMS}" for name in extra]
    bundle = path / BUNDLE
    statements = [json.loads(line) for line in bundle.read_text().splitlines()] if bundle.is_file() else []
    if len(statements) != cells:
        problems.append(f"{BUNDLE} holds {len(statements)} statements for {cells} cells")
    return problems


def run_release_job(
    matrix: str | None, jobs: int | None, unit: bool = False, say: Callable[[str], None] = print
) -> None:

    if unit:
        raise ConfigError(
            "--release cannot be combined with --unit", "the release job builds the whole matrix", "pick one"
        )
    cfg, data = forge_cli.setup({})
    matrix = matrix or str(cfg.repo / "matrix" / "release.yaml")
    commit = provenance.git_commit(cfg.repo)
    version = f"{__version__}+g{(commit or 'unknown')[:12]}"
    entries = forge_cli.plan_entries(None, matrix, {}, cfg, data, forge_cli.Selection.from_cli({}))
    scheduled = sum(e["status"] == "scheduled" for e in entries)
    stages: list[tuple[str, float]] = []
    start = time.monotonic()
    say(f"release job: {matrix}, {scheduled} scheduled cells, version {version}; load {_load()}")

    def stage(name: str, action: Callable[[], object]) -> None:
        began = time.monotonic()
        try:
            action()
        finally:
            stages.append((name, time.monotonic() - began))
            say(f"release job: {name} took {stages[-1][1]:.0f} s; load {_load()}")

    try:
        stage(
            "release (build, verify, repro, assemble)",
            lambda: release_cmd.run_release(matrix, None, version, {"jobs": jobs}),
        )
        stage("report", lambda: report_cmd.run_report({}))
        stage("long tests (pytest -m release_job)", lambda: long_tests(cfg.repo))
        problems = check_release(cfg.dist / "release" / version, scheduled)
        if problems:
            raise ReleaseError(
                f"the published release {version} does not check out",
                "\n".join(problems),
                f"rebuild it: invoke release --matrix {matrix}",
            )
    finally:
        rows = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in stages)
        say(f"release job: {rows}; wall {time.monotonic() - start:.0f} s; load {_load()}")
        # the cells' own records: what the whole matrix cost, also the part earlier runs built
        for line in cost_lines(cell_costs(cfg.dist, [str(e["id"]) for e in entries if e["status"] == "scheduled"])):
            say(f"release job: {line}")
    say(f"release job: {scheduled} cells released and checked in {cfg.dist / 'release' / version}")


@dataclass(frozen=True)
class CellCost:
    """What one cell cost, as its records say: its build (the manifest's steps) and its repro's
    second build (the report's); None where the record is missing or unreadable."""

    cell_id: str
    build_s: float | None
    repro_s: float | None

    @property
    def total_s(self) -> float:
        return (self.build_s or 0.0) + (self.repro_s or 0.0)


def cell_costs(dist: Path, cell_ids: list[str]) -> list[CellCost]:
    """Each cell's recorded cost in dist/: the whole matrix's, also when a run reused cells that an
    earlier, interrupted run built (a release job resumed on a shared machine)."""
    costs = []
    for cell_id in cell_ids:
        data = manifest.read_manifest(dist / cell_id)
        build_s = sum(float(step.get("seconds") or 0.0) for step in data.steps) if data is not None else None
        report = _read_json(dist / cell_id / repro.REPORT_JSON)
        seconds = report.get("build_seconds") if report is not None else None
        repro_s = float(seconds[-1]) if isinstance(seconds, list) and seconds else None  # the second build
        costs.append(CellCost(cell_id, build_s, repro_s))
    return costs


def cost_lines(costs: list[CellCost]) -> list[str]:
    """One line per cell and the sum: the figure a release job reports beside its wall time."""

    def seconds(value: float | None) -> str:
        return "no record" if value is None else f"{value:.0f} s"

    lines = [f"  {c.cell_id}: build {seconds(c.build_s)}, repro second build {seconds(c.repro_s)}" for c in costs]
    builds = sum(c.build_s or 0.0 for c in costs)
    repros = sum(c.repro_s or 0.0 for c in costs)
    missing = sum(c.build_s is None or c.repro_s is None for c in costs)
    total = builds + repros
    lines.append(
        f"recorded cost of {len(costs)} cells: builds {builds:.0f} s + repro second builds {repros:.0f} s = "
        f"{total:.0f} s ({total / 3600:.1f} h)" + (f"; {missing} cells lack a record" if missing else "")
    )
    return lines


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def long_tests(repo: Path) -> None:
    """The tests too long for .ci/run (marked `release_job`, skipped there with the reason)."""
    argv = [sys.executable, "-m", "pytest", "-m", "release_job", "-rs", "tests"]
    env = {**process_environment(), "FORGE_RELEASE_TESTS": "1"}
    code = run_command(argv, cwd=repo, env=env, check=False).returncode
    if code != 0:
        raise ReleaseError(f"the release job's long tests failed (pytest exit {code})", "see their output above")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"
