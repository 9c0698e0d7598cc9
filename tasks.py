"""invoke tasks: thin wrappers over forge/commands/ (one module per task or two). `invoke --list` shows each one's first docstring line."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from invoke.collection import Collection
from invoke.context import Context
from invoke.exceptions import Exit, ParseError
from invoke.program import Program
from invoke.tasks import task

from forge import axes

PIN_FLAGS = axes.names(lambda a: a.option and a.name != "target")
"""The axis flags of `invoke build` and `invoke plan`: every axis of forge/axes.py with a CLI option."""

AXIS_HELP = {
    **axes.cli_help(),
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


F = TypeVar("F", bound=Callable[..., Any])


def _axis_flags(*names: str) -> Callable[[F], F]:
    """Give a task one `--AXIS` flag per axis name (forge/axes.py), which its body receives in **pins.

    invoke reads a task's flags from its signature; the axis parameters are added to that
    signature here, so the registry alone says which axes exist."""

    def wrap(body: F) -> F:
        sig = inspect.signature(body)
        params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        flags = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None") for n in names
        ]
        setattr(body, "__signature__", sig.replace(parameters=params + flags))  # noqa: B010 (read by invoke)
        return body

    return wrap


def _pins(pins: dict[str, str | None], names: tuple[str, ...] = ()) -> dict[str, str | None]:
    """The axis pins a task passes on: each named axis (None when its flag was not given)."""
    return {name: pins.get(name) for name in (names or PIN_FLAGS)}


def _guarded(debug: bool, action: Callable[[], Any]) -> None:
    from forge import cli  # imported per task so `invoke --list` and each task load only what they use

    try:
        with cli.guard(debug):
            action()
    except cli.CliExit as exc:
        raise Exit(exc.message, code=exc.code) from None


@task(
    auto_shortflags=False,
    help={
        **AXIS_HELP,
        "json": "print the plan as JSON",
        "wheels": "include the wheel steps `invoke build --wheels` runs",
    },
    iterable=["only", "skip"],
)
@_axis_flags(*PIN_FLAGS)
def plan(
    c: Context,
    target: str | None = None,
    cell: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    matrix: str | None = None,
    backend: str | None = None,
    json: bool = False,
    debug: bool = False,
    wheels: bool = False,
    **axis_pins: str | None,
) -> None:
    """Print the resolved cell(s) and their ordered steps, running nothing."""
    pins = _pins(axis_pins)
    options = {"backend": backend, "debug": debug, "cell": cell, "only": only, "skip": skip, "wheels": wheels or None}
    from forge.commands import plan as command

    _guarded(debug, lambda: command.run_plan(target, matrix, pins, json, options))


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
        "wheels": "also build ember's Python wheel in each cell, verify it and test it with every NumPy (FORGE_WHEELS=1)",
    },
    iterable=["only", "skip"],
)
@_axis_flags(*PIN_FLAGS)
def build(
    c: Context,
    target: str | None = None,
    cell: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
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
    wheels: bool = False,
    **axis_pins: str | None,
) -> None:
    """Build, install, verify and record a cell (default: the host) into dist/<cell-id>/."""
    pins = _pins(axis_pins)
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
        "wheels": wheels or None,
    }
    from forge.commands import build as command

    _guarded(debug, lambda: command.run_build(target, matrix, pins, options))


def _help(*names: str) -> dict[str, str]:
    return {name: AXIS_HELP[name] for name in names}


VERIFY_FLAGS = ("python", "numpy", "gcc", "cuda", "cuda_arch", "bazel")


@task(auto_shortflags=False, help=_help("target", *VERIFY_FLAGS, "backend", "debug"))
@_axis_flags(*VERIFY_FLAGS)
def verify(
    c: Context, target: str | None = None, backend: str | None = None, debug: bool = False, **axis_pins: str | None
) -> None:
    """Re-run the verify suites against a cell already recorded in dist/."""
    pins = _pins(axis_pins, VERIFY_FLAGS)
    from forge.commands import build as command

    _guarded(debug, lambda: command.run_verify(target, pins, {"backend": backend, "debug": debug}))


@task(auto_shortflags=False, help={"debug": AXIS_HELP["debug"]})
def report(c: Context, debug: bool = False) -> None:
    """Render dist/ results as a Markdown and an HTML table (cells x verify suites)."""
    from forge.commands import report as command

    _guarded(debug, lambda: command.run_report({"debug": debug}))


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
    from forge.commands import compare as command

    _guarded(debug, lambda: command.run_compare(base, candidate, options))


UPGRADE_FLAGS = ("python", "numpy", "gcc", "cmake")


@task(
    auto_shortflags=False,
    help={
        **_help("target", *UPGRADE_FLAGS, "backend", "debug"),
        "to-gcc": "the candidate's GCC major version",
        "to-python": "the candidate's Python",
        "to-numpy": "the candidate's NumPy series",
        "to-cmake": "the candidate's CMake",
        "to-suite": "the candidate's Debian suite",
        "no-run": "compare files and manifests only (no numeric drift or benchmark runs)",
        "rounds": "interleaved ember-benchmark rounds per side (default 3)",
        "threshold": "slowdown beyond the spread that counts as a regression (default 0.1)",
        "refresh-locks": "the same cell with freshly resolved packages in a new image, compared with today's lock",
        "accept": "with --refresh-locks: write the new lock when the comparison found no regression",
    },
)
@_axis_flags(*UPGRADE_FLAGS)
def upgrade(
    c: Context,
    target: str | None = None,
    to_gcc: str | None = None,
    to_python: str | None = None,
    to_numpy: str | None = None,
    to_cmake: str | None = None,
    to_suite: str | None = None,
    backend: str | None = None,
    no_run: bool = False,
    rounds: int | None = None,
    threshold: float | None = None,
    refresh_locks: bool = False,
    accept: bool = False,
    debug: bool = False,
    **axis_pins: str | None,
) -> None:
    """Validate a toolchain upgrade: build the cell as it is and with the new toolchain (or, with
    --refresh-locks, freshly resolved packages), then compare them."""
    pins = _pins(axis_pins, UPGRADE_FLAGS)
    to = {"gcc": to_gcc, "python": to_python, "numpy": to_numpy, "cmake": to_cmake, "suite": to_suite}
    options = {"backend": backend, "no_run": no_run, "rounds": rounds, "threshold": threshold, "debug": debug}
    if refresh_locks:
        from forge.commands import refresh

        if any(to.values()):
            raise Exit("--refresh-locks keeps the cell's axes; leave out the --to-* options", code=2)
        _guarded(debug, lambda: refresh.run_refresh(target, pins, {**options, "accept": accept}))
        return
    from forge.commands import compare as command

    _guarded(debug, lambda: command.run_upgrade(target, pins, to, options))


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
    from forge.commands import release as command

    _guarded(debug, lambda: command.run_ci(github, matrix, out, options))


@task(
    auto_shortflags=False,
    help={
        "matrix": "the matrix to release (default matrix/release.yaml): built or reused, verified, repro-checked",
        "from-artifacts": "assemble from cells built elsewhere (a directory of dist/<cell-id>/ copies), building nothing",
        "version": "the release's name under dist/release/ (default: forge's version + the commit)",
        "no-repro": "skip the reproducibility check of each cell",
        "no-wheels": "leave ember's wheels out (by default every cell that can build one builds, verifies and ships it)",
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
    no_wheels: bool = False,
    jobs: int | None = None,
    backend: str | None = None,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    debug: bool = False,
) -> None:
    """Assemble dist/release/<version>/ (archives, SHA256SUMS, provenance, report, notes) from a matrix's cells."""
    options = {
        "no_repro": no_repro,
        "no_wheels": no_wheels,
        "jobs": jobs,
        "backend": backend,
        "only": only,
        "skip": skip,
        "debug": debug,
    }
    from forge.commands import release as command

    _guarded(debug, lambda: command.run_release(matrix, from_artifacts, version, options))


@task(auto_shortflags=False, help={"all": "also remove the compiler cache", "debug": AXIS_HELP["debug"]})
def clean(c: Context, all: bool = False, debug: bool = False) -> None:
    """Remove dist/ and forge's build directories."""
    from forge.commands import clean as command

    _guarded(debug, lambda: command.run_clean(all, {"debug": debug}))


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
    from forge.commands import doctor as command

    _guarded(debug, lambda: command.run_doctor(os.environ, fix, as_json=json))


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
        from forge.commands import release_job

        _guarded(debug, lambda: release_job.run_release_job(matrix, jobs, unit))
        return
    from forge.commands import checks as command

    _guarded(debug, lambda: command.run_tests(unit))


# --- containers: the docker engine and toolchain images (forge/commands/docker.py, forge/commands/images.py) ---------


def _docker_start(c: Context, debug: bool = False) -> None:
    """Start a container engine if none answers (installs docker.io, runs dockerd in the background)."""
    from forge.commands import docker as command

    _guarded(debug, lambda: command.run_start(os.environ))


@task(
    auto_shortflags=False,
    help={
        "matrix": "the matrix whose cells' images to show/build/keep (default matrix/ci.yaml)",
        "build": "build every image the matrix needs (missing ones only)",
        "prune": "remove forge images no cell uses: of the --matrix given, else of any matrix file in matrix/",
        "update-locks": "accept package versions that differ from toolchains/locks/ (rewrites the locks)",
        "save": "save every forge image (or those of --only) as docker-save tarballs + sha256 index into DIR",
        "load": "load the images saved in DIR, each checked against its recorded sha256 first",
        "only": "with --save/--load: only the image tags matching this glob; with --cache-packages: image names",
        "cache-packages": "download the exact debs and wheels of each image's lock into the package cache",
        "debug": AXIS_HELP["debug"],
    },
    iterable=["only"],
)
def images(
    c: Context,
    matrix: str | None = None,
    build: bool = False,
    prune: bool = False,
    update_locks: bool = False,
    save: str | None = None,
    load: str | None = None,
    only: list[str] | None = None,
    cache_packages: bool = False,
    debug: bool = False,
) -> None:
    """List forge's toolchain images with their cells and sizes; --build what a matrix needs, --prune the rest;
    --save DIR / --load DIR archives them."""
    from forge.commands import images as command

    if save or load or cache_packages:
        if cache_packages:
            _guarded(debug, lambda: command.run_cache_packages(matrix, only or [], os.environ))
        else:
            _guarded(debug, lambda: command.run_archive(save, load, only or [], os.environ))
        return

    _guarded(debug, lambda: command.run_images(matrix, build, prune, os.environ, update_locks))


# --- reproducibility (forge/commands/repro.py, forge/commands/rebuild.py) -------------------------------------


@task(
    auto_shortflags=False,
    help={
        **_help("target", "cell", *VERIFY_FLAGS, "backend", "matrix", "debug"),
        "jobs": "parallel jobs of the first build (the second uses another count)",
        "wheels": "both builds include the wheel steps (as `invoke release` repro-checks its cells); the first is published",
    },
)
@_axis_flags(*VERIFY_FLAGS)
def repro(
    c: Context,
    target: str | None = None,
    cell: str | None = None,
    matrix: str | None = None,
    backend: str | None = None,
    jobs: int | None = None,
    wheels: bool = False,
    debug: bool = False,
    **axis_pins: str | None,
) -> None:
    """Build a cell twice with variations (path, umask, TZ, locale, env order, jobs, ...) and compare every artifact."""
    from forge.commands import repro as command

    pins = _pins(axis_pins, VERIFY_FLAGS)
    options = {"backend": backend, "jobs": jobs, "debug": debug, "cell": cell, "wheels": wheels or None}
    _guarded(debug, lambda: command.run_repro(target, matrix, pins, options))


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
    from forge.commands import rebuild as command

    _guarded(debug, lambda: command.run_rebuild(manifest, {"ccache": ccache, "debug": debug}))


ns = Collection.from_module(sys.modules[__name__])
ns.add_collection(
    Collection("docker", start=task(_docker_start, auto_shortflags=False, help={"debug": AXIS_HELP["debug"]}))
)
