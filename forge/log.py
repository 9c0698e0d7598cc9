"""One progress logger: rich spinners on a terminal, fold groups in CI, timings per step."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.status import Status
from rich.table import Table


def in_ci(env: Mapping[str, str]) -> bool:
    return env.get("CI", "").lower() in ("1", "true", "yes")


@dataclass
class StepTiming:
    name: str
    seconds: float
    status: str  # ok | failed | skipped


@dataclass
class Progress:
    """Reports steps to a console; records how long each took.

    `for_cell` gives each cell its own Progress (own timings), so cells built at the same time
    never mix their steps. With `live=False` (parallel cells) a step prints a start and an end
    line naming its cell instead of a spinner or fold group: those cannot interleave.
    """

    console: Console
    ci: bool = False
    timings: list[StepTiming] = field(default_factory=list)
    live: bool = True
    cell: str | None = None

    def for_cell(self, cell_id: str) -> Progress:
        """A Progress for one cell: same console and mode, empty timings of its own."""
        return Progress(self.console, self.ci, [], self.live, cell_id)

    @contextlib.contextmanager
    def step(self, name: str, description: str, log_path: Path | None = None) -> Iterator[None]:
        """Show the step while it runs (spinner, or a CI fold group with its log) and time it."""
        if not self.live:
            with self._plain_step(name, description, log_path):
                yield
            return
        start = time.monotonic()
        status = "failed"
        if self.ci:
            self.console.print(f"::group::{name}: {description}", markup=False, highlight=False)
        try:
            if self.ci:
                yield
            else:
                with self.console.status(f"[bold]{name}[/]: {description}") as spinner:
                    stop = threading.Event()
                    watcher = threading.Thread(
                        target=_follow, args=(spinner, f"{name}: {description}", log_path, stop), daemon=True
                    )
                    watcher.start()
                    try:
                        yield
                    finally:
                        stop.set()
                        watcher.join()
            status = "ok"
        finally:
            seconds = time.monotonic() - start
            self.timings.append(StepTiming(name, round(seconds, 3), status))
            if self.ci:
                self._dump(log_path)
                self.console.print("::endgroup::", markup=False, highlight=False)
            mark = "[green]✓[/]" if status == "ok" else "[red]✗[/]"
            self.console.print(f"{mark} {name} [dim]{seconds:.1f}s[/]")

    @contextlib.contextmanager
    def _plain_step(self, name: str, description: str, log_path: Path | None) -> Iterator[None]:
        label = f"[cyan]{self.cell}[/] {name}" if self.cell else name
        self.console.print(f"→ {label}: {description}", highlight=False)
        start = time.monotonic()
        status = "failed"
        try:
            yield
            status = "ok"
        finally:
            seconds = time.monotonic() - start
            self.timings.append(StepTiming(name, round(seconds, 3), status))
            mark = "[green]✓[/]" if status == "ok" else "[red]✗[/]"
            self.console.print(f"{mark} {label} [dim]{seconds:.1f}s[/]", highlight=False)
            if status == "failed" and self.ci and log_path is not None and log_path.exists():
                text = log_path.read_text(errors="replace").rstrip("\n")
                self.console.out(f"::group::{self.cell or ''} {name} log\n{text}\n::endgroup::", highlight=False)

    def _dump(self, log_path: Path | None) -> None:
        if log_path is not None and log_path.exists():
            self.console.out(log_path.read_text(errors="replace"), highlight=False)

    def info(self, message: str) -> None:
        self.console.print(message, highlight=False)


NINJA_PROGRESS = re.compile(rb"\[(\d+)/(\d+)\]")


def _follow(status: Status, label: str, log_path: Path | None, stop: threading.Event) -> None:
    """Show ninja's latest [n/N] from the step's log next to the spinner."""
    while log_path is not None and not stop.wait(0.5):
        try:
            with log_path.open("rb") as handle:
                handle.seek(max(0, log_path.stat().st_size - 4096))
                matches = NINJA_PROGRESS.findall(handle.read())
        except OSError:
            continue
        if matches:
            done, total = (int(x) for x in matches[-1])
            status.update(f"[bold]{label}[/] [{done}/{total}]")


def human_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


@dataclass(frozen=True)
class SummaryRow:
    cell: str
    result: str
    seconds: float
    size: int
    files: int
    suites: str


def summary_table(rows: list[SummaryRow]) -> Table:
    """The table every build ends with: cell, result, time, artifact size."""
    table = Table(title="build summary")
    for column in ("cell", "result", "time", "artifacts", "verify"):
        table.add_column(column)
    colors = {"passed": "green", "up to date": "cyan", "verify-failed": "yellow"}
    for row in rows:
        color = colors.get(row.result, "red")
        size = f"{human_size(row.size)} in {row.files} files" if row.files else "-"
        table.add_row(row.cell, f"[{color}]{row.result}[/]", f"{row.seconds:.1f}s", size, row.suites)
    return table
