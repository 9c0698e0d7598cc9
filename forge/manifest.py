"""Hashes, manifest.json, and the atomic publication of dist/<cell-id>/."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

SKIP_DIRS = frozenset({".git", "__pycache__", ".cache", "dist", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
MANIFEST = "manifest.json"
SCHEMA = 1


def _skipped(name: str) -> bool:
    return name in SKIP_DIRS or name.startswith("build")


def iter_files(root: Path) -> Iterator[Path]:
    """Files under root in a stable order, skipping build and cache directories."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
        for name in sorted(filenames):
            yield Path(dirpath) / name


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def source_tree_hash(repo: Path, subdirs: Iterable[str]) -> str:
    """sha256 over (relative path, executable bit, content) of every source file in subdirs."""
    digest = hashlib.sha256()
    for sub in subdirs:
        for path in iter_files(repo / sub):
            rel = path.relative_to(repo).as_posix()
            mode = "x" if os.access(path, os.X_OK) else "-"
            digest.update(f"{rel}\0{mode}\0".encode())
            digest.update(
                path.readlink().as_posix().encode() if path.is_symlink() else bytes.fromhex(sha256_file(path))
            )
    return digest.hexdigest()


def file_records(tree: Path) -> dict[str, dict[str, Any]]:
    """relative path -> {sha256, size} (or {link} for symlinks) for every file under tree."""
    records: dict[str, dict[str, Any]] = {}
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]):
            path = Path(dirpath) / name
            rel = path.relative_to(tree).as_posix()
            if path.is_symlink():
                records[rel] = {"link": path.readlink().as_posix()}
            else:
                records[rel] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    return records


def input_hash(parts: dict[str, Any]) -> str:
    """Hash of everything that determines a build's output (source, cell, toolchain, plan)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_manifest(cell_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((cell_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def is_up_to_date(cell_dir: Path, wanted_input_hash: str) -> bool:
    """True when dist/<cell> holds a passed build of the same inputs, with every file intact."""
    manifest = read_manifest(cell_dir)
    if manifest is None or manifest.get("input_hash") != wanted_input_hash or manifest.get("result") != "passed":
        return False
    install = cell_dir / "install"
    for rel, record in manifest.get("files", {}).items():
        path = install / rel
        if "link" in record:
            if not path.is_symlink() or path.readlink().as_posix() != record["link"]:
                return False
        elif not path.is_file() or path.stat().st_size != record["size"]:
            return False
    return True


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Defer Ctrl-C and SIGTERM while the two renames of a publish run, so they happen together or
    not at all.

    Python runs signal handlers in the main thread only, so a deferring handler catches the signal
    whichever thread the kernel delivered it to (pthread_sigmask would block it in the calling
    thread alone). Off the main thread handlers cannot be changed; the main thread then sees the
    signal as usual.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def defer(signum: int, _frame: object) -> None:
        pending.append(signum)

    previous = {sig: signal.signal(sig, defer) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        for signum in pending:
            signal.raise_signal(signum)


def staging_dir(dist: Path, cell_id: str) -> Path:
    """A fresh temporary directory next to dist/<cell_id> (same filesystem, so rename is atomic)."""
    dist.mkdir(parents=True, exist_ok=True)
    tmp = dist / f".tmp-{cell_id}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    return tmp


def recover(dist: Path, cell_id: str) -> None:
    """Undo a publish cut short between its two renames (power loss): restore the old result."""
    final = dist / cell_id
    for old in sorted(dist.glob(f".old-{cell_id}-*")):
        if not final.exists():
            old.rename(final)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in dist.glob(f".tmp-{cell_id}-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or not Path(f"/proc/{pid}").exists():
            shutil.rmtree(tmp, ignore_errors=True)


def publish(tmp: Path, dist: Path, cell_id: str) -> Path:
    """Replace dist/<cell_id> with tmp: readers see the old tree or the new one, never a mix."""
    final = dist / cell_id
    old = dist / f".old-{cell_id}-{os.getpid()}"
    with sigint_blocked():
        if final.exists():
            final.rename(old)
        tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final
