"""What the invoke tasks call. The only place ForgeErrors become exit codes and messages."""

from __future__ import annotations

import contextlib
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
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forge import doctor, report
from forge.backends.base import CONTAINER_WORKSPACE, Workspace
from forge.build import BuildResult, build_cell, close_open_backends, host_workspace, resolve_for, verify_dist
from forge.config import Config, Data, backend_for, load_config, load_data
from forge.errors import BuildInterrupted, ConfigError, ForgeError, StepFailedError, VerifyFailedError
from forge.log import Progress, SummaryRow, summary_table
from forge.matrix import Cell, Excluded, Request, expand_matrix
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
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], data: Data
) -> list[Request | Excluded]:
    """Either one request from the flags, or every entry of a matrix file (not both)."""
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
    return [Request.make(target or "host", pins)]


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


def plan_entries(
    target: str | None, matrix: str | None, pins: Mapping[str, str | None], cfg: Config, data: Data
) -> list[dict[str, Any]]:
    entries = [
        _plan_entry(item, data, cfg, strict=matrix is None) for item in requests_from(target, matrix, pins, data)
    ]
    seen: dict[str, str] = {}
    for entry in entries:
        if entry["status"] == "scheduled":
            if entry["id"] in seen:
                entry.update(status="skipped", reason=f"same cell as {seen[entry['id']]}")
            else:
                seen[entry["id"]] = entry["origin"]
    return entries


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
    entries = plan_entries(target, matrix, pins, cfg, data)
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
    if cli.pop("resume", None) and cli.get("force"):
        raise ConfigError(
            "--resume and --force contradict each other", "--force rebuilds cells that --resume skips", "pick one"
        )
    if matrix is not None:
        cli["cells"], cli["jobs"] = cli.get("jobs"), None
    cfg, data = setup(cli)
    out = console()
    if cfg.backend is None:  # forge.daemon imports the docker SDK (~0.3 s): only when it may be used
        from forge import daemon

        cfg = daemon.default_backend(cfg, os.environ, lambda line: out.print(line, markup=False))
    items = requests_from(target, matrix, pins, data)
    requests = [item for item in items if not isinstance(item, Excluded)]
    parallel = cfg.cells > 1 and len(requests) > 1
    progress = Progress(out, cfg.ci, live=not parallel)
    if parallel:
        out.print(f"building {len(requests)} cells, {cfg.cells} at a time")
    results = build_all(requests, data, cfg, progress, lambda exc: out.print(exc.render(), markup=False))
    out.print(summary_table([_row(r) for r in results]))
    errors = [r.error for r in results if r.error is not None]
    if len(errors) == 1 and len(results) == 1:
        raise errors[0]
    _raise_for(results)


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

    def one(request: Request) -> BuildResult:
        try:
            return build_cell(request, data, backend_for(cfg, request.target), progress)
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


def run_report(cli: Mapping[str, object]) -> None:
    cfg, _ = setup(cli)
    md, page, rows = report.write_report(cfg.dist)
    out = console()
    out.print(report.render_markdown(rows), markup=False)
    out.print(f"wrote {md} and {page}")


def run_clean(all_: bool, cli: Mapping[str, object]) -> None:
    """Remove dist/ and forge's build directories (and the compiler cache with --all)."""
    cfg, _ = setup(cli)
    targets = (
        [cfg.dist, *(p for p in cfg.cache.glob("*") if all_ or p.name != "ccache")]
        if cfg.cache.exists()
        else [cfg.dist]
    )
    for path in targets:
        shutil.rmtree(path, ignore_errors=True)
        console().print(f"removed {path}")


def run_doctor() -> None:
    out = console()
    table = Table(title="forge doctor")
    for column in ("capability", "status", "how to get it"):
        table.add_column(column, overflow="fold")
    for finding in doctor.diagnose():
        status = f"[green]{finding.detail}[/]" if finding.found else f"[red]{finding.detail}[/]"
        table.add_row(finding.name, status, finding.fix or "-")
    out.print(table)


def run_verify(target: str | None, pins: Mapping[str, str | None], cli: Mapping[str, object]) -> None:
    """Rebuild verify/ against dist/<cell-id>/install and run its suites (dist/ is not changed)."""
    cfg, data = setup(cli)
    request = Request.make(target or "host", pins)
    cfg = replace(backend_for(cfg, request.target), backend="local")
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

    from forge.host import TEST_TOOLS, ensure_host_tools

    installed = ensure_host_tools(os.environ, REPO / ".cache" / "forge" / "test-tools.log", tools=TEST_TOOLS)
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
