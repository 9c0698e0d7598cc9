"""invoke tasks: thin wrappers over forge/. `invoke --list` shows each one's first docstring line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from invoke.collection import Collection
from invoke.context import Context
from invoke.exceptions import Exit, ParseError
from invoke.program import Program
from invoke.tasks import task

AXIS_HELP = {
    "target": "target: host, linux-x86_64, linux-aarch64, linux-armv7, macos-x86_64, macos-arm64",
    "python": "pin the Python version (e.g. 3.11)",
    "numpy": "pin the NumPy series (e.g. 2.1)",
    "gcc": "pin the GCC major version (e.g. 12)",
    "cuda": "pin the CUDA version (e.g. 12.4), or none",
    "bazel": "pin the Bazel version",
    "cmake": "pin the CMake version",
    "backend": "docker (the default) or local (the host's toolchain); the host target falls back to local when no container engine can be started",
    "matrix": "a named matrix file, e.g. matrix/release.yaml (instead of --target)",
    "cell": "one cell by its id, e.g. linux-aarch64-py3.11-np2.4-gcc12-cpu (instead of --target and axis flags)",
    "only": "only the matrix cells whose id matches this glob (repeatable; default matrix: matrix/release.yaml)",
    "skip": "leave out the matrix cells whose id matches this glob (repeatable)",
    "debug": "show tracebacks",
}


def _parse_tasks_in_forge_terms(program: Program) -> None:
    """invoke reads the tasks' flags after loading this file: an unknown or malformed flag becomes one
    forge error (what, fix) with forge's exit code for bad input (2), not invoke's "No idea what ..." and 1."""
    try:
        _invoke_parse_tasks(program)
    except ParseError as exc:
        raise Exit(f"error: {exc}\n  fix: `invoke --help TASK` lists the task's flags", code=2) from None


_invoke_parse_tasks = Program.parse_tasks
setattr(Program, "parse_tasks", _parse_tasks_in_forge_terms)  # noqa: B010 (a method replaced on the class)


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


@task(auto_shortflags=False, help={**AXIS_HELP, "json": "print the plan as JSON"}, iterable=["only", "skip"])
def plan(
    c: Context,
    target: str | None = None,
    cell: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
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
    options = {"backend": backend, "debug": debug, "cell": cell, "only": only, "skip": skip}
    _guarded(debug, lambda: _cli().run_plan(target, matrix, pins, json, options))


@task(
    auto_shortflags=False,
    help={
        **AXIS_HELP,
        "force": "rebuild even when dist/ is up to date",
        "resume": "say explicitly that cells up to date in dist/ are skipped (what happens without --force anyway); refused together with --force",
        "jobs": "parallel compile jobs (default 2); with --matrix: cells built at once (each compiles with FORGE_JOBS)",
        "update-locks": "accept toolchain package versions that differ from toolchains/locks/ (rewrites the locks)",
        "verbose": "show each step's full output (compiler lines included), as CI does",
        "keep-container": "keep the docker build's container afterwards and print how to enter it (FORGE_KEEP_CONTAINER=1)",
        "quiet": "print only the summary and errors",
        "json": "print the summary as JSON on stdout (progress hidden, errors on stderr)",
    },
    iterable=["only", "skip"],
)
def build(
    c: Context,
    target: str | None = None,
    cell: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
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
    verbose: bool = False,
    quiet: bool = False,
    json: bool = False,
    keep_container: bool = False,
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
        "cell": cell,
        "only": only,
        "skip": skip,
        "verbose": verbose,
        "quiet": quiet,
        "json": json,
        "keep_container": keep_container or None,
    }
    _guarded(debug, lambda: _cli().run_build(target, matrix, pins, options))


def _help(*names: str) -> dict[str, str]:
    return {name: AXIS_HELP[name] for name in names}


@task(auto_shortflags=False, help=_help("target", "python", "numpy", "gcc", "cuda", "backend", "debug"))
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


@task(auto_shortflags=False, help={"debug": AXIS_HELP["debug"]})
def report(c: Context, debug: bool = False) -> None:
    """Render dist/ results as a Markdown and an HTML table (cells x verify suites)."""
    _guarded(debug, lambda: _cli().run_report({"debug": debug}))


@task(
    auto_shortflags=False,
    help={
        "base": "the baseline: a dist/<cell-id> directory or a cell id built into dist/",
        "candidate": "the candidate build, likewise (e.g. the same cell built with a newer gcc)",
        "no-run": "compare files and manifests only (no numeric drift or benchmark runs)",
        "rounds": "interleaved ember-benchmark rounds per side (default 3)",
        "threshold": "slowdown beyond the spread that counts as a regression, as a fraction (default 0.1)",
        "out": "where the Markdown, HTML and JSON reports go (default dist/compare/)",
        "debug": AXIS_HELP["debug"],
    },
)
def compare(
    c: Context,
    base: str,
    candidate: str,
    no_run: bool = False,
    rounds: int | None = None,
    threshold: float | None = None,
    out: str | None = None,
    debug: bool = False,
) -> None:
    """Compare two builds (ABI, symbols, required symbol versions, headers, verify, numerics, speed, sizes); exit 12 on a regression."""
    options = {"no_run": no_run, "rounds": rounds, "threshold": threshold, "out": out, "debug": debug}
    _guarded(debug, lambda: _cli().run_compare(base, candidate, options))


@task(
    auto_shortflags=False,
    help={
        **_help("target", "python", "numpy", "gcc", "cmake", "backend", "debug"),
        "to-gcc": "the candidate's GCC major version",
        "to-python": "the candidate's Python",
        "to-numpy": "the candidate's NumPy series",
        "to-cmake": "the candidate's CMake",
        "to-suite": "the candidate's Debian suite",
        "no-run": "compare files and manifests only (no numeric drift or benchmark runs)",
        "rounds": "interleaved ember-benchmark rounds per side (default 3)",
        "threshold": "slowdown beyond the spread that counts as a regression (default 0.1)",
    },
)
def upgrade(
    c: Context,
    target: str | None = None,
    python: str | None = None,
    numpy: str | None = None,
    gcc: str | None = None,
    cmake: str | None = None,
    to_gcc: str | None = None,
    to_python: str | None = None,
    to_numpy: str | None = None,
    to_cmake: str | None = None,
    to_suite: str | None = None,
    backend: str | None = None,
    no_run: bool = False,
    rounds: int | None = None,
    threshold: float | None = None,
    debug: bool = False,
) -> None:
    """Validate a toolchain upgrade: build the cell as it is and with the new toolchain, then compare them."""
    pins = _pins(python=python, numpy=numpy, gcc=gcc, cmake=cmake)
    to = {"gcc": to_gcc, "python": to_python, "numpy": to_numpy, "cmake": to_cmake, "suite": to_suite}
    options = {"backend": backend, "no_run": no_run, "rounds": rounds, "threshold": threshold, "debug": debug}
    _guarded(debug, lambda: _cli().run_upgrade(target, pins, to, options))


@task(
    auto_shortflags=False,
    help={
        "github": "write a GitHub Actions workflow",
        "matrix": "the matrix whose scheduled cells become jobs (default matrix/release.yaml)",
        "out": "the workflow file (default .github/workflows/forge-matrix.yml)",
        "only": "only the cells whose id matches this glob (repeatable)",
        "skip": "leave out the cells whose id matches this glob (repeatable)",
        "debug": AXIS_HELP["debug"],
    },
    iterable=["only", "skip"],
)
def ci(
    c: Context,
    github: bool = False,
    matrix: str | None = None,
    out: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    debug: bool = False,
) -> None:
    """Export a matrix to CI: one job per scheduled cell (invoke build --cell ID), then the release job."""
    options = {"only": only, "skip": skip, "debug": debug}
    _guarded(debug, lambda: _cli().run_ci(github, matrix, out, options))


@task(
    auto_shortflags=False,
    help={
        "matrix": "the matrix to release (default matrix/release.yaml): built or reused, verified, repro-checked",
        "from-artifacts": "assemble from cells built elsewhere (a directory of dist/<cell-id>/ copies), building nothing",
        "version": "the release's name under dist/release/ (default: forge's version + the commit)",
        "no-repro": "skip the reproducibility check of each cell",
        "jobs": "cells built at once",
        "backend": AXIS_HELP["backend"],
        "only": "only the cells whose id matches this glob (repeatable)",
        "skip": "leave out the cells whose id matches this glob (repeatable)",
        "debug": AXIS_HELP["debug"],
    },
    iterable=["only", "skip"],
)
def release(
    c: Context,
    matrix: str | None = None,
    from_artifacts: str | None = None,
    version: str | None = None,
    no_repro: bool = False,
    jobs: int | None = None,
    backend: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    debug: bool = False,
) -> None:
    """Assemble dist/release/<version>/ (archives, SHA256SUMS, provenance, report, notes) from a matrix's cells."""
    options = {"no_repro": no_repro, "jobs": jobs, "backend": backend, "only": only, "skip": skip, "debug": debug}
    _guarded(debug, lambda: _cli().run_release(matrix, from_artifacts, version, options))


@task(auto_shortflags=False, help={"all": "also remove the compiler cache", "debug": AXIS_HELP["debug"]})
def clean(c: Context, all: bool = False, debug: bool = False) -> None:
    """Remove dist/ and forge's build directories."""
    _guarded(debug, lambda: _cli().run_clean(all, {"debug": debug}))


@task(
    auto_shortflags=False,
    help={
        "fix": "install every missing host tool forge can install (apt-get as root, pip)",
        "json": "print the findings as JSON (one object per tool, the engine and the GPU)",
        "debug": AXIS_HELP["debug"],
    },
)
def doctor(c: Context, fix: bool = False, json: bool = False, debug: bool = False) -> None:
    """Print forge's host-tool table (found or missing, how installed, which tasks need it); --fix installs the rest."""
    from forge import doctor as forge_doctor

    _guarded(debug, lambda: forge_doctor.run_doctor(os.environ, fix, as_json=json))


@task(
    auto_shortflags=False,
    help={
        "unit": "only the fast unit tests",
        "release": "the scheduled release job instead (not in .ci/run): release the whole matrix, then check it",
        "matrix": "with --release: the matrix (default matrix/release.yaml)",
        "jobs": "with --release: cells built at once",
        "debug": AXIS_HELP["debug"],
    },
)
def test(
    c: Context,
    unit: bool = False,
    release: bool = False,
    matrix: str | None = None,
    jobs: int | None = None,
    debug: bool = False,
) -> None:
    """Lint (ruff, mypy, clang-format) and run the tests (unit, integration, engine, lite); --release: the release job."""
    if release:
        from forge import release_job

        _guarded(debug, lambda: release_job.run_release_job(matrix, jobs, unit))
        return
    _guarded(debug, lambda: _cli().run_tests(unit))


# --- containers: the docker engine and toolchain images (forge/daemon.py, forge/images.py) ---------


def _docker_start(c: Context, debug: bool = False) -> None:
    """Start a container engine if none answers (installs docker.io, runs dockerd in the background)."""
    from forge import daemon

    _guarded(debug, lambda: daemon.run_start(os.environ))


@task(
    auto_shortflags=False,
    help={
        "matrix": "the matrix whose cells' images to show/build/keep (default matrix/ci.yaml)",
        "build": "build every image the matrix needs (missing ones only)",
        "prune": "remove forge images no cell uses: of the --matrix given, else of any matrix file in matrix/",
        "update-locks": "accept package versions that differ from toolchains/locks/ (rewrites the locks)",
        "debug": AXIS_HELP["debug"],
    },
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
    auto_shortflags=False,
    help={
        **_help("target", "python", "numpy", "gcc", "cuda", "backend", "matrix", "debug"),
        "jobs": "parallel jobs of the first build (the second uses another count)",
    },
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
    auto_shortflags=False,
    help={
        "manifest": "dist/<cell-id>/manifest.json of the build to reproduce",
        "ccache": "let the rebuild use the compiler cache (faster; by default every object is compiled again)",
        "debug": AXIS_HELP["debug"],
    },
)
def rebuild(c: Context, manifest: str, ccache: bool = False, debug: bool = False) -> None:
    """Rebuild a cell from its manifest alone (same sources, epoch, image lock) and check the bytes match."""
    from forge import provenance

    _guarded(debug, lambda: provenance.run_rebuild(manifest, {"ccache": ccache, "debug": debug}))


ns = Collection.from_module(sys.modules[__name__])
ns.add_collection(
    Collection("docker", start=task(_docker_start, auto_shortflags=False, help={"debug": AXIS_HELP["debug"]}))
)
