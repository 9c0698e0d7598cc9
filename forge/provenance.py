"""What a manifest must hold to rebuild the same bytes, the in-toto/SLSA provenance next to it,
and `invoke rebuild`: rebuild from a manifest alone and check that the bytes match.

The manifest gains the source commit, the exact commands (argv, cwd, env of every step), the
request that resolves to the cell again, and for docker builds the toolchain lock's packages,
so a rebuild can name every package that drifted since before it builds anything.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forge import __version__, archive, bazel, locks, manifest
from forge import axes as registry
from forge.config import BACKENDS, Config, inside
from forge.errors import ConfigError, ForgeError
from forge.locks import KINDS as LOCK_KINDS
from forge.matrix import AXES, CELL_FIELDS, CELL_ID, REQUEST_AXES, Cell, Request, check_cell_id
from forge.plan import Plan
from forge.proc import run_command

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
        out = run_command(
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


def settled_epoch(cfg: Config) -> Config:
    """cfg with the epoch a build of this tree settles on (settle_epoch), hashing the sources only when needed."""
    if cfg.source_date_epoch != 0:
        return cfg
    commit = git_commit(cfg.repo)
    return (
        settle_epoch(cfg, manifest.source_tree_hash(cfg.repo, manifest.SOURCE_SUBDIRS), commit)
        if commit is None
        else cfg
    )


def lock_packages(backend: Any) -> dict[str, str] | None:
    """The packages of the toolchain lock a docker build used (None for other backends)."""
    image = getattr(backend, "image", None)
    lock_path = getattr(image, "lock_path", None)
    if lock_path is None or not Path(lock_path).is_file():
        return None
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
    for name, record in sorted(manifest.side_artifacts(data).items()):
        if isinstance(record, Mapping) and isinstance(record.get("sha256"), str):
            subjects.append({"name": name, "digest": {"sha256": record["sha256"]}})
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
LOCK_DIR = ("toolchains", "locks")
"""Where every lock a manifest may name lives, relative to the repository."""
LOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9_+-]+)*\.txt")
HEX = re.compile(r"[0-9a-f]+")
OBJECT_ID_LENGTHS = (40, 64)  # SHA-1 and SHA-256 repositories


@dataclass(frozen=True)
class Recorded:
    """The fields of a manifest that a rebuild reads, each one validated (see `parse_recorded`).

    Nothing from a manifest reaches the filesystem, git or a build except through this record.
    """

    source: str
    """Where the manifest came from, for messages."""
    cell: Cell
    backend: str
    source_tree_hash: str
    source_commit: str | None
    """A full hex object id, not yet resolved (`resolve_commit` does that against a repository)."""
    source_date_epoch: int
    lock: str | None
    """`toolchains/locks/<name>.txt`, relative to the repository, or None (no docker image)."""
    lock_packages: dict[str, str] | None
    artifacts: dict[str, dict[str, Any]]
    """Recorded artifacts by their path in dist/<cell-id>/: install/**, the package and a built wheel."""


def _bad(source: str, field_name: str, value: object, why: str, fix: str = "") -> ConfigError:
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return ConfigError(
        f"{source}: field {field_name} = {shown} cannot be used", why, fix or "use the manifest.json forge wrote"
    )


def _hex(data: Mapping[str, Any], key: str, source: str, lengths: tuple[int, ...]) -> str:
    value = data[key]
    if not isinstance(value, str) or len(value) not in lengths or HEX.fullmatch(value) is None:
        raise _bad(source, key, value, f"expected {' or '.join(map(str, lengths))} lower-case hex digits")
    return value


OPTIONAL = ("gcc", "cuda", "bazel")  # None for zig cells, CPU cells and cells CMake builds
VERSIONED = ("python", "numpy", "gcc", "cuda", "cmake", "bazel")


def _canonical(canonical: Callable[[str], str], item: str) -> str | None:
    try:
        return canonical(item)
    except ConfigError:
        return None


def _parse_cell(value: object, source: str) -> Cell:
    if not isinstance(value, dict):
        raise _bad(source, "cell", value, "expected an object with the cell's axes and id")
    unknown = sorted(set(value) - {*AXES, "id"})
    missing = [
        axis for axis in ("id", *CELL_FIELDS) if axis not in value or (value[axis] is None and axis not in OPTIONAL)
    ]
    if unknown or missing:
        raise _bad(source, "cell", value, f"missing {', '.join(missing) or '-'}; unknown {', '.join(unknown) or '-'}")
    for axis in AXES:
        item = value.get(axis)  # an axis outside Cell's fields is absent where the cell has none (cuda_arch)
        if item is None:
            continue
        if (canonical := registry.get(axis).canonical) is not None:
            if not isinstance(item, str) or _canonical(canonical, item) != item:
                raise _bad(source, f"cell.{axis}", item, f"expected {axis} in its canonical spelling")
            continue
        ok = isinstance(item, str) and CELL_ID.fullmatch(item) is not None
        if not ok or (axis in VERSIONED and not str(item)[:1].isdigit()):
            kind = "a version such as 3.11" if axis in VERSIONED else "a name such as linux-x86_64"
            raise _bad(source, f"cell.{axis}", item, f"expected {kind}")
    cell = Cell.from_values(value)
    recorded_id = check_cell_id(value["id"], f"{source}: field cell.id")
    if cell.bazel is not None and recorded_id == replace(cell, bazel=None).id:
        # Before Bazel cells, forge recorded the suite's Bazel for every cell that CMake built.
        cell = replace(cell, bazel=None)
    if recorded_id != cell.id:
        raise _bad(source, "cell.id", recorded_id, f"the cell's axes give the id {cell.id}")
    return cell


def _parse_lock(data: Mapping[str, Any], source: str) -> str | None:
    image = data.get("image")
    if image is None:
        return None
    if not isinstance(image, dict):
        raise _bad(source, "image", image, "expected an object (tag, id, lock, lock_sha256)")
    lock = image.get("lock")
    if lock is None:
        return None
    parts = tuple(str(lock).split("/")) if isinstance(lock, str) else ()
    if len(parts) != 3 or parts[:2] != LOCK_DIR or LOCK_NAME.fullmatch(parts[2]) is None:
        raise _bad(source, "image.lock", lock, "a toolchain lock is a file toolchains/locks/<image-name>.txt")
    return str(lock)


def _parse_lock_packages(data: Mapping[str, Any], source: str) -> dict[str, str] | None:
    packages = data.get("lock_packages")
    if packages is None:
        return None
    if not isinstance(packages, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k.split(" ", 1)[0] in LOCK_KINDS for k, v in packages.items()
    ):
        raise _bad(
            source,
            "lock_packages",
            packages,
            "expected {'deb <name>', 'pip <name>' or 'wheel <file>': '<version or sha256>'}",
        )
    return dict(packages)


def _relative_path(path: object) -> bool:
    """A plain relative POSIX path that stays below where it is joined to."""
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _file_record(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    if set(record) == {"link"}:
        return isinstance(record["link"], str) and "\0" not in record["link"]
    sha, size = record.get("sha256"), record.get("size")
    return (
        isinstance(sha, str)
        and len(sha) == 64
        and HEX.fullmatch(sha) is not None
        and isinstance(size, int)
        and not isinstance(size, bool)
        and size >= 0
    )


def _parse_artifacts(data: Mapping[str, Any], cell: Cell, source: str) -> dict[str, dict[str, Any]]:
    files = data["files"]
    if not isinstance(files, dict):
        raise _bad(source, "files", files, "expected an object of installed path -> {sha256, size} or {link}")
    for path, record in files.items():
        if not _relative_path(path):
            raise _bad(source, "files", path, "an installed file's path is relative, without '..' or empty parts")
        if not _file_record(record):
            raise _bad(source, f"files[{path!r}]", record, "expected {sha256: 64 hex digits, size: bytes} or {link}")
    artifacts = {f"install/{p}": dict(r) for p, r in files.items()}
    package = data.get("package")
    if package is not None:
        if (
            not isinstance(package, dict)
            or package.get("name") != f"{cell.id}.tar.gz"
            or not _file_record({k: v for k, v in package.items() if k != "name"})
        ):
            raise _bad(source, "package", package, f"expected {{name: {cell.id}.tar.gz, sha256, size}}")
        artifacts[package["name"]] = dict(package)
    wheel = {rel: record for rel, record in manifest.side_artifacts(data).items() if rel.startswith("wheel")}
    for rel, record in wheel.items():
        name = rel.removeprefix("wheel/")
        if rel == "wheel" or not _relative_path(rel) or "/" in name or not _file_record(record):
            raise _bad(
                source, "wheel", data.get("wheel"), "expected {status: built, file: <wheel file name>, sha256, size}"
            )
        artifacts[rel] = dict(record) if isinstance(record, dict) else {}
    return artifacts


def parse_recorded(data: object, source: str) -> Recorded:
    """Validate a manifest's raw JSON for a rebuild: every field a rebuild reads, before any is used.

    Raises a ConfigError naming the file, the field and the fix.
    """
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source} is not a forge manifest", "expected a JSON object", "pass dist/<cell-id>/manifest.json"
        )
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ConfigError(
            f"{source} lacks {', '.join(missing)}",
            "a manifest written before forge recorded provenance cannot be rebuilt from alone",
            "build the cell again with `invoke build` to get a complete manifest",
        )
    cell = _parse_cell(data["cell"], source)
    if data["backend"] not in BACKENDS:
        raise _bad(source, "backend", data["backend"], f"expected one of {', '.join(BACKENDS)}")
    epoch = data["source_date_epoch"]
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 0 <= epoch < 2**32:
        raise _bad(source, "source_date_epoch", epoch, "expected whole seconds since 1970, not negative")
    commit = data.get("source_commit")
    return Recorded(
        source=source,
        cell=cell,
        backend=str(data["backend"]),
        source_tree_hash=_hex(data, "source_tree_hash", source, (64,)),
        source_commit=None if commit is None else _hex(data, "source_commit", source, OBJECT_ID_LENGTHS),
        source_date_epoch=epoch,
        lock=_parse_lock(data, source),
        lock_packages=_parse_lock_packages(data, source),
        artifacts=_parse_artifacts(data, cell, source),
    )


def load_for_rebuild(path: Path) -> Recorded:
    """The validated record of the manifest at `path`, or a ConfigError naming the field and fix."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}", str(exc), "pass dist/<cell-id>/manifest.json") from None
    except ValueError as exc:  # bad JSON, or bytes that are not UTF-8
        raise ConfigError(f"{path} is not JSON", str(exc), "pass the manifest.json forge wrote") from None
    return parse_recorded(data, str(path))


def rebuild_request(cell: Cell) -> Request:
    """The request that resolves to `cell` again: every axis pinned to the recorded value (bazel only
    for a cell Bazel built: without the pin, CMake builds it)."""
    pins = {axis: cell.value(axis) for axis in REQUEST_AXES if axis != "target"}
    if pins.get("cuda") is None:
        pins["cuda"] = "none"
    return Request.make(cell.target, pins, origin="manifest")


def lock_drift(recorded: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """Changed packages between the manifest's lock and the image's lock (empty: no drift)."""
    return locks.diff_locks(locks.Lock("manifest", dict(recorded)), locks.Lock("now", dict(current)))


def current_lock_packages(recorded: Recorded, repo: Path) -> dict[str, str] | None:
    """The packages of the lock the image of the manifest's cell is held to today ({} when gone)."""
    if recorded.lock is None:
        return None
    path = inside(repo / LOCK_DIR[0] / LOCK_DIR[1], recorded.lock.rsplit("/", 1)[1], what="the manifest's image.lock")
    if not path.is_file():
        return {}
    return dict(locks.parse_lock(path.read_text(errors="replace"), path.stem, str(path)).packages)


class SourceMismatchError(ForgeError):
    """The sources are not the ones the manifest was built from."""

    exit_code = 10


def check_sources(recorded: Recorded, now_hash: str) -> None:
    if now_hash != recorded.source_tree_hash:
        commit = recorded.source_commit
        raise SourceMismatchError(
            "the sources differ from the ones the manifest was built from",
            f"source tree hash now {now_hash}, in the manifest {recorded.source_tree_hash}",
            f"rebuild from commit {commit} with the same uncommitted and untracked files the build had"
            if commit
            else "restore the source tree the manifest was built from",
        )


SOURCE_PARTS = ("engine", "verify", "toolchains", "matrix")
"""What a cell build reads from the repository (repro snapshots them, rebuild exports them)."""


def resolve_commit(repo: Path, commit: str) -> str | None:
    """`commit` as the full id of a commit object in repo (git rev-parse --verify), else None."""
    try:
        out = run_command(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = out.stdout.strip()
    return found if out.returncode == 0 and found == commit else None


def export_parts(cell: Cell) -> tuple[str, ...]:
    """What a rebuild of `cell` exports from its commit: SOURCE_PARTS, and for a Bazel cell the
    workspace files and forge's installer of Bazel's outputs that its build reads too."""
    extra = tuple(p for p in bazel.SOURCE_PATHS if p.split("/")[0] not in SOURCE_PARTS) if cell.bazel else ()
    return SOURCE_PARTS + extra


def export_commit(repo: Path, commit: str, dest: Path, parts: tuple[str, ...] = SOURCE_PARTS) -> Path | None:
    """`parts` as of `commit` (resolved first), written to dest with `git archive`; None when
    git cannot (a part missing at that commit included)."""
    resolved = resolve_commit(repo, commit)
    if resolved is None:
        return None
    try:
        out = run_command(
            ["git", "-C", str(repo), "archive", "--format=tar", resolved, "--", *parts],
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
        tar.extractall(dest, filter="data")
    (dest / COMMIT_FILE).write_text(resolved + "\n")
    return dest


def sources_for(recorded: Recorded, repo: Path, scratch: Path) -> Path:
    """The tree to rebuild from, never another commit's.

    repo itself when it is at the recorded commit (or none is recorded) and its sources hash as
    recorded; otherwise the recorded commit exported to scratch when its sources hash as
    recorded; otherwise a SourceMismatchError that says what to check out.
    """
    now = manifest.source_tree_hash(repo, bazel.source_subdirs(recorded.cell))
    commit = recorded.source_commit
    if now == recorded.source_tree_hash and commit in (None, git_commit(repo)):
        return repo
    if commit is None:
        check_sources(recorded, now)  # raises, naming both hashes
    assert commit is not None
    exported = export_commit(repo, commit, scratch, export_parts(recorded.cell))
    if exported is None:
        raise SourceMismatchError(
            f"commit {commit} of the manifest is not in {repo}",
            f"this checkout is at {git_commit(repo) or 'no commit'}; a rebuild builds the manifest's commit or nothing",
            f"fetch the commit into this repository (git fetch <remote> {commit}) and run the rebuild again",
        )
    exported_hash = manifest.source_tree_hash(exported, bazel.source_subdirs(recorded.cell))
    if exported_hash != recorded.source_tree_hash:
        raise SourceMismatchError(
            f"commit {commit} does not hold the sources the manifest was built from",
            f"its source tree hash is {exported_hash}, the manifest's {recorded.source_tree_hash}: "
            "the build had uncommitted or untracked changes",
            f"check out {commit} with the same uncommitted and untracked files the build had, and rebuild there",
        )
    return exported
