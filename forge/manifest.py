"""Hashes, manifest.json, and the atomic publication of dist/<cell-id>/."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from forge.errors import ConfigError, DistError

SKIP_DIRS = frozenset({".git", "__pycache__", ".cache", "dist", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
MANIFEST = "manifest.json"
SOURCE_SUBDIRS = ("engine", "verify", "toolchains/cmake")
"""What a cell build reads (the manifest's source_tree_hash covers these)."""
SCHEMA = 1


def is_build_dir(name: str) -> bool:
    """A build directory's name (`build`, `build-asan`, `build.x86`), left out of source hashes and
    snapshots. A source folder whose name merely begins with "build" is not one: engine/python's
    `build_support` (the wheel's metadata provider) is read by every wheel build."""
    return name == "build" or name.startswith(("build-", "build."))


def _skipped(name: str) -> bool:
    return name in SKIP_DIRS or is_build_dir(name)


def copy_ignore(directory: str, names: list[str]) -> set[str]:
    """`shutil.copytree`'s ignore for a source snapshot: the directories iter_files leaves out."""
    return {name for name in names if _skipped(name) and (Path(directory) / name).is_dir()}


def iter_files(root: Path) -> Iterator[Path]:
    """Files under root in a stable order, skipping build and cache directories (root itself when
    it is a file)."""
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
        for name in sorted(filenames):
            yield Path(dirpath) / name


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def source_tree_hash(repo: Path, subdirs: Iterable[str]) -> str:
    """sha256 over (relative path, executable bit, content) of every source file in subdirs."""
    digest = hashlib.sha256()
    for sub in subdirs:
        for path in iter_files(repo / sub):
            rel = path.relative_to(repo).as_posix()
            mode = "x" if os.access(path, os.X_OK) else "-"
            digest.update(f"{rel}\0{mode}\0".encode())
            digest.update(
                path.readlink().as_posix().encode() if path.is_symlink() else bytes.fromhex(sha256_file(path))
            )
    return digest.hexdigest()


def tree_paths(tree: Path) -> list[str]:
    """Relative paths of every file and symlink under tree, in a stable order."""
    paths = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]):
            paths.append((Path(dirpath) / name).relative_to(tree).as_posix())
    return paths


def file_records(tree: Path) -> dict[str, dict[str, Any]]:
    """relative path -> {sha256, size} (or {link} for symlinks) for every file under tree."""
    records: dict[str, dict[str, Any]] = {}
    for rel in tree_paths(tree):
        path = tree / rel
        if path.is_symlink():
            records[rel] = {"link": path.readlink().as_posix()}
        else:
            records[rel] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    return records


def input_hash(parts: dict[str, Any]) -> str:
    """Hash of everything that determines a build's output (source, cell, toolchain, plan)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


class Result(str, Enum):
    """A recorded build's outcome (`result` in manifest.json)."""

    PASSED = "passed"
    VERIFY_FAILED = "verify-failed"
    FAILED = "failed"  # dist/failed/<cell-id>/: the build stopped; `error` says why


class BackendName(str, Enum):
    """Where a cell was built (`backend` in manifest.json)."""

    LOCAL = "local"
    DOCKER = "docker"


@dataclass
class Manifest:
    """dist/<cell-id>/manifest.json, read and written here only (`load_manifest`, `write_manifest`).

    The JSON keeps the names the report, compare, release and rebuild readers know (`schema` on
    disk is `schema_version` here). Fields other modules add (provenance's source commit and
    commands, the backend's image facts, a wheel record) travel in `extra`, unchanged.
    """

    schema_version: int
    forge: str
    cell: dict[str, str | None]
    backend: BackendName | None
    result: Result
    steps: list[dict[str, Any]] = field(default_factory=list)
    input_hash: str | None = None
    source_tree_hash: str | None = None
    source_date_epoch: int | None = None
    toolchain: dict[str, Any] | None = None
    verify: dict[str, Any] | None = None
    files: dict[str, dict[str, Any]] | None = None
    package: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cell_id(self) -> str:
        return str(self.cell.get("id"))

    def to_json(self) -> dict[str, Any]:
        """The mapping written to disk: the typed fields (absent ones left out) and the extras."""
        data: dict[str, Any] = dict(self.extra)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or value is None:
                continue
            data["schema" if f.name == "schema_version" else f.name] = value.value if isinstance(value, Enum) else value
        return data

    @staticmethod
    def from_json(data: object, source: str, cell_id: str = "ID") -> Manifest:
        """The manifest in `data` (read from `source`), or a ConfigError naming the file, the field and the fix."""
        fix = f"rebuild the cell (invoke build --cell {cell_id} --force), or delete its directory"
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source} is not a forge manifest", "expected a JSON object", fix)
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ConfigError(
                f"{source}: manifest schema {schema!r} is not the one this forge reads ({SCHEMA})",
                "it was written by another forge version, or it is not forge's manifest.json",
                fix,
            )
        typed = {f.name for f in fields(Manifest)} - {"schema_version", "extra"}
        values: dict[str, Any] = {k: v for k, v in data.items() if k in typed}
        for key, kind in (("forge", str), ("cell", dict), ("result", str)):
            if not isinstance(values.get(key), kind):
                raise ConfigError(f"{source}: field `{key}` is missing or not a {kind.__name__}", "", fix)
        for key in ("steps", "toolchain", "verify", "files", "package", "error"):
            expected = list if key == "steps" else dict
            if key in values and not isinstance(values[key], expected):
                raise ConfigError(f"{source}: field `{key}` is not a {expected.__name__}", "", fix)
        try:
            values["result"] = Result(values["result"])
            backend = values.get("backend")
            values["backend"] = BackendName(backend) if backend is not None else None
        except ValueError as exc:
            raise ConfigError(f"{source}: {exc}", "", fix) from None
        extra = {k: v for k, v in data.items() if k not in typed and k != "schema"}
        return Manifest(schema_version=SCHEMA, extra=extra, **values)


def write_manifest(directory: Path, record: Manifest) -> Path:
    path = directory / MANIFEST
    write_json(path, record.to_json())
    return path


def load_manifest(cell_dir: Path) -> Manifest:
    """dist/<cell-id>/manifest.json as a Manifest; a missing, corrupt or old one is a ConfigError naming it."""
    path = cell_dir / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}", exc.strerror or str(exc), f"build the cell: invoke build --cell {cell_dir.name}"
        ) from None
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not JSON", str(exc), f"rebuild the cell (invoke build --cell {cell_dir.name} --force)"
        ) from None
    return Manifest.from_json(data, str(path), cell_dir.name)


def read_manifest(cell_dir: Path) -> Manifest | None:
    """The Manifest of dist/<cell-id>/, or None where there is none to read: missing, corrupt, of
    another schema. For readers that go over many cells (report, release, repro, the up-to-date
    check) and say themselves what a missing one means; `load_manifest` says why."""
    try:
        return load_manifest(cell_dir)
    except ConfigError:
        return None


def _safe_relative(rel: str) -> bool:
    """A manifest path that stays inside the tree it describes (no absolute path, no '..')."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and "\0" not in rel and all(p not in ("", ".", "..") for p in parts)


def _file_problem(root: Path, rel: str, record: object) -> str | None:
    """Why root/rel does not match its manifest record, or None when it does."""
    if not _safe_relative(rel) or not isinstance(record, dict):
        return f"{rel!r}: not a valid manifest entry"
    path = root / rel
    if "link" in record:
        if not path.is_symlink():
            return f"{rel}: missing (a symlink to {record['link']} was recorded)"
        if path.readlink().as_posix() != record["link"]:
            return f"{rel}: changed (links to {path.readlink().as_posix()}, {record['link']} was recorded)"
        return None
    if not isinstance(record.get("sha256"), str):
        return f"{rel!r}: not a valid manifest entry (no sha256)"
    if path.is_symlink() or not path.is_file():
        return f"{rel}: missing"
    if sha256_file(path) != record["sha256"]:
        return f"{rel}: changed (sha256 differs from the manifest)"
    return None


def tree_problems(root: Path, records: object) -> list[str]:
    """Every way the files under root differ from the manifest's `files` records, by path.

    Each listed file is hashed (a size can stay the same when bytes change); files under root
    that the manifest does not list are reported too.
    """
    if not isinstance(records, dict) or not records:
        return ["the manifest lists no files"]
    if not root.is_dir():
        return [f"{root} does not exist"]
    problems = [p for rel, record in sorted(records.items()) if (p := _file_problem(root, str(rel), record))]
    present = set(tree_paths(root))
    problems += [f"{rel}: not in the manifest" for rel in sorted(present - records.keys())]
    return problems


def side_artifacts(data: Mapping[str, Any] | Manifest) -> dict[str, object]:
    """The artifacts a manifest records beside install/, by their path in dist/<cell-id>/.

    The package archive (`<cell-id>.tar.gz`, record `package`) and a built wheel
    (`wheel/<file>`, record `wheel` with status built). A record's value is what the manifest
    says ({sha256, size}); a malformed one keeps its raw value, for `side_problems` to name.
    """
    if isinstance(data, Manifest):
        data = data.to_json()
    found: dict[str, object] = {}
    package = data.get("package")
    if package is not None:
        name = package.get("name") if isinstance(package, Mapping) else None
        found[name if isinstance(name, str) else "package"] = package
    wheel = data.get("wheel")
    if isinstance(wheel, Mapping) and wheel.get("status") == "built":
        file = wheel.get("file")
        found[f"wheel/{file}" if isinstance(file, str) else "wheel"] = {k: wheel.get(k) for k in ("sha256", "size")}
    return found


def side_problems(cell_dir: Path, data: Mapping[str, Any] | Manifest) -> list[str]:
    """Every way the package archive and the wheel differ from the manifest's records."""
    problems = []
    for rel, record in sorted(side_artifacts(data).items()):
        top, _, rest = rel.partition("/")
        wheel = top == "wheel" and "/" not in rest
        if rel in ("package", "wheel") or not _safe_relative(rel) or (rest and not wheel):
            where = "a wheel under wheel/" if top == "wheel" else "an archive next to the manifest"
            problems.append(f"{rel!r}: not {where} (record {record!r:.80})")
        elif problem := _file_problem(cell_dir, rel, record):
            problems.append(problem)
    return problems


def stale_reason(cell_dir: Path, wanted_input_hash: str) -> str | None:
    """None when dist/<cell> holds a passed build of the same inputs with every file intact, else why not."""
    manifest = read_manifest(cell_dir)
    if manifest is None:
        return f"no readable {MANIFEST} in {cell_dir}"
    if manifest.input_hash != wanted_input_hash:
        return "its inputs changed (sources, toolchain, plan or backend)"
    if manifest.result is not Result.PASSED:
        return f"the recorded result is {manifest.result.value!r}, not passed"
    problems = tree_problems(cell_dir / "install", manifest.files)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        return "the installed tree differs from its manifest: " + "; ".join(problems[:3]) + more
    side = side_problems(cell_dir, manifest)
    if side:
        return "an artifact differs from its manifest: " + "; ".join(side[:3])
    return None


def is_up_to_date(cell_dir: Path, wanted_input_hash: str) -> bool:
    """True when dist/<cell> holds a passed build of the same inputs, every file's sha256 as recorded."""
    return stale_reason(cell_dir, wanted_input_hash) is None


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Defer Ctrl-C and SIGTERM while the two renames of a publish run, so they happen together or
    not at all.

    Python runs signal handlers in the main thread only, so a deferring handler catches the signal
    whichever thread the kernel delivered it to (pthread_sigmask would block it in the calling
    thread alone). Off the main thread handlers cannot be changed; the main thread then sees the
    signal as usual.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def defer(signum: int, _frame: object) -> None:
        pending.append(signum)

    previous = {sig: signal.signal(sig, defer) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        for signum in pending:
            signal.raise_signal(signum)


def staging_dir(dist: Path, cell_id: str) -> Path:
    """A fresh temporary directory next to dist/<cell_id> (same filesystem, so rename is atomic)."""
    try:
        dist.mkdir(parents=True, exist_ok=True)
        tmp = dist / f".tmp-{cell_id}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
    except OSError as exc:
        raise dist_error(dist, cell_id, exc) from None
    return tmp


DIST_FLOOR = 64 * 1024**2
"""Free space dist/ must have for a cell never built before (a tiny cell's tree and package)."""


def last_size(cell_dir: Path) -> int:
    """Bytes of the cell's previous result (installed files and package, from its manifest)."""
    data = read_manifest(cell_dir)
    if data is None:
        return 0
    sizes = [r.get("size", 0) for r in (data.files or {}).values() if isinstance(r, dict)]
    sizes.append((data.package or {}).get("size", 0))
    return sum(size for size in sizes if isinstance(size, int) and size > 0)


def _fix_for(dist: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free space on the filesystem of {dist}, or move dist/ elsewhere (a symlink to a bigger disk)"
    return f"make {dist} a writable directory (or remove what is in its way), or point dist/ at one with a symlink"


def dist_error(dist: Path, cell_id: str, exc: OSError) -> DistError:
    """The one clear error for a dist/ that failed to take a result."""
    return DistError(
        f"cannot publish {cell_id} to {dist}",
        f"{exc.strerror or exc} ({exc.filename or dist}); the previous result of {cell_id} is unchanged",
        _fix_for(dist, exc),
    )


def check_dist(dist: Path, cell_id: str, floor: int = DIST_FLOOR) -> None:
    """Before a build: dist/ is (or can be made) a writable directory, dist/<cell_id> is not in the
    way, and dist/ has room for twice the cell's last result (or `floor`). DistError otherwise."""
    final = dist / cell_id
    try:
        if dist.exists() and not dist.is_dir():
            raise FileExistsError(errno.EEXIST, "exists and is not a directory", str(dist))
        if final.exists() and not final.is_dir():
            raise FileExistsError(errno.EEXIST, "exists and is not a directory", str(final))
        dist.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=dist, prefix=".forge-write-probe-"):
            pass
        last = last_size(final)
        need, free = max(floor, 2 * last), shutil.disk_usage(dist).free
    except OSError as exc:
        raise DistError(
            f"dist/ cannot take the result of {cell_id}: {exc.filename or dist}: {exc.strerror or exc}",
            "checked before building, so no build time is spent on a result that cannot be kept",
            _fix_for(dist, exc),
        ) from None
    if free < need:
        raise DistError(
            f"dist/ has {free / 1024**2:.0f} MiB free, {cell_id} needs {need / 1024**2:.0f} MiB",
            f"twice the cell's last result ({last / 1024**2:.0f} MiB), at least {floor / 1024**2:.0f} MiB",
            _fix_for(dist, OSError(errno.ENOSPC, "no space")),
        )


@contextlib.contextmanager
def publishing(dist: Path, cell_id: str) -> Iterator[Path]:
    """A staging directory to fill; when the body ends, it replaces dist/<cell_id> (`publish`).

    Any OSError (no space, read-only filesystem, something in the way) becomes one DistError,
    the staging directory is removed and dist/<cell_id> keeps its previous result.
    """
    tmp = staging_dir(dist, cell_id)
    try:
        yield tmp
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise dist_error(dist, cell_id, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    publish(tmp, dist, cell_id)


def recover(dist: Path, cell_id: str) -> None:
    """Undo a publish cut short between its two renames (power loss): restore the old result."""
    final = dist / cell_id
    for old in sorted(dist.glob(f".old-{cell_id}-*")):
        if not final.exists():
            old.rename(final)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in dist.glob(f".tmp-{cell_id}-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or not Path(f"/proc/{pid}").exists():
            shutil.rmtree(tmp, ignore_errors=True)


def publish(tmp: Path, dist: Path, cell_id: str) -> Path:
    """Replace dist/<cell_id> with tmp: readers see the old tree or the new one, never a mix."""
    final = dist / cell_id
    old = dist / f".old-{cell_id}-{os.getpid()}"
    moved = False
    try:
        with sigint_blocked():
            if final.exists():
                final.rename(old)
                moved = True
            tmp.rename(final)
    except OSError as exc:
        if moved and not final.exists():
            old.rename(final)  # the previous result goes back
        shutil.rmtree(tmp, ignore_errors=True)
        raise dist_error(dist, cell_id, exc) from None
    shutil.rmtree(old, ignore_errors=True)
    return final
