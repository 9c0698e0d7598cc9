"""Matrix runs: `invoke build --matrix ... --jobs N` builds cells in parallel, each with its own
timings and its own lock, continuing past failures; `--update-locks` reaches forge/locks.py.

No daemon and no compiler: the cell-level work (`build._build_locked`) is replaced by a fake that
runs real Progress steps; everything above it (run_build, build_all, build_cell, cell_lock,
config) is the real code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from forge import build, cli, cuda, images, locks
from forge.backends import docker as docker_backend
from forge.backends.local import LocalBackend
from forge.commands import build as build_cmd
from forge.config import Config, Data, load_config
from forge.errors import BuildInterrupted, ConfigError, StepFailedError
from forge.log import Progress, StepTiming
from forge.matrix import Cell, Request

REPO = Path(__file__).resolve().parents[2]


def _matrix(tmp_path: Path, *targets: str) -> str:
    path = tmp_path / "matrix.yaml"
    path.write_text("axes:\n  target: [" + ", ".join(targets) + "]\n")
    return str(path)


class FakeCells:
    """Stands in for resolving and building a cell: records each cell's steps and Progress."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parties: int = 0) -> None:
        self.barrier = threading.Barrier(parties, timeout=30) if parties else None
        self.fail: set[str] = set()
        self.progress: dict[str, Progress] = {}
        self.lock = threading.Lock()
        self.tmp_path = tmp_path
        self.active = 0
        self.most_active = 0
        monkeypatch.setattr(build, "check_sources", lambda repo: None)
        monkeypatch.setattr(build, "resolve_for", self.resolve)
        monkeypatch.setattr(build, "_build_locked", self.build)
        self.real_setup = cli.setup
        monkeypatch.setattr(cli, "setup", self.setup)

    def setup(self, options: Any, env: Any = None) -> tuple[Config, Data]:
        cfg, data = self.real_setup(options, {})
        return replace(cfg, cache=self.tmp_path / "cache", dist=self.tmp_path / "dist"), data

    def resolve(self, request: Request, data: Data, cfg: Config) -> Any:
        cell_id = f"cell-{request.target}"
        return SimpleNamespace(
            cell=SimpleNamespace(id=cell_id, as_dict=lambda: {"id": cell_id, "target": request.target})
        )

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        with self.lock:
            self.active += 1
            self.most_active = max(self.most_active, self.active)
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1

    def build(
        self, request: Request, cell: Any, data: Data, cfg: Config, progress: Progress, start: float
    ) -> build.BuildResult:
        with self.lock:
            self.progress[cell.id] = progress
        with progress.step(f"configure-{cell.id}", "configure"):
            pass
        with progress.step(f"build-{cell.id}", "build"), self._counted():
            if self.barrier is not None:
                self.barrier.wait()  # every cell must be inside its build step at once, or this times out
            if cell.id in self.fail:
                raise StepFailedError(f"{cell.id}: build failed", "the fake compiler said no")
        return build.BuildResult(cell.id, "passed", 1.0)


def _run(matrix: str, options: dict[str, object]) -> str:
    out = io.StringIO()
    original = cli.console
    cli.console = lambda: Console(file=out, width=200)  # type: ignore[assignment]
    try:
        build_cmd.run_build(None, matrix, {}, {"backend": "docker", **options})
    finally:
        cli.console = original  # type: ignore[assignment]
    return out.getvalue()


def test_jobs_2_builds_two_cells_at_once_with_separate_timings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCells(tmp_path, monkeypatch, parties=2)
    text = _run(_matrix(tmp_path, "linux-x86_64", "linux-aarch64"), {"jobs": 2})
    assert "building 2 cells, 2 at a time" in text
    assert fake.most_active == 2
    assert set(fake.progress) == {"cell-linux-x86_64", "cell-linux-aarch64"}
    for cell_id, progress in fake.progress.items():
        assert progress.cell == cell_id and not progress.live  # no spinner: two cannot share a terminal
        assert [(t.name, t.status) for t in progress.timings] == [
            (f"configure-{cell_id}", "ok"),
            (f"build-{cell_id}", "ok"),
        ]
    assert fake.progress["cell-linux-x86_64"].timings is not fake.progress["cell-linux-aarch64"].timings
    for cell_id in fake.progress:
        assert f"{cell_id}" in text.split("build summary")[1]
        assert f"→ {cell_id} build-{cell_id}: build" in text  # each line names its cell


def test_without_jobs_cells_build_one_after_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCells(tmp_path, monkeypatch)
    text = _run(_matrix(tmp_path, "linux-x86_64", "linux-aarch64", "linux-armv7"), {})
    assert fake.most_active == 1 and len(fake.progress) == 3
    assert "at a time" not in text


def test_a_failed_cell_does_not_stop_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCells(tmp_path, monkeypatch)
    fake.fail.add("cell-linux-aarch64")
    with pytest.raises(StepFailedError) as info:
        _run(_matrix(tmp_path, "linux-aarch64", "linux-x86_64", "linux-armv7"), {"jobs": 2})
    assert info.value.what == "1 of 3 cells failed"
    assert set(fake.progress) == {"cell-linux-aarch64", "cell-linux-x86_64", "cell-linux-armv7"}
    assert fake.progress["cell-linux-aarch64"].timings[-1] == StepTiming(
        "build-cell-linux-aarch64", fake.progress["cell-linux-aarch64"].timings[-1].seconds, "failed"
    )
    assert all(t.status == "ok" for t in fake.progress["cell-linux-armv7"].timings)
    failed = json.loads((tmp_path / "dist" / "failed" / "cell-linux-aarch64" / "manifest.json").read_text())
    assert failed["result"] == "failed" and failed["error"]["what"] == "cell-linux-aarch64: build failed"
    assert [s["status"] for s in failed["steps"]] == ["ok", "failed"]  # the failed build's steps, for the report
    assert not (tmp_path / "dist" / "failed" / "cell-linux-x86_64").exists()


def test_build_skips_what_plan_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An infeasible include, a CUDA cell no image can build and a duplicate are skipped with their
    reasons, not failed."""
    fake = FakeCells(tmp_path, monkeypatch)
    monkeypatch.setattr(cuda, "image_toolkit", lambda version, table=None: None)  # as if none had an image
    path = tmp_path / "matrix.yaml"
    path.write_text(
        "axes:\n  target: [linux-x86_64]\n  python: ['3.11']\ninclude:\n"
        "  - {target: linux-x86_64, python: '3.13', numpy: '1.21'}\n"
        "  - {target: linux-x86_64, python: '3.13', cuda: '12.4'}\n"
        "  - {target: linux-x86_64, python: '3.11'}\n"
    )
    text = _run(str(path), {})
    cfg, data = fake.setup({"backend": "docker"})
    entries = cli.plan_entries(None, str(path), {}, cfg, data)
    assert [e["status"] for e in entries] == ["scheduled", "skipped", "skipped", "skipped"]
    assert list(fake.progress) == ["cell-linux-x86_64"]  # built: exactly what the plan scheduled
    assert "matrix.yaml:5 (include)): numpy 1.21 has wheels for python >=3.7,<3.11 only" in text
    words = " ".join(text.split())  # the summary wraps its lines
    assert "no forge image holds CUDA 12.4's nvcc (debian nvidia-cuda-toolkit) yet" in words and "same cell as" in text


def test_summary_lists_every_cell_in_matrix_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCells(tmp_path, monkeypatch)
    fake.fail.add("cell-linux-x86_64")
    out = io.StringIO()
    cfg, data = fake.setup({"backend": "docker", "cells": 3})
    requests = [Request.make(t, {}) for t in ("linux-armv7", "linux-x86_64", "linux-aarch64")]
    errors: list[str] = []
    results = build_cmd.build_all(
        requests, data, cfg, Progress(Console(file=out), live=False), lambda e: errors.append(e.what)
    )
    assert [(r.cell_id, r.result) for r in results] == [
        ("cell-linux-armv7", "passed"),
        ("target linux-x86_64", "failed"),
        ("cell-linux-aarch64", "passed"),
    ]
    assert errors == ["cell-linux-x86_64: build failed"]


def test_two_builds_of_one_cell_wait_for_each_other(tmp_path: Path) -> None:
    waiting = threading.Event()
    inside: list[str] = []

    def second() -> None:
        with build.cell_lock(tmp_path, "cell-a", lambda message: waiting.set()):
            inside.append("second")

    with build.cell_lock(tmp_path, "cell-a", lambda message: pytest.fail("the first build must not wait")):
        thread = threading.Thread(target=second)
        thread.start()
        assert waiting.wait(timeout=30), "the second build of cell-a never reported waiting"
        assert inside == []  # still held by the first build
        inside.append("first")
    thread.join(timeout=30)
    assert inside == ["first", "second"]
    never = lambda message: pytest.fail("another cell must not wait")  # noqa: E731
    with build.cell_lock(tmp_path, "cell-b", never), build.cell_lock(tmp_path, "cell-c", never):
        pass


def test_matrix_jobs_choose_cells_not_compile_jobs_so_resume_still_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--resume is the up-to-date check on the plan's input hash; --jobs N must not change any plan."""
    monkeypatch.delenv("FORGE_JOBS", raising=False)
    monkeypatch.delenv("FORGE_CELLS", raising=False)
    seen: list[Config] = []
    monkeypatch.setattr(build_cmd, "build_all", lambda requests, data, cfg, progress, report: seen.append(cfg) or [])
    matrix = str(REPO / "matrix" / "ci.yaml")
    _run(matrix, {"jobs": 4})
    _run(matrix, {})
    parallel, serial = seen
    assert (parallel.cells, parallel.jobs) == (4, 2) and (serial.cells, serial.jobs) == (1, 2)
    _, data = cli.setup({})
    plans = [cli.plan_entries(None, matrix, {}, cfg, data) for cfg in (parallel, serial)]
    assert plans[0] == plans[1] and any(e["status"] == "scheduled" for e in plans[0])
    _run(matrix, {"jobs": 3, "resume": True})
    assert seen[-1].cells == 3 and not seen[-1].force
    with pytest.raises(ConfigError, match="--resume and --force"):
        _run(matrix, {"resume": True, "force": True})
    with pytest.raises(ConfigError, match="0 cells at once"):
        _run(matrix, {"jobs": 0})


def test_update_locks_precedence() -> None:
    assert not load_config(REPO, {}, {}).update_locks
    assert load_config(REPO, {"FORGE_UPDATE_LOCKS": "1"}, {}).update_locks
    assert load_config(REPO, {}, {"update_locks": True}).update_locks
    assert load_config(REPO, {"FORGE_CELLS": "3"}, {}).cells == 3
    assert load_config(REPO, {"FORGE_CELLS": "3"}, {"cells": 2}).cells == 2


@pytest.mark.parametrize("flag", [True, False])
def test_build_update_locks_reaches_the_lock_check(flag: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`invoke build --update-locks` -> Config -> make_backend -> DockerBackend -> locks.check_image_lock."""
    monkeypatch.delenv("FORGE_UPDATE_LOCKS", raising=False)
    calls: list[bool] = []
    ref = images.ImageRef("forge/toolchain:bookworm-x-abc", "sha256:abc", "abc" * 8, "bookworm-x", True, 0.0)

    def check(client: Any, tag: str, name: str, built: bool, update: bool, lock_dir: Path) -> Any:
        calls.append(update)
        raise locks.LockMismatchError(f"image {name} drifted", "~ deb gcc-12:amd64 1 -> 2")

    monkeypatch.setattr(docker_backend.daemon, "ensure_daemon", lambda env: SimpleNamespace(info=dict))
    monkeypatch.setattr(docker_backend, "remove_stale", lambda client, alive, owner: None)
    monkeypatch.setattr(docker_backend, "instance_id", lambda path: "0" * 32)
    monkeypatch.setattr(images, "ensure_toolchain_image", lambda client, spec, mirror, **kw: (ref, ref))
    monkeypatch.setattr(locks, "check_image_lock", check)
    seen: list[Config] = []
    monkeypatch.setattr(build_cmd, "build_all", lambda requests, data, cfg, progress, report: seen.append(cfg) or [])
    _run(str(REPO / "matrix" / "ci.yaml"), {"update_locks": flag or None})
    cfg, data = cli.setup({})
    cfg = replace(
        cfg, backend="docker", cache=tmp_path / "cache", dist=tmp_path / "dist", update_locks=seen[0].update_locks
    )
    request = Request.make("linux-x86_64", {"python": "3.11"})
    with pytest.raises(locks.LockMismatchError):
        build.build_cell(request, data, cfg, Progress(Console(file=io.StringIO()), live=False))
    assert calls == [flag]
    assert isinstance(build.resolve_for(request, data, cfg).cell, Cell)


class BlockingBackend(LocalBackend):
    """A backend whose step runs until close() is called (as a container's step ends when it is removed)."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = threading.Event()

    def close(self) -> None:
        self.closed.set()


def test_ctrl_c_closes_the_backends_of_cells_still_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCells(tmp_path, monkeypatch)
    started = threading.Event()
    backend = BlockingBackend()

    def cell(request: Request, cell: Any, data: Data, cfg: Config, progress: Progress, start: float) -> Any:
        if request.target == "linux-aarch64":
            assert started.wait(timeout=30)
            raise KeyboardInterrupt  # Ctrl-C in this cell's step: build_cell makes it BuildInterrupted
        with build.tracked(backend):
            started.set()
            assert backend.closed.wait(timeout=30), "the running cell's backend was never closed"
            raise StepFailedError("removed", "its container was removed")

    monkeypatch.setattr(build, "_build_locked", cell)
    cfg, data = fake.setup({"backend": "docker", "cells": 2})
    requests = [Request.make(t, {}) for t in ("linux-aarch64", "linux-x86_64")]
    with pytest.raises(BuildInterrupted):
        build_cmd.build_all(requests, data, cfg, Progress(Console(file=io.StringIO()), live=False), lambda e: None)
    assert backend.closed.is_set() and build.close_open_backends() == 0  # closed, and no longer tracked


def test_output_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    FakeCells(tmp_path, monkeypatch)
    matrix = _matrix(tmp_path, "linux-x86_64", "linux-aarch64")
    quiet = _run(matrix, {"quiet": True})
    assert "build summary" in quiet and "configure-cell" not in quiet  # the summary, no step lines
    assert "next: `invoke report`" in _run(matrix, {})
    capsys.readouterr()
    assert "configure-cell" not in _run(matrix, {"json": True})
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["cell"], c["result"]) for c in cells] == [
        ("cell-linux-x86_64", "passed"),
        ("cell-linux-aarch64", "passed"),
    ]
    with pytest.raises(ConfigError, match="--verbose cannot be combined"):
        _run(matrix, {"verbose": True, "quiet": True})


class SlowlyRemovedBackend(BlockingBackend):
    """Its step ends at once when close() starts, while removing the container takes a while (as
    `docker rm -f` does): the worker it frees is free before the next backend is closed."""

    def close(self) -> None:
        self.closed.set()
        time.sleep(0.5)


@pytest.mark.parametrize("receiver", ["process", "worker-thread"])
def test_sigterm_during_parallel_cells_starts_no_further_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: str
) -> None:
    """SIGTERM (CI cancelling the job) arrives while two cells build: their containers are removed,
    and the workers this frees take none of the cells still queued. Linux may hand a process-wide
    signal to any thread; "worker-thread" makes a cell's worker receive it, so only the main
    thread's own wake-ups get Python's handler run while the cells still block."""
    fake = FakeCells(tmp_path, monkeypatch)
    running = threading.Barrier(2, timeout=30)
    backends = {t: SlowlyRemovedBackend() for t in ("linux-aarch64", "linux-x86_64")}
    started: list[str] = []

    def cell(request: Request, cell: Any, data: Data, cfg: Config, progress: Progress, start: float) -> Any:
        started.append(request.target)
        with build.tracked(backends.get(request.target) or BlockingBackend()) as backend:
            assert isinstance(backend, BlockingBackend)
            running.wait()
            if request.target == "linux-aarch64":
                if receiver == "process":
                    os.kill(os.getpid(), signal.SIGTERM)  # as `docker stop`/CI sends it to forge
                else:
                    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
            assert backend.closed.wait(timeout=30), "the running cell's backend was never closed"
            raise StepFailedError("removed", "its container was removed")

    monkeypatch.setattr(build, "_build_locked", cell)
    previous = cli._terminate_as_interrupt()  # forge's SIGTERM handler, as `guard` installs it
    try:
        cfg, data = fake.setup({"backend": "docker", "cells": 2})
        requests = [Request.make(t, {}) for t in ("linux-aarch64", "linux-x86_64", "linux-armv7", "macos-arm64")]
        with pytest.raises(KeyboardInterrupt):
            build_cmd.build_all(requests, data, cfg, Progress(Console(file=io.StringIO()), live=False), lambda e: None)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert sorted(started) == ["linux-aarch64", "linux-x86_64"], started
    assert all(b.closed.is_set() for b in backends.values()) and build.close_open_backends() == 0
    with build.tracked(BlockingBackend()):  # the next run's backends start again
        pass
