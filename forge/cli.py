"""What the invoke tasks call. The only place ForgeErrors become exit codes and messages."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import shlex
import shutil
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forge import host, provenance, report
from forge.backends.base import CONTAINER_WORKSPACE, Workspace
from forge.build import BuildResult, build_cell, close_open_backends, host_workspace, resolve_for, verify_dist
from forge.config import Config, Data, backend_for, load_config, load_data
from forge.errors import (
    BuildInterrupted,
    ConfigError,
    ForgeError,
    RegressionFoundError,
    StepFailedError,
    VerifyFailedError,
)
from forge.log import Progress, SummaryRow, summary_table
from forge.matrix import Cell, Excluded, Request, expand_matrix, request_for_cell_id
from forge.plan import BuildOptions, Plan, plan_build

REPO = Path(__file__).resolve().parent.parent


class CliExit(Exception):
    """Raised by `guard`; tasks.py turns it into invoke.Exit(message, code)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@contextlib.contextmanager
def guard(debug: bool) -> Iterator[None]:
    """One clear message and the error's exit code; the traceback only with --debug.

    SIGTERM (CI cancelling a job) is treated like Ctrl-C: children ended, dist/ untouched, 130.
    """
    previous = _terminate_as_interrupt()
    try:
        yield
    except ForgeError as exc:
        if debug:
            traceback.print_exc()
        raise CliExit(exc.render(), exc.exit_code) from None
    except KeyboardInterrupt:
        if debug:
            traceback.print_exc()
        raise CliExit("interrupted", BuildInterrupted.exit_code) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _terminate_as_interrupt() -> Any:
    """Install the SIGTERM handler (main thread only); returns the one it replaced, or None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)


def console() -> Console:
    """stdout console; wide when not a terminal (CI logs, pipes) so tables do not fold."""
    out = Console(highlight=False)
    if not out.is_terminal:
        out = Console(highlight=False, width=160)
    return out


def setup(cli: Mapping[str, object], env: Mapping[str, str] | None = None) -> tuple[Config, Data]:
    cfg = load_config(REPO, os.environ if env is None else env, cli)
    return cfg, load_data(cfg.repo)


def requests_from(
    target: str | None,
    matrix: str | None,
    pins: Mapping[str, str | None],
    data: Data,
    cell: str | None = None,
) -> list[Request | Excluded]:
    """One request from the flags or from a cell id, or every entry of a matrix file (only one of these)."""
    if cell is not None:
        if target is not None or matrix is not None or any(v is not None for v in pins.values()):
            raise ConfigError(
                "--cell cannot be combined with --target, --matrix or axis flags",
                "a cell id already names every axis",
                "use --cell alone, or --matrix M --only PATTERN to pick cells of a matrix",
            )
        return [request_for_cell_id(cell)]
    if matrix is not None:
        if target is not None or any(v is not None for v in pins.values()):
            raise ConfigError("--matrix cannot be combined with --target or axis flags", "", "use one or the other")
        path = Path(matrix)
        if not path.is_file():
            raise ConfigError(
                f"no matrix file {matrix}",
                "",
                f"pick one of: {', '.join(sorted(str(p) for p in (REPO / 'matrix').glob('*.yaml') if p.name != 'supported.yaml'))}",
            )
        return expand_matrix(path, data.supported.targets)
    return [Request.make(target_or_host(target, data), pins)]


def target_or_host(target: str | None, data: Data) -> str:
    """The --target value, `host` when none was given; an empty one is an error, not the host."""
    if target is None:
        return "host"
    if not target.strip():
        raise ConfigError(
            "--target is empty",
            "an empty target does not mean the host",
            f"name one: {', '.join(data.supported.targets)}",
        )
    return target


def scheduled(items: list[Request | Excluded], matrix: str | None) -> list[Request]:
    """The requests to build; a matrix that excludes every combination is an error, not a no-op."""
    requests = [item for item in items if not isinstance(item, Excluded)]
    if not requests:
        reasons = sorted({item.reason for item in items if isinstance(item, Excluded)})
        raise ConfigError(
            f"{matrix or 'the request'} schedules no cell: every combination is excluded",
            "\n".join(reasons[:10]) or "the matrix has no combinations",
            "remove or narrow an exclude entry, or add an include entry (`invoke plan --matrix ...` shows each reason)",
        )
    return requests


def plan_for(cell: Cell, data: Data, cfg: Config) -> Plan:
    """The plan a build of `cell` would run, without touching any backend."""
    host_ws = host_workspace(cfg, cell)
    ws: Workspace = host_ws if cfg.backend == "local" else CONTAINER_WORKSPACE
    opts = BuildOptions(cfg.source_date_epoch, cfg.jobs, ccache=cfg.ccache)
    return plan_build(cell, data.toolchains.targets[cell.target], ws, str(cfg.backend), opts)


def _plan_entry(item: Request | Excluded, data: Data, cfg: Config, strict: bool) -> dict[str, Any]:
    request = item.request if isinstance(item, Excluded) else item
    entry: dict[str, Any] = {"request": request.describe(), "origin": request.origin}
    if isinstance(item, Excluded):
        return {**entry, "status": "skipped", "reason": item.reason}
    try:
        cfg = backend_for(cfg, request.target)
        resolution = resolve_for(request, data, cfg)
        plan = plan_for(resolution.cell, data, cfg)
    except ForgeError as exc:
        if strict or isinstance(exc, ConfigError):
            raise
        return {
            **entry,
            "status": "skipped",
            "reason": "; ".join(filter(None, [*exc.why.splitlines(), exc.fix])) or exc.what,
        }
    lock = None
    if plan.backend == "docker":
        from forge import images  # imports the docker SDK: only when a docker plan needs its lock

        lock = images.cell_lock(plan.cell, data.toolchains.targets[plan.cell.target])
    entry = {**entry, "status": "scheduled", "id": plan.cell.id, "sources": resolution.sources, **plan.as_dict()}
    return {**entry, "lock": lock} if lock else entry


@dataclass(frozen=True)
class Selection:
    """Which cells a task acts on, beyond the axis flags: one cell id, or globs over a matrix's ids."""

    cell: str | None = None
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    @staticmethod
    def from_cli(cli: Mapping[str, object]) -> Selection:
        def globs(key: str) -> tuple[str, ...]:
            value = cli.get(key)
            if value is None:
                return ()
            items = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
            return tuple(str(v).strip() for v in items if str(v).strip())

        cell = cli.get("cell")
        return Selection(str(cell) if cell is not None else None, globs("only"), globs("skip"))

    def matrix(self, matrix: str | None) -> str | None:
        """--only/--skip pick cells of a matrix: matrix/release.yaml (every release cell) unless one is named."""
        if matrix is None and (self.only or self.skip):
            return str(REPO / "matrix" / "release.yaml")
        return matrix

    def picks(self, cell_id: str) -> bool:
        if self.only and not any(fnmatch.fnmatchcase(cell_id, p) for p in self.only):
            return False
        return not any(fnmatch.fnmatchcase(cell_id, p) for p in self.skip)


def plan_entries(
    target: str | None,
    matrix: str | None,
    pins: Mapping[str, str | None],
    cfg: Config,
    data: Data,
    selection: Selection = Selection(),
) -> list[dict[str, Any]]:
    return [entry for _, entry in select(target, matrix, pins, cfg, data, selection)]


def select(
    target: str | None,
    matrix: str | None,
    pins: Mapping[str, str | None],
    cfg: Config,
    data: Data,
    selection: Selection,
) -> list[tuple[Request | Excluded, dict[str, Any]]]:
    """The requests a task acts on, each with its plan entry; --only/--skip drop the cells they do not pick."""
    matrix = selection.matrix(matrix)
    items = requests_from(target, matrix, pins, data, selection.cell)
    pairs = schedule(items, data, cfg, strict=matrix is None)
    if selection.only or selection.skip:
        pairs = [(item, e) for item, e in pairs if e["status"] == "scheduled" and selection.picks(e["id"])]
        if not pairs:
            raise ConfigError(
                f"no scheduled cell of {matrix} matches --only {' '.join(selection.only) or '*'}"
                + (f" --skip {' '.join(selection.skip)}" if selection.skip else ""),
                "the patterns are shell globs over cell ids",
                f"list the ids with `invoke plan --matrix {matrix}`",
            )
    return pairs


def schedule(
    items: list[Request | Excluded], data: Data, cfg: Config, strict: bool
) -> list[tuple[Request | Excluded, dict[str, Any]]]:
    """Each request with its plan entry: scheduled, or skipped with the reason (excluded, infeasible, a
    duplicate cell). `invoke plan` prints these entries and `invoke build` builds the scheduled ones."""
    pairs = [(item, _plan_entry(item, data, cfg, strict)) for item in items]
    entries = [entry for _, entry in pairs]
    seen: dict[str, str] = {}
    for entry in entries:
        if entry["status"] == "scheduled":
            if entry["id"] in seen:
                entry.update(status="skipped", reason=f"same cell as {seen[entry['id']]}")
            else:
                seen[entry["id"]] = entry["origin"]
    return pairs


def print_plan(entries: list[dict[str, Any]], out: Console) -> None:
    if len(entries) == 1 and entries[0]["status"] == "scheduled":
        _print_one_plan(entries[0], out)
        return
    table = Table(
        title=f"{sum(e['status'] == 'scheduled' for e in entries)} scheduled, {sum(e['status'] == 'skipped' for e in entries)} skipped"
    )
    for column in ("cell", "status", "request / reason"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        if entry["status"] == "scheduled":
            lock = f", lock {entry['lock']}" if entry.get("lock") else ""
            table.add_row(entry["id"], "[green]scheduled[/]", f"{entry['request']} ({entry['backend']}{lock})")
        else:
            table.add_row("-", "[yellow]skipped[/]", f"{entry['request']} ({entry['origin']}): {entry['reason']}")
    out.print(table)


def _print_one_plan(entry: dict[str, Any], out: Console) -> None:
    table = Table(title=f"cell {entry['id']} ({entry['backend']} backend)")
    for column in ("axis", "value", "from"):
        table.add_column(column)
    for axis, value in entry["cell"].items():
        if axis != "id":
            table.add_row(axis, str(value if value is not None else "-"), entry["sources"].get(axis, "requested"))
    out.print(table)
    if entry.get("lock"):
        out.print(f"toolchain lock: {entry['lock']}", markup=False)
    for number, step in enumerate(entry["steps"], 1):
        out.print(f"[bold]{number}. {step['name']}[/]: {step['description']}")
        if step["argv"]:
            out.print("   $ " + shlex.join(step["argv"]), markup=False, highlight=False)


def run_plan(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], as_json: bool, cli: Mapping[str, object]
) -> None:
    cfg, data = setup(cli)
    fallback = cfg.backend is None
    if fallback:  # what `invoke build` tries first (forge.daemon.default_backend); planning starts nothing
        cfg = replace(cfg, backend="docker")
    entries = plan_entries(target, matrix, pins, cfg, data, Selection.from_cli(cli))
    if as_json:
        sys.stdout.write(json.dumps({"cells": entries}, indent=2) + "\n")
        return
    print_plan(entries, console())
    if fallback and any(e.get("cell", {}).get("target") == "host" for e in entries):
        console().print(
            "note: no --backend given; where no container engine can be started, `invoke build` builds the host target with the local backend (`invoke plan --backend local` shows that plan)"
        )


def _row(result: BuildResult) -> SummaryRow:
    failed = sum(not s.passed for s in result.suites)
    suites = f"{len(result.suites) - failed}/{len(result.suites)} passed" if result.suites else "-"
    suites += f" ({result.mode})" if result.mode != "native" else ""
    return SummaryRow(result.cell_id, result.result, result.seconds, result.size, result.files, suites)


def run_build(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]
) -> None:
    """Build one cell (or every scheduled cell of a matrix); end with the summary table.

    With --matrix, --jobs N is how many cells build at once (each still compiles with FORGE_JOBS,
    default 2, so a cell's plan, and with it --resume's up-to-date check, does not depend on N).
    """
    cli = dict(cli)
    mode = OutputMode.from_cli(cli)
    if cli.pop("resume", None) and cli.get("force"):
        raise ConfigError(
            "--resume and --force contradict each other", "--force rebuilds cells that --resume skips", "pick one"
        )
    if matrix is not None:
        cli["cells"], cli["jobs"] = cli.get("jobs"), None
    cfg, data = setup(cli)
    out = mode.console()
    if cfg.backend is None:  # forge.daemon imports the docker SDK (~0.3 s): only when it may be used
        from forge import daemon

        cfg = daemon.default_backend(cfg, os.environ, lambda line: out.print(line, markup=False))
    selection = Selection.from_cli(cli)
    matrix = selection.matrix(matrix)
    if matrix is None:
        requests = scheduled(requests_from(target, matrix, pins, data, selection.cell), matrix)
    else:  # the cells `invoke plan --matrix` schedules, by the same route; the rest are named with the reason
        pairs = select(target, matrix, pins, cfg, data, selection)
        requests = [item for item, entry in pairs if entry["status"] == "scheduled" and isinstance(item, Request)]
        skipped = [entry for _, entry in pairs if entry["status"] == "skipped"]
        for entry in skipped:
            out.print(f"skipped: {entry['request']} ({entry['origin']}): {entry['reason']}", markup=False)
        if not requests:
            raise ConfigError(
                f"{matrix} schedules no cell: every combination is excluded or infeasible",
                "\n".join(sorted({str(e["reason"]) for e in skipped})[:10]) or "the matrix has no combinations",
                "remove or narrow an exclude entry, or add an include entry (`invoke plan --matrix ...` shows each reason)",
            )
    scopes = [(backend_for(cfg, r.target).backend, r.target) for r in requests]
    host.ensure_tools(
        "build", env=os.environ, log_path=cfg.cache / "host-tools.log", scopes=scopes, install=cfg.install_tools
    )
    parallel = cfg.cells > 1 and len(requests) > 1
    progress = Progress(out, cfg.ci or mode.verbose, live=not parallel)
    if parallel:
        out.print(f"building {len(requests)} cells, {cfg.cells} at a time")
    errors_out = Console(stderr=True) if mode.json else console() if mode.quiet else out  # errors always show
    results = build_all(requests, data, cfg, progress, lambda exc: errors_out.print(exc.render(), markup=False))
    if mode.json:
        sys.stdout.write(json.dumps({"cells": [_result_json(r) for r in results]}, indent=2) + "\n")
    else:
        console().print(summary_table([_row(r) for r in results]))
        _print_next_steps(results, cfg, console())
    errors = [r.error for r in results if r.error is not None]
    if len(errors) == 1 and len(results) == 1:
        raise errors[0]
    _raise_for(results)


@dataclass(frozen=True)
class OutputMode:
    """--verbose (each step's output, as CI shows it), --quiet (summary and errors only), --json (a JSON summary)."""

    verbose: bool = False
    quiet: bool = False
    json: bool = False

    @staticmethod
    def from_cli(cli: dict[str, object]) -> OutputMode:
        mode = OutputMode(bool(cli.pop("verbose", False)), bool(cli.pop("quiet", False)), bool(cli.pop("json", False)))
        if mode.verbose and (mode.quiet or mode.json):
            raise ConfigError(
                "--verbose cannot be combined with --quiet or --json", "they ask for opposite output", "pick one"
            )
        return mode

    def console(self) -> Console:
        """Where progress goes: the terminal, or nowhere with --quiet/--json (errors and the summary still print)."""
        if self.quiet or self.json:
            return Console(quiet=True)
        return console()


def _result_json(result: BuildResult) -> dict[str, Any]:
    return {
        "cell": result.cell_id,
        "result": result.result,
        "seconds": round(result.seconds, 1),
        "dist": str(result.dist) if result.dist else None,
        "size": result.size,
        "files": result.files,
        "verify_mode": result.mode,
        "suites": [s.as_dict() for s in result.suites],
        "error": result.error.render() if result.error else None,
    }


def _print_next_steps(results: list[BuildResult], cfg: Config, out: Console) -> None:
    """Where the results are and the next useful command."""
    done = [r for r in results if r.result != "failed"]
    if done:
        where = (done[0].dist or cfg.dist / done[0].cell_id) if len(done) == 1 else cfg.dist
        out.print(f"results: {where} (manifest.json, install/, logs/)", markup=False)
        out.print(
            "next: `invoke report` for the compatibility report, `invoke repro --cell ID` to check bit-for-bit",
            markup=False,
        )
    failed = [r for r in results if r.result == "failed"]
    if failed:
        out.print(f"logs of failed steps: {cfg.cache}/<cell-id>/logs/ (or rerun with --verbose)", markup=False)


def build_all(
    requests: list[Request],
    data: Data,
    cfg: Config,
    progress: Progress,
    report_error: Callable[[ForgeError], None],
) -> list[BuildResult]:
    """Build every request, up to cfg.cells at once, continuing past failed cells.

    Results come back in the order of `requests`. Ctrl-C and configuration errors stop the run
    (cells not started yet are cancelled; running ones end through their backends' cleanup).
    """

    from forge.engines import EnginePool

    engines = EnginePool(cfg.docker_hosts)  # FORGE_DOCKER_HOSTS: each docker cell leases an engine

    def one(request: Request) -> BuildResult:
        cell_cfg = backend_for(cfg, request.target)
        try:
            with engines.lease() if cell_cfg.backend == "docker" else contextlib.nullcontext():
                return build_cell(request, data, cell_cfg, progress)
        except (BuildInterrupted, ConfigError):
            raise
        except ForgeError as exc:
            if len(requests) > 1:
                report_error(exc)
            return BuildResult(request.describe(), "failed", error=exc)

    if cfg.cells <= 1 or len(requests) <= 1:
        return [one(request) for request in requests]
    pool = ThreadPoolExecutor(max_workers=min(cfg.cells, len(requests)), thread_name_prefix="forge-cell")
    try:
        futures = [pool.submit(one, request) for request in requests]
        return [future.result() for future in futures]
    except BaseException:  # Ctrl-C, SIGTERM, a configuration error: stop the cells still running
        close_open_backends()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # on an error: start no further cell


def _raise_for(results: list[BuildResult]) -> None:
    failed = [r for r in results if r.result == "failed"]
    if failed:
        raise StepFailedError(f"{len(failed)} of {len(results)} cells failed", ", ".join(r.cell_id for r in failed))
    bad = [r for r in results if r.result == "verify-failed"]
    if bad:
        details = "\n".join(f"{r.cell_id}: {s.describe()}" for r in bad for s in r.suites if not s.passed)
        raise VerifyFailedError(
            "verify suites failed", details, "read the engine-tests and verify-run logs in dist/<cell-id>/logs/"
        )


def _side_path(text: str, cfg: Config) -> Path:
    """A dist/<cell-id> directory given as a path, or a cell id looked up in dist/."""
    path = Path(text)
    return path if path.is_dir() or "/" in text else cfg.dist / text


def run_compare(base: str, candidate: str, options: Mapping[str, object]) -> None:
    """Compare two built cells; the findings first, then where the reports are; exit 12 on a regression."""
    from forge import compare

    cfg, _ = setup({"debug": options.get("debug")})
    host.ensure_tools("compare", env=os.environ, log_path=cfg.cache / "host-tools.log")
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
    out = console()
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
    cfg, data = setup({k: v for k, v in cli.items() if k in ("backend", "debug", "force")})
    out = console()
    if cfg.backend is None:
        from forge import daemon

        cfg = daemon.default_backend(cfg, os.environ, lambda line: out.print(line, markup=False))
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
    out.print(summary_table([_row(r) for r in results]))
    failed = [r for r in results if r.dist is None]
    if failed:
        raise StepFailedError(
            f"cannot compare: {', '.join(r.cell_id for r in failed)} did not build", "", "see the errors above"
        )
    run_compare(str(results[0].dist), str(results[1].dist), cli)


def run_ci(github: bool, matrix: str | None, out_path: str | None, cli: Mapping[str, object]) -> None:
    """Write a CI workflow for a matrix: one job per scheduled cell, then one that assembles the release."""
    from forge import ci_export

    if not github:
        raise ConfigError("invoke ci needs a CI system", "GitHub Actions is the one forge writes", "invoke ci --github")
    cfg, data = setup({"debug": cli.get("debug")})
    matrix = matrix or str(REPO / "matrix" / "release.yaml")
    entries = plan_entries(None, matrix, {}, replace(cfg, backend="docker"), data, Selection.from_cli(cli))
    shown = os.path.relpath(matrix, cfg.repo) if Path(matrix).is_absolute() else matrix
    text = ci_export.render(ci_export.workflow(entries, shown), shown)
    path = Path(out_path) if out_path else cfg.repo / ".github" / "workflows" / "forge-matrix.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    scheduled = sum(e["status"] == "scheduled" for e in entries)
    console().print(
        f"wrote {path}: {scheduled} cell jobs and a release job ({len(entries) - scheduled} cells skipped, see `invoke plan --matrix {shown}`)",
        markup=False,
    )


def run_release(matrix: str | None, from_artifacts: str | None, version: str | None, cli: Mapping[str, object]) -> None:
    """Build (or reuse), verify and repro-check a matrix's cells, or take built cells from a directory of
    artifacts, then assemble dist/release/<version>/ from them: all cells or nothing."""
    from forge import __version__, release

    cfg, data = setup({"debug": cli.get("debug")})
    commit = provenance.git_commit(cfg.repo)
    version = version or f"{__version__}+g{(commit or 'unknown')[:12]}"
    if from_artifacts is not None:
        if matrix is not None:
            raise ConfigError(
                "--from-artifacts cannot be combined with --matrix", "it assembles cells built elsewhere", "use one"
            )
        cells = release.cells_in(Path(from_artifacts))
    else:
        matrix = matrix or str(REPO / "matrix" / "release.yaml")
        run_build(None, matrix, {}, {k: cli.get(k) for k in ("backend", "jobs", "debug", "only", "skip")})
        if not cli.get("no_repro"):
            from forge import repro

            repro.run_repro(None, matrix, {}, {k: cli.get(k) for k in ("backend", "debug")})
        plan_cfg = replace(cfg, backend=str(cli.get("backend") or "docker"))
        entries = plan_entries(None, matrix, {}, plan_cfg, data, Selection.from_cli(cli))
        cells = [cfg.dist / e["id"] for e in entries if e["status"] == "scheduled"]
    key = os.environ.get("FORGE_SIGNING_KEY") or None
    if key:
        host.ensure_tools("release", env=os.environ, log_path=cfg.cache / "host-tools.log")
    path = release.assemble(cells, cfg.dist / "release", version, commit, cfg.source_date_epoch, key)
    console().print(
        f"release {version}: {path} ({len(cells)} cells{', SHA256SUMS signed' if key else ''})", markup=False
    )


def run_report(cli: Mapping[str, object]) -> None:
    cfg, _ = setup(cli)
    md, page, result = report.write_report(cfg.dist, provenance.git_commit(cfg.repo))
    out = console()
    out.print(report.render_markdown(result), markup=False, soft_wrap=True)  # table rows stay one line each
    out.print(f"wrote {md}, {page} and {page.with_suffix('.json')}")


def run_clean(all_: bool, cli: Mapping[str, object]) -> None:
    """Remove dist/ and forge's build directories (and the compiler cache with --all).

    The instance id stays: it names the owner of this checkout's containers (forge.backends.docker).
    """
    cfg, _ = setup(cli)
    targets = (
        [cfg.dist, *(p for p in cfg.cache.glob("*") if (all_ or p.name != "ccache") and p.name != "instance-id")]
        if cfg.cache.exists()
        else [cfg.dist]
    )
    for path in targets:
        shutil.rmtree(path, ignore_errors=True)
        console().print(f"removed {path}")


def run_verify(target: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]) -> None:
    """Rebuild verify/ against dist/<cell-id>/install and run its suites (dist/ is not changed)."""
    cfg, data = setup(cli)
    request = Request.make(target_or_host(target, data), pins)
    if cfg.backend not in (None, "local"):
        raise ConfigError(
            f"invoke verify --backend {cfg.backend} is not supported",
            "verify rebuilds verify/ on this host against the recorded install tree; it does not start the cell's "
            "container (`invoke build --force` verifies inside it)",
            "drop --backend (or pass --backend local), or rebuild with `invoke build --force --target ...`",
        )
    cfg = replace(backend_for(cfg, request.target), backend="local")
    host.ensure_tools(
        "verify", env=os.environ, log_path=cfg.cache / "host-tools.log", scopes=(("local", request.target),)
    )
    suites = verify_dist(request, data, cfg, Progress(console(), cfg.ci))
    failed = [s.describe() for s in suites if not s.passed]
    console().print(f"{len(suites) - len(failed)}/{len(suites)} verify suites passed")
    if failed:
        raise VerifyFailedError("verify suites failed", "\n".join(failed))


def start_test_services(env: Mapping[str, str]) -> None:
    """Hook run by `invoke test` before pytest: start what the tests need.

    The docker backend's owner starts dockerd here (forge.daemon); nothing else needs a service.
    """
    from forge import daemon

    try:
        daemon.run_start(env)
    except ForgeError as exc:  # unit tests need no engine; the docker integration tests fail on this, loudly
        console().print(f"[yellow]no container engine: docker integration tests will fail[/]\n{exc.render()}")


def cxx_sources(repo: Path) -> list[str]:
    """engine/ and verify/ C++ files tracked or not, skipping build directories."""
    from forge.manifest import iter_files

    suffixes = {".h", ".hpp", ".cc", ".cpp", ".cu", ".cuh"}
    return [
        str(p.relative_to(repo)) for sub in ("engine", "verify") for p in iter_files(repo / sub) if p.suffix in suffixes
    ]


def test_commands(repo: Path, unit: bool) -> list[tuple[str, list[str]]]:
    """(name, argv) of every check `invoke test` runs, in order."""
    py = sys.executable
    pytest_args = [py, "-m", "pytest", "tests/unit"] if unit else [py, "-m", "pytest", "tests"]
    return [
        ("ruff check", [py, "-m", "ruff", "check", "."]),
        ("ruff format", [py, "-m", "ruff", "format", "--check", "."]),
        ("mypy", [py, "-m", "mypy"]),
        ("clang-format", ["clang-format", "--dry-run", "--Werror", *cxx_sources(repo)]),
        ("pytest", pytest_args),
    ]


def run_tests(unit: bool) -> None:
    """Run every check with its output streamed; fail naming each check that failed."""
    import subprocess

    installed = host.ensure_tools("test", env=os.environ, log_path=REPO / ".cache" / "forge" / "test-tools.log")
    if installed:
        console().print(f"installed {', '.join(installed)}")
    start_test_services(os.environ)
    failed = []
    for name, argv in test_commands(REPO, unit):
        console().rule(name)
        try:
            code = subprocess.run(argv, cwd=REPO, check=False).returncode
        except FileNotFoundError:
            code = 127
            console().print(f"{argv[0]} not found: run `invoke doctor`")
        if code != 0:
            failed.append(f"{name} (exit {code})")
    if failed:
        raise StepFailedError(f"checks failed: {', '.join(failed)}", "see their output above")
