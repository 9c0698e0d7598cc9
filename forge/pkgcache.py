"""A content-addressed cache of the exact Debian packages and wheels of each toolchain lock.

A lock (toolchains/locks/<image>.txt) says which versions an image holds; the mirror keeps
them only until the next point release. `invoke images --cache-packages` downloads every
`deb` and `wheel` of the lock while the mirror still has them:

- .debs with `apt-get download NAME:ARCH=VERSION` in a throwaway container of the suite's base
  image (apt checks each file against the mirror's signed index), then sha256'd here;
- wheels with pip, for the platform and ABI their file names say, checked against the sha256
  the lock records.

Files live once under `<cache>/sha256/<hex[:2]>/<hex>`; `<cache>/locks/<image>.json` maps each
package of that lock to its file name and sha256 and records the lock's own digest. An image
whose cache entry is complete can then be built with no network at all (`offline_files`,
`images.build_from_cache`), and its lock is checked as for any build: same versions or a failure.

Not covered: the base image (a debootstrap of the mirror; keep it with `invoke images --save`),
and packages the mirror had already dropped when the cache was filled (reported as missing).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from forge import proc
from forge.errors import BackendError, ConfigError, DistError
from forge.locks import Lock
from forge.manifest import sha256_file

REPO = Path(__file__).resolve().parent.parent
CACHE_DIR = REPO / ".cache" / "forge" / "packages"
FORMAT = 1


@dataclass(frozen=True)
class Entry:
    """One cached package of a lock: the lock's key ("deb gcc-12:amd64", "wheel numpy-...whl"), its file."""

    key: str
    file: str
    sha256: str


def blob_path(cache: Path, digest: str) -> Path:
    return cache / "sha256" / digest[:2] / digest


def index_path(cache: Path, name: str) -> Path:
    return cache / "locks" / f"{name}.json"


def store(cache: Path, path: Path, expected: str | None = None) -> str:
    """Put `path` into the cache under its sha256 (atomically); `expected` must match when given."""
    digest = sha256_file(path)
    if expected is not None and digest != expected:
        raise DistError(
            f"{path.name} has sha256 {digest[:16]}..., the lock records {expected[:16]}...",
            "a substituted or damaged download must not enter the cache",
            "check the mirror/index, or resolve the lock afresh (invoke upgrade --refresh-locks)",
        )
    target = blob_path(cache, digest)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{digest}.{os.getpid()}.tmp"
        shutil.copyfile(path, tmp)
        tmp.replace(target)
    return digest


def read_index(cache: Path, lock: Lock) -> dict[str, Entry]:
    """The cached entries of `lock` (empty when none; a ConfigError when the index is malformed).

    Entries recorded for another version of the lock are dropped: a key names a package, and the
    lock's digest says which versions."""
    path = index_path(cache, lock.name)
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != FORMAT:
            raise ValueError(f"format {doc.get('format')!r}, expected {FORMAT}")
        entries = {k: Entry(k, str(v["file"]), str(v["sha256"])) for k, v in doc["packages"].items()}
        digest = str(doc["lock"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"{path} is malformed ({exc})", fix=f"delete it and fill the cache again: rm {path}"
        ) from None
    if digest != lock.digest():
        return {}
    return entries


def write_index(cache: Path, lock: Lock, entries: Mapping[str, Entry]) -> Path:
    path = index_path(cache, lock.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": FORMAT,
        "lock": lock.digest(),
        "packages": {k: {"file": e.file, "sha256": e.sha256} for k, e in sorted(entries.items())},
    }
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def wanted(lock: Lock) -> list[str]:
    """The lock's keys that name a file to keep: every deb and every wheel (pip lines are what the wheels install)."""
    return sorted(k for k in lock.packages if k.startswith(("deb ", "wheel ")))


def missing(cache: Path, lock: Lock) -> list[str]:
    """The lock's debs and wheels the cache lacks, or holds with a wrong sha256 (checked, offline)."""
    entries = read_index(cache, lock)
    gone = []
    for key in wanted(lock):
        entry = entries.get(key)
        blob = blob_path(cache, entry.sha256) if entry else None
        if entry is None or blob is None or not blob.is_file() or sha256_file(blob) != entry.sha256:
            gone.append(key)
    return gone


def apt_spec(key: str, version: str) -> str:
    """`deb gcc-12:amd64` + `12.2.0-14` -> `gcc-12:amd64=12.2.0-14` (arch `all` is left out: apt names it so)."""
    name = key.split(" ", 1)[1]
    package, _, arch = name.partition(":")
    return f"{package}={version}" if arch in ("", "all") else f"{package}:{arch}={version}"


def deb_key(filename: str) -> str:
    """`gcc-12_12.2.0-14%2bdeb12u1_amd64.deb` -> `deb gcc-12:amd64` (apt-get download's file names)."""
    stem = filename.removesuffix(".deb")
    parts = stem.split("_")
    if len(parts) != 3:
        raise BackendError(f"apt-get download wrote {filename!r}, not NAME_VERSION_ARCH.deb")
    return f"deb {parts[0]}:{parts[2]}"


def download_script(specs: list[str], components: Iterable[str] = ()) -> str:
    """The shell script that apt-get downloads `specs` (NAME[:ARCH]=VERSION) into /out.

    A multiarch image's lock holds packages of a foreign architecture (libpython3.11-dev:arm64):
    the base container learns that architecture first, so apt lists its packages too. An image
    whose packages come from more of the suite's archive than main (a Debian CUDA toolkit's
    contrib and non-free) adds those `components` to the base's one sources.list line, as its
    Dockerfile does. One package per apt-get call: a version the mirror dropped fails alone, not
    the batch."""
    arches = sorted({spec.split("=", 1)[0].partition(":")[2] for spec in specs} - {""})
    add = "".join(f'[ "$(dpkg --print-architecture)" = {a} ] || dpkg --add-architecture {a}; ' for a in arches)
    if words := " ".join(components):
        add += f"sed -i -E 's/^(deb [^ ]+ [a-z]+ main)$/\\1 {words}/' /etc/apt/sources.list; "
    loop = f'for p in {" ".join(specs)}; do apt-get download -qq "$p" || echo "missing $p"; done'
    return f"{add}apt-get update -qq && cd /out && {loop}"


def download_debs(client: Any, base_tag: str, lock: Lock, out: Path, components: Iterable[str] = ()) -> dict[str, Path]:
    """apt-get download every deb of `lock` in a container of `base_tag` (host network); key -> file.

    A version the mirror no longer has is left out (the caller reports it)."""
    debs = [k for k in wanted(lock) if k.startswith("deb ")]
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o777)  # apt downloads as its own unprivileged user
    script = download_script([apt_spec(k, lock.packages[k]) for k in debs], components)
    container = client.containers.create(
        base_tag,
        ["sh", "-c", script],
        network_mode="host",
        user="root",
        volumes={str(out): {"bind": "/out", "mode": "rw"}},
        labels={"org.forge.managed": "package-cache"},
    )
    try:
        container.start()
        status = container.wait()
        log = container.logs(stdout=True, stderr=True).decode(errors="replace")
    finally:
        container.remove(force=True)
    if int(status.get("StatusCode", 1)) != 0:
        raise BackendError(f"apt-get download in {base_tag} failed", why=log[-2000:])
    return {deb_key(p.name): p for p in sorted(out.glob("*.deb"))}


def wheel_requirement(filename: str, digest: str) -> tuple[list[str], str]:
    """(pip download options selecting the wheel's platform and ABI, its hashed requirement line)."""
    try:
        name, version, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        raise ConfigError(f"the lock names a wheel {filename!r} that is not a wheel file name ({exc})") from None
    options = ["--implementation", sorted({t.interpreter[:2] for t in tags})[0]]
    for tag in sorted(tags, key=str):
        options += ["--platform", tag.platform, "--abi", tag.abi]
    interpreters = sorted({t.interpreter for t in tags if t.interpreter[2:].isdigit()})
    if interpreters and interpreters[0][:2] == "cp":
        digits = interpreters[0][2:]
        options += ["--python-version", f"{digits[0]}.{digits[1:]}"]
    return options, f"{name}=={version} --hash={digest}\n"


def download_wheels(lock: Lock, out: Path, log: Path) -> dict[str, Path]:
    """pip download each wheel of `lock`, with --require-hashes against the lock's sha256; key -> file."""
    found: dict[str, Path] = {}
    for key in (k for k in wanted(lock) if k.startswith("wheel ")):
        filename = key.split(" ", 1)[1]
        options, line = wheel_requirement(filename, lock.packages[key])
        dest = out / filename.split("-", 1)[0]
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "requirements.txt").write_text(line)
        argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps"]
        argv += ["--only-binary=:all:", "--require-hashes", "--dest", str(dest), *options, "-r", "requirements.txt"]
        proc.run_logged(argv, cwd=dest, env=None, log_path=log)
        if (dest / filename).is_file():
            found[key] = dest / filename
    return found


def fill(client: Any, base_tag: str, lock: Lock, cache: Path = CACHE_DIR, components: Iterable[str] = ()) -> list[str]:
    """Download what the cache lacks of `lock` (from the suite's main and `components`) and record
    it; returns what could not be had."""
    entries = read_index(cache, lock)
    lacking = set(missing(cache, lock))
    if not lacking:
        return []
    with tempfile.TemporaryDirectory(prefix="forge-pkgcache-") as tmp:
        files = download_debs(
            client,
            base_tag,
            Lock(lock.name, {k: v for k, v in lock.packages.items() if k in lacking}),
            Path(tmp) / "debs",
            components,
        )
        wheels_lock = Lock(
            lock.name, {k: v for k, v in lock.packages.items() if k in lacking and k.startswith("wheel ")}
        )
        files |= download_wheels(wheels_lock, Path(tmp) / "wheels", Path(tmp) / "pip.log")
        for key, path in files.items():
            if key not in lacking:
                continue  # apt fetched a package under another name than the lock's (cannot happen with exact specs)
            expected = lock.packages[key].removeprefix("sha256:") if key.startswith("wheel ") else None
            entries[key] = Entry(key, path.name, store(cache, path, expected))
    write_index(cache, lock, entries)
    return missing(cache, lock)


def offline_files(cache: Path, lock: Lock) -> dict[str, Path]:
    """Build-context name -> cached file for every deb and wheel of `lock` (debs/<file>, wheels/<file>).

    Raises DistError naming what is missing when the cache cannot restore the lock."""
    gone = missing(cache, lock)
    if gone:
        shown = ", ".join(gone[:8]) + (f" and {len(gone) - 8} more" if len(gone) > 8 else "")
        raise DistError(
            f"the package cache lacks {len(gone)} package(s) of {lock.name}: {shown}",
            f"{cache} must hold every deb and wheel of the lock to build the image offline",
            "fill it while the mirror has them: invoke images --cache-packages",
        )
    entries = read_index(cache, lock)
    return {
        f"{'debs' if key.startswith('deb ') else 'wheels'}/{entries[key].file}": blob_path(cache, entries[key].sha256)
        for key in wanted(lock)
    }


def summary(lock: Lock, gone: Iterable[str]) -> str:
    lacking = list(gone)
    total = len(wanted(lock))
    if not lacking:
        return f"{lock.name}: all {total} debs and wheels cached"
    return f"{lock.name}: {total - len(lacking)} of {total} cached; the mirror no longer has: {', '.join(lacking[:6])}"
