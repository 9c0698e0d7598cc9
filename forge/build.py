"""Execute a cell's plan through a backend and record the result in dist/<cell-id>/."""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from forge import __version__, bazel, cuda, debuginfo, filelock, manifest, provenance, wheel
from forge.backends.base import CONTAINER_WORKSPACE, Backend, Workspace
from forge.backends.local import LocalBackend
from forge.config import Config, Data, inside
from forge.errors import (
    BackendError,
    BuildInterrupted,
    ConfigError,
    ForgeError,
    StepFailedError,
    ToolMissingError,
    VerifyFailedError,
)
from forge.host import probe_host_facts
from forge.log import Progress
from forge.matrix import Cell, Request
from forge.plan import (
    CUDA_ARCHES,
    ENGINE_TESTS,
    BuildOptions,
    Plan,
    Step,
    StepKind,
    debug_info_stage,
    image_steps,
    plan_build,
    verify_steps,
)
from forge.resolve import Resolution, resolve
from forge.targets import cross
from forge.targets.family import family_for
from forge.toolchains import Target
from forge.verify import SuiteResult, SuiteStatus, check_result, parse_ctest

SOURCE_SUBDIRS = manifest.SOURCE_SUBDIRS
source_subdirs = bazel.source_subdirs
NOT_VERIFIED = "not verified: repro's second build, its bytes compared with the verified first build's"
INSTALLED_FILES = "installed-files"  # the verify result that dist/<cell>/install matches its manifest


@dataclass
class BuildResult:
    cell_id: str
    result: str  # passed | up to date | verify-failed | failed | interrupted
    seconds: float = 0.0
    dist: Path | None = None
    size: int = 0
    files: int = 0
    suites: list[SuiteResult] = field(default_factory=list)
    error: ForgeError | None = None
    mode: str = "native"  # how verify ran: native | emulated (qemu-...) | built and checked, not run


def make_backend(
    name: str | None,
    update_locks: bool = False,
    keep: bool = False,
    env: Mapping[str, str] | None = None,
    lock_dir: Path | None = None,
) -> Backend:
    """The backend called `name`; `update_locks` lets a docker build rewrite drifted toolchain locks
    (in `lock_dir`, toolchains/locks/ by default), `keep` keeps its container for entering after the
    build; `env` is the environment it starts from (Config.environment(): settings are read in
    config.py and passed down)."""
    if name == "local":
        return LocalBackend(env)
    try:
        module = importlib.import_module(f"forge.backends.{name}")
        extra = {"lock_dir": lock_dir} if lock_dir is not None else {}
        backend: Backend = module.DockerBackend(update_locks=update_locks, keep=keep, env=env, **extra)
    except (ImportError, AttributeError) as exc:
        raise BackendError(f"the {name} backend is not available", str(exc), "use --backend local") from exc
    return backend


_OPEN_BACKENDS: set[Backend] = set()
_OPEN_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by close_open_backends(stop=True) until allow_backends()


@contextlib.contextmanager
def tracked(backend: Backend) -> Iterator[Backend]:
    """Use `backend` (closing it at the end), known to `close_open_backends` meanwhile. After a
    close_open_backends(stop=True) no backend starts: the build is interrupted instead."""
    with _OPEN_LOCK:
        if _STOPPING.is_set():
            backend.close()
            raise BuildInterrupted("interrupted", "the run was stopping when this cell's backend started")
        _OPEN_BACKENDS.add(backend)
    try:
        with backend:
            yield backend
    finally:
        with _OPEN_LOCK:
            _OPEN_BACKENDS.discard(backend)


def close_open_backends(stop: bool = False) -> int:
    """Close every backend a build is using (Ctrl-C during parallel cells); returns how many.

    Removing a cell's container ends the step running in it, so its worker thread finishes
    instead of building on after the user asked to stop. Backends' close() is safe to call twice.
    With `stop`, a backend that starts afterwards (a worker that was just taking its next cell)
    is refused until allow_backends().
    """
    with _OPEN_LOCK:
        if stop:
            _STOPPING.set()
        backends = list(_OPEN_BACKENDS)
    for backend in backends:
        backend.close()
    return len(backends)


def allow_backends() -> None:
    """Backends may start again (the interrupted run has ended)."""
    _STOPPING.clear()


def stopping() -> bool:
    """True from close_open_backends(stop=True) until allow_backends(): the run is being stopped."""
    return _STOPPING.is_set()


def resolve_for(request: Request, data: Data, cfg: Config) -> Resolution:
    """Local builds use the host toolchain, so they resolve pinned to the host's facts."""
    host = probe_host_facts() if cfg.backend == "local" else None
    return resolve(request, data.toolchains, data.supported, host)


def host_workspace(cfg: Config, cell: Cell) -> Workspace:
    base = cfg.cache / cell.id
    return Workspace(
        source=PurePosixPath(cfg.repo),
        build=PurePosixPath(base / "build"),
        prefix=PurePosixPath(base / "stage"),
        verify_build=PurePosixPath(base / "verify-build"),
        ccache=PurePosixPath(cfg.cache / "ccache") if cfg.ccache else None,
        bazel_cache=PurePosixPath(cfg.cache / "bazel") if cell.bazel else None,
    )


def expected_workspace(cfg: Config, cell: Cell) -> Workspace:
    """The workspace a backend's `prepare` hands a normal build: the host's directories for the local
    backend, the container's fixed paths for docker."""
    return host_workspace(cfg, cell) if cfg.backend == "local" else CONTAINER_WORKSPACE


def ccache_expected(cfg: Config) -> bool:
    """Whether a build will find ccache: every forge toolchain image has it; the host may not."""
    return cfg.backend != "local" or shutil.which("ccache") is not None


def plan_cell(cell: Cell, target: Target, cfg: Config, ws: Workspace, backend: str, ccache_found: bool) -> Plan:
    """The one planning route. `invoke plan` calls it with the workspace and compiler cache a build
    will find (expected_workspace, ccache_expected); a build with the ones its backend prepared and
    probed, which are the same unless something changed in between."""
    opts = BuildOptions(
        cfg.source_date_epoch,
        cfg.jobs,
        ccache=cfg.ccache and ccache_found,
        debug_info=cfg.debug_info,
        wheels=cfg.wheels,
        verify=cfg.verify,
    )
    return plan_build(cell, target, ws, backend, opts)


def compiler_command(cell: Cell, target: Target) -> list[str]:
    """The target family's compiler probe, for a build on this machine's architecture."""
    return family_for(target).compiler_probe(cell, target, platform.machine())


def probe_toolchain(backend: Backend, cell: Cell, target: Target) -> dict[str, str | None]:
    """First line of each tool's version output, as the backend sees it (None when absent)."""
    probes = {
        "cmake": ["cmake", "--version"],
        "ninja": ["ninja", "--version"],
        "c++": compiler_command(cell, target),
        "python": ["python3", "--version"],
        "ccache": ["ccache", "--version"],
    }
    if cell.cuda is not None:
        probes["nvcc"] = ["nvcc", "--version"]
    found = {}
    for name, argv in probes.items():
        out = backend.output(argv)
        lines = [line for line in (out or "").splitlines() if line.strip()]
        found[name] = (lines[-1] if name == "nvcc" else lines[0]).strip() if lines else None
    if cell.bazel is not None:
        found["bazel"] = bazel.probe_version(backend.output)
    return found


def _reset(path: PurePosixPath | None) -> None:
    if path is not None:
        shutil.rmtree(Path(path), ignore_errors=True)
        Path(path).mkdir(parents=True, exist_ok=True)


def run_step(step: Step, backend: Backend, logs: Path, host_ws: Workspace, target: Target) -> list[SuiteResult]:
    """Run one COMMAND/CTEST/MACHO step; returns suite results for verify steps."""
    log_path = logs / f"{step.name}.log"
    if step.kind is StepKind.MACHO:
        return check_artifacts(host_ws, target)
    if step.name == "install":
        _reset(host_ws.prefix)
    if step.name == "debuginfo-install":
        _reset(debug_info_stage(host_ws))
    assert step.cwd is not None
    exited_ok = True
    try:
        backend.run(step.argv, cwd=step.cwd, env=dict(step.env), log_path=log_path)
    except StepFailedError as exc:
        if step.name == "emulator":
            raise emulator_error(target, exc) from exc
        if step.kind is not StepKind.CTEST:
            raise
        exited_ok = False
    if step.kind is StepKind.CTEST:
        results = parse_ctest(log_path.read_text(errors="replace"), exited_ok)
        if step.name == ENGINE_TESTS:  # apart from verify/'s suites, which cross cells compare
            results = [replace(r, name=f"engine:{r.name}") for r in results]
        return results
    return []


def host_view(backend: Backend, ws: Workspace, host_ws: Workspace) -> Workspace:
    """host_ws with the installed tree and verify build readable on the host (copied out of a container)."""
    if backend.name == "local":
        return host_ws
    base = Path(host_ws.build).parent / "checked"
    shutil.rmtree(base, ignore_errors=True)
    backend.copy_out(ws.prefix, base / "stage")
    backend.copy_out(ws.verify_build, base / "verify-build")
    return Workspace(host_ws.source, host_ws.build, PurePosixPath(base / "stage"), PurePosixPath(base / "verify-build"))


def check_artifacts(ws: Workspace, target: Target) -> list[SuiteResult]:
    """The verify-run step of a cell whose suites cannot run (macOS): its family's structure checks
    of the installed tree and of the verify programs linked to it."""
    return family_for(target).artifact_checks(target, Path(ws.prefix), Path(ws.verify_build))


def emulator_error(target: Target, exc: StepFailedError) -> ToolMissingError:
    """The emulator probe failed: a missing tool, not failing suites (the fix is the family's)."""
    tests = family_for(target).test_run(target)
    return ToolMissingError(
        f"the emulator for {target.name} does not start: {' '.join(tests.probe)}",
        f"ctest would run every verify suite through it, so nothing was run ({exc.what})",
        f"{tests.probe_fix}; see {' '.join(tests.probe[:1])}'s output in the emulator log",
    )


def manifest_data(
    plan: Plan, cfg: Config, inputs: dict[str, Any], progress: Progress, suites: list[SuiteResult]
) -> manifest.Manifest:
    failed = [s.name for s in suites if s.failed]  # a GPU check without a GPU is neither (verify.py)
    return manifest.Manifest(
        schema_version=manifest.SCHEMA,
        forge=__version__,
        cell=plan.cell.as_dict(),
        backend=manifest.BackendName(plan.backend),
        input_hash=manifest.input_hash(inputs),
        source_tree_hash=inputs["source_tree_hash"],
        source_date_epoch=cfg.source_date_epoch,
        toolchain=inputs["toolchain"],
        steps=[{"name": t.name, "seconds": t.seconds, "status": t.status} for t in progress.timings],
        verify={
            "suites": [s.as_dict() for s in suites],
            "passed": sum(s.passed for s in suites),
            "failed": len(failed),
        },
        result=manifest.Result.PASSED if not failed else manifest.Result.VERIFY_FAILED,
    )


def record(
    plan: Plan,
    backend: Backend,
    ws: Workspace,
    cfg: Config,
    logs: Path,
    data: manifest.Manifest,
    wheel_file: Path | None = None,
) -> Path:
    """Assemble dist/<cell-id>/ in a temporary directory, then swap it in atomically."""
    with manifest.publishing(cfg.dist, plan.cell.id) as tmp:  # on an OSError: DistError, old result kept
        backend.copy_out(ws.prefix, tmp / "install")
        if wheel_file is not None:  # dist/<cell-id>/wheel/ember-...whl, its sha256 in data["wheel"]
            (tmp / "wheel").mkdir()
            shutil.copy2(wheel_file, tmp / "wheel" / wheel_file.name)
        shutil.copytree(logs, tmp / "logs")
        data.files = manifest.file_records(tmp / "install")
        if any(step.name == "debuginfo-install" for step in plan.steps):
            stage = tmp / ".debuginfo-stage"
            backend.copy_out(debug_info_stage(ws), stage)
            data.extra["debug"] = debuginfo.publish(tmp / "install", stage, tmp / debuginfo.DEBUG_DIR)
            shutil.rmtree(stage)
        data.package = provenance.package_record(tmp, plan.cell.id, cfg.source_date_epoch)
        data.steps.append({"name": "record", "seconds": 0.0, "status": "ok"})
        manifest.write_manifest(tmp, data)
        provenance.write_provenance(tmp, data.to_json())
    return cfg.dist / plan.cell.id


def _result_from_dist(cell_id: str, path: Path, result: str, seconds: float) -> BuildResult:
    data = manifest.load_manifest(path)
    files = data.files or {}
    verify = data.verify or {}
    suites = [SuiteResult.from_dict(s) for s in verify.get("suites", [])]
    size = sum(r.get("size", 0) for r in files.values())
    mode = str(verify.get("mode") or "native")
    return BuildResult(cell_id, result, seconds, path, size, len(files), suites, mode=mode)


def build_cell(request: Request, data: Data, cfg: Config, progress: Progress) -> BuildResult:
    """Resolve, plan, run and record one cell. Raises ForgeError; Ctrl-C becomes BuildInterrupted."""
    start = time.monotonic()
    try:
        return _build_cell(request, data, cfg, progress, start)
    except KeyboardInterrupt:
        raise BuildInterrupted("interrupted", "Ctrl-C during the build; dist/ was left as it was") from None


def check_sources(repo: Path) -> None:
    """Fail before any work when the projects forge builds are missing."""
    for project in ("engine", "verify"):
        if not (repo / project / "CMakeLists.txt").is_file():
            raise ConfigError(
                f"{repo / project / 'CMakeLists.txt'} does not exist",
                f"forge builds engine/ and then verify/ against the installed engine; {project}/ has no CMake project",
                "check out a complete tree (git status) or run from the repository root",
            )


def cell_lock(cache: Path, cell_id: str, waiting: Callable[[str], None]) -> contextlib.AbstractContextManager[None]:
    """Hold `<cache>/<cell-id>.lock` exclusively while a build uses `<cache>/<cell-id>/`.

    Two builds of one cell (two matrix entries resolving to it, two cross cells needing the same
    native reference, two `invoke build` runs) would otherwise share its logs and build directories;
    the second waits, says so, and then usually finds the cell up to date.
    """
    return filelock.exclusive(cache / f"{cell_id}.lock", waiting, f"another build of {cell_id}")


def _build_cell(request: Request, data: Data, cfg: Config, progress: Progress, start: float) -> BuildResult:
    check_sources(cfg.repo)
    cell = resolve_for(request, data, cfg).cell
    progress = progress.for_cell(cell.id)  # own timings: parallel cells and nested references never mix
    with cell_lock(cfg.cache, cell.id, progress.info):
        try:
            result = _build_locked(request, cell, data, cfg, progress, start)
        except BuildInterrupted:
            raise
        except ForgeError as exc:
            record_failure(cfg, cell, progress, exc)
            raise
        shutil.rmtree(cfg.dist / FAILED / cell.id, ignore_errors=True)  # the cell builds again
        return result


FAILED = "failed"
"""dist/failed/<cell-id>/: the manifest and logs of a cell's last failed build (the report links them)."""


def record_failure(cfg: Config, cell: Cell, progress: Progress, exc: ForgeError) -> None:
    """Keep a failed build's error and logs under dist/failed/<cell-id>/, published atomically; the
    cell's last good result in dist/<cell-id>/ is not touched. Best effort: a dist/ that cannot take
    it (the error may be that) leaves only the error itself."""
    failed = cfg.dist / FAILED
    try:
        tmp = manifest.staging_dir(failed, cell.id)
        logs = cfg.cache / cell.id / "logs"
        if logs.is_dir():
            shutil.copytree(logs, tmp / "logs")
        data = manifest.Manifest(
            schema_version=manifest.SCHEMA,
            forge=__version__,
            cell=cell.as_dict(),
            backend=manifest.BackendName(cfg.backend) if cfg.backend else None,
            result=manifest.Result.FAILED,
            error={"what": exc.what, "why": exc.why, "fix": exc.fix, "exit_code": exc.exit_code},
            steps=[{"name": t.name, "seconds": t.seconds, "status": t.status} for t in progress.timings],
        )
        manifest.write_manifest(tmp, data)
        manifest.publish(tmp, failed, cell.id)
    except (OSError, ForgeError):  # dist/ cannot take it: the build's own error is the one to report
        shutil.rmtree(failed / f".tmp-{cell.id}-{os.getpid()}", ignore_errors=True)


def _build_locked(
    request: Request, cell: Cell, data: Data, cfg: Config, progress: Progress, start: float
) -> BuildResult:
    target = data.toolchains.targets[cell.target]
    host_ws = host_workspace(cfg, cell)
    logs = cfg.cache / cell.id / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    manifest.recover(cfg.dist, cell.id)
    manifest.check_dist(cfg.dist, cell.id)  # a dist/ that cannot take the result fails before any step
    reference = ensure_reference(request, cell, data, cfg, progress) if cfg.verify else None
    if cfg.backend == "local":
        cross.ensure_target_tools(cell, target, cfg.environment(), logs / "host-tools.log", cfg.install_tools)
    backend_made = make_backend(cfg.backend, cfg.update_locks, cfg.keep_container, cfg.environment(), cfg.lock_dir)
    with tracked(backend_made) as backend:
        for step in image_steps(cell, backend.name):  # the plan's first step: the image everything runs in
            with progress.step(step.name, step.description):
                backend.provide_image(cell)
        with progress.step("prepare", f"{backend.name} backend for {cell.id}"):
            ws = backend.prepare(cell, host_ws)
        planned_wheel = wheel.plan_wheel(cell, target, backend=backend.name)
        wheelhouse_lock: str | None = None  # sha256 of the wheelhouse lock: an input of a wheel build
        if planned_wheel.builds and cfg.wheels:
            with progress.step("wheelhouse", f"the offline wheelhouse for ember's cp{cell.python} wheel"):
                houses = wheel.ensure_wheelhouses(cell.python, planned_wheel, cfg.cache, logs, cfg.update_locks)
                wheel.stage_wheelhouse(backend, houses[0], ws, houses[1] if len(houses) > 1 else None)
                wheelhouse_lock = wheel.wheelhouse_locks_sha256(cell.python, planned_wheel)
        toolchain = probe_toolchain(backend, cell, target)
        cross.require_compiler(toolchain["c++"], cell, target, backend.name)
        bazel.require_version(toolchain.get("bazel"), cell, backend.name)
        source_hash = manifest.source_tree_hash(cfg.repo, source_subdirs(cell))
        commit = provenance.git_commit(cfg.repo)
        cfg = provenance.settle_epoch(cfg, source_hash, commit)
        plan = plan_cell(cell, target, cfg, ws, backend.name, ccache_found=toolchain["ccache"] is not None)
        inputs = {
            "source_tree_hash": source_hash,
            "cell": cell.as_dict(),
            "toolchain": toolchain,
            "plan": plan.as_dict(),
            "backend": backend.identity(),
        }
        if wheelhouse_lock is not None:  # a new NumPy patch release in the lock rebuilds the wheel
            inputs["wheelhouse_lock"] = wheelhouse_lock
        final = cfg.dist / cell.id
        stale = manifest.stale_reason(final, manifest.input_hash(inputs))
        if not cfg.force and stale is None:
            progress.info(f"[cyan]{cell.id}[/]: up to date ({final})")
            return _result_from_dist(cell.id, final, "up to date", time.monotonic() - start)
        if not cfg.force and final.is_dir():
            progress.info(f"[cyan]{cell.id}[/]: rebuilding: {stale}")
        suites: list[SuiteResult] = []
        for step in plan.steps:
            if step.kind in (StepKind.IMAGE, StepKind.PREPARE, StepKind.RECORD):  # run above and below
                continue
            with progress.step(step.name, step.description, logs / f"{step.name}.log"):
                view = host_view(backend, ws, host_ws) if step.kind is StepKind.MACHO else host_ws
                suites += run_step(step, backend, logs, view, target)
        built_wheel = None
        if planned_wheel.builds and cfg.wheels:
            built_wheel = wheel.collect(backend, ws, cfg.cache / cell.id / "wheel-out", tested=cfg.verify)
            built_wheel.entry["wheelhouse_lock_sha256"] = wheelhouse_lock
            suites += built_wheel.suites
        if cell.target not in cross.REFERENCE_TARGETS and cfg.verify:
            with progress.step("parity", f"compare {cell.id} with the native build"):
                view = host_view(backend, ws, host_ws)
                suites += cross.parity_checks(target, Path(view.prefix), suites, reference, Path(view.verify_build))
        cuda_record = None
        if cell.cuda is not None:  # the cuda-arches step's listing, checked against the cell's targets
            check_log = (logs / f"{CUDA_ARCHES}.log").read_text(errors="replace")
            asked = cuda.cell_cuda_arch(cell.cuda, cell.value("cuda_arch"))
            cuda_record = cuda.manifest_record(asked, toolchain.get("nvcc"), check_log)
            suites.append(check_result(CUDA_ARCHES, cuda_record["problems"]))
        with progress.step("record", f"dist/{cell.id}/"):
            recorded = manifest_data(plan, cfg, inputs, progress, suites)
            recorded.extra.update(backend.facts())
            assert recorded.verify is not None
            recorded.verify.update(mode=cross.verify_mode(target), reference=reference[0].name if reference else None)
            if not cfg.verify:
                recorded.verify.update(mode=NOT_VERIFIED)
            recorded.extra.update(provenance.manifest_extras(commit, plan, backend))
            if built_wheel is not None or planned_wheel.refusal is not None:
                recorded.extra["wheel"] = built_wheel.entry if built_wheel else planned_wheel.as_dict()
            if cell.bazel is not None:
                recorded.extra["bazel"] = bazel_record(toolchain, logs)
            if cuda_record is not None:  # the nvcc inside the image, the SASS/PTX the libraries embed
                recorded.extra["cuda"] = cuda_record
            path = record(plan, backend, ws, cfg, logs, recorded, built_wheel.wheel if built_wheel else None)
    result = _result_from_dist(cell.id, path, "passed", time.monotonic() - start)
    if any(s.failed for s in result.suites):
        result.result = "verify-failed"
    return result


def bazel_record(toolchain: dict[str, str | None], logs: Path) -> dict[str, Any]:
    """The manifest's `bazel` entry: the version found in the image and the build's cache hits."""
    log = logs / "bazel-build.log"
    counts = bazel.parse_processes(log.read_text(errors="replace"), str(log))
    return {"version": toolchain.get("bazel"), **counts.as_dict()}


def ensure_reference(
    request: Request, cell: Cell, data: Data, cfg: Config, progress: Progress
) -> tuple[Path, manifest.Manifest] | None:
    """For a cross cell: the native build it is compared with, built first when dist/ lacks it.

    None for native cells (nothing to compare) and when the reference could not be built.
    """
    if cell.target in cross.REFERENCE_TARGETS:
        return None
    source_hash = manifest.source_tree_hash(cfg.repo, SOURCE_SUBDIRS)
    found = cross.find_reference(cfg.dist, source_hash, cell.id)
    if found is None:
        progress.info(f"[cyan]{cell.id}[/]: building the native reference first (its symbols and results are compared)")
        try:
            _build_cell(cross.reference_request(request), data, cfg, progress, time.monotonic())
        except ForgeError as exc:
            progress.info(f"native reference build failed: {exc.what}")
        found = cross.find_reference(cfg.dist, source_hash, cell.id)
    return found


def verify_dist(request: Request, data: Data, cfg: Config, progress: Progress) -> list[SuiteResult]:
    """Build verify/ against an already recorded dist/<cell-id>/install and run its suites."""
    cell = resolve_for(request, data, cfg).cell
    target = data.toolchains.targets[cell.target]
    install = cfg.dist / cell.id / "install"
    if not install.is_dir():
        raise BackendError(
            f"no build of {cell.id} in {cfg.dist}", "", f"run `invoke build --target {cell.target}` first"
        )
    files = check_recorded_files(cfg.dist / cell.id)
    if not files.passed:  # suites run against a damaged tree would prove nothing about the build
        raise VerifyFailedError(
            f"{install} does not match its manifest",
            files.detail.replace("; ", "\n"),
            f"rebuild it: `invoke build --target {cell.target} --force`",
        )
    base = host_workspace(cfg, cell)
    ws = Workspace(
        base.source, base.build, PurePosixPath(install), PurePosixPath(cfg.cache / cell.id / "verify-dist"), base.ccache
    )
    logs = cfg.cache / cell.id / "verify-dist-logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    opts = BuildOptions(cfg.source_date_epoch, cfg.jobs, ccache=False)
    suites: list[SuiteResult] = [files]
    with make_backend("local", env=cfg.environment()) as backend:
        for step in verify_steps(cell, target, ws, opts):
            with progress.step(step.name, step.description, logs / f"{step.name}.log"):
                suites += run_step(step, backend, logs, ws, target)
    return suites


def check_recorded_files(cell_dir: Path) -> SuiteResult:
    """The installed tree, the package and a built wheel against the manifest: each present with its recorded sha256."""
    data = manifest.read_manifest(cell_dir)
    if data is None:
        raise BackendError(
            f"{cell_dir / manifest.MANIFEST} is missing or unreadable",
            "without it nothing says which files the build installed, so the tree cannot be checked",
            "rebuild the cell: `invoke build --force`",
        )
    problems = manifest.tree_problems(cell_dir / "install", data.files)
    problems += manifest.side_problems(cell_dir, data)
    if not problems:
        return SuiteResult(INSTALLED_FILES, SuiteStatus.PASSED)
    more = f"; ... ({len(problems) - 10} more)" if len(problems) > 10 else ""
    return SuiteResult(INSTALLED_FILES, SuiteStatus.FAILED, 0.0, "; ".join(problems[:10]) + more)


def rebuild_cell(recorded: provenance.Recorded, data: Data, cfg: Config, progress: Progress) -> BuildResult:
    """Build a manifest's cell again from what the manifest says (request, epoch, backend) into
    cfg's directories; repro's second build and `invoke rebuild` both go through here."""
    cell_id = recorded.cell.id
    shutil.rmtree(inside(cfg.cache, cell_id, what="cell id"), ignore_errors=True)  # start from empty build dirs
    rcfg = replace(cfg, backend=recorded.backend, source_date_epoch=recorded.source_date_epoch, force=True)
    built = build_cell(provenance.rebuild_request(recorded.cell), data, rcfg, progress)
    if built.cell_id != cell_id:
        raise ConfigError(
            f"the manifest's cell {cell_id} now resolves to {built.cell_id}",
            "matrix/ or toolchains/ changed since",
            "rebuild from the commit the manifest names",
        )
    return built
