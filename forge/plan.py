"""Pure build planning: a Cell + Target + Workspace become an ordered list of data-only steps.

Nothing here runs a process or reads the environment; `build.py` executes what this returns.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import PurePosixPath

from forge import bazel, cuda, wheel
from forge.backends.base import PYTHON_SLEEP_ENV, Workspace
from forge.matrix import Cell
from forge.targets.family import family_for
from forge.toolchains import CompilerProvider, Target


class StepKind(Enum):
    IMAGE = "image"  # the backend's provide_image(): find or build the cell's toolchain image (docker)
    PREPARE = "prepare"  # the backend's prepare(): container, directories
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
    wheels: bool = False  # build, verify and grid-test ember's Python wheel where the cell has one
    extra_cmake_args: tuple[str, ...] = field(default=())
    debug_info: bool = False
    """Also build with -g into a second directory, for the cell's separate .debug files (forge/debuginfo.py)."""
    verify: bool = True
    """False: only the steps that make what repro compares (Config.verify): no verify/, engine tests,
    wheel tests or NumPy grid. The engine is configured exactly as when verifying (its tests are
    built, not run), so the installed tree cannot depend on this switch."""


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
    if ws.ccache is not None:
        env += family_for(target).compiler_env(str(ws.ccache))
    return env


def toolchain_args(cell: Cell, target: Target, ws: Workspace) -> list[str]:
    """CMake flags selecting the cell's compiler for the target."""
    args = []
    if target.toolchain_file:
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={ws.source / target.toolchain_file}")
    if cell.gcc is not None and target.compiler_provider is not CompilerProvider.HOST:  # the host's c++ is as found
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
    args += cuda_configure_args(cell, ws, opts)
    if opts.ccache:
        args += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    return args + list(opts.extra_cmake_args)


ENGINE_TESTS = "engine-tests"  # the step running engine/tests; its results are named engine:<test>


def runs_engine_tests(target: Target) -> bool:
    """Whether a cell builds and runs the engine's own tests (engine/tests) after installing.

    A cell on the host's own compiler does (the host cell): its tests run natively with the host
    toolchain, the way a developer and CI run them. Other cells leave them out
    (EMBER_BUILD_TESTS=OFF), so nothing is built that is not run.
    """
    return target.compiler_provider is CompilerProvider.HOST


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
    tests = family_for(target).test_run(target)
    if not tests.runs:
        steps.append(Step("verify-run", StepKind.MACHO, tests.how))
        return steps
    if tests.probe:
        probe = tests.probe
        steps.append(
            Step("emulator", StepKind.COMMAND, f"start {probe[0]} on the target's C library", probe, ws.source, env)
        )
    ctest = ("ctest", "--output-on-failure", "-j", str(opts.jobs))
    steps.append(Step("verify-run", StepKind.CTEST, f"run the verify suites {tests.how}", ctest, ws.verify_build, env))
    return steps


def plan_build(cell: Cell, target: Target, ws: Workspace, backend: str, opts: BuildOptions) -> Plan:
    """The ordered steps that build, install, verify and record one cell."""
    env = target_env(target, ws, opts)
    steps = [
        *image_steps(cell, backend),
        Step("prepare", StepKind.PREPARE, f"prepare the {backend} backend for {cell.id}"),
        *(bazel_steps(cell, ws, opts, env) if cell.bazel else cmake_steps(cell, target, ws, opts, env)),
        *(verify_steps(cell, target, ws, opts) if opts.verify else ()),
        *wheel_steps(cell, target, ws, opts, env, backend),
        Step("record", StepKind.RECORD, f"write dist/{cell.id}/ (installed tree, manifest.json, logs) atomically"),
    ]
    return Plan(cell=cell, backend=backend, steps=tuple(steps))


IMAGED_BACKENDS = frozenset({"docker"})  # backends whose builds run in a toolchain image


def image_steps(cell: Cell, backend: str) -> list[Step]:
    """The image a cell's commands run in, as the first step: found by its key (the base image,
    the toolchain spec and its lock) or built, then checked against toolchains/locks/. Backends
    that build on the host's toolchain have none."""
    if backend not in IMAGED_BACKENDS:
        return []
    how = "find or build the toolchain image for"
    return [Step("image", StepKind.IMAGE, f"{how} {cell.id} (checked against its lock in toolchains/locks/)")]


def cmake_steps(
    cell: Cell, target: Target, ws: Workspace, opts: BuildOptions, env: tuple[tuple[str, str], ...]
) -> list[Step]:
    """Configure, build and install engine/ with CMake, then its own tests where the cell runs them."""
    build = ("cmake", "--build", str(ws.build), "-j", str(opts.jobs))
    install = ("cmake", "--install", str(ws.build))
    configure = tuple(configure_args(cell, target, ws, opts))
    return [
        Step("configure", StepKind.COMMAND, "configure engine/ (CMake + Ninja)", configure, ws.source, env),
        Step("build", StepKind.COMMAND, "build engine/", build, ws.source, env),
        Step("install", StepKind.COMMAND, "install into the staging prefix", install, ws.source, env),
        *cuda_arch_steps(cell, ws, env),
        *debug_info_steps(cell, target, ws, opts, env),
        *(engine_test_steps(target, ws, opts, env) if opts.verify else ()),
    ]


def cuda_configure_args(cell: Cell, ws: Workspace, opts: BuildOptions) -> list[str]:
    """For a CUDA cell: -DEMBER_CUDA=ON, its architectures (CMAKE_CUDA_ARCHITECTURES), the nvcc its
    image holds and nvcc's reproducible naming (forge/cuda.py); nothing for a CPU cell."""
    if cell.cuda is None:
        return []
    nvcc, _ = cuda.image_tools(cell.cuda)
    arch = cuda.cell_cuda_arch(cell.cuda, cell.value("cuda_arch"))
    return cuda.compiler_args(arch, ws.build, nvcc=nvcc, ccache=opts.ccache)


CUDA_ARCHES = "cuda-arches"  # the step checking the SASS/PTX the installed libraries embed


def cuda_arch_steps(cell: Cell, ws: Workspace, env: tuple[tuple[str, str], ...]) -> list[Step]:
    """After install, list what a CUDA cell's libraries embed with the image's cuobjdump; the
    build checks the listing against the cell's cuda_arch (a `cuda-arches` result that fails the
    cell when a target is missing) and records it (forge/cuda.py manifest_record)."""
    if cell.cuda is None:
        return []
    arch = cuda.cell_cuda_arch(cell.cuda, cell.value("cuda_arch"))
    what = f"list the SASS and PTX the installed libraries embed (cuobjdump; {arch} must be there)"
    argv = cuda.check_argv(ws.prefix, ws.source, *cuda.image_tools(cell.cuda))
    return [Step(CUDA_ARCHES, StepKind.COMMAND, what, tuple(argv), ws.source, env)]


def bazel_steps(cell: Cell, ws: Workspace, opts: BuildOptions, env: tuple[tuple[str, str], ...]) -> list[Step]:
    """Build engine/ with Bazel, install its outputs laid out as CMake's and run the engine's own
    tests with `bazel test` (forge.bazel)."""
    cache = ws.bazel_cache or ws.build / "bazel"
    return [
        Step(c.name, StepKind.COMMAND, c.description, c.argv, ws.source, env)
        for c in bazel.commands(cell, ws.source, ws.prefix, cache, opts.jobs)
        if opts.verify or c.name != bazel.TEST_STEP
    ]


def engine_test_steps(
    target: Target, ws: Workspace, opts: BuildOptions, env: tuple[tuple[str, str], ...]
) -> list[Step]:
    if not runs_engine_tests(target):
        return []
    ctest = ("ctest", "--output-on-failure", "-j", str(opts.jobs))
    return [Step(ENGINE_TESTS, StepKind.CTEST, "run the engine's own tests (engine/tests)", ctest, ws.build, env)]


DEBUG_INFO_FLAGS = "-g -gz"  # full DWARF (types for abidiff), zlib-compressed


def debug_info_build(ws: Workspace) -> PurePosixPath:
    """The -g build directory of a cell, inside its build directory (a volume in containers)."""
    return ws.build / ".debuginfo" / "build"


def debug_info_stage(ws: Workspace) -> PurePosixPath:
    """Where the -g build installs, for forge/debuginfo.py to pair its files with the installed ones."""
    return ws.build / ".debuginfo" / "stage"


def debug_info_steps(
    cell: Cell, target: Target, ws: Workspace, opts: BuildOptions, env: tuple[tuple[str, str], ...]
) -> list[Step]:
    """Configure, build and install engine/ again with `-g` added (same install prefix, same path
    remapping), for ELF targets. The installed tree is not touched: record pairs the files."""
    if not opts.debug_info or not family_for(target).debug_info:
        return []
    dws = replace(ws, build=debug_info_build(ws))
    args = [
        f"{a} {DEBUG_INFO_FLAGS}" if a.startswith(("-DCMAKE_C_FLAGS=", "-DCMAKE_CXX_FLAGS=")) else a
        for a in configure_args(cell, target, dws, opts)
    ]
    args = [a for a in args if not a.startswith("-DEMBER_BUILD_TESTS=")] + ["-DEMBER_BUILD_TESTS=OFF"]
    build = ("cmake", "--build", str(dws.build), "-j", str(opts.jobs))
    install = ("cmake", "--install", str(dws.build), "--prefix", str(debug_info_stage(ws)))
    return [
        Step("debuginfo-configure", StepKind.COMMAND, "configure engine/ again with -g", tuple(args), ws.source, env),
        Step(
            "debuginfo-build", StepKind.COMMAND, "build engine/ with -g (for the .debug files)", build, ws.source, env
        ),
        Step(
            "debuginfo-install",
            StepKind.COMMAND,
            "install the -g build beside the staging prefix",
            install,
            ws.source,
            env,
        ),
    ]


WHEEL_CHECKS = ("wheel-verify", "wheel-grid")  # the wheel steps that test the wheel; the others make it


def wheel_steps(
    cell: Cell,
    target: Target,
    ws: Workspace,
    opts: BuildOptions,
    env: tuple[tuple[str, str], ...],
    backend: str = "docker",
) -> list[Step]:
    """Build, repair, check, verify and grid-test the cell's wheel; [] for a cell without one."""
    planned = wheel.plan_wheel(cell, target, backend=backend)
    if not planned.builds or not opts.wheels:
        return []
    assert planned.requires is not None
    tools = wheel.load_wheel_tools(python=cell.python)  # its own pins where wheel.yaml has them
    root, house = wheel.wheel_root(ws), wheel.wheelhouse_dir(ws)
    script = str(ws.source / wheel.CELL_SCRIPT)
    out = root / "out"
    quiet = (("PIP_DISABLE_PIP_VERSION_CHECK", "1"), ("PIP_NO_CACHE_DIR", "1"), ("PYTHONDONTWRITEBYTECODE", "1"))
    env = (*env, *PYTHON_SLEEP_ENV)  # Python sleeps under repro's faketime too (forge/backends/base.py)
    tool_env = (*env, *quiet, ("PYTHONPATH", str(root / "tools")))
    build_env = (
        *tool_env,
        ("EMBER_NUMPY_REQUIRES", str(planned.requires)),
        ("CMAKE_BUILD_PARALLEL_LEVEL", str(opts.jobs)),
        *((("EMBER_WHEEL_LOCAL", planned.local),) if planned.local else ()),
    )
    defines = [
        "cmake.define.EMBER_PYTHON_USE_INSTALLED=ON",
        f"cmake.define.CMAKE_PREFIX_PATH={ws.prefix}",
        f"cmake.define.EMBER_ENGINE_DIR={ws.engine}",
    ]
    if opts.ccache:
        defines.append("cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
    target_steps: list[Step] = []
    if planned.cross is not None:
        cross_env, cross_defines, target_steps = cross_wheel_steps(cell, target, ws, planned, tool_env)
        build_env = (*build_env, *cross_env)
        defines += cross_defines
    build = ["python3", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index"]
    build += ["-w", str(root / "raw"), str(ws.engine / "python"), "--config-settings", f"build-dir={root / 'cmake'}"]
    for define in defines:
        build += ["--config-settings", define]  # pip 23.0 (bookworm) has no -C
    install = ["python3", "-m", "pip", "install", "--no-index", "--find-links", str(house), "--target"]
    install += [str(root / "tools"), "--no-warn-script-location", *tools.build, *tools.check]
    repair = [
        "python3",
        script,
        "repair",
        "--raw",
        str(root / "raw"),
        "--out",
        str(out),
        "--tools",
        str(root / "tools"),
    ]
    repair += ["--requires", f"numpy{planned.requires}"]
    # a cross cell's tests install the target's NumPy and pytest, for and run by the target's Python
    tested_from = house if planned.cross is None else wheel.target_wheelhouse_dir(ws)
    common = ["--out", str(out), "--wheelhouse", str(tested_from), "--work", str(root)]
    if planned.cross is not None:
        common += ["--target-python", str(root / "target" / "bin" / f"python{cell.python}")]
        common += ["--emulator", shlex.join(planned.cross.emulator)]
    verify = ["python3", script, "verify", *common, "--numpy", wheel.series_of(cell.numpy), "--pytest", *tools.test]
    if planned.cross is None and tools.oracle:  # LiteRT for the live checks; not under the emulator
        verify += ["--oracle", *tools.oracle]
    grid = ["python3", script, "grid", *common, "--built-with", wheel.series_of(cell.numpy), "--numpy", *planned.series]
    src = ws.source
    whose, where = "cell's", "in a fresh venv"
    if planned.cross is not None:
        whose, where = (
            f"target's ({planned.cross.triple})",
            f"for the target's Python under {planned.cross.emulator[0]}",
        )
    steps = [
        Step(
            "wheel-clean",
            StepKind.COMMAND,
            "start the wheel steps afresh",
            ("cmake", "-E", "rm", "-rf", str(root)),
            src,
            env,
        ),
        Step(
            "wheel-tools",
            StepKind.COMMAND,
            "install scikit-build-core, nanobind and auditwheel from the locked wheelhouse (no index)",
            tuple(install),
            src,
            tool_env,
        ),
        *target_steps,
        Step(
            "wheel-build",
            StepKind.COMMAND,
            f"build ember's wheel with the {whose} Python {cell.python} against its NumPy {cell.numpy} headers, "
            f"claiming numpy{planned.requires}",
            tuple(build),
            src,
            build_env,
        ),
        Step(
            "wheel-repair",
            StepKind.COMMAND,
            "auditwheel repair and show (the manylinux tag), and check the wheel's NumPy claim",
            tuple(repair),
            src,
            tool_env,
        ),
        Step(
            "wheel-verify",
            StepKind.COMMAND,
            f"install the wheel {where} with NumPy {wheel.series_of(cell.numpy)} and run verify/python",
            tuple(verify),
            src,
            tool_env,
        ),
        Step(
            "wheel-grid",
            StepKind.COMMAND,
            f"NumPy ABI grid: the wheel with NumPy {', '.join(planned.series)} (claimed ones must work, "
            "excluded ones must be refused by pip and fail to run)",
            tuple(grid),
            src,
            tool_env,
        ),
    ]
    return steps if opts.verify else [s for s in steps if s.name not in WHEEL_CHECKS]


def cross_wheel_steps(
    cell: Cell, target: Target, ws: Workspace, planned: wheel.WheelPlan, env: tuple[tuple[str, str], ...]
) -> tuple[tuple[tuple[str, str], ...], list[str], list[Step]]:
    """A cross cell's additions to the wheel steps: (build environment, CMake defines, steps before the build).

    The step `wheel-target` lays out the target's Python for the build and the tests: its headers
    (the image's multiarch pyconfig.h), the NumPy headers of the target's NumPy wheel, and a
    launcher of its libpython that the emulator runs. scikit-build-core then names the extension
    and the wheel for the target (SETUPTOOLS_EXT_SUFFIX, _PYTHON_HOST_PLATFORM), and CMake
    compiles with the cell's toolchain file.
    """
    assert planned.cross is not None
    cross = planned.cross
    root = wheel.wheel_root(ws)
    dest = root / "target"
    script = str(ws.source / wheel.CELL_SCRIPT)
    argv = ["python3", script, "target", "--dest", str(dest), "--python", cell.python, "--triple", cross.triple]
    argv += ["--cc", cross.cc, "--emulator", shlex.join(cross.emulator), "--ext-suffix", cross.ext_suffix]
    argv += ["--wheelhouse", str(wheel.target_wheelhouse_dir(ws)), "--numpy", wheel.series_of(cell.numpy)]
    step = Step(
        "wheel-target",
        StepKind.COMMAND,
        f"the target's Python {cell.python} ({cross.triple}): its headers, its NumPy {wheel.series_of(cell.numpy)} "
        f"headers and a launcher run by {cross.emulator[0]}",
        tuple(argv),
        ws.source,
        env,
    )
    build_env = (("SETUPTOOLS_EXT_SUFFIX", cross.ext_suffix), ("_PYTHON_HOST_PLATFORM", cross.host_platform))
    defines = [f"cmake.define.{a.removeprefix('-D')}" for a in toolchain_args(cell, target, ws)]
    defines += [
        f"cmake.define.Python_INCLUDE_DIR={dest / 'include' / f'python{cell.python}'}",
        f"cmake.define.EMBER_NUMPY_INCLUDE_DIR={dest / 'numpy-include'}",
    ]
    return build_env, defines, [step]
