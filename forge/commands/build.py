"""`invoke build` (one cell or a matrix's scheduled cells) and `invoke verify` (a recorded cell's suites again)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console

from forge import cli as forge_cli
from forge import host
from forge.build import BuildResult, allow_backends, build_cell, close_open_backends, stopping, verify_dist
from forge.config import Config, Data, backend_for
from forge.engines import EnginePool
from forge.errors import BuildInterrupted, ConfigError, ForgeError, StepFailedError, VerifyFailedError
from forge.log import Progress, SummaryRow, summary_table
from forge.matrix import Request


def summary_row(result: BuildResult) -> SummaryRow:
    failed = sum(s.failed for s in result.suites)
    passed = sum(s.passed for s in result.suites)
    no_gpu = len(result.suites) - failed - passed  # SuiteStatus.NO_GPU: neither passed nor failed
    suites = f"{passed}/{len(result.suites)} passed" if result.suites else "-"
    suites += f", {no_gpu} not run: no GPU" if no_gpu else ""
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
    cfg, data = forge_cli.setup(cli)
    out = mode.console()
    if cfg.backend is None:  # forge.daemon imports the docker SDK (~0.3 s): only when it may be used
        from forge import daemon

        cfg = daemon.default_backend(cfg, cfg.environment(), lambda line: out.print(line, markup=False))
    selection = forge_cli.Selection.from_cli(cli)
    matrix = selection.matrix(matrix)
    if matrix is None:
        requests = forge_cli.scheduled(forge_cli.requests_from(target, matrix, pins, data, selection.cell), matrix)
    else:  # the cells `invoke plan --matrix` schedules, by the same route; the rest are named with the reason
        pairs = forge_cli.select(target, matrix, pins, cfg, data, selection)
        for _, entry in pairs:
            if entry["status"] == "skipped":
                out.print(f"skipped: {entry['request']} ({entry['origin']}): {entry['reason']}", markup=False)
        requests = forge_cli.scheduled_pairs(pairs, matrix)
    scopes = [(backend_for(cfg, r.target).backend, r.target) for r in requests]
    host.ensure_tools(
        "build", env=cfg.environment(), log_path=cfg.cache / "host-tools.log", scopes=scopes, install=cfg.install_tools
    )
    parallel = cfg.cells > 1 and len(requests) > 1
    progress = Progress(out, cfg.ci or mode.verbose, live=not parallel)
    if parallel:
        out.print(f"building {len(requests)} cells, {cfg.cells} at a time")
    errors_out = Console(stderr=True) if mode.json else forge_cli.console() if mode.quiet else out  # errors always show
    results = build_all(requests, data, cfg, progress, lambda exc: errors_out.print(exc.render(), markup=False))
    if mode.json:
        sys.stdout.write(json.dumps({"cells": [_result_json(r) for r in results]}, indent=2) + "\n")
    else:
        forge_cli.console().print(summary_table([summary_row(r) for r in results]))
        _print_next_steps(results, cfg, forge_cli.console())
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
        return forge_cli.console()


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
    engines = EnginePool(cfg.docker_hosts)  # FORGE_DOCKER_HOSTS: each docker cell leases an engine

    def one(request: Request) -> BuildResult:
        if stopping():  # a worker freed by the interrupt takes no further cell
            raise BuildInterrupted("interrupted", f"{request.describe()} was not started")
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
    futures: list[Future[BuildResult]] = []
    try:
        futures = [pool.submit(one, request) for request in requests]
        return [_attentive_result(future) for future in futures]
    except BaseException:  # Ctrl-C, SIGTERM, a configuration error: stop the cells still running.
        # close_open_backends(stop=True) marks the run as stopping before it ends the running cells'
        # containers, so a worker those frees takes no further cell (one() checks stopping())
        close_open_backends(stop=True)
        for future in futures:
            future.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        allow_backends()


# How often the main thread wakes while cells build, so that a signal reaches Python's handler.
_SIGNAL_POLL_SECONDS = 0.2


def _attentive_result(future: Future[BuildResult]) -> BuildResult:
    """future.result(), waking every _SIGNAL_POLL_SECONDS. Linux may hand a process-wide SIGTERM or
    SIGINT to a worker thread; Python then runs the handler only when the main thread next executes
    bytecode, and an untimed wait would hold that off until the cell ended by itself, while the
    workers freed meanwhile took further cells."""
    while not wait([future], timeout=_SIGNAL_POLL_SECONDS).done:
        pass
    return future.result()


def _raise_for(results: list[BuildResult]) -> None:
    failed = [r for r in results if r.result == "failed"]
    if failed:
        raise StepFailedError(f"{len(failed)} of {len(results)} cells failed", ", ".join(r.cell_id for r in failed))
    bad = [r for r in results if r.result == "verify-failed"]
    if bad:
        details = "\n".join(f"{r.cell_id}: {s.describe()}" for r in bad for s in r.suites if s.failed)
        raise VerifyFailedError(
            "verify suites failed", details, "read the engine-tests and verify-run logs in dist/<cell-id>/logs/"
        )


def run_verify(target: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]) -> None:
    """Rebuild verify/ against dist/<cell-id>/install and run its suites (dist/ is not changed)."""
    cfg, data = forge_cli.setup(cli)
    request = Request.make(forge_cli.target_or_host(target, data), pins)
    if cfg.backend not in (None, "local"):
        raise ConfigError(
            f"invoke verify --backend {cfg.backend} is not supported",
            "verify rebuilds verify/ on this host against the recorded install tree; it does not start the cell's "
            "container (`invoke build --force` verifies inside it)",
            "drop --backend (or pass --backend local), or rebuild with `invoke build --force --target ...`",
        )
    cfg = replace(backend_for(cfg, request.target), backend="local")
    host.ensure_tools(
        "verify", env=cfg.environment(), log_path=cfg.cache / "host-tools.log", scopes=(("local", request.target),)
    )
    suites = verify_dist(request, data, cfg, Progress(forge_cli.console(), cfg.ci))
    failed = [s.describe() for s in suites if s.failed]
    no_gpu = [s.name for s in suites if not s.failed and not s.passed]
    shown = f"{sum(s.passed for s in suites)}/{len(suites)} verify suites passed"
    forge_cli.console().print(shown + (f", {len(no_gpu)} not run: no GPU ({', '.join(no_gpu)})" if no_gpu else ""))
    if failed:
        raise VerifyFailedError("verify suites failed", "\n".join(failed))
