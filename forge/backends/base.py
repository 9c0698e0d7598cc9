"""The one small interface every backend implements.

A build is a plan of pure-data steps (`forge.plan.Step`) whose paths are written as the backend
sees them. The host decides *where* things live (`Workspace` of host paths); the backend's
`prepare` answers with the same workspace as seen from inside it (identical for `local`,
`/src`, `/build`, ... for `docker`). `build.py` then runs each step with `run` and collects the
installed tree with `copy_out`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType

from forge.errors import BackendError, ConfigError
from forge.matrix import Cell


@dataclass(frozen=True)
class Workspace:
    """Where a build's inputs and outputs live, as seen by one side (host or backend).

    source:        the repository root, read-only (engine/ and verify/ below it).
    build:         the engine's CMake build directory.
    prefix:        the staging install prefix (`cmake --install` writes here).
    verify_build:  the build directory of verify/, configured against `prefix`.
    ccache:        the compiler cache directory, or None when not used.
    bazel_cache:   Bazel's output bases and disk cache (Bazel cells), or None: then under build.
    """

    source: PurePosixPath
    build: PurePosixPath
    prefix: PurePosixPath
    verify_build: PurePosixPath
    ccache: PurePosixPath | None = None
    bazel_cache: PurePosixPath | None = None

    @property
    def engine(self) -> PurePosixPath:
        return self.source / "engine"

    @property
    def verify_source(self) -> PurePosixPath:
        return self.source / "verify"


class Backend(abc.ABC):
    """Runs commands for one cell. Use as a context manager so `close` always runs."""

    name: str = "abstract"

    def provide_image(self, cell: Cell) -> None:  # noqa: B027 - backends without images have nothing to do
        """Find or build the image `cell`'s commands run in (the plan's `image` step, before
        `prepare`). Raises BackendError with the fix when it cannot."""

    @abc.abstractmethod
    def prepare(self, cell: Cell, host: Workspace) -> Workspace:
        """Get ready to build `cell` (container, directories; the image if `provide_image` has
        not been called) with the host paths `host`.

        Returns the workspace as seen by commands this backend runs. Raises BackendError or
        ToolMissingError (with the fix) when it cannot.
        """

    @abc.abstractmethod
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: PurePosixPath,
        env: Mapping[str, str],
        log_path: Path,
    ) -> None:
        """Run argv, appending its combined output to the host file `log_path`.

        `env` is added to the backend's base environment. Raises StepFailedError with the tail
        of the output when argv exits non-zero, and BuildInterrupted (after ending every child
        process) on Ctrl-C.
        """

    @abc.abstractmethod
    def output(self, argv: Sequence[str]) -> str | None:
        """Run a short probe (e.g. `cmake --version`) and return its stdout, None if it fails."""

    @abc.abstractmethod
    def copy_out(self, src: PurePosixPath, dest: Path) -> None:
        """Copy the backend's directory `src` to the host directory `dest` (created)."""

    def copy_in(self, src: Path, dest: PurePosixPath) -> None:
        """Copy the host directory `src` to the backend's directory `dest` (replaced), readable and
        writable by the build user. Backends that cannot raise BackendError."""
        raise BackendError(f"the {self.name} backend cannot copy {src} in")

    def identity(self) -> dict[str, str]:
        """What the backend adds to a build's input hash (the docker backend: image id and lock)."""
        return {}

    def facts(self) -> dict[str, object]:
        """Extra manifest entries gathered after the build (image, lock, versions, cache stats)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release what `prepare` acquired (containers, mounts). Safe to call twice."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# forge.repro varies these between its two builds (an ordinary build sets none of them):
UMASK_ENV = "FORGE_UMASK"  # octal umask every command runs with (docker exec does not inherit ours)
FAKETIME_ENV = "FORGE_FAKETIME"  # libfaketime offset such as "+397d": commands see a shifted wall clock
# Timeouts and ninja's timing stay real (monotonic clock), and stat() reports the file times the
# kernel wrote: with faked stat, `cmake --install` copies shifted times onto installed files, and a
# consumer's build.ninja that depends on them is "still dirty after 100 tries".
FAKETIME_STEP_ENV = (("FAKETIME_DONT_FAKE_MONOTONIC", "1"), ("NO_FAKE_STAT", "1"))
# ...except for Python: libfaketime 0.9.10 with a real monotonic clock makes the absolute
# clock_nanosleep of Python's time.sleep fail with EINVAL (measured in the bookworm image under
# `faketime -f +397d`: time.sleep(0.01) and subprocess.run(timeout=...) raise OSError 22, so
# scikit-build-core "could not find CMake"). The wheel steps, all Python, shift the monotonic clock
# with the wall clock (an offset: durations stay real); without faketime the variable is inert.
PYTHON_SLEEP_ENV = (("FAKETIME_DONT_FAKE_MONOTONIC", "0"),)


def varied_command(argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """(argv, env) to run: under `faketime` and a `umask` when `env` asks for them, else as given.

    faketime preloads libfaketime into every dynamically linked program the command starts, so
    cmake, ninja, the compilers, ar and python all read the shifted clock; file times stay the
    kernel's (FAKETIME_STEP_ENV). zig is a static binary and keeps the real clock.
    """
    out, full = list(argv), dict(env)
    offset = full.get(FAKETIME_ENV, "")
    if offset:
        out = ["faketime", "-f", offset, *out]
        for key, value in FAKETIME_STEP_ENV:  # a step may say otherwise (the wheel steps, PYTHON_SLEEP_ENV)
            full.setdefault(key, value)
    umask = full.get(UMASK_ENV, "")
    if umask:
        out = ["sh", "-c", f'umask {umask} && exec "$@"', "sh", *out]
    return out, full


def check_variation_env(env: Mapping[str, str]) -> None:
    """A clear error for a malformed FORGE_UMASK / FORGE_FAKETIME instead of a failing first step."""
    umask = env.get(UMASK_ENV, "")
    if umask and not (umask.isdigit() and set(umask) <= set("01234567") and len(umask) <= 4):
        raise ConfigError(f"{UMASK_ENV}={umask!r} is not an octal umask", fix=f"use e.g. {UMASK_ENV}=077, or unset it")
    offset = env.get(FAKETIME_ENV, "")
    if offset and not (offset[0] in "+-" and offset[1:-1].isdigit() and offset[-1] in "smhdy"):
        raise ConfigError(
            f"{FAKETIME_ENV}={offset!r} is not a faketime offset", fix=f"use e.g. {FAKETIME_ENV}=+397d, or unset it"
        )


CONTAINER_WORKSPACE = Workspace(
    source=PurePosixPath("/src"),
    build=PurePosixPath("/build"),
    prefix=PurePosixPath("/stage"),
    verify_build=PurePosixPath("/verify-build"),
    ccache=PurePosixPath("/ccache"),
    bazel_cache=PurePosixPath("/bazel-cache"),
)
"""The paths a container backend mounts things at (what `invoke plan` shows for --backend docker)."""
