"""invoke tasks: thin wrappers over forge/. `invoke --list` shows each one's first docstring line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from invoke.collection import Collection
from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import task

AXIS_HELP = {
    "target": "target: host, linux-x86_64, linux-aarch64, linux-armv7, macos-x86_64, macos-arm64",
    "python": "pin the Python version (e.g. 3.11)",
    "numpy": "pin the NumPy series (e.g. 2.1)",
    "gcc": "pin the GCC major version (e.g. 12)",
    "cuda": "pin the CUDA version (e.g. 12.4), or none",
    "bazel": "pin the Bazel version",
    "cmake": "pin the CMake version",
    "backend": "local (the host) or docker (default: local for host, docker otherwise)",
    "matrix": "a named matrix file, e.g. matrix/release.yaml (instead of --target)",
    "debug": "show tracebacks",
}


def _cli() -> Any:
    from forge import cli

    return cli


def _pins(**axes: str | None) -> dict[str, str | None]:
    return dict(axes)


def _guarded(debug: bool, action: Callable[[], Any]) -> None:
    from forge import cli  # imported per task so `invoke --list` and each task load only what they use

    try:
        with cli.guard(debug):
            action()
    except cli.CliExit as exc:
        raise Exit(exc.message, code=exc.code) from None


@task(help={**AXIS_HELP, "json": "print the plan as JSON"})
def plan(
    c: Context,
    target: str | None = None,
    python: str | None = None,
    numpy: str | None = None,
    gcc: str | None = None,
    cuda: str | None = None,
    bazel: str | None = None,
    cmake: str | None = None,
    matrix: str | None = None,
    backend: str | None = None,
    json: bool = False,
    debug: bool = False,
) -> None:
    """Print the resolved cell(s) and their ordered steps, running nothing."""
    pins = _pins(python=python, numpy=numpy, gcc=gcc, cuda=cuda, bazel=bazel, cmake=cmake)
    _guarded(debug, lambda: _cli().run_plan(target, matrix, pins, json, {"backend": backend, "debug": debug}))


@task(
    help={
        **AXIS_HELP,
        "force": "rebuild even when dist/ is up to date",
        "resume": "skip cells whose dist/ build has the same inputs (the default; the opposite of --force)",
        "jobs": "parallel compile jobs (default 2); with --matrix: cells built at once (each compiles with FORGE_JOBS)",
        "update-locks": "accept toolchain package versions that differ from toolchains/locks/ (rewrites the locks)",
    }
)
def build(
    c: Context,
    target: str | None = None,
    python: str | None = None,
    numpy: str | None = None,
    gcc: str | None = None,
    cuda: str | None = None,
    bazel: str | None = None,
    cmake: str | None = None,
    matrix: str | None = None,
    backend: str | None = None,
    force: bool = False,
    resume: bool = False,
    jobs: int | None = None,
    update_locks: bool = False,
    debug: bool = False,
) -> None:
    """Build, install, verify and record a cell (default: the host) into dist/<cell-id>/."""
    pins = _pins(python=python, numpy=numpy, gcc=gcc, cuda=cuda, bazel=bazel, cmake=cmake)
    options = {
        "backend": backend,
        "force": force or None,
        "resume": resume,
        "jobs": jobs,
        "update_locks": update_locks or None,
        "debug": debug,
    }
    _guarded(debug, lambda: _cli().run_build(target, matrix, pins, options))


def _help(*names: str) -> dict[str, str]:
    return {name: AXIS_HELP[name] for name in names}


@task(help=_help("target", "python", "numpy", "gcc", "cuda", "backend", "debug"))
def verify(
    c: Context,
    target: str | None = None,
    python: str | None = None,
    numpy: str | None = None,
    gcc: str | None = None,
    cuda: str | None = None,
    backend: str | None = None,
    debug: bool = False,
) -> None:
    """Re-run the verify suites against a cell already recorded in dist/."""
    pins = _pins(python=python, numpy=numpy, gcc=gcc, cuda=cuda)
    _guarded(debug, lambda: _cli().run_verify(target, pins, {"backend": backend, "debug": debug}))


@task(help={"debug": AXIS_HELP["debug"]})
def report(c: Context, debug: bool = False) -> None:
    """Render dist/ results as a Markdown and an HTML table (cells x verify suites)."""
    _guarded(debug, lambda: _cli().run_report({"debug": debug}))


@task(help={"all": "also remove the compiler cache", "debug": AXIS_HELP["debug"]})
def clean(c: Context, all: bool = False, debug: bool = False) -> None:
    """Remove dist/ and forge's build directories."""
    _guarded(debug, lambda: _cli().run_clean(all, {"debug": debug}))


@task(
    help={
        "fix": "install every missing host tool forge can install (apt-get as root, pip)",
        "debug": AXIS_HELP["debug"],
    }
)
def doctor(c: Context, fix: bool = False, debug: bool = False) -> None:
    """Print forge's host-tool table (found or missing, how installed, which tasks need it); --fix installs the rest."""
    from forge import doctor as forge_doctor

    _guarded(debug, lambda: forge_doctor.run_doctor(os.environ, fix))


@task(help={"unit": "only the fast unit tests", "debug": AXIS_HELP["debug"]})
def test(c: Context, unit: bool = False, debug: bool = False) -> None:
    """Lint (ruff, mypy, clang-format) and run the tests (unit, integration, engine, lite)."""
    _guarded(debug, lambda: _cli().run_tests(unit))


# --- containers: the docker engine and toolchain images (forge/daemon.py, forge/images.py) ---------


def _docker_start(c: Context, debug: bool = False) -> None:
    """Start a container engine if none answers (installs docker.io, runs dockerd in the background)."""
    from forge import daemon

    _guarded(debug, lambda: daemon.run_start(os.environ))


@task(
    help={
        "matrix": "the matrix whose cells' images to show/build/keep (default matrix/ci.yaml)",
        "build": "build every image the matrix needs (missing ones only)",
        "prune": "remove forge images no cell of the matrix uses",
        "update-locks": "accept package versions that differ from toolchains/locks/ (rewrites the locks)",
        "debug": AXIS_HELP["debug"],
    }
)
def images(
    c: Context,
    matrix: str | None = None,
    build: bool = False,
    prune: bool = False,
    update_locks: bool = False,
    debug: bool = False,
) -> None:
    """List forge's toolchain images with their cells and sizes; --build what a matrix needs, --prune the rest."""
    from forge import images as forge_images

    _guarded(debug, lambda: forge_images.run_images(matrix, build, prune, os.environ, update_locks))


# --- reproducibility (forge/repro.py, forge/provenance.py) -------------------------------------


@task(
    help={
        **_help("target", "python", "numpy", "gcc", "cuda", "backend", "matrix", "debug"),
        "jobs": "parallel jobs of the first build (the second uses another count)",
    }
)
def repro(
    c: Context,
    target: str | None = None,
    python: str | None = None,
    numpy: str | None = None,
    gcc: str | None = None,
    cuda: str | None = None,
    matrix: str | None = None,
    backend: str | None = None,
    jobs: int | None = None,
    debug: bool = False,
) -> None:
    """Build a cell twice with variations (path, umask, TZ, locale, env order, jobs, ...) and compare every artifact."""
    from forge import repro as forge_repro

    pins = _pins(python=python, numpy=numpy, gcc=gcc, cuda=cuda)
    options = {"backend": backend, "jobs": jobs, "debug": debug}
    _guarded(debug, lambda: forge_repro.run_repro(target, matrix, pins, options))


@task(
    help={
        "manifest": "dist/<cell-id>/manifest.json of the build to reproduce",
        "ccache": "let the rebuild use the compiler cache (faster; by default every object is compiled again)",
        "debug": AXIS_HELP["debug"],
    }
)
def rebuild(c: Context, manifest: str, ccache: bool = False, debug: bool = False) -> None:
    """Rebuild a cell from its manifest alone (same sources, epoch, image lock) and check the bytes match."""
    from forge import provenance

    _guarded(debug, lambda: provenance.run_rebuild(manifest, {"ccache": ccache, "debug": debug}))


ns = Collection.from_module(sys.modules[__name__])
ns.add_collection(Collection("docker", start=task(_docker_start, help={"debug": AXIS_HELP["debug"]})))
