"""One advisory file lock for every "only one at a time" section of forge (cells, repros, images)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(path: Path, waiting: Callable[[str], None] | None = None, what: str = "") -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing).

    While another process holds it, `waiting` is told once, naming `what`, and the call blocks.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(f"waiting for {what} to finish (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
