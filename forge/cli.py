"""What the invoke tasks call. The only place ForgeErrors become exit codes and messages."""

from __future__ import annotations

import contextlib
import fnmatch
import shlex
import signal
import threading
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forge import axes, build, provenance
from forge.build import resolve_for
from forge.config import Config, Data, backend_for, load_config, load_data, process_environment
from forge.errors import (
    BuildInterrupted,
    ConfigError,
    ForgeError,
)
from forge.matrix import Cell, Excluded, Request, expand_matrix, request_for_cell_id
from forge.plan import Plan

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
    cfg = load_config(REPO, process_environment() if env is None else env, cli)
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


def scheduled_pairs(pairs: list[tuple[Request | Excluded, dict[str, Any]]], matrix: str) -> list[Request]:
    """The requests `select` scheduled; a matrix that schedules none is an error naming each reason."""
    requests = [item for item, entry in pairs if entry["status"] == "scheduled" and isinstance(item, Request)]
    if not requests:
        raise ConfigError(
            f"{matrix} schedules no cell: every combination is excluded or infeasible",
            "\n".join(sorted({str(e["reason"]) for _, e in pairs if e["status"] == "skipped"})[:10])
            or "the matrix has no combinations",
            "remove or narrow an exclude entry, or add an include entry (`invoke plan --matrix ...` shows each reason)",
        )
    return requests


def plan_for(cell: Cell, data: Data, cfg: Config) -> Plan:
    """The plan a build of `cell` would run (build.plan_cell, the route a build takes), touching no backend."""
    cfg = provenance.settled_epoch(cfg)
    target = data.toolchains.targets[cell.target]
    ws = build.expected_workspace(cfg, cell)
    return build.plan_cell(cell, target, cfg, ws, str(cfg.backend), ccache_found=build.ccache_expected(cfg))


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
    shown = set(axes.names(lambda a: a.plan))
    for axis, value in entry["cell"].items():
        if axis in shown:
            table.add_row(axis, str(value if value is not None else "-"), entry["sources"].get(axis, "requested"))
    out.print(table)
    if entry.get("lock"):
        out.print(f"toolchain lock: {entry['lock']}", markup=False)
    for number, step in enumerate(entry["steps"], 1):
        out.print(f"[bold]{number}. {step['name']}[/]: {step['description']}")
        if step["argv"]:
            out.print("   $ " + shlex.join(step["argv"]), markup=False, highlight=False)
