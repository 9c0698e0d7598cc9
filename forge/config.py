"""forge's configuration, with one precedence: defaults < environment < command line.

`load_config` is the only place that reads the environment (passed in as a mapping).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from forge.errors import ConfigError
from forge.log import in_ci
from forge.matrix import Supported, load_supported
from forge.proc import run_command
from forge.toolchains import Toolchains, load_toolchains
from forge.yamlio import unknown

BACKENDS = ("local", "docker")
MAX_EPOCH = 253402300799  # 9999-12-31T23:59:59Z


@dataclass(frozen=True)
class Config:
    repo: Path
    dist: Path
    cache: Path
    backend: str | None
    """None: local for the host target, docker for every other target (see backend_for)."""
    jobs: int
    ccache: bool
    force: bool
    source_date_epoch: int
    ci: bool
    install_tools: bool
    debug: bool
    cells: int = 1
    """How many cells of a matrix build at once (`invoke build --matrix ... --jobs N`)."""
    update_locks: bool = False
    """Accept toolchain package versions that differ from toolchains/locks/ (and rewrite the locks)."""
    keep_container: bool = False
    """Keep a docker build's container and volumes after the build, to enter it (FORGE_KEEP_CONTAINER=1)."""
    signing_key: str | None = None
    """The gpg key `invoke release` signs SHA256SUMS with (FORGE_SIGNING_KEY)."""
    env: Mapping[str, str] | None = None
    """The environment the build's backends start from. None (what load_config gives): this process's
    environment, read here; repro gives each of its builds a varied copy (repro.varied_config)."""
    lock_dir: Path | None = None
    """Where docker builds read and write toolchain locks (None: toolchains/locks/; invoke upgrade
    --refresh-locks points its candidate at a scratch directory)."""
    debug_info: bool = True
    """Publish separate .debug files next to each Linux cell's install tree (a second, -g build;
    FORGE_DEBUG_INFO=0 leaves it out)."""
    wheels: bool = False
    """Also build, verify and NumPy-grid-test ember's Python wheel in each cell that has one
    (`--wheels`, FORGE_WHEELS=1); off by default: it adds minutes per cell (forge/wheel.py)."""
    verify: bool = True
    """Run the cell's checks: verify/'s suites, the engine's own tests, the wheel's tests and NumPy
    grid, the cross cells' parity with their native reference. False only for repro's second build,
    which builds what repro compares (the installed tree, the package, the wheel) and nothing else:
    when its bytes equal the verified first build's, that verification holds for them too."""
    docker_hosts: tuple[str, ...] = ()
    """The engines a matrix's docker cells are spread over, one cell each at a time (FORGE_DOCKER_HOSTS)."""

    def environment(self) -> dict[str, str]:
        """The environment the backends get: `env`, or this process's when none was given."""
        return process_environment() if self.env is None else dict(self.env)


def process_environment() -> dict[str, str]:
    """This process's environment: forge reads it here only, and passes it (or a Config) down."""
    return dict(os.environ)


@dataclass(frozen=True)
class Data:
    """Everything under matrix/ and toolchains/ that resolution needs, validated."""

    toolchains: Toolchains
    supported: Supported


def load_data(repo: Path) -> Data:
    return Data(load_toolchains(repo / "toolchains"), load_supported(repo / "matrix" / "supported.yaml"))


EPOCH_PATHS = ("engine", "verify", "toolchains", "WORKSPACE", ".bazelrc", "third_party")
"""What a build reads from the repository (its sources, toolchain files and locks, Bazel's workspace):
the default SOURCE_DATE_EPOCH is the time of the last commit that touched them, so a commit of docs
or of forge itself leaves every cell's plan, and with it dist/, up to date."""


def _git_epoch(repo: Path) -> int | None:
    """The time of the last commit touching EPOCH_PATHS; else of the last commit; None without git."""
    for pathspec in (["--", *EPOCH_PATHS], []):
        try:
            out = run_command(
                ["git", "-C", str(repo), "log", "-1", "--format=%ct", *pathspec],
                capture_output=True,
                text=True,
                check=False,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode == 0 and out.stdout.strip().isdigit():
            return int(out.stdout.strip())
    return None


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not an integer", "", f"set {name} to a whole number") from None


def load_config(repo: Path, env: Mapping[str, str], cli: Mapping[str, object]) -> Config:
    """Defaults, overridden by FORGE_* / SOURCE_DATE_EPOCH / CI, overridden by CLI values that are not None."""
    values: dict[str, object] = {
        "backend": None,
        "jobs": 2,
        "ccache": True,
        "force": False,
        "install_tools": True,
        "debug": False,
        "cells": 1,
        "update_locks": False,
    }
    if "FORGE_BACKEND" in env:
        values["backend"] = env["FORGE_BACKEND"]
    if "FORGE_JOBS" in env:
        values["jobs"] = _int("FORGE_JOBS", env["FORGE_JOBS"])
    if env.get("FORGE_NO_CCACHE"):
        values["ccache"] = False
    if "FORGE_CELLS" in env:
        values["cells"] = _int("FORGE_CELLS", env["FORGE_CELLS"])
    if env.get("FORGE_UPDATE_LOCKS", "") == "1":
        values["update_locks"] = True
    if env.get("FORGE_KEEP_CONTAINER", "") == "1":
        values["keep_container"] = True
    if env.get("FORGE_DEBUG_INFO", "1") not in ("0", "1"):
        raise ConfigError(
            f"FORGE_DEBUG_INFO={env['FORGE_DEBUG_INFO']!r}", "it is 1 (publish .debug files) or 0", "set it to 0 or 1"
        )
    values["debug_info"] = env.get("FORGE_DEBUG_INFO", "1") == "1"
    if env.get("FORGE_WHEELS", "") == "1":
        values["wheels"] = True
    values.update({key: value for key, value in cli.items() if value is not None})
    if env.get("FORGE_ROOT"):  # build another checkout (tests build a snapshot of this one)
        repo = Path(env["FORGE_ROOT"]).resolve()
        if not (repo / "toolchains").is_dir():
            raise ConfigError(f"FORGE_ROOT={repo} is not a forge checkout", "it has no toolchains/", "unset FORGE_ROOT")
    if values["backend"] is not None and values["backend"] not in BACKENDS:
        raise unknown("backend", str(values["backend"]), BACKENDS, "--backend")
    values["jobs"] = _int("--jobs", str(values["jobs"]))
    if int(str(values["jobs"])) < 1:
        raise ConfigError(
            f"{values['jobs']} compile jobs (--jobs, or FORGE_JOBS)",
            "ninja needs at least one job; 0 would reach cmake --build -j0",
            "pass --jobs 1 or more",
        )
    values["cells"] = _int("--jobs (cells at once)", str(values["cells"]))
    if int(str(values["cells"])) < 1:
        raise ConfigError(
            f"{values['cells']} cells at once (--jobs with --matrix, or FORGE_CELLS)",
            "at least one cell must build",
            "pass --jobs 1 or more",
        )
    container_limits(env)  # a malformed FORGE_PIDS_LIMIT / FORGE_MEMORY_LIMIT fails before any work
    source_mode(env)  # and so does a malformed FORGE_SOURCES
    epoch = _int("SOURCE_DATE_EPOCH", env["SOURCE_DATE_EPOCH"]) if "SOURCE_DATE_EPOCH" in env else _git_epoch(repo)
    if epoch is not None and not 0 <= epoch <= MAX_EPOCH:
        raise ConfigError(
            f"SOURCE_DATE_EPOCH={epoch} is out of range",
            "it is seconds since 1970-01-01 UTC; a negative one dates archives before 1970",
            "unset it (the time of the last commit touching the build's inputs is used) or set e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)",
        )
    return Config(
        repo=repo,
        dist=repo / "dist",
        cache=repo / ".cache" / "forge",
        backend=None if values["backend"] is None else str(values["backend"]),
        jobs=int(str(values["jobs"])),
        ccache=bool(values["ccache"]),
        force=bool(values["force"]),
        source_date_epoch=epoch if epoch is not None else 0,
        ci=in_ci(env),
        install_tools=bool(values["install_tools"]),
        debug=bool(values["debug"]),
        cells=int(str(values["cells"])),
        update_locks=bool(values["update_locks"]),
        keep_container=bool(values.get("keep_container", False)),
        signing_key=env.get("FORGE_SIGNING_KEY") or None,
        debug_info=bool(values["debug_info"]),
        wheels=bool(values.get("wheels", False)),
        docker_hosts=docker_hosts(env),
    )


@dataclass(frozen=True)
class ContainerLimits:
    """What one build container may use: processes (pids cgroup) and memory, in bytes."""

    pids: int
    memory: int


DEFAULT_PIDS_LIMIT = 4096  # ninja -j N x (compiler driver + cc1plus + as + ld) with room to spare
DEFAULT_MEMORY_LIMIT = "8g"
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
MIN_MEMORY = 256 * 1024**2


def container_limits(env: Mapping[str, str]) -> ContainerLimits:
    """FORGE_PIDS_LIMIT (default 4096) and FORGE_MEMORY_LIMIT (default 8g; b/k/m/g suffixes)."""
    pids = _int("FORGE_PIDS_LIMIT", env.get("FORGE_PIDS_LIMIT", str(DEFAULT_PIDS_LIMIT)))
    if pids < 64:
        raise ConfigError(
            f"FORGE_PIDS_LIMIT={pids} is too small", "a build runs dozens of processes", "set 64 or more (default 4096)"
        )
    text = env.get("FORGE_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT).strip().lower()
    number, unit = text.rstrip("bkmg"), text[len(text.rstrip("bkmg")) :]
    if not number.isdigit() or unit not in _UNITS or int(number) * _UNITS[unit] < MIN_MEMORY:
        raise ConfigError(
            f"FORGE_MEMORY_LIMIT={text!r} is not a memory size of at least 256m",
            "it caps each build container's memory",
            "set e.g. FORGE_MEMORY_LIMIT=8g (suffixes b, k, m, g), or unset it",
        )
    return ContainerLimits(pids=pids, memory=int(number) * _UNITS[unit])


@dataclass(frozen=True)
class RemoteCache:
    """ccache's shared remote storage (FORGE_CCACHE_REMOTE): a Redis server on TCP or on a unix socket."""

    url: str

    @property
    def socket(self) -> Path | None:
        """The unix socket of a redis+unix: URL (the only kind a build container, which has no network, can reach)."""
        return Path(self.url.split(":", 1)[1].split("|", 1)[0]) if self.url.startswith("redis+unix:") else None


def ccache_remote(env: Mapping[str, str]) -> RemoteCache | None:
    """FORGE_CCACHE_REMOTE: redis://HOST[:PORT] or redis+unix:/PATH/TO/SOCKET; unset means a local cache only."""
    text = env.get("FORGE_CCACHE_REMOTE", "").strip()
    if not text:
        return None
    tcp = text.startswith("redis://") and len(text) > len("redis://")
    unix = text.startswith("redis+unix:/") and len(text) > len("redis+unix:/")
    if not (tcp or unix) or any(c.isspace() for c in text):
        raise ConfigError(
            f"FORGE_CCACHE_REMOTE={text!r} is not a Redis URL",
            "ccache shares its cache through Redis: redis://HOST:PORT, or redis+unix:/PATH for a socket",
            "e.g. FORGE_CCACHE_REMOTE=redis+unix:/run/redis/redis.sock (build containers reach only sockets)",
        )
    return RemoteCache(text)


def backend_for(cfg: Config, target: str) -> Config:
    """The config with its backend decided: as asked, else local for `host` and docker otherwise."""
    if cfg.backend is not None:
        return cfg
    return replace(cfg, backend="local" if target == "host" else "docker")


def inside(root: Path, *parts: str, what: str) -> Path:
    """root/parts, or a ConfigError when (symlinks resolved) that path would leave root.

    Paths made from read input (a manifest's cell id, a lock name) go through here before
    anything creates, deletes or reads them.
    """
    path = root.joinpath(*parts)
    if any(part in ("", ".", "..") or "/" in part or "\0" in part for part in parts) or not (
        path.resolve().is_relative_to(root.resolve())
    ):
        raise ConfigError(
            f"{what} {'/'.join(parts)!r} would lead outside {root}",
            "forge only creates, removes and reads files inside its own directories",
            "use the file forge wrote, unedited",
        )
    return path


SOURCE_MODES = ("auto", "mount", "copy")
ENGINE_SCHEMES = ("unix://", "tcp://", "ssh://", "http://", "https://")


def source_mode(env: Mapping[str, str]) -> str:
    """FORGE_SOURCES: how a docker build's sources reach its container. `mount` binds the checkout
    read-only (the engine must see this machine's paths), `copy` puts a tarball of it into a volume
    (any engine), `auto` (the default) copies unless the engine is a local unix socket."""
    mode = env.get("FORGE_SOURCES", "").strip() or "auto"
    if mode not in SOURCE_MODES:
        raise ConfigError(
            f"FORGE_SOURCES={mode!r} is not a way to hand sources to a container",
            "mount binds the checkout (a local engine), copy sends a tarball of it (any engine)",
            f"set FORGE_SOURCES to one of {', '.join(SOURCE_MODES)}, or unset it (auto)",
        )
    return mode


def docker_hosts(env: Mapping[str, str]) -> tuple[str, ...]:
    """FORGE_DOCKER_HOSTS=URL,URL,...: the engines a matrix's docker cells are spread over (one cell
    per engine at a time); empty means the one engine DOCKER_HOST (or the default socket) names."""
    text = env.get("FORGE_DOCKER_HOSTS", "").strip()
    hosts = tuple(h.strip() for h in text.split(",")) if text else ()
    for entry in hosts:
        if not entry.startswith(ENGINE_SCHEMES) or len(entry) <= len(entry.split("//", 1)[0]) + 2:
            raise ConfigError(
                f"FORGE_DOCKER_HOSTS entry {entry!r} is not a Docker engine URL",
                f"each comma-separated entry is what DOCKER_HOST would hold ({', '.join(ENGINE_SCHEMES)}...)",
                "e.g. FORGE_DOCKER_HOSTS=unix:///var/run/docker.sock,tcp://builder2:2376",
            )
    if len(set(hosts)) != len(hosts):
        raise ConfigError(
            f"FORGE_DOCKER_HOSTS={text!r} names an engine twice",
            "each engine builds one cell at a time; a repeated entry would not add one",
            "list each engine once",
        )
    return hosts
