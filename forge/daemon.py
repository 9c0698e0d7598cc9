"""Reach a container engine, starting a local `dockerd` when none answers.

forge talks to the engine only through the Docker SDK, so Podman's Docker-compatible socket
works the same way as dockerd: point `DOCKER_HOST` at it. When `DOCKER_HOST` is unset and the
default socket does not answer, `ensure_daemon` installs Debian's `docker.io` if `dockerd` is
missing and starts it in the background with the flags measured to work on these machines
(overlay2 storage, no iptables, no default bridge: builds run with `--network none` and image
builds use the host network, so neither needs a bridge).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import docker
import docker.errors

from forge import host
from forge.config import Config
from forge.errors import BackendError, ForgeError, ToolMissingError
from forge.proc import spawn_detached

DOCKERD_FLAGS: tuple[str, ...] = ("--iptables=false", "--bridge=none", "--storage-driver=overlay2")
"""Flags that let dockerd run on a CI VM without netfilter privileges or a bridge."""

DEFAULT_LOG = Path("/var/log/forge-dockerd.log")

START_HINT = (
    "start one with `invoke docker.start` (installs docker.io and runs dockerd),\n"
    "or point DOCKER_HOST at a running engine (Podman: unix:///run/podman/podman.sock),\n"
    "or build on the host with `--backend local`"
)


API_TIMEOUT_S = 600
"""Per-request timeout of the returned client: a busy shared machine can take long to remove a container."""


def connect(env: Mapping[str, str], timeout_s: float = 5.0) -> docker.DockerClient | None:
    """A client for the engine `env` points at (DOCKER_HOST or the default socket), if it answers.

    The ping uses `timeout_s`; the client handed back waits up to API_TIMEOUT_S per request.
    """
    try:
        probe = docker.from_env(environment=dict(env), timeout=int(max(timeout_s, 1)))
        probe.ping()
        probe.close()
        return docker.from_env(environment=dict(env), timeout=API_TIMEOUT_S)
    except (docker.errors.DockerException, OSError):  # requests' errors are OSErrors
        return None


def daemon_unreachable_error(env: Mapping[str, str]) -> BackendError:
    """The error `invoke build` shows when no engine answers."""
    where = env.get("DOCKER_HOST") or "the default socket unix:///var/run/docker.sock"
    return BackendError(
        "no container engine is reachable",
        why=f"nothing answered at {where}",
        fix=START_HINT,
    )


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


def install_docker(env: Mapping[str, str], log_path: Path = host.DEFAULT_LOG) -> None:
    """Install the engine forge.host's table names (Debian's docker.io, as root); raise with the command otherwise."""
    host.ensure(
        (host.tool("dockerd"),), env=env, log_path=log_path, why="no container engine answers and none is installed"
    )


def start_dockerd(log_path: Path = DEFAULT_LOG) -> subprocess.Popen[bytes]:
    """Start dockerd in its own session so it outlives forge; output goes to `log_path`."""
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise ToolMissingError(
            "dockerd is not on PATH", fix=f"invoke doctor --fix (installs {host.tool('dockerd').apt})"
        )
    if os.geteuid() != 0:
        raise BackendError(
            "cannot start dockerd without root",
            fix="sudo invoke docker.start, or run rootless Podman and set DOCKER_HOST",
        )
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [dockerd, *DOCKERD_FLAGS]
    print(f"+ {' '.join(argv)} >{log_path} 2>&1 &", flush=True)
    return spawn_detached(argv, log_path)


def ensure_daemon(
    env: Mapping[str, str],
    *,
    install: bool = True,
    timeout_s: float = 60.0,
    log_path: Path = DEFAULT_LOG,
) -> docker.DockerClient:
    """A client for a running engine: the one `env` names, or a dockerd started here."""
    client = connect(env)
    if client is not None:
        return client
    if env.get("DOCKER_HOST"):
        # The user chose an engine; starting another one behind their back would hide the problem.
        raise daemon_unreachable_error(env)
    if shutil.which("dockerd") is None:
        if not install:
            raise daemon_unreachable_error(env)
        install_docker(env)
    proc = start_dockerd(log_path)
    try:
        return _wait_for_engine(env, proc, timeout_s, log_path)
    except BaseException:
        # Never leave a half-started engine behind (timeout, Ctrl-C): the next run starts a fresh one.
        stop_dockerd(proc)
        raise


def _wait_for_engine(
    env: Mapping[str, str], proc: subprocess.Popen[bytes], timeout_s: float, log_path: Path
) -> docker.DockerClient:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        client = connect(env, timeout_s=2.0)
        if client is not None:
            return client
        if proc.poll() is not None:
            raise BackendError(
                f"dockerd exited with status {proc.returncode} while starting",
                why=_tail(log_path),
                fix=f"read {log_path}; another dockerd may hold /var/run/docker.pid",
            )
        time.sleep(0.5)
    raise BackendError(
        f"dockerd did not answer within {timeout_s:.0f} s",
        why=_tail(log_path),
        fix=f"read {log_path}, then retry `invoke docker.start`",
    )


def stop_dockerd(proc: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """End a dockerd this process started (SIGTERM, then SIGKILL after `grace_s`); nothing if it already exited."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def default_backend(cfg: Config, env: Mapping[str, str], notify: Callable[[str], None]) -> Config:
    """When no backend was chosen: docker if an engine can be had (started here), else the host.

    Only the `host` target can fall back (other targets need their toolchain image), so the
    config keeps backend None then and `backend_for` still sends them to docker, which says why.
    """
    if cfg.backend is not None:
        return cfg
    try:
        ensure_daemon(env)
    except ForgeError as exc:
        notify(f"forge: no container engine ({exc.what}); the host target builds with the local backend")
        return cfg
    return replace(cfg, backend="docker")
