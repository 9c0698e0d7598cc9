"""Prove a build is reproducible: build twice with variations, compare every artifact's sha256.

The two builds differ in everything a reproducible build must not depend on (see `Variation`):
build directory path, umask, TZ, LANG/LC_ALL, environment variable order, user name, the build
user's uid and the hostname inside the container, the number of parallel jobs, and the wall clock
(the second build runs under libfaketime, 397 days ahead, so even the year differs). The second
build never uses the compiler cache, so a cached object cannot hide a difference. Any differing artifact fails the
check and writes `repro-report.txt`/`.json` next to the cell's manifest, with a diffoscope text
diff per differing file (diffoscope comes from PyPI, installed on demand into .cache/).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from rich.table import Table

from forge import bazel, filelock, host, manifest, provenance
from forge.backends.base import FAKETIME_ENV, UMASK_ENV
from forge.build import build_cell, cell_lock, rebuild_cell, resolve_for
from forge.config import Config, Data, process_environment
from forge.errors import ForgeError, ToolMissingError
from forge.log import Progress
from forge.matrix import Cell, Request
from forge.proc import run_command

REPORT_TXT = "repro-report.txt"
REPORT_JSON = "repro-report.json"
DIFFS_DIR = "repro-diffs"
DIFFOSCOPE_MAX_SECONDS = 300


class ReproDifferentError(ForgeError):
    """Two builds of the same inputs produced different bytes."""

    exit_code = 9


@dataclass(frozen=True)
class Variation:
    """What one of the two builds looks like from the outside.

    `label` names it in reports; `root` is where its build directories live (the path differs
    between the builds); the rest is the process environment it runs with.
    """

    label: str
    root: Path
    umask: int
    tz: str
    lang: str
    user: str
    hostname: str
    jobs: int
    reverse_env: bool
    ccache: bool
    container_build: str = "/build"
    container_user: str = "forge"
    clock: str = ""  # a libfaketime offset ("+397d"), or "" for the real clock
    published: bool = False  # the build already in dist/<cell-id>/ (`invoke build`'s), not one made here
    checks: bool = True
    """False (b): build only what is compared (installed tree, package, wheel), none of the cell's
    checks and no .debug files (Config.verify): b's bytes equal to a's are as verified as a's."""

    def describe(self) -> str:
        if self.published:
            return (
                f"{self.label}: the published build (dist/<cell-id>/, as `invoke build` made it: the machine's "
                f"umask, TZ, LANG, user and hostname), -j{self.jobs}, ccache {'on' if self.ccache else 'off'}, "
                f"container build dir {self.container_build}, container user {self.container_user}, clock real"
            )
        return (
            f"{self.label}: dir {self.root}, umask {self.umask:04o}, TZ={self.tz}, LANG={self.lang}, "
            f"USER={self.user}, hostname {self.hostname}, -j{self.jobs}, "
            f"env {'reversed' if self.reverse_env else 'as is'}, ccache {'on' if self.ccache else 'off'}, "
            f"container build dir {self.container_build}, container user {self.container_user}, "
            f"clock {'shifted ' + self.clock if self.clock else 'real'}" + ("" if self.checks else f", {UNCHECKED}")
        )


UNCHECKED = "only what is compared built (no verify suites, engine or wheel tests, NumPy grid, .debug files)"
SAME_MACHINE = "kernel, CPU model and filesystem: both builds run on the same machine"
STATIC_CLOCK = "wall clock of statically linked programs (zig): libfaketime reaches dynamically linked ones only"
BAZEL_CLOCK = (
    "wall clock: only by the time between the two builds (Bazel runs its actions from its own server, "
    "which libfaketime's LD_PRELOAD does not reach, so the clock is not shifted for Bazel cells)"
)
CUDA_CLOCK = (
    "wall clock: only by the time between the two builds (a CUDA cell: nvcc 13's cicc deadlocks under "
    'libfaketime, "Unexpected recursive calls to clock_gettime()", so its second build keeps the real clock)'
)
LOCAL_LIMITS = (
    "uid of the build user with the local backend: both builds run as the invoking user "
    "(the docker backend runs them as forge and forge-b)",
    "hostname with the local backend: only $HOSTNAME changes (the docker backend sets the container's)",
)


def not_varied(variations: tuple[Variation, ...], backend: str, clock_why: str = "") -> list[str]:
    """What the two builds had in common although a reproducible build must not depend on it."""
    items = [SAME_MACHINE]
    if clock_why:
        items.append(clock_why)
    elif len({v.clock for v in variations}) < 2:
        items.append("wall clock: only by the time between the two builds (faketime is not installed)")
    else:
        items.append(STATIC_CLOCK)
    if backend != "docker":
        items += LOCAL_LIMITS
    return items


CLOCK_SHIFT = "+397d"  # more than a leap year: the second build's date, and year, always differ


def default_variations(first: Path, second: Path, jobs: int, ccache: bool) -> tuple[Variation, Variation]:
    """The first build is an ordinary one (in `first`, compiler cache as configured, `jobs` jobs,
    as `invoke build` runs it); the second changes all it can and compiles everything itself with
    one job more, so that ninja schedules the compilations in another order (as published_variations
    does). The first once ran with half the jobs: on 2 cores that made it a -j1 build of ember and
    its tests, the longest step of CI (557 s of a cold run's 819 s for the ember repro)."""
    a = Variation("a", first, 0o022, "UTC", "C.UTF-8", "forge", "forge-a", max(1, jobs), False, ccache)
    b = Variation(
        "b", second, 0o077, "Pacific/Kiritimati", "fr_FR.UTF-8", "reprob", "forge-b-host",
        max(1, jobs) + 1, True, False, "/build/variant-b/deeper", "forge-b", CLOCK_SHIFT, checks=False,
    )  # fmt: skip
    return a, b


def published_variations(first: Path, second: Path, jobs: int, ccache: bool) -> tuple[Variation, Variation]:
    """The first build is the one `invoke build` already published (its directory copied to `first`);
    the second is default_variations' b (one job more than the first, so the parallelism differs)."""
    a = Variation("a", first, 0o022, "", "", "forge", "", jobs, False, ccache, published=True)
    return a, default_variations(first, second, jobs, ccache)[1]


def published_problem(cell_dir: Path, wheels: bool) -> str | None:
    """Why dist/<cell-id>/ cannot be a repro's first build (None: it can).

    It must be a passed build whose files still match its manifest, built with the wheel steps
    exactly when this repro builds them (else one side would have a wheel the other lacks)."""
    data = manifest.read_manifest(cell_dir)
    if data is None:
        return f"{cell_dir} holds no readable manifest"
    if data.result is not manifest.Result.PASSED:
        return f"its result is {data.result.value!r}"
    record = data.extra.get("wheel")  # built or refused when the wheel steps ran, absent otherwise
    built_wheel = isinstance(record, Mapping) and record.get("status") == "built"
    if wheels and not isinstance(record, Mapping):
        return "it was built without the wheel steps"
    if built_wheel and not wheels:
        return "it holds a wheel and this repro builds none (pass --wheels)"
    if manifest.tree_problems(cell_dir / "install", data.files) or manifest.side_problems(cell_dir, data):
        return "its files no longer match its manifest"
    return None


def varied_env(base: Mapping[str, str], v: Variation) -> dict[str, str]:
    """`base` with the variation's locale, zone and user, in the variation's key order."""
    env = {k: val for k, val in base.items() if not k.startswith("LC_")}
    env.update(TZ=v.tz, LANG=v.lang, LC_ALL=v.lang, USER=v.user, LOGNAME=v.user, HOSTNAME=v.hostname)
    env["FORGE_CONTAINER_HOSTNAME"] = v.hostname
    env["FORGE_CONTAINER_BUILD_DIR"] = v.container_build
    env["FORGE_CONTAINER_USER"] = v.container_user
    env[UMASK_ENV] = f"{v.umask:03o}"
    env.pop(FAKETIME_ENV, None)
    if v.clock:
        env[FAKETIME_ENV] = v.clock
    keys = sorted(env, reverse=v.reverse_env)
    return {k: env[k] for k in keys}


def varied_config(cfg: Config, v: Variation) -> Config:
    """cfg for the build under `v`: the backends start from the varied environment (nothing rewrites
    this process's), and build in the variation's directories with its jobs and compiler cache."""
    return replace(
        cfg,
        cache=v.root,
        dist=v.root / "dist",
        force=True,
        jobs=v.jobs,
        ccache=v.ccache,
        env=varied_env(cfg.environment(), v),
        verify=v.checks,
        debug_info=cfg.debug_info and v.checks,
    )


@contextlib.contextmanager
def umask(v: Variation) -> Iterator[None]:
    """Run the body with the variation's umask (files forge itself writes, e.g. the copied-out tree), restored after."""
    old_umask = os.umask(v.umask)
    try:
        yield
    finally:
        os.umask(old_umask)


class Outcome(Enum):
    IDENTICAL = "identical"
    DIFFERENT = "different"
    ONLY_FIRST = "only in first build"
    ONLY_SECOND = "only in second build"


@dataclass(frozen=True)
class FileComparison:
    path: str
    outcome: Outcome
    first: str | None
    second: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "outcome": self.outcome.value, "first": self.first, "second": self.second}


def _digest(record: Mapping[str, Any] | None) -> str | None:
    if record is None:
        return None
    return f"link:{record['link']}" if "link" in record else str(record["sha256"])


def compare_records(first: Mapping[str, Any], second: Mapping[str, Any]) -> list[FileComparison]:
    """Per path (sorted): identical, different, or present in one build only."""
    result = []
    for path in sorted(set(first) | set(second)):
        a, b = _digest(first.get(path)), _digest(second.get(path))
        if a is None:
            outcome = Outcome.ONLY_SECOND
        elif b is None:
            outcome = Outcome.ONLY_FIRST
        else:
            outcome = Outcome.IDENTICAL if a == b else Outcome.DIFFERENT
        result.append(FileComparison(path, outcome, a, b))
    return result


@dataclass
class ReproResult:
    """What `repro` found for one cell (or project)."""

    name: str
    comparisons: list[FileComparison]
    variations: tuple[Variation, ...]
    seconds: list[float] = field(default_factory=list)
    report: Path | None = None
    backend: str = "local"
    clock_why: str = ""
    """Why the wall clock was not shifted although faketime was there ("" when it was, or was missing)."""

    @property
    def identical(self) -> int:
        return sum(c.outcome is Outcome.IDENTICAL for c in self.comparisons)

    @property
    def differing(self) -> list[FileComparison]:
        return [c for c in self.comparisons if c.outcome is not Outcome.IDENTICAL]

    @property
    def ratio(self) -> float | None:
        """Repro time over one (the first) build: about 2 when both builds cost the same."""
        return sum(self.seconds) / self.seconds[0] if len(self.seconds) == 2 and self.seconds[0] > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reproducible": not self.differing,
            "compared": len(self.comparisons),
            "identical": self.identical,
            "build_seconds": [round(s, 1) for s in self.seconds],
            "ratio_vs_one_build": round(self.ratio, 2) if self.ratio else None,
            "variations": [v.describe() for v in self.variations],
            "not_varied": not_varied(self.variations, self.backend, self.clock_why),
            "files": [c.as_dict() for c in self.comparisons],
        }


def render_text(result: ReproResult) -> str:
    lines = [
        f"repro of {result.name}: {result.identical}/{len(result.comparisons)} artifacts identical",
        *(f"  build {v.describe()}" for v in result.variations),
        *(f"  not varied: {n}" for n in not_varied(result.variations, result.backend, result.clock_why)),
        "",
    ]
    lines += [f"{c.outcome.value:>22}  {c.path}" for c in result.comparisons]
    return "\n".join(lines) + "\n"


# --- diffoscope --------------------------------------------------------------------------------


def diffoscope_path(tools: Path, install: bool = True, log: Callable[[str], None] = print) -> Path:
    """diffoscope from a venv under `tools` (created and filled from PyPI on first use)."""
    found = shutil.which("diffoscope")
    if found:
        return Path(found)
    venv = tools / "diffoscope"
    exe = venv / "bin" / "diffoscope"
    if exe.is_file():
        return exe
    if not install:
        raise ToolMissingError("diffoscope is not installed", "", f"{sys.executable} -m pip install diffoscope")
    log(f"installing diffoscope from PyPI into {venv} (once)")
    try:
        run_command([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        run_command(
            [str(venv / "bin" / "pip"), "install", "-q", "diffoscope"], check=True, capture_output=True, timeout=600
        )
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(venv, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        raise ToolMissingError(
            "could not install diffoscope from PyPI",
            (detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail))[-2000:] or str(exc),
            f"{sys.executable} -m pip install diffoscope (the report lists the differing files without it)",
        ) from exc
    return exe


def diffoscope_text(tool: Path, first: Path, second: Path) -> str:
    """diffoscope's text diff of two files (exit 1 means "they differ", not an error)."""
    try:
        proc = run_command(
            [str(tool), "--text", "-", "--no-progress", "--exclude-directory-metadata=yes", str(first), str(second)],
            capture_output=True,
            text=True,
            timeout=DIFFOSCOPE_MAX_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"diffoscope took more than {DIFFOSCOPE_MAX_SECONDS} s on {first.name}\n"
    return str(proc.stdout) + (str(proc.stderr) if proc.returncode not in (0, 1) else "")


def write_report(
    result: ReproResult,
    out_dir: Path,
    trees: tuple[Path, Path],
    tools: Path,
    log: Callable[[str], None] = print,
) -> Path:
    """repro-report.txt/.json in out_dir; on a difference, repro-diffs/<path>.txt from diffoscope."""
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / DIFFS_DIR, ignore_errors=True)
    data = result.as_dict()
    changed = [c for c in result.differing if c.outcome is Outcome.DIFFERENT]
    if changed:
        try:
            tool: Path | None = diffoscope_path(tools, log=log)
        except ToolMissingError as exc:
            log(exc.render())
            data["diffoscope"], tool = exc.what, None
        for comp in changed:
            a, b = trees[0] / comp.path, trees[1] / comp.path
            if not (a.is_file() and b.is_file()):
                text = f"no diff: {a if not a.is_file() else b} is not there to compare\n"
            else:
                text = diffoscope_text(tool, a, b) if tool else _byte_diff(a, b)
            diff_file = out_dir / DIFFS_DIR / f"{comp.path}.txt"
            diff_file.parent.mkdir(parents=True, exist_ok=True)
            diff_file.write_text(text)
    if result.differing:
        data["diffs"] = {c.path: f"{DIFFS_DIR}/{c.path}.txt" for c in changed}
    manifest.write_json(out_dir / REPORT_JSON, data)
    text = render_text(result)
    if changed:
        text += "\n" + "\n".join(f"diff of {c.path}: {DIFFS_DIR}/{c.path}.txt (next to this report)" for c in changed)
        text += "\n"
    (out_dir / REPORT_TXT).write_text(text)
    result.report = out_dir / REPORT_TXT
    return out_dir / REPORT_TXT


def _byte_diff(first: Path, second: Path) -> str:
    """Without diffoscope: the offset of the first differing byte and 64 bytes around it."""
    a, b = first.read_bytes(), second.read_bytes()
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    lo = max(0, at - 16)
    return f"sizes {len(a)} and {len(b)}; first difference at byte {at}\n- {a[lo : lo + 64]!r}\n+ {b[lo : lo + 64]!r}\n"


# --- drivers -----------------------------------------------------------------------------------


def artifact_records(tree: Path, only: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """file_records of tree, restricted to the paths `only` accepts."""
    return {p: r for p, r in manifest.file_records(tree).items() if only is None or only(p)}


def is_cell_artifact(path: str) -> bool:
    """In dist/<cell-id>/: the installed tree, the package and a wheel are artifacts; logs and records are not."""
    return path.startswith(("install/", "wheel/")) or ("/" not in path and path.endswith(".tar.gz"))


def compare_trees(
    name: str,
    trees: tuple[Path, Path],
    variations: tuple[Variation, Variation],
    only: Callable[[str], bool] | None = None,
) -> ReproResult:
    first, second = artifact_records(trees[0], only), artifact_records(trees[1], only)
    return ReproResult(name, compare_records(first, second), variations)


def repro_project(
    name: str,
    build: Callable[[Variation], Path],
    variations: tuple[Variation, Variation],
    report_dir: Path | None,
    tools: Path,
    log: Callable[[str], None] = print,
) -> ReproResult:
    """Run `build` (returns its installed tree) under each variation, compare, write the report.

    The report goes to `report_dir`, or next to the first build's tree when None.
    """
    trees, seconds = run_builds(build, variations)
    result = compare_trees(name, trees, variations)
    result.seconds = seconds
    write_report(result, report_dir or trees[0].parent, trees, tools, log)
    return result


def run_builds(
    build: Callable[[Variation], Path], variations: tuple[Variation, Variation]
) -> tuple[tuple[Path, Path], list[float]]:
    """Each build's installed tree and its wall time, each run under its variation."""
    trees: list[Path] = []
    seconds: list[float] = []
    for v in variations:
        start = time.monotonic()
        with umask(v):
            trees.append(build(v))
        seconds.append(time.monotonic() - start)
    return (trees[0], trees[1]), seconds


def raise_for(results: list[ReproResult]) -> None:
    bad = [r for r in results if r.differing]
    if bad:
        details = "; ".join(f"{r.name}: {', '.join(c.path for c in r.differing[:8])}" for r in bad)
        raise ReproDifferentError(
            f"{len(bad)} of {len(results)} builds are not reproducible",
            details,
            "read " + ", ".join(str(r.report) for r in bad) + " (diffoscope diffs in repro-diffs/ next to it)",
        )


SNAPSHOT_PARTS = provenance.SOURCE_PARTS


exclusive = filelock.exclusive


def ensure_faketime(log_path: Path, log: Callable[[str], None], env: Mapping[str, str] | None = None) -> bool:
    """faketime on the host for a local repro (apt-get installs it as root); False, said loudly,
    when it cannot be had: the wall clock is then not varied and the report says so."""
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        installed = host.ensure(
            (host.tool("faketime"),), env=env or process_environment(), log_path=log_path, why="a shifted clock"
        )
    except ForgeError as exc:
        log(f"[yellow]the wall clock will not be varied: {exc.what}; {exc.fix}[/]")
        return False
    if installed:
        log(f"installed {', '.join(installed)} for the shifted clock of the second build")
    return True


def snapshot_sources(repo: Path, dest: Path) -> Path:
    """Copy what a cell build reads into dest, so edits to the tree during a repro cannot make the
    two builds differ; build and cache directories are left out, the commit is noted."""
    shutil.rmtree(dest, ignore_errors=True)
    skip = manifest.copy_ignore  # what source_tree_hash covers, no more and no less
    for part in SNAPSHOT_PARTS:
        shutil.copytree(repo / part, dest / part, symlinks=True, ignore=skip)
    for part in bazel.SOURCE_PATHS:  # what a Bazel cell's build reads besides those, where present
        if (repo / part).is_dir():
            shutil.copytree(repo / part, dest / part, symlinks=True, ignore=skip, dirs_exist_ok=True)
        elif (repo / part).is_file():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / part, dest / part)
    commit = provenance.git_commit(repo)
    if commit:
        (dest / provenance.COMMIT_FILE).write_text(commit + "\n")
    return dest


def repro_cell(
    request: Request, data: Data, cfg: Config, progress: Progress, published_first: bool = False
) -> ReproResult:
    """Build a cell (a), rebuild it from a's manifest under variation b, compare the artifacts
    (installed tree and package), and publish a with its report as dist/<cell-id>/.

    With `published_first` (`invoke release`, right after building or reusing its cells), a is the
    build already in dist/<cell-id>/ when it fits (`published_problem`), so only b is built."""

    cell = resolve_for(request, data, cfg).cell  # fail on a bad request before copying anything
    manifest.check_dist(cfg.dist, cell.id)  # and on a dist/ that could not take the result
    with exclusive(cfg.cache / "repro" / f"{cell.id}.lock", progress.info, f"another repro of {cell.id}"):
        return _repro_cell(request, data, cfg, progress, cell, published_first)


def _repro_cell(
    request: Request, data: Data, cfg: Config, progress: Progress, cell: Cell, published_first: bool
) -> ReproResult:
    snapshot = cfg.cache / "repro" / f"src-{cell.id}"
    progress.info(f"repro of {cell.id}: sources copied to {snapshot}")
    cfg = replace(cfg, repo=snapshot_sources(cfg.repo, snapshot))
    # a: fresh directories and `invoke build`'s compiler cache; b: elsewhere, nothing cached.
    base = cfg.cache / "repro"
    variations = default_variations(base / "a", base / "variant-b" / "deeper", cfg.jobs, cfg.ccache)
    if published_first:
        problem = published_problem(cfg.dist / cell.id, cfg.wheels)
        if problem is None:
            variations = published_variations(base / "a", base / "variant-b" / "deeper", cfg.jobs, cfg.ccache)
            progress.info(f"repro of {cell.id}: the first build is the published dist/{cell.id}/")
        else:
            progress.info(f"repro of {cell.id}: builds its first build too (dist/{cell.id}/: {problem})")
    backend = cfg.backend or "local"
    # Bazel's actions escape LD_PRELOAD; nvcc's cicc hangs under libfaketime: b keeps the real clock
    clock_why = BAZEL_CLOCK if cell.bazel is not None else CUDA_CLOCK if cell.cuda is not None else ""
    if clock_why or (
        backend == "local" and not ensure_faketime(base / "host-tools.log", progress.info, cfg.environment())
    ):
        variations = (variations[0], replace(variations[1], clock=""))
    (cfg.cache / "ccache").mkdir(parents=True, exist_ok=True)
    if not (base / "a" / "ccache").exists():
        (base / "a").mkdir(parents=True, exist_ok=True)
        (base / "a" / "ccache").symlink_to(cfg.cache / "ccache", target_is_directory=True)

    def build(v: Variation) -> Path:
        if v.published:  # a copy, taken while no build of the cell can replace it
            copied = v.root / "dist" / cell.id
            shutil.rmtree(copied, ignore_errors=True)
            with cell_lock(cfg.cache, cell.id, progress.info):
                shutil.copytree(cfg.dist / cell.id, copied, symlinks=True)
            return copied  # an earlier repro's report in it is replaced by this one's (write_report)
        progress.info(f"[bold]repro build {v.describe()}[/]")
        shutil.rmtree(v.root / cell.id, ignore_errors=True)  # start from empty build directories
        # Both record into private dist/ directories: another build publishing dist/<cell-id>/
        # meanwhile must not replace the tree being compared.
        vcfg = varied_config(cfg, v)
        first_dir = variations[0].root / "dist" / cell.id
        first = manifest.read_manifest(first_dir) if v.label != "a" else None
        if first is None:
            built = build_cell(request, data, vcfg, progress)
        else:  # the second build takes everything from the first one's manifest, as `invoke rebuild` does
            recorded = provenance.parse_recorded(first.to_json(), str(first_dir / manifest.MANIFEST))
            built = rebuild_cell(recorded, data, vcfg, progress)
        assert built.dist is not None
        return built.dist

    trees, seconds = run_builds(build, variations)
    result = compare_trees(cell.id, trees, variations, is_cell_artifact)
    result.seconds = seconds
    result.backend = backend
    result.clock_why = clock_why
    write_report(result, trees[0], trees, cfg.cache / "tools", progress.info)
    published = publish_copy(trees[0], cfg.dist, cell.id)  # the first build and its report
    result.report = published / REPORT_TXT
    return result


def reusable_report(cell_dir: Path) -> dict[str, Any] | None:
    """The repro report of dist/<cell-id>/ when it says the cell reproduces and still fits it, else None.

    A repro publishes its first build with the report inside the cell directory, and any later
    build of the cell replaces that whole directory, so a report there describes the bytes beside
    it. It is taken only when it names this cell, compared every recorded artifact, found them all
    identical, and the files still match the manifest.
    """
    try:
        report = json.loads((cell_dir / REPORT_JSON).read_text())
    except (OSError, ValueError):
        return None
    data = manifest.read_manifest(cell_dir)
    if not isinstance(report, dict) or data is None or report.get("name") != cell_dir.name:
        return None
    artifacts = len(data.files or {}) + len(manifest.side_artifacts(data))
    complete = report.get("compared") == report.get("identical") and (report.get("compared") or 0) >= artifacts > 0
    if report.get("reproducible") is not True or not complete:
        return None
    if manifest.tree_problems(cell_dir / "install", data.files) or manifest.side_problems(cell_dir, data):
        return None
    return report


def publish_copy(cell_dir: Path, dist: Path, cell_id: str) -> Path:
    """Publish a copy of a recorded cell directory as dist/<cell_id>/, atomically."""
    with manifest.publishing(dist, cell_id) as tmp:
        shutil.copytree(cell_dir, tmp, symlinks=True, dirs_exist_ok=True)
    return dist / cell_id


def repro_table(results: list[ReproResult]) -> Table:
    table = Table(title="repro summary")
    for column in ("cell", "artifacts", "identical", "different", "builds (s)", "ratio", "report"):
        table.add_column(column, overflow="fold")
    for r in results:
        colour = "green" if not r.differing else "red"
        table.add_row(
            r.name,
            str(len(r.comparisons)),
            f"[{colour}]{r.identical}[/]",
            str(len(r.differing)),
            " + ".join(f"{s:.0f}" for s in r.seconds),
            f"{r.ratio:.2f}x" if r.ratio else "-",
            str(r.report or "-"),
        )
    return table
