"""Cells that Bazel builds: which targets can, the Bazel found in the image, the build steps'
commands, and what Bazel's output says about its caches.

A cell pins Bazel with `--bazel VERSION` (or `bazel:` in a matrix file); it then builds engine/
with the suite's Debian `bazel-bootstrap`, offline, instead of CMake. Everything after the build
is the CMake cell's: an install tree laid out like `cmake --install` (with a CMake package
config and pkg-config files generated from Bazel's outputs by forge/bazel_install.py), and
verify/ built with CMake against it. Pure: nothing here runs a process or reads the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from packaging.version import InvalidVersion, Version

from forge import manifest
from forge.errors import StepFailedError, ToolMissingError
from forge.matrix import Cell
from forge.targets.family import family_for
from forge.toolchains import Target

PACKAGE = "bazel-bootstrap"
"""The Debian package a Bazel cell's image gets (3.5.1 in bullseye, 4.2.3 in bookworm and trixie);
it pulls a JDK. WORKSPACE's stand-ins replace what Bazel would download, so no -source package."""

CUDA_SOURCE_PATHS: tuple[str, ...] = ("toolchains/cuda",)
"""What a CUDA cell's build reads besides the sources: the embedded-architecture lister and the
recorded nvcc architecture lists (a change to them must make the cell stale)."""
SOURCE_PATHS: tuple[str, ...] = (
    "WORKSPACE",
    ".bazelrc",
    "third_party",
    "toolchains/bazel",
    "forge/bazel_install.py",
)
"""What a Bazel cell's build reads besides engine/ and verify/: part of its source tree hash."""

TARGETS: tuple[str, ...] = ("//engine:libraries", "//engine:tools", "//engine:install")
"""What the build step builds: the shared libraries, the tools, and the install tree's layout
(which also holds the static archives)."""

TEST_TARGETS: tuple[str, ...] = ("//engine/...",)
"""What the test step runs: the engine's own tests (engine/tests, ctest's in a CMake cell)."""


def violations(cell: Cell, target: Target) -> list[str]:
    """Why Bazel cannot build `cell` for `target` (empty when it can)."""
    refusal = family_for(target).bazel_refusal(target)
    if refusal is not None:
        return [refusal]
    if cell.cuda is not None:
        return [f"ember's Bazel build has no CUDA rules; CUDA {cell.cuda} was asked (drop --bazel or --cuda)"]
    return []


# ---------------------------------------------------------------------------------------------
# The Bazel in the image

VERSION_PROBES: tuple[tuple[str, ...], ...] = (
    ("bazel", "--version"),
    ("dpkg-query", "-W", "-f=${Version}", PACKAGE),
)
"""`bazel --version`, then the package's version: Debian's bazel-bootstrap says `bazel no_version`
(it is built without a release label), so its Debian version is what names it."""


def upstream_version(debian_version: str) -> str | None:
    """4.2.3 from the Debian version 4.2.3+ds-9 (epoch, +ds suffix and revision dropped)."""
    text = debian_version.strip().split(":", 1)[-1]
    match = re.match(r"(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


def probe_version(output: Callable[[Sequence[str]], str | None]) -> str | None:
    """What the backend's Bazel says it is, e.g. "4.2.3 (bazel-bootstrap 4.2.3+ds-9)"; None when
    no bazel runs. `output` runs a probe in the backend (None when it fails).

    `bazel --version` names the release (`bazel 6.4.0`; bullseye's package: `bazel 3.5.1- (@non-git)`)
    or nothing (bookworm's: `bazel no_version`): then the Debian package's version names it."""
    said = (output(VERSION_PROBES[0]) or "").strip()
    if not said:
        return None
    words = said.split()
    release = upstream_version(words[1]) if len(words) > 1 and words[0] == "bazel" else None
    package = (output(VERSION_PROBES[1]) or "").strip()
    version = release or upstream_version(package)
    if version is None:
        return f"unknown ({said}; {PACKAGE} not installed)"
    return f"{version} ({PACKAGE} {package})" if package else f"{version} ({said})"


def require_version(found: str | None, cell: Cell, backend: str) -> None:
    """ToolMissingError unless the backend's Bazel is the cell's."""
    if cell.bazel is None:
        return
    where = "the cell's image" if backend == "docker" else "this machine"
    if found is None:
        raise ToolMissingError(
            f"no bazel in {where}, but {cell.id} is built with Bazel {cell.bazel}",
            f"Bazel cells build engine/ with Debian's {PACKAGE}",
            f"apt-get install {PACKAGE}" if backend == "local" else "rebuild the image: invoke images --build",
        )
    version = found.split()[0]
    try:
        same = Version(version) == Version(cell.bazel)
    except InvalidVersion:
        same = False
    if not same:
        raise ToolMissingError(
            f"{where} has Bazel {found}; {cell.id} asks for Bazel {cell.bazel}",
            "a Bazel cell records and builds with the Bazel its id names",
            f"use --backend docker (each suite's image has its own {PACKAGE}), or pin --bazel {version}",
        )


# ---------------------------------------------------------------------------------------------
# The build's commands (plan.py makes steps of them)


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    argv: tuple[str, ...]


def cache_dirs(cache: PurePosixPath, cell: Cell) -> dict[str, PurePosixPath]:
    """Bazel's directories under the cell's Bazel cache: the install base (output_user_root), the
    cell's own output base (a Bazel server locks it, so cells never share one) and the disk cache
    the cells of an image share (content-addressed, safe for concurrent builds)."""
    return {
        "output_user_root": cache / "root",
        "output_base": cache / "output-base" / cell.id,
        "disk_cache": cache / "disk",
    }


def startup_args(cache: PurePosixPath, cell: Cell) -> list[str]:
    """Bazel's startup options: no server left behind, no user's rc file. The system rc stays: it is
    the package's (Debian's /etc/bazel/bazelrc points the client at its unpacked install base)."""
    dirs = cache_dirs(cache, cell)
    return [
        "bazel",
        "--batch",
        "--nohome_rc",
        f"--output_user_root={dirs['output_user_root']}",
        f"--output_base={dirs['output_base']}",
    ]


def _options(cache: PurePosixPath, cell: Cell, jobs: int) -> list[str]:
    """What `bazel build` and `bazel test` share: with the cell's gcc (Bazel's autoconfigured
    toolchain takes CC; a different CC would configure and rebuild everything), no convenience
    symlinks in the (read-only) workspace, the disk cache, no repository cache (nothing is
    downloaded)."""
    compiler = [f"--repo_env=CC=gcc-{cell.gcc}"] if cell.gcc and cell.target != "host" else []
    return [
        *compiler,
        f"--jobs={jobs}",
        f"--local_cpu_resources={jobs}",
        f"--disk_cache={cache_dirs(cache, cell)['disk_cache']}",
        "--repository_cache=",
        "--symlink_prefix=/",
        "--color=no",
        "--curses=no",
    ]


def build_args(cache: PurePosixPath, cell: Cell, jobs: int) -> list[str]:
    """`bazel build` of the libraries, tools and install tree."""
    return [*startup_args(cache, cell), "build", *_options(cache, cell, jobs), *TARGETS]


def test_args(cache: PurePosixPath, cell: Cell, jobs: int) -> list[str]:
    """`bazel test` of the engine's own tests. --build_tests_only: the libraries need their PIC
    objects only; building every cc_library under //engine/... would compile them again."""
    return [*startup_args(cache, cell), "test", *_options(cache, cell, jobs), "--build_tests_only", *TEST_TARGETS]


TEST_STEP = "bazel-test"  # the engine's own tests; every other command makes the installed tree


def commands(
    cell: Cell, source: PurePosixPath, prefix: PurePosixPath, cache: PurePosixPath, jobs: int
) -> list[Command]:
    """The Bazel build, the install into `prefix` and the engine's own tests, as the backend runs
    them (cwd: `source`). The tests run natively (Bazel cells are native Linux only); a failing
    test fails the step, as ctest's exit status fails a CMake cell's."""
    output_base = cache_dirs(cache, cell)["output_base"]
    install = (
        "python3",
        str(source / "forge" / "bazel_install.py"),
        "--output-base",
        str(output_base),
        "--source",
        str(source),
        "--prefix",
        str(prefix),
    )
    return [
        Command(
            "bazel-build",
            f"build engine/ with Bazel {cell.bazel} (offline, --batch)",
            tuple(build_args(cache, cell, jobs)),
        ),
        Command(
            "install",
            "install Bazel's outputs into the staging prefix, with generated CMake and pkg-config files",
            install,
        ),
        Command(
            TEST_STEP,
            "run the engine's own tests (engine/tests) with bazel test",
            tuple(test_args(cache, cell, jobs)),
        ),
    ]


# ---------------------------------------------------------------------------------------------
# Bazel's account of a build

PROCESSES = re.compile(r"^INFO: (\d+) process(?:es)?(?:: (.*?))?\.?$")
KIND = re.compile(r"^(\d+) ([a-z][a-z -]*)$")
CACHE_KINDS = ("disk cache hit", "remote cache hit")  # before Bazel 5 a disk cache hit reads "remote"


@dataclass(frozen=True)
class ProcessCounts:
    """Bazel's "INFO: N processes: X disk cache hit, Y internal, Z linux-sandbox." line."""

    total: int
    kinds: dict[str, int]

    @property
    def cache_hits(self) -> int:
        return sum(self.kinds.get(k, 0) for k in CACHE_KINDS)

    @property
    def executed(self) -> int:
        """Processes that ran a tool (neither cache hits nor Bazel's internal ones)."""
        return self.total - self.cache_hits - self.kinds.get("internal", 0)

    def as_dict(self) -> dict[str, object]:
        return {"processes": self.total, "cache_hits": self.cache_hits, "executed": self.executed, "kinds": self.kinds}


def parse_processes(log: str, where: str) -> ProcessCounts:
    """The last processes line of a `bazel build` log; StepFailedError when there is none or its
    parts do not add up (an unrecognised line is Bazel saying something forge cannot read)."""
    lines = [line.strip() for line in log.splitlines() if line.startswith("INFO: ") and " process" in line]
    matched = [m for m in (PROCESSES.match(line) for line in lines) if m is not None]
    if not matched:
        raise StepFailedError(
            f"{where}: no `INFO: N processes` line in Bazel's output",
            "forge reads Bazel's cache hits from it; the build printed none",
            "read the log; a Bazel that words it differently needs forge.bazel.PROCESSES updated",
        )
    match = matched[-1]
    kinds: dict[str, int] = {}
    for part in (match.group(2) or "").split(","):
        if not part.strip():
            continue
        kind = KIND.match(part.strip())
        if kind is None:
            raise StepFailedError(f"{where}: cannot read `{part.strip()}` in `{match.group(0)}`")
        kinds[kind.group(2)] = kinds.get(kind.group(2), 0) + int(kind.group(1))
    total = int(match.group(1))
    if kinds and sum(kinds.values()) != total:
        raise StepFailedError(f"{where}: `{match.group(0)}`: the parts do not add up to {total}")
    return ProcessCounts(total, kinds)


def source_subdirs(cell: Cell) -> tuple[str, ...]:
    """What a cell's build reads from the repository (its source tree hash): a Bazel cell also
    reads the Bazel workspace files and forge's installer of Bazel's outputs, a CUDA cell
    toolchains/cuda/."""
    cuda = CUDA_SOURCE_PATHS if cell.cuda else ()
    return manifest.SOURCE_SUBDIRS + (SOURCE_PATHS if cell.bazel else ()) + cuda
