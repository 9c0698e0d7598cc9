"""Toolchain locks: every Debian and pip package (with version) inside a toolchain image, and the
sha256 of every wheel pip downloaded into it.

After forge builds an image it lists what the image really contains and compares that with
`toolchains/locks/<image-name>.txt` (the name is the readable part of the tag, e.g.
`bookworm-gcc12-py3.11-np2.1`). A first build writes the lock; a rebuild that resolved different
versions (a mirror moved on, a pin changed meaning) fails with the diff, unless the caller asked to
update locks. Commit the lock files: they are the record of what each toolchain was.

`wheel <file> sha256:<hex>` lines pin pip's downloads: once a lock holds them, the image's pip
requirements are rendered from the lock (`requirements_from_lock`) and installed with
`--require-hashes`, so a changed or substituted wheel fails the image build.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from forge.errors import BackendError, ConfigError, ForgeError

REPO = Path(__file__).resolve().parent.parent
LOCK_DIR = REPO / "toolchains" / "locks"

WHEELS_FILE = "/opt/forge-venv/forge-wheels.sha256"
"""`sha256sum` of the wheels pip downloaded while the image was built (see dockerfiles/)."""
# dpkg-query for Debian packages, the venv's pip for Python ones, the downloaded wheels' sha256;
# one line each, "<kind> <name> <version>".
QUERY_SCRIPT = (
    "dpkg-query -W -f='deb ${Package}:${Architecture} ${Version}\\n' && "
    "/opt/forge-venv/bin/python -m pip list --format=freeze --disable-pip-version-check 2>/dev/null"
    " | sed -n 's/^\\([^=]*\\)==\\(.*\\)$/pip \\1 \\2/p' && "
    f"sed -n 's/^\\([0-9a-f]\\{{64\\}}\\)  \\(.*\\.whl\\)$/wheel \\2 sha256:\\1/p' {WHEELS_FILE}"
)
KINDS = ("deb", "pip", "wheel")
WHEEL_HASH = re.compile(r"sha256:[0-9a-f]{64}")


class LockMismatchError(ForgeError):
    """An image's resolved package versions differ from its committed lock."""

    exit_code = 8


@dataclass(frozen=True)
class Lock:
    """The packages of one toolchain image: {"deb gcc-12:amd64": "12.2.0-14", "pip numpy": "2.1.3"}."""

    name: str
    packages: Mapping[str, str]

    def digest(self) -> str:
        return hashlib.sha256(format_lock(self).encode()).hexdigest()


def lock_path(name: str, lock_dir: Path = LOCK_DIR) -> Path:
    """Where the lock of the toolchain image named `name` lives."""
    return lock_dir / f"{name}.txt"


def parse_query_output(text: str) -> dict[str, str]:
    """Packages from QUERY_SCRIPT's output."""
    packages: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] in KINDS:
            packages[f"{words[0]} {words[1].lower() if words[0] == 'pip' else words[1]}"] = words[2]
    return packages


def format_lock(lock: Lock) -> str:
    lines = [
        f"# forge toolchain lock for image {lock.name}: every package and its version.",
        "# Written by forge; a rebuild that resolves other versions fails (--update-locks rewrites).",
    ]
    lines += [f"{key} {version}" for key, version in sorted(lock.packages.items())]
    return "\n".join(lines) + "\n"


def parse_lock(text: str, name: str, source: str) -> Lock:
    packages: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split()
        if len(words) != 3 or words[0] not in KINDS or (words[0] == "wheel" and not WHEEL_HASH.fullmatch(words[2])):
            raise ConfigError(
                f"{source}:{number}: expected '<deb|pip> <package> <version>' or 'wheel <file> sha256:<hex>'",
                fix="restore the file from git or rebuild with --update-locks",
            )
        packages[f"{words[0]} {words[1]}"] = words[2]
    return Lock(name=name, packages=packages)


def diff_locks(old: Lock, new: Lock) -> list[str]:
    """Human diff, one line per package: '+ added', '- removed', '~ name old -> new'."""
    lines: list[str] = []
    for key in sorted(set(old.packages) | set(new.packages)):
        before, after = old.packages.get(key), new.packages.get(key)
        if before is None:
            lines.append(f"+ {key} {after}")
        elif after is None:
            lines.append(f"- {key} {before}")
        elif before != after:
            lines.append(f"~ {key} {before} -> {after}")
    return lines


def requirements_from_lock(lock: Lock | None, requirements: Sequence[str]) -> str | None:
    """A pip requirements file pinning each of `requirements` to the wheel(s) the lock records,
    with their sha256 (for `pip install --require-hashes`); None when the lock lacks any of them."""
    if lock is None:
        return None
    wheels: list[tuple[str, str, str]] = []  # (canonical name, version, hash)
    for key, digest in lock.packages.items():
        kind, _, filename = key.partition(" ")
        if kind != "wheel":
            continue
        try:
            name, version, _, _ = parse_wheel_filename(filename)
        except InvalidWheelFilename:
            return None
        wheels.append((str(name), str(version), digest))
    lines = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise ConfigError(f"pip requirement {text!r} is malformed", str(exc)) from None
        matches = sorted((v, h) for n, v, h in wheels if n == canonicalize_name(req.name) and req.specifier.contains(v))
        versions = {v for v, _ in matches}
        if len(versions) != 1:
            return None
        hashes = " ".join(f"--hash={h}" for _, h in matches)
        lines.append(f"{req.name}=={versions.pop()} {hashes}")
    return "\n".join(lines) + "\n"


def read_lock(path: Path, name: str) -> Lock | None:
    """The lock at `path`, or None when there is none yet."""
    return parse_lock(path.read_text(), name, str(path)) if path.is_file() else None


def reconcile(path: Path, found: Lock, update: bool) -> str:
    """Compare `found` with the lock at `path`: 'created', 'unchanged', 'updated' or 'hashes
    recorded' (a lock written before forge pinned wheels gains their sha256); raise on drift."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_lock(found))
        return "created"
    committed = parse_lock(path.read_text(), found.name, str(path))
    changes = diff_locks(committed, found)
    if not changes:
        return "unchanged"
    if not any(key.startswith("wheel ") for key in committed.packages) and all(
        line.startswith("+ wheel ") for line in changes
    ):
        path.write_text(format_lock(found))
        return "hashes recorded"
    if not update:
        shown = changes[:40] + ([f"... and {len(changes) - 40} more"] if len(changes) > 40 else [])
        raise LockMismatchError(
            f"image {found.name} resolved {len(changes)} package version(s) that differ from {path}",
            why="\n".join(shown),
            fix="if the new versions are intended, rebuild with --update-locks and commit the lock",
        )
    path.write_text(format_lock(found))
    return "updated"


def collect_lock(client: Any, image_tag: str, name: str) -> Lock:
    """List the packages inside `image_tag` (a throwaway container with no network)."""
    container = client.containers.create(
        image_tag, ["sh", "-c", QUERY_SCRIPT], network_mode="none", labels={"org.forge.managed": "lock-query"}
    )
    try:
        container.start()
        status = container.wait()
        output = container.logs(stdout=True, stderr=True).decode(errors="replace")
    finally:
        container.remove(force=True)
    if int(status.get("StatusCode", 1)) != 0:
        raise BackendError(f"listing the packages of {image_tag} failed", why=output[-2000:])
    packages = parse_query_output(output)
    if not any(key.startswith("deb ") for key in packages):
        raise BackendError(f"no Debian packages found in {image_tag}", why=output[-2000:])
    return Lock(name=name, packages=packages)


def describe_lock(path: Path) -> str:
    """How `invoke plan` names a cell's lock: its path, and whether it exists yet."""
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    return f"{shown}" if path.exists() else f"{shown} (written when the image is first built)"


def check_image_lock(
    client: Any, image_tag: str, name: str, built: bool, update: bool, lock_dir: Path = LOCK_DIR
) -> tuple[Path, str]:
    """Reconcile a toolchain image with its lock: (lock path, 'created'|'unchanged'|'updated'|'reused').

    Freshly built images are always checked; a drifted one loses its tag, so no build uses a
    toolchain whose versions nobody accepted.
    """
    path = lock_path(name, lock_dir)
    if not built and path.exists():
        return path, "reused"
    found = collect_lock(client, image_tag, name)
    try:
        return path, reconcile(path, found, update=update)
    except LockMismatchError:
        client.images.remove(image_tag, force=True)
        raise
