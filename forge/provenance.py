"""What a manifest must hold to rebuild the same bytes, the in-toto/SLSA provenance next to it,
and `invoke rebuild`: rebuild from a manifest alone and check that the bytes match.

The manifest gains the source commit, the exact commands (argv, cwd, env of every step), the
request that resolves to the cell again, and for docker builds the toolchain lock's packages,
so a rebuild can name every package that drifted since before it builds anything.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forge import __version__, archive, host, manifest
from forge.config import Config, Data, load_data
from forge.errors import ConfigError, ForgeError
from forge.log import Progress
from forge.matrix import REQUEST_AXES, Request
from forge.plan import Plan

if TYPE_CHECKING:
    from forge.build import BuildResult

PROVENANCE = "provenance.intoto.json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "urn:forge:build-type:cmake-cell:v1"
EPOCH_FLOOR = 946684800  # 2000-01-01: epochs made from a tree hash land after it
EPOCH_SPAN = 20 * 365 * 86400


COMMIT_FILE = ".forge-source-commit"  # in a source snapshot: the commit it was copied from


def git_commit(repo: Path) -> str | None:
    """HEAD's commit id (or a snapshot's recorded one), or None outside a git checkout."""
    if (repo / COMMIT_FILE).is_file():
        return (repo / COMMIT_FILE).read_text().strip() or None
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def tree_epoch(source_tree_hash: str) -> int:
    """A stable SOURCE_DATE_EPOCH for a tree without git history: a function of its content hash."""
    return EPOCH_FLOOR + int(source_tree_hash[:12], 16) % EPOCH_SPAN


def settle_epoch(cfg: Config, source_tree_hash: str, commit: str | None) -> Config:
    """Without SOURCE_DATE_EPOCH or a commit (config left 0), derive the epoch from the tree hash."""
    if cfg.source_date_epoch == 0 and commit is None:
        return replace(cfg, source_date_epoch=tree_epoch(source_tree_hash))
    return cfg


def rebuild_request(cell: Mapping[str, Any]) -> Request:
    """The request that resolves to `cell` again: every axis pinned to the recorded value."""
    pins = {axis: cell.get(axis) for axis in REQUEST_AXES if axis != "target"}
    if pins.get("cuda") is None:
        pins["cuda"] = "none"
    return Request.make(str(cell["target"]), pins, origin="manifest")


def lock_packages(backend: Any) -> dict[str, str] | None:
    """The packages of the toolchain lock a docker build used (None for other backends)."""
    image = getattr(backend, "image", None)
    lock_path = getattr(image, "lock_path", None)
    if lock_path is None or not Path(lock_path).is_file():
        return None
    from forge import locks

    return dict(locks.parse_lock(Path(lock_path).read_text(), Path(lock_path).stem, str(lock_path)).packages)


def package_record(cell_dir: Path, cell_id: str, epoch: int) -> dict[str, Any]:
    """Pack cell_dir/install as a reproducible <cell-id>.tar.gz next to it; its manifest record."""
    path = archive.write_tar_gz(cell_dir / "install", cell_dir / f"{cell_id}.tar.gz", epoch, prefix=cell_id)
    return {"name": path.name, "sha256": manifest.sha256_file(path), "size": path.stat().st_size}


def manifest_extras(commit: str | None, plan: Plan, backend: Any) -> dict[str, Any]:
    """What build.py adds to a manifest so `rebuild` needs nothing else."""
    extras: dict[str, Any] = {"source_commit": commit, "commands": plan.as_dict()["steps"]}
    packages = lock_packages(backend)
    if packages is not None:
        extras["lock_packages"] = packages
    return extras


def statement(data: Mapping[str, Any], started: float | None = None) -> dict[str, Any]:
    """An in-toto v1 Statement with a SLSA v1 provenance predicate for a manifest's files."""
    subjects = [
        {"name": f"install/{path}", "digest": {"sha256": rec["sha256"]}}
        for path, rec in sorted(data.get("files", {}).items())
        if "sha256" in rec
    ]
    package = data.get("package")
    if isinstance(package, dict):
        subjects.append({"name": package["name"], "digest": {"sha256": package["sha256"]}})
    deps: list[dict[str, Any]] = [
        {
            "uri": "git+file:source" + (f"@{data['source_commit']}" if data.get("source_commit") else ""),
            "digest": {
                "sha256": data["source_tree_hash"],
                **({"gitCommit": data["source_commit"]} if data.get("source_commit") else {}),
            },
            "annotations": {"subdirs": "engine verify toolchains/cmake", "hash": "forge source_tree_hash"},
        }
    ]
    image = data.get("image")
    if isinstance(image, dict):
        image_id = str(image.get("id", ""))
        deps.append({"name": f"image {image.get('tag')}", "digest": {"sha256": image_id.removeprefix("sha256:")}})
        deps.append({"name": f"lock {image.get('lock')}", "digest": {"sha256": image.get("lock_sha256")}})
    finished = time.time()
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"cell": data.get("cell"), "backend": data.get("backend")},
                "internalParameters": {
                    "source_date_epoch": data.get("source_date_epoch"),
                    "toolchain": data.get("toolchain"),
                    "container_versions": data.get("container_versions"),
                    "commands": data.get("commands"),
                },
                "resolvedDependencies": deps,
            },
            "runDetails": {
                "builder": {"id": f"forge/{__version__}", "version": {"forge": __version__}},
                "metadata": {
                    "invocationId": data.get("input_hash"),
                    "startedOn": _rfc3339(started or finished),
                    "finishedOn": _rfc3339(finished),
                },
            },
        },
    }


def _rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def write_provenance(cell_dir: Path, data: Mapping[str, Any], started: float | None = None) -> Path:
    path = cell_dir / PROVENANCE
    manifest.write_json(path, statement(data, started))
    return path


# --- rebuild -----------------------------------------------------------------------------------

REQUIRED = ("cell", "backend", "source_tree_hash", "source_date_epoch", "files")


def load_for_rebuild(path: Path) -> dict[str, Any]:
    """A manifest with every field a rebuild needs, or a ConfigError naming the missing ones."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}", str(exc), "pass dist/<cell-id>/manifest.json") from None
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON", str(exc), "pass the manifest.json forge wrote") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} is not a forge manifest", "expected a JSON object", "pass dist/<cell-id>/manifest.json"
        )
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ConfigError(
            f"{path} lacks {', '.join(missing)}",
            "a manifest written before forge recorded provenance cannot be rebuilt from alone",
            "build the cell again with `invoke build` to get a complete manifest",
        )
    return data


def lock_drift(recorded: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """Changed packages between the manifest's lock and the image's lock (empty: no drift)."""
    from forge import locks

    return locks.diff_locks(locks.Lock("manifest", dict(recorded)), locks.Lock("now", dict(current)))


def current_lock_packages(data: Mapping[str, Any], repo: Path) -> dict[str, str] | None:
    """The packages of the lock the image of the manifest's cell is held to today."""
    image = data.get("image")
    if not isinstance(image, dict) or not image.get("lock"):
        return None
    path = Path(str(image["lock"]))
    path = path if path.is_absolute() else repo / path
    if not path.is_file():
        return {}
    from forge import locks

    return dict(locks.parse_lock(path.read_text(), path.stem, str(path)).packages)


class SourceMismatchError(ForgeError):
    """The sources are not the ones the manifest was built from."""

    exit_code = 10


def check_sources(data: Mapping[str, Any], now_hash: str) -> None:
    if now_hash != data["source_tree_hash"]:
        commit = data.get("source_commit")
        raise SourceMismatchError(
            "the sources differ from the ones the manifest was built from",
            f"source tree hash now {now_hash}, in the manifest {data['source_tree_hash']}",
            f"rebuild from commit {commit} with the same uncommitted and untracked files the build had"
            if commit
            else "restore the source tree the manifest was built from",
        )


def rebuild_cell(recorded: Mapping[str, Any], data: Data, cfg: Config, progress: Progress) -> BuildResult:
    """Build a manifest's cell again from what the manifest says (request, epoch, backend) into
    cfg's directories; repro's second build and `invoke rebuild` both go through here."""
    from forge.build import build_cell

    shutil.rmtree(cfg.cache / str(recorded["cell"]["id"]), ignore_errors=True)  # start from empty build dirs
    rcfg = replace(
        cfg, backend=str(recorded["backend"]), source_date_epoch=int(recorded["source_date_epoch"]), force=True
    )
    built = build_cell(rebuild_request(recorded["cell"]), data, rcfg, progress)
    if built.cell_id != recorded["cell"].get("id"):
        raise ConfigError(
            f"the manifest's cell {recorded['cell'].get('id')} now resolves to {built.cell_id}",
            "matrix/ or toolchains/ changed since",
            "rebuild from the commit the manifest names",
        )
    return built


def _dist_records(data: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest's artifacts as paths relative to dist/<cell-id>/: install/** and the package."""
    records = {f"install/{p}": r for p, r in data.get("files", {}).items()}
    package = data.get("package")
    if isinstance(package, dict):
        records[str(package["name"])] = package
    return records


SOURCE_PARTS = ("engine", "verify", "toolchains", "matrix")
"""What a cell build reads from the repository (repro snapshots them, rebuild exports them)."""


def export_commit(repo: Path, commit: str, dest: Path) -> Path | None:
    """SOURCE_PARTS as of `commit`, written to dest with `git archive`; None when git cannot."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", commit, *SOURCE_PARTS],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(dest, filter="tar")
    (dest / COMMIT_FILE).write_text(commit + "\n")
    return dest


def sources_for(recorded: Mapping[str, Any], repo: Path, scratch: Path) -> Path:
    """The tree to rebuild from: repo when its sources hash as recorded, else the recorded commit
    exported to scratch when that matches; otherwise SourceMismatchError says what to check out."""
    from forge.build import SOURCE_SUBDIRS

    now = manifest.source_tree_hash(repo, SOURCE_SUBDIRS)
    if now == recorded["source_tree_hash"]:
        return repo
    commit = recorded.get("source_commit")
    exported = export_commit(repo, str(commit), scratch) if commit else None
    if exported is not None and manifest.source_tree_hash(exported, SOURCE_SUBDIRS) == recorded["source_tree_hash"]:
        return exported
    check_sources(recorded, now)  # raises, naming both hashes and the commit
    return repo


def run_rebuild(manifest_arg: str, cli: Mapping[str, object]) -> None:
    """`invoke rebuild dist/<cell>/manifest.json`: drift check, rebuild, byte comparison."""
    from forge import cli as forge_cli
    from forge import repro

    path = Path(manifest_arg).resolve()
    data = load_for_rebuild(path)
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(data["source_date_epoch"])}
    cfg, tdata = forge_cli.setup({**cli, "backend": data["backend"]}, env)
    out = forge_cli.console()
    scopes = ((str(data["backend"]), str(data["cell"].get("target"))),)
    host.ensure_tools("rebuild", env=os.environ, log_path=cfg.cache / "host-tools.log", scopes=scopes)
    source = sources_for(data, cfg.repo, cfg.cache / "rebuild" / "src")
    if source != cfg.repo:
        out.print(f"sources: the working tree differs from the manifest's; commit {data['source_commit']} exported")
        cfg, tdata = replace(cfg, repo=source), load_data(source)
    recorded_lock = data.get("lock_packages")
    if isinstance(recorded_lock, dict):
        current = current_lock_packages(data, cfg.repo) or {}
        drift = lock_drift(recorded_lock, current)
        if drift:
            out.print(f"[yellow]toolchain lock drift since the manifest ({len(drift)} packages):[/]")
            for line in drift:
                out.print(f"  {line}", markup=False)
        else:
            out.print("toolchain lock: same packages as the manifest's")
    root = cfg.cache / "rebuild"
    # No compiler cache unless asked (then `invoke build`'s): a cached object must not stand in for a compile.
    use_ccache = bool(cli.get("ccache", False))
    if use_ccache and not (root / "ccache").exists():
        root.mkdir(parents=True, exist_ok=True)
        (cfg.cache / "ccache").mkdir(parents=True, exist_ok=True)
        (root / "ccache").symlink_to(cfg.cache / "ccache", target_is_directory=True)
    rcfg = replace(cfg, cache=root, dist=root / "dist", ccache=use_ccache)
    start = time.monotonic()
    # Not `<cell>.lock`: the build inside takes that one (build.cell_lock, same cache root), and
    # flock would then wait on this very process.
    lock = root / f"{data['cell'].get('id')}.rebuild.lock"
    with repro.exclusive(lock, out.print, "another rebuild of this cell"):
        built = rebuild_cell(data, tdata, rcfg, Progress(out, cfg.ci))
    assert built.dist is not None
    comparisons = repro.compare_records(_dist_records(data), _dist_records(manifest.read_manifest(built.dist) or {}))
    result = repro.ReproResult(f"rebuild of {built.cell_id}", comparisons, (), [time.monotonic() - start])
    trees = (path.parent, built.dist)
    repro.write_report(result, path.parent / "rebuild", trees, cfg.cache / "tools", out.print)
    for comp in result.differing:
        out.print(f"  [red]{comp.outcome.value:>20}[/]  {comp.path}")
    out.print(f"rebuild of {built.cell_id}: {result.identical}/{len(comparisons)} files identical ({result.report})")
    repro.raise_for([result])
