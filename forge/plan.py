"""Pure build planning: a Cell + Target + Workspace become an ordered list of data-only steps.

Nothing here runs a process or reads the environment; `build.py` executes what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePosixPath

from forge.backends.base import Workspace
from forge.matrix import Cell
from forge.targets.cross import emulator_probe, zig_cache_env
from forge.toolchains import Checker, Target


class StepKind(Enum):
    PREPARE = "prepare"  # the backend's prepare(): image, container, directories
    COMMAND = "command"  # run argv; non-zero exit fails the build
    CTEST = "ctest"  # run argv (ctest); failures are parsed per suite and recorded
    MACHO = "macho"  # check Mach-O headers of the installed tree (no argv)
    RECORD = "record"  # write dist/<cell-id>/ atomically


@dataclass(frozen=True)
class Step:
    name: str
    kind: StepKind
    description: str
    argv: tuple[str, ...] = ()
    cwd: PurePosixPath | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class BuildOptions:
    """Knobs of one build; `source_date_epoch` is fixed so artifacts are reproducible."""

    source_date_epoch: int
    jobs: int = 2
    build_type: str = "Release"
    ccache: bool = True
    extra_cmake_args: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Plan:
    cell: Cell
    backend: str
    steps: tuple[Step, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "cell": self.cell.as_dict(),
            "backend": self.backend,
            "steps": [
                {
                    "name": s.name,
                    "kind": s.kind.value,
                    "description": s.description,
                    "argv": list(s.argv),
                    "cwd": str(s.cwd) if s.cwd else None,
                    "env": dict(s.env),
                }
                for s in self.steps
            ],
        }


def step_env(ws: Workspace, opts: BuildOptions) -> tuple[tuple[str, str], ...]:
    """Environment every build step gets: fixed epoch, locale and timezone, compiler cache."""
    env = [("SOURCE_DATE_EPOCH", str(opts.source_date_epoch)), ("LC_ALL", "C"), ("TZ", "UTC")]
    if opts.ccache and ws.ccache is not None:
        env += [("CCACHE_DIR", str(ws.ccache)), ("CCACHE_BASEDIR", str(ws.source)), ("CCACHE_NOHASHDIR", "1")]
    return tuple(env)


def target_env(target: Target, ws: Workspace, opts: BuildOptions) -> tuple[tuple[str, str], ...]:
    """step_env plus what the target's compiler needs (zig's cache, kept with the compiler cache)."""
    env = step_env(ws, opts)
    if target.compiler_provider == "pypi" and ws.ccache is not None:
        env += zig_cache_env(str(ws.ccache))
    return env


def toolchain_args(cell: Cell, target: Target, ws: Workspace) -> list[str]:
    """CMake flags selecting the cell's compiler for the target."""
    args = []
    if target.toolchain_file:
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={ws.source / target.toolchain_file}")
    if cell.gcc is not None and target.name != "host":
        args.append(f"-DEMBER_GCC_VERSION={cell.gcc}")
    return args


def configure_args(cell: Cell, target: Target, ws: Workspace, opts: BuildOptions) -> list[str]:
    """`cmake` configure argv for engine/: Ninja, staging prefix, reproducible paths."""
    prefix_map = f"-ffile-prefix-map={ws.source}=. -ffile-prefix-map={ws.build}=build"
    args = [
        "cmake",
        "-S",
        str(ws.engine),
        "-B",
        str(ws.build),
        "-G",
        "Ninja",
        f"-DCMAKE_BUILD_TYPE={opts.build_type}",
        f"-DCMAKE_INSTALL_PREFIX={ws.prefix}",
        f"-DCMAKE_C_FLAGS={prefix_map}",
        f"-DCMAKE_CXX_FLAGS={prefix_map}",
        f"-DEMBER_BUILD_TESTS={'ON' if runs_engine_tests(target) else 'OFF'}",
        "-DEMBER_NATIVE=OFF",
        *toolchain_args(cell, target, ws),
    ]
    if cell.cuda is not None:
        args.append("-DEMBER_CUDA=ON")
    if opts.ccache:
        args += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    return args + list(opts.extra_cmake_args)


ENGINE_TESTS = "engine-tests"  # the step running engine/tests; its results are named engine:<test>


def runs_engine_tests(target: Target) -> bool:
    """Whether a cell builds and runs the engine's own tests (engine/tests) after installing.

    The host cell does: its tests run natively with the host toolchain, the way a developer and
    CI run them. Other cells leave them out (EMBER_BUILD_TESTS=OFF), so nothing is built that
    is not run.
    """
    return target.name == "host"


def verify_steps(cell: Cell, target: Target, ws: Workspace, opts: BuildOptions) -> list[Step]:
    """Build verify/ against the installed prefix and run (or structurally check) its suites."""
    env = target_env(target, ws, opts)
    configure = [
        "cmake",
        "-S",
        str(ws.verify_source),
        "-B",
        str(ws.verify_build),
        "-G",
        "Ninja",
        f"-DCMAKE_BUILD_TYPE={opts.build_type}",
        f"-DCMAKE_PREFIX_PATH={ws.prefix}",
        *toolchain_args(cell, target, ws),
    ]
    steps = [
        Step(
            "verify-configure",
            StepKind.COMMAND,
            "configure verify/ against the installed prefix",
            tuple(configure),
            ws.source,
            env,
        ),
        Step(
            "verify-build",
            StepKind.COMMAND,
            "build the verify suites",
            ("cmake", "--build", str(ws.verify_build), "-j", str(opts.jobs)),
            ws.source,
            env,
        ),
    ]
    if target.checker is Checker.MACHO:
        what = "check the Mach-O files (CPU type, minimum macOS, install names, exported symbols); not run"
        steps.append(Step("verify-run", StepKind.MACHO, what))
        return steps
    if target.checker is Checker.QEMU:
        probe = tuple(emulator_probe(target))
        steps.append(
            Step("emulator", StepKind.COMMAND, f"start {probe[0]} on the target's C library", probe, ws.source, env)
        )
    how = "under qemu-user" if target.checker is Checker.QEMU else "natively"
    ctest = ("ctest", "--output-on-failure", "-j", str(opts.jobs))
    steps.append(Step("verify-run", StepKind.CTEST, f"run the verify suites {how}", ctest, ws.verify_build, env))
    return steps


def plan_build(cell: Cell, target: Target, ws: Workspace, backend: str, opts: BuildOptions) -> Plan:
    """The ordered steps that build, install, verify and record one cell."""
    env = target_env(target, ws, opts)
    build = ("cmake", "--build", str(ws.build), "-j", str(opts.jobs))
    install = ("cmake", "--install", str(ws.build))
    steps = [
        Step("prepare", StepKind.PREPARE, f"prepare the {backend} backend for {cell.id}"),
        Step(
            "configure",
            StepKind.COMMAND,
            "configure engine/ (CMake + Ninja)",
            tuple(configure_args(cell, target, ws, opts)),
            ws.source,
            env,
        ),
        Step("build", StepKind.COMMAND, "build engine/", build, ws.source, env),
        Step("install", StepKind.COMMAND, "install into the staging prefix", install, ws.source, env),
        *engine_test_steps(target, ws, opts, env),
        *verify_steps(cell, target, ws, opts),
        Step("record", StepKind.RECORD, f"write dist/{cell.id}/ (installed tree, manifest.json, logs) atomically"),
    ]
    return Plan(cell=cell, backend=backend, steps=tuple(steps))


def engine_test_steps(
    target: Target, ws: Workspace, opts: BuildOptions, env: tuple[tuple[str, str], ...]
) -> list[Step]:
    if not runs_engine_tests(target):
        return []
    ctest = ("ctest", "--output-on-failure", "-j", str(opts.jobs))
    return [Step(ENGINE_TESTS, StepKind.CTEST, "run the engine's own tests (engine/tests)", ctest, ws.build, env)]
