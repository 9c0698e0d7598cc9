"""Facts about the host machine, and the one table of host tools forge runs (and installs).

`TOOLS` is the only place that says which programs forge runs on the host, how to tell one is
there, which Debian or PyPI package brings it and which tasks need it. Each task calls
`ensure_tools(task, ...)` once before it starts; `invoke doctor` prints the table and
`invoke doctor --fix` installs everything missing. Installing is robust against a machine left
half-way by an earlier run: apt waits for the dpkg lock, an interrupted dpkg is finished with
`dpkg --configure -a` first, and `apt-get update` runs once per process.

Probing happens here, at the edge; everything else receives the results as values.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from forge import filelock, proc
from forge.errors import BuildInterrupted, ConfigError, StepFailedError, ToolMissingError
from forge.resolve import HostFacts
from forge.toolchains import Checker, load_toolchains


class DetectKind(Enum):
    EXECUTABLES = "on PATH"  # every name in `what` is an executable on PATH
    FILE = "file"  # the path `what[0]` exists
    MODULE = "python3 -m"  # `python3 -c "import <what[0]>"` works (python3: the one on PATH)


@dataclass(frozen=True)
class Detect:
    """How to tell a tool is there, as data (so `invoke doctor` can print it)."""

    kind: DetectKind
    what: tuple[str, ...]

    def describe(self) -> str:
        if self.kind is DetectKind.FILE:
            return self.what[0]
        if self.kind is DetectKind.MODULE:
            return f"python3 -c 'import {self.what[0]}'"
        return " ".join(self.what)


def on_path(*names: str) -> Detect:
    return Detect(DetectKind.EXECUTABLES, names)


def file_exists(path: str) -> Detect:
    return Detect(DetectKind.FILE, (path,))


def python_module(name: str) -> Detect:
    return Detect(DetectKind.MODULE, (name,))


def module_python() -> str:
    """The python3 that runs `python3 -m <module>` tools (zig's toolchain wrappers): PATH's, else ours."""
    return shutil.which("python3") or sys.executable


def detected(detect: Detect) -> bool:
    """Whether `detect` finds its tool on this machine."""
    if detect.kind is DetectKind.EXECUTABLES:
        return all(shutil.which(name) is not None for name in detect.what)
    if detect.kind is DetectKind.FILE:
        return Path(detect.what[0]).exists()
    return proc.capture([module_python(), "-c", f"import {detect.what[0]}"]) is not None


# Task names are invoke's (`invoke build`, `invoke doctor`, ...).
TASKS: tuple[str, ...] = (
    "build", "verify", "rebuild", "repro", "images", "docker.start", "compare", "upgrade", "release", "test",
)  # fmt: skip
LOCAL_TASKS = frozenset({"build", "verify", "rebuild", "repro", "test"})
"""Tasks that build or verify on the host (the local backend; `verify` always does)."""
IMAGE_TASKS = frozenset({"build", "rebuild", "repro", "images", "test"})
"""Tasks that make toolchain images (the docker backend)."""
EMULATED = frozenset({Checker.QEMU})
"""Targets of the qemu family (toolchains/targets.yaml `checker: qemu`): Linux run under qemu-user."""
MACOS = frozenset({Checker.MACHO})
"""Targets of the zig family (`checker: macho`): macOS compiled by zig, checked, not run."""
TARGETS_DIR = Path(__file__).resolve().parents[1] / "toolchains"


def family_of(target: str, toolchains_dir: Path = TARGETS_DIR) -> Checker | None:
    """The family (`checker`) toolchains/targets.yaml gives `target`; None for a name it lacks."""
    found = load_toolchains(toolchains_dir).targets.get(target)
    return found.checker if found is not None else None


@dataclass(frozen=True)
class HostTool:
    """A program (or headers) forge needs on the host, how to tell it is there, and where it comes from.

    `apt` / `pip`: the Debian package or the PyPI requirement that brings it (neither: forge
    cannot install it and `hint` says how). `tasks`: the invoke tasks that need it;
    `backend` / `families` narrow that to builds with that backend / of targets of those families
    (by their `checker` in toolchains/targets.yaml, so a new target of a family needs no row here).
    `executables`: every program forge runs from it (a unit test checks each call site's argv[0]).
    `optional`: the tasks work without it, less well (installed when forge can, else a note).
    """

    name: str
    detect: Detect
    apt: str | None = None
    pip: str | None = None
    tasks: frozenset[str] = frozenset()
    backend: str | None = None
    families: frozenset[Checker] | None = None
    executables: tuple[str, ...] = ()
    hint: str = ""
    optional: bool = False

    def source(self) -> str:
        """How forge installs it, in words."""
        if self.apt:
            return f"apt: {self.apt}"
        if self.pip:
            return f"pip: {self.pip}"
        return f"by hand: {self.hint}"

    def needed_by(self) -> str:
        """Which tasks need it, in words (for `invoke doctor`)."""
        tasks = ", ".join(t for t in TASKS if t in self.tasks) or "-"
        where = [f"--backend {self.backend}"] if self.backend else []
        where += [f"{' and '.join(sorted(f.value for f in self.families))} targets"] if self.families else []
        return f"{tasks} ({'; '.join(where)})" if where else tasks

    def wanted(self, task: str, backend: str | None, target: str | None) -> bool:
        """Needed by `task` with `backend` for `target` (None: any backend / any target)."""
        if task not in self.tasks:
            return False
        if self.backend is not None and backend is not None and self.backend != backend:
            return False
        if self.families is None or target is None:
            return True
        family = family_of(target)
        return family is None or family in self.families  # an unknown name: the resolver refuses it


TOOLS: tuple[HostTool, ...] = (
    # local builds: CMake + Ninja + the host compiler, and the engine's one header-only dependency
    HostTool(
        "cmake",
        on_path("cmake", "ctest"),
        apt="cmake",
        tasks=LOCAL_TASKS,
        backend="local",
        executables=("cmake", "ctest"),
    ),
    HostTool("ninja", on_path("ninja"), apt="ninja-build", tasks=LOCAL_TASKS, backend="local", executables=("ninja",)),
    HostTool("c++", on_path("c++"), apt="g++", tasks=LOCAL_TASKS, backend="local", executables=("c++", "g++")),
    HostTool(
        "eigen3 headers",
        file_exists("/usr/include/eigen3/Eigen/Core"),
        apt="libeigen3-dev",
        tasks=LOCAL_TASKS,
        backend="local",
    ),
    HostTool(
        "python3", on_path("python3"), apt="python3", tasks=LOCAL_TASKS, backend="local", executables=("python3",)
    ),
    HostTool(
        "ccache",
        on_path("ccache"),
        apt="ccache",
        tasks=LOCAL_TASKS,
        backend="local",
        executables=("ccache",),
        optional=True,  # without it every object is compiled again
    ),
    HostTool(
        "c++filt",
        on_path("c++filt"),
        apt="binutils",
        tasks=LOCAL_TASKS,
        families=EMULATED | MACOS,  # cross cells' symbol parity checks run on the host, either backend
        executables=("c++filt",),
    ),
    HostTool(
        "git",
        on_path("git"),
        apt="git",
        tasks=frozenset({"build", "rebuild", "repro", "test"}),  # the commit and SOURCE_DATE_EPOCH of a checkout
        executables=("git",),
        optional=True,  # without it a checkout's epoch is derived from its tree hash
    ),
    # cross targets built on the host: qemu-user runs ARM programs (forge names the emulator in
    # CMAKE_CROSSCOMPILING_EMULATOR, so binfmt_misc is not needed); zig compiles for macOS. The
    # cross g++ packages depend on the cell's gcc: toolchains/targets.yaml names them (forge.targets.cross).
    HostTool(
        "qemu-user",
        on_path("qemu-aarch64", "qemu-arm"),
        apt="qemu-user",
        tasks=LOCAL_TASKS,
        backend="local",
        families=EMULATED,
        executables=("qemu-aarch64", "qemu-arm"),
    ),
    HostTool(
        "zig",
        python_module("ziglang"),
        pip="ziglang==0.15.1",
        tasks=LOCAL_TASKS,
        backend="local",
        families=MACOS,
    ),
    # the docker backend: the engine, and debootstrap for base images (tar packs the rootfs)
    HostTool(
        "dockerd",
        on_path("dockerd"),
        apt="docker.io",
        tasks=IMAGE_TASKS | {"docker.start"},
        backend="docker",
        executables=("dockerd",),
    ),
    HostTool(
        "debootstrap",
        on_path("debootstrap"),
        apt="debootstrap",
        tasks=IMAGE_TASKS,
        backend="docker",
        executables=("debootstrap",),
    ),
    HostTool("tar", on_path("tar"), apt="tar", tasks=IMAGE_TASKS, backend="docker", executables=("tar",)),
    # repro: the shifted wall clock of a local second build, and the per-file diffs
    HostTool(
        "faketime",
        on_path("faketime"),
        apt="faketime",
        tasks=frozenset({"repro", "test"}),
        backend="local",
        executables=("faketime",),
        optional=True,  # without it repro's second build keeps the real clock, and its report says so
    ),
    HostTool(
        "diffoscope",
        on_path("diffoscope"),
        apt="diffoscope-minimal",  # Debian's build brings the tools it compares with (binutils, file)
        tasks=frozenset({"repro", "test"}),
        executables=("diffoscope",),
        optional=True,  # without it repro still names the differing files
    ),
    # invoke test: the C++ format check (ruff, mypy and pytest come with `pip install -e '.[test]'`)
    HostTool(
        "clang-format",
        on_path("clang-format"),
        apt="clang-format",
        tasks=frozenset({"test"}),
        executables=("clang-format",),
    ),
    # invoke compare / upgrade: libabigail's ABI comparison (the rest of compare reads ELF itself)
    HostTool(
        "abidiff",
        on_path("abidiff"),
        apt="abigail-tools",
        tasks=frozenset({"compare", "upgrade", "test"}),
        executables=("abidiff",),
        optional=True,  # without it the ABI section reads "not run" with this reason
    ),
    # invoke release: the detached signature of SHA256SUMS when FORGE_SIGNING_KEY is set
    HostTool(
        "gpg",
        on_path("gpg"),
        apt="gnupg",
        tasks=frozenset({"release", "test"}),
        executables=("gpg", "gpgconf"),
        optional=True,  # only a signed release needs it
    ),
    # the test suite's own services and browser: the shared compiler cache and the report check
    HostTool(
        "redis-server",
        on_path("redis-server"),
        apt="redis-server",
        tasks=frozenset({"test"}),
        executables=("redis-server",),
        optional=True,
    ),
    HostTool(
        "chromium",
        on_path("chromium"),
        apt="chromium",
        tasks=frozenset({"test"}),
        executables=("chromium",),
        optional=True,
    ),
    # the installer itself
    HostTool("apt-get", on_path("apt-get", "dpkg"), hint="a Debian-based system", executables=("apt-get", "dpkg")),
    # found, not installed: CUDA cells get nvcc from their image; GPU checks run where a driver is
    HostTool(
        "nvcc",
        on_path("nvcc"),
        hint="pip install nvidia-cuda-nvcc (13.x wheels hold nvcc), or Debian non-free nvidia-cuda-toolkit",
        executables=("nvcc",),
    ),
    HostTool("nvidia-smi", on_path("nvidia-smi"), hint="an NVIDIA GPU and its driver", executables=("nvidia-smi",)),
)


def tool(name: str) -> HostTool:
    """The table's entry called `name`."""
    for entry in TOOLS:
        if entry.name == name:
            return entry
    raise ConfigError(
        f"no host tool {name!r} in forge.host.TOOLS", fix=f"use one of {', '.join(t.name for t in TOOLS)}"
    )


def tools_for(task: str, *, backend: str | None = None, target: str | None = None) -> tuple[HostTool, ...]:
    """The tools `task` needs (with `backend`, for `target`; None means any)."""
    if task not in TASKS:
        raise ConfigError(f"unknown task {task!r} for forge.host.tools_for", fix=f"use one of {', '.join(TASKS)}")
    return tuple(t for t in TOOLS if t.wanted(task, backend, target))


# --- host facts ---------------------------------------------------------------------------------


def first_version(text: str | None) -> str | None:
    """The first dotted version number in a tool's --version output."""
    if not text:
        return None
    match = re.search(r"\d+\.\d+(\.\d+)?", text)
    return match.group(0) if match else None


def os_codename(os_release: Path = Path("/etc/os-release")) -> str:
    """VERSION_CODENAME from os-release ("unknown" when absent)."""
    try:
        text = os_release.read_text()
    except OSError:
        return "unknown"
    match = re.search(r"^VERSION_CODENAME=\"?([^\"\n]+)", text, re.MULTILINE)
    return match.group(1) if match else "unknown"


def probe_host_facts() -> HostFacts:
    """The host toolchain as a cell would describe it (gcc major, python minor, cmake minor)."""
    gcc = (proc.capture(["c++", "-dumpversion"]) or "0").strip().split(".")[0]
    cmake = first_version(proc.capture(["cmake", "--version"])) or "0"
    python = f"{sys.version_info.major}.{sys.version_info.minor}"  # the interpreter running forge
    return HostFacts(
        suite=os_codename(),
        gcc=gcc,
        python=python,
        cmake=".".join(cmake.split(".")[:2]),
        arch=platform.machine(),
    )


# --- installing -----------------------------------------------------------------------------------

APT_OPTIONS: tuple[str, ...] = ("-o", "DPkg::Lock::Timeout=600", "-o", "Acquire::Retries=3")
"""apt waits up to 10 minutes for another dpkg/apt to finish instead of failing at once."""
LOCK_WAIT_S = 600.0
LOCK_MESSAGES = ("Could not get lock", "Unable to acquire the dpkg frontend lock", "Unable to lock directory")
INTERRUPTED_MESSAGE = "dpkg was interrupted"
DPKG_DIR = Path("/var/lib/dpkg")
INSTALL_LOCK = Path(tempfile.gettempdir()) / "forge-host-tools.lock"  # one forge installing at a time here
DEFAULT_LOG = Path("/var/log/forge-host-tools.log")  # next to dockerd's log; installing needs root anyway

_apt_updated = False
_apt_update_lock = threading.Lock()


def missing_tools(tools: Iterable[HostTool], present: Callable[[HostTool], bool] | None = None) -> list[HostTool]:
    """The tools of `tools` that are not on this machine."""
    check = present or (lambda t: detected(t.detect))
    return [t for t in tools if not check(t)]


def apt_install_argv(packages: Iterable[str]) -> list[str]:
    return ["apt-get", *APT_OPTIONS, "install", "-y", "--no-install-recommends", *sorted(set(packages))]


def pip_install_argv(python: str, requirements: Iterable[str]) -> list[str]:
    return [python, "-m", "pip", "install", "--disable-pip-version-check", *sorted(set(requirements))]


def manual_commands(missing: list[HostTool], python: str) -> list[str]:
    """The shell commands a user would run to install `missing` (one per installer)."""
    commands = []
    if apt := [t.apt for t in missing if t.apt]:
        commands.append(
            f"sudo {shlex.join(['apt-get', 'install', '-y', '--no-install-recommends', *sorted(set(apt))])}"
        )
    if pip := [t.pip for t in missing if t.pip]:
        commands.append(shlex.join(pip_install_argv(python, pip)))
    commands += [f"{t.name}: {t.hint}" for t in missing if not t.apt and not t.pip]
    return commands


@dataclass(frozen=True)
class Installer:
    """Where and how installs run: the environment, the log, and whether apt may be used."""

    env: Mapping[str, str]
    log_path: Path
    can_apt: bool
    python: str
    notify: Callable[[str], None] = print
    dpkg_dir: Path = DPKG_DIR

    @classmethod
    def for_host(cls, env: Mapping[str, str], log_path: Path, notify: Callable[[str], None] = print) -> Installer:
        can_apt = os.geteuid() == 0 and shutil.which("apt-get") is not None and shutil.which("dpkg") is not None
        return cls(env, log_path, can_apt, module_python(), notify)


Scope = tuple[str | None, str | None]
"""(backend, target) a task runs with; None means any (`invoke test` needs every backend's tools)."""


def ensure_tools(
    task: str,
    *,
    env: Mapping[str, str],
    log_path: Path = DEFAULT_LOG,
    scopes: Iterable[Scope] = ((None, None),),
    extra: tuple[HostTool, ...] = (),
    install: bool = True,
    present: Callable[[HostTool], bool] | None = None,
    installer: Installer | None = None,
) -> list[str]:
    """Install what `task` needs (for each of its (backend, target) scopes) and is missing, plus `extra`.

    Returns the packages installed. Raises ToolMissingError naming every missing tool and the
    exact commands when it cannot install them (not root, no apt-get, `install=False`, or a
    tool forge cannot install).
    """
    wanted = [t for backend, target in scopes for t in tools_for(task, backend=backend, target=target)]
    tools = tuple(dict.fromkeys([*wanted, *extra]))  # once each, table order
    return ensure(
        tools,
        env=env,
        log_path=log_path,
        why=f"`invoke {task}` needs them",
        install=install,
        present=present,
        installer=installer,
    )


def ensure(
    tools: tuple[HostTool, ...],
    *,
    env: Mapping[str, str],
    why: str,
    log_path: Path = DEFAULT_LOG,
    install: bool = True,
    present: Callable[[HostTool], bool] | None = None,
    installer: Installer | None = None,
) -> list[str]:
    """Install whichever of `tools` is missing; returns the packages installed (see ensure_tools)."""
    missing = missing_tools(tools, present)
    if not missing:
        return []
    runner = installer or Installer.for_host(env, log_path)
    return install_tools(missing, runner, why=why, install=install, present=present)


def require(tool: HostTool, why: str) -> None:
    """Fail with the table's install command when `tool` is missing (installing is the task's job)."""
    ensure((tool,), env={}, why=why, install=False)


def install_tools(
    missing: list[HostTool],
    installer: Installer,
    why: str,
    install: bool = True,
    present: Callable[[HostTool], bool] | None = None,
) -> list[str]:
    """Install `missing` with apt-get and pip; raise ToolMissingError with the commands when it cannot."""
    names = ", ".join(t.name for t in missing)
    commands = manual_commands(missing, installer.python)
    blocked = [t for t in missing if not t.apt and not t.pip]
    if not install or blocked or (any(t.apt for t in missing) and not installer.can_apt):
        reason = "" if install else " (installing was not asked for)"
        if not blocked and install:
            reason = " (installing Debian packages needs root and apt-get)"
        required = [t for t in missing if not t.optional]
        if not required:  # the task works without them, less well: say so and go on
            installer.notify(f"forge: going on without {names}{reason}; to add them: {'; '.join(commands)}")
            return []
        needed = ", ".join(t.name for t in required)
        raise ToolMissingError(f"missing host tools: {needed}", f"{why}{reason}", "\n".join(commands))
    apt = sorted({t.apt for t in missing if t.apt})
    pip = sorted({t.pip for t in missing if t.pip})
    installer.notify(f"forge: installing {names} ({'; '.join(commands)})")
    with filelock.exclusive(INSTALL_LOCK, installer.notify, "another forge installing host tools"):
        if apt:
            apt_install(apt, installer)
        if pip:
            proc.run_logged(
                pip_install_argv(installer.python, pip), cwd=Path("/"), env=installer.env, log_path=installer.log_path
            )
    still = missing_tools(missing, present)
    if still:
        raise ToolMissingError(
            f"installed {', '.join(apt + pip)} but {', '.join(t.name for t in still)} still cannot be found",
            f"read {installer.log_path}",
            "check PATH (a pip install may put programs next to another python)",
        )
    return apt + pip


def apt_install(packages: list[str], installer: Installer) -> None:
    """`apt-get install` after finishing any interrupted dpkg run and one `apt-get update`."""
    apt_env = {**installer.env, "DEBIAN_FRONTEND": "noninteractive"}
    repair_dpkg(installer)
    global _apt_updated
    with _apt_update_lock:
        if not _apt_updated:
            run_apt(["apt-get", *APT_OPTIONS, "update"], apt_env, installer)
            _apt_updated = True
    try:
        run_apt(apt_install_argv(packages), apt_env, installer)
    except BuildInterrupted:
        installer.notify("forge: interrupted while installing; finishing dpkg's configuration (dpkg --configure -a)")
        with contextlib.suppress(Exception):
            repair_dpkg(installer)
        raise


def run_apt(argv: list[str], env: Mapping[str, str], installer: Installer, wait_s: float = LOCK_WAIT_S) -> None:
    """Run an apt/dpkg command; wait while another process holds apt's locks, repair an interrupted dpkg once."""
    deadline = time.monotonic() + wait_s
    repaired = False
    while True:
        try:
            proc.run_logged(argv, cwd=Path("/"), env=env, log_path=installer.log_path)
            return
        except StepFailedError as exc:
            if any(m in exc.why for m in LOCK_MESSAGES) and time.monotonic() < deadline:
                installer.notify(f"forge: apt is busy (another package manager holds its lock); retrying {argv[0]}")
                time.sleep(3)
                continue
            if INTERRUPTED_MESSAGE in exc.why and not repaired:
                repaired = True
                repair_dpkg(installer, force=True)
                continue
            raise StepFailedError(
                exc.what,
                exc.why,
                f"{exc.fix}; then run `invoke doctor --fix` (it finishes an interrupted install first)",
            ) from None


def dpkg_interrupted(dpkg_dir: Path) -> bool:
    """dpkg left unfinished work: a journal in updates/, or packages unpacked but not configured."""
    updates = dpkg_dir / "updates"
    if updates.is_dir() and any(p.name.isdigit() for p in updates.iterdir()):
        return True
    audit = proc.capture(["dpkg", "--audit"]) or ""
    return bool(audit.strip())


def dpkg_idle(dpkg_dir: Path, wait_s: float = LOCK_WAIT_S) -> bool:
    """True once no other process holds dpkg's frontend lock; False when `wait_s` passed first.

    The lock is only tested (taken and dropped at once): the dpkg run that follows takes it itself.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with (dpkg_dir / "lock-frontend").open("a") as handle:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.lockf(handle, fcntl.LOCK_UN)
            return True
        except (FileNotFoundError, PermissionError):  # no dpkg here, or not ours to test: dpkg itself will say
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(2)


def repair_dpkg(installer: Installer, force: bool = False) -> None:
    """Run `dpkg --configure -a` when an earlier dpkg run was interrupted (and nobody else is running one)."""
    if not dpkg_idle(installer.dpkg_dir) or not (force or dpkg_interrupted(installer.dpkg_dir)):
        return
    installer.notify("forge: an earlier package install was interrupted; finishing it (dpkg --configure -a)")
    env = {**installer.env, "DEBIAN_FRONTEND": "noninteractive"}
    run_apt(["dpkg", "--configure", "-a"], env, installer)
