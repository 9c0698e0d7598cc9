"""The one subprocess helper: echo the command, log its output, check the exit code.

Children run in their own process group so Ctrl-C ends the whole tree (ninja, compilers,
ctest) before forge reports the interrupt.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forge.errors import BuildInterrupted, StepFailedError, ToolMissingError

TAIL_LINES = 40


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines of a log file ("" when it does not exist)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def end_process_group(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the child's process group, then SIGKILL what is left after `grace_s`."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, grace_s)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_logged(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    log_path: Path,
) -> None:
    """Run argv with output appended to log_path; raise StepFailedError with the tail on failure."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = shlex.join(argv)
    with log_path.open("ab") as log:
        log.write(f"$ {command}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise ToolMissingError(
                f"`{argv[0]}` not found", f"needed to run: {command}", "run `invoke doctor` to see how to install it"
            ) from exc
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            end_process_group(proc)
            raise BuildInterrupted("interrupted", f"while running: {command}") from None
    if code != 0:
        short = command if len(command) <= 160 else command[:157] + "..."
        raise StepFailedError(
            f"command exited with {code}: {short}",
            f"last lines of {log_path}:\n{tail(log_path)}",
            f"read the full log: {log_path}",
        )


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float | None = None,
    text: bool = False,
    capture_output: bool = False,
    check: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """A short command whose output the caller reads (git, gpg, c++filt, ember-benchmark, ...): the
    one door to subprocess.run outside this module, with its arguments and exceptions."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        input=input,
        timeout=timeout,
        text=text,
        capture_output=capture_output,
        check=check,
    )


def spawn_detached(argv: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
    """A long-lived background process (dockerd) in its own session, its output appended to log_path."""
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def capture(argv: Sequence[str], *, timeout_s: float = 20.0) -> str | None:
    """Stdout of a short probe command, or None when it is missing or fails."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout
