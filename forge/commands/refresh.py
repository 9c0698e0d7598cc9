"""`invoke upgrade --target T --refresh-locks`: the same cell with freshly resolved packages.

1. Build a new toolchain image for the cell with nothing pinned (apt and pip resolve what the
   mirror and PyPI hold today); its lock goes to a scratch directory, never toolchains/locks/.
   When it equals the committed lock there is nothing to refresh, and nothing more is built.
2. Build the cell with today's lock (dist/<cell>/) and with the new image (under
   .cache/forge/refresh-locks/dist/<cell>/), then `invoke compare` them.
3. Only when the comparison finds no regression is the new lock offered: `--accept` writes it
   over the committed one; otherwise the diff and the command that accepts it are printed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forge import cli, images, locks
from forge.build import resolve_for
from forge.commands import build as build_cmd
from forge.commands import compare as compare_cmd
from forge.config import Config, backend_for
from forge.daemon import ensure_daemon
from forge.errors import ConfigError, RegressionFoundError, StepFailedError
from forge.log import Progress, summary_table
from forge.matrix import Request


@dataclass(frozen=True)
class Workspace:
    """Where a refresh keeps its candidate: the scratch lock directory and the candidate's dist/."""

    root: Path

    @property
    def lock_dir(self) -> Path:
        return self.root / "locks"

    @property
    def dist(self) -> Path:
        return self.root / "dist"


def workspace(cfg: Config) -> Workspace:
    return Workspace(cfg.cache / "refresh-locks")


def candidate_config(cfg: Config, ws: Workspace) -> Config:
    """The candidate's build settings: fresh resolution into the scratch lock dir, its own dist/."""
    return replace(cfg, lock_dir=ws.lock_dir, update_locks=True, dist=ws.dist)


def lock_changes(name: str, committed_dir: Path, fresh_dir: Path) -> list[str]:
    """The diff from the committed lock of image `name` to the freshly resolved one."""
    committed = locks.read_lock(locks.lock_path(name, committed_dir), name) or locks.Lock(name, {})
    fresh = locks.read_lock(locks.lock_path(name, fresh_dir), name) or locks.Lock(name, {})
    return locks.diff_locks(committed, fresh)


def offer(
    name: str, committed_dir: Path, fresh_dir: Path, regressions: int, accept: bool, command: str
) -> tuple[str, Path | None]:
    """What to tell the user about the new lock, and the lock written (only with --accept and no regression).

    Raises RegressionFoundError when the comparison found regressions: the new lock is not offered."""
    target = locks.lock_path(name, committed_dir)
    if regressions:
        raise RegressionFoundError(
            f"the refreshed packages of {name} regress {regressions} check(s); the new lock is not offered",
            "see the comparison above",
            f"keep {target}; pin the package that regressed, or report it upstream",
        )
    changes = lock_changes(name, committed_dir, fresh_dir)
    shown = "\n".join(changes[:40]) + (f"\n... and {len(changes) - 40} more" if len(changes) > 40 else "")
    if accept:
        tmp = target.parent / f".{target.name}.tmp"
        shutil.copyfile(locks.lock_path(name, fresh_dir), tmp)
        tmp.replace(target)
        return f"{target}: {len(changes)} package version(s) refreshed (commit it)\n{shown}", target
    return (
        f"no regression; {len(changes)} package version(s) would change in {target}:\n{shown}\n"
        f"accept them with: {command} --accept   (or: cp {locks.lock_path(name, fresh_dir)} {target})",
        None,
    )


def build_fresh_image(client: Any, spec: images.ToolchainSpec, mirror: str, ws: Workspace) -> str:
    """Build `spec`'s image with nothing pinned and record its lock in the scratch dir; returns the
    image's scratch tag (`adopt_fresh_image` gives it the tag its lock pins)."""
    base = images.ensure_base_image(client, spec.suite, mirror)
    planned = images.plan_image(spec, base.tag, base.id, lock_dir=ws.lock_dir, update=True)
    scratch = f"{planned.tag}-refresh-{int(time.time())}"  # never an older unpinned build's image
    dockerfile = images.render_dockerfile(planned.template, planned.args, source=str(planned.template_path))
    labels = {images.MANAGED_LABEL: "toolchain", "org.forge.name": spec.name, "org.forge.suite": spec.suite}
    images.build_image(client, dockerfile, scratch, labels, planned.context, fresh=True)
    try:
        found = locks.collect_lock(client, scratch, spec.name)
        locks.reconcile(locks.lock_path(spec.name, ws.lock_dir), found, update=True)
    except BaseException:
        client.images.remove(scratch)
        raise
    return scratch


def pinned_tag(client: Any, spec: images.ToolchainSpec, mirror: str, ws: Workspace) -> str:
    """The tag of the image the scratch lock pins (what the candidate build looks for)."""
    base = images.ensure_base_image(client, spec.suite, mirror)
    return images.plan_image(spec, base.tag, base.id, lock_dir=ws.lock_dir).tag


def adopt_fresh_image(client: Any, pinned: str, scratch: str) -> str:
    """Give the fresh image the tag `pinned` and drop the scratch tag. An existing image of that tag
    is left alone (it holds the same lock, and other builds use it): a shared tag never moves."""
    if not client.images.list(name=pinned):
        repository, _, tag = pinned.partition(":")
        client.images.get(scratch).tag(repository, tag)
    client.images.remove(scratch)
    return pinned


def run_refresh(target: str | None, pins: Mapping[str, str | None], options: Mapping[str, object]) -> None:
    """Resolve the cell's toolchain afresh, build with both locks, compare, then offer the new lock."""
    cfg, data = cli.setup({k: v for k, v in options.items() if k in ("backend", "debug", "force")})
    out = cli.console()
    request = Request.make(target or "host", pins, origin="invoke upgrade --refresh-locks")
    cell_cfg = backend_for(cfg, request.target)
    cell = resolve_for(request, data, cell_cfg).cell
    cell_target = data.toolchains.targets[cell.target]
    if cell_cfg.backend != "docker" or not images.has_image(cell, cell_target):
        raise ConfigError(
            f"{cell.id} builds without a forge toolchain image (backend {cell_cfg.backend or 'local'})",
            "--refresh-locks refreshes the package lock of a toolchain image",
            f"pick a docker cell, e.g. invoke upgrade --target {request.target} --backend docker --refresh-locks",
        )
    spec = images.ToolchainSpec.from_cell(cell, target=cell_target)
    ws = workspace(cfg)
    shutil.rmtree(ws.root, ignore_errors=True)
    ws.lock_dir.mkdir(parents=True)
    client = ensure_daemon(cfg.environment())
    mirror = images.debian_mirror(cfg.environment())
    scratch = build_fresh_image(client, spec, mirror, ws)
    changes = lock_changes(spec.name, locks.LOCK_DIR, ws.lock_dir)
    if not changes:
        client.images.remove(scratch)
        out.print(f"{spec.name}: the mirror and PyPI resolve exactly the committed lock; nothing to refresh")
        return
    tag = adopt_fresh_image(client, pinned_tag(client, spec, mirror, ws), scratch)
    out.print(f"{spec.name}: {len(changes)} package version(s) resolve differently today ({tag})", markup=False)
    progress = Progress(out, cfg.ci)
    report = lambda exc: out.print(exc.render(), markup=False)  # noqa: E731
    results = [
        *build_cmd.build_all([request], data, cell_cfg, progress, report),
        *build_cmd.build_all([request], data, candidate_config(cell_cfg, ws), progress, report),
    ]
    out.print(summary_table([build_cmd.summary_row(r) for r in results]))
    if any(r.dist is None for r in results):
        raise StepFailedError(f"cannot compare: {cell.id} did not build with both locks", "", "see the errors above")
    regressions = 0
    try:
        compare_cmd.run_compare(
            str(results[0].dist), str(results[1].dist), {**options, "out": str(ws.root / "compare")}
        )
    except RegressionFoundError as exc:
        out.print(exc.render(), markup=False)
        regressions = max(1, exc.why.count("\n") + 1)
    command = f"invoke upgrade --target {request.target} --refresh-locks"
    message, _ = offer(spec.name, locks.LOCK_DIR, ws.lock_dir, regressions, bool(options.get("accept")), command)
    out.print(message, markup=False)
