"""Toolchain images saved to and loaded from archives: `invoke images --save DIR` / `--load DIR`.

Each image becomes a docker-save tarball (`<name>.tar`, written to a temporary name and renamed,
so no half-written archive is ever left) and one line of `DIR/forge-images.json`: its tag, engine
id, file, size and sha256. `--load` checks every archive's sha256 against that index before
handing it to the engine, and that the engine then holds the recorded id under the recorded tag.

With the archives, a toolchain outlives the mirror it was built from: an image deleted after a
Debian point release can be loaded back bit-for-bit instead of rebuilt from moved packages.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors

from forge.errors import BackendError, ConfigError, DistError

INDEX = "forge-images.json"
FORMAT = 1
SAFE_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.tar")


@dataclass(frozen=True)
class Archived:
    """One image in an archive directory."""

    tag: str
    id: str
    file: str
    size: int
    sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {"tag": self.tag, "id": self.id, "file": self.file, "size": self.size, "sha256": self.sha256}


def archive_name(tag: str) -> str:
    """`forge/base:bookworm-0123abcd` -> `forge-base-bookworm-0123abcd.tar`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tag).strip("-.") + ".tar"


def read_index(directory: Path) -> dict[str, Archived]:
    """The index of an archive directory (tag -> entry); a clear ConfigError when it is missing or malformed."""
    path = directory / INDEX
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(
            f"{path} does not exist",
            "an archive directory is made by `invoke images --save DIR`, which writes this index",
            f"pass the directory --save wrote, or save the images first: invoke images --save {directory}",
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read: {exc}", fix="save the images again with --save") from None
    entries: dict[str, Archived] = {}
    images = doc.get("images") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(images, list):
        raise ConfigError(
            f"{path}: not a forge image index of format {FORMAT}", fix="save the images again with --save"
        )
    for number, item in enumerate(images, start=1):
        try:
            entry = Archived(
                str(item["tag"]), str(item["id"]), str(item["file"]), int(item["size"]), str(item["sha256"])
            )
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{path}: image {number} lacks tag, id, file, size or sha256", fix="save the images again with --save"
            ) from None
        if not SAFE_FILE.fullmatch(entry.file) or not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
            raise ConfigError(
                f"{path}: image {number} ({entry.tag}) names the file {entry.file!r} or sha256 {entry.sha256!r}",
                "archive files are plain names inside the directory, checked by a 64-digit sha256",
                "save the images again with --save",
            )
        entries[entry.tag] = entry
    return entries


def write_index(directory: Path, entries: Iterable[Archived]) -> Path:
    path = directory / INDEX
    doc = {"format": FORMAT, "images": [e.as_dict() for e in sorted(entries, key=lambda e: e.tag)]}
    tmp = directory / f".{INDEX}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def select(tags: Iterable[str], only: Iterable[str]) -> list[str]:
    """The tags matching any of the `only` globs (all of them when none is given)."""
    patterns = list(only)
    return sorted(t for t in tags if not patterns or any(fnmatch.fnmatchcase(t, p) for p in patterns))


def save_image(client: docker.DockerClient, tag: str, directory: Path) -> Archived:
    """`docker save` one image into `directory` (atomically), with its sha256."""
    name = archive_name(tag)
    try:
        image = client.images.get(tag)
        chunks: Iterator[bytes] = image.save(named=tag)
        tmp = directory / f".{name}.{os.getpid()}.tmp"
        digest, size = hashlib.sha256(), 0
        try:
            with tmp.open("wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            tmp.replace(directory / name)
        except BaseException:  # Ctrl-C, a full disk: never leave a partial archive behind
            tmp.unlink(missing_ok=True)
            raise
    except docker.errors.ImageNotFound:
        raise ConfigError(f"image {tag} does not exist", fix="build it first: invoke images --build") from None
    except docker.errors.APIError as exc:
        raise BackendError(f"saving {tag} failed", why=str(exc.explanation or exc)) from None
    except OSError as exc:
        raise DistError(
            f"cannot write {directory / name}: {exc.strerror or exc}", fix="free space or pick another DIR"
        ) from None
    return Archived(tag, str(image.id), name, size, digest.hexdigest())


def save_images(client: docker.DockerClient, tags: Iterable[str], directory: Path) -> list[Archived]:
    """Save each of `tags` into `directory`, keeping the index entries of images saved there before."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = read_index(directory) if (directory / INDEX).exists() else {}
    saved = []
    for tag in tags:
        start = time.monotonic()
        entry = save_image(client, tag, directory)
        entries[tag] = entry
        write_index(directory, entries.values())  # after each image: an interrupted save keeps what is done
        print(f"saved {tag} -> {directory / entry.file} ({entry.size / 1e6:.0f} MB, {time.monotonic() - start:.0f} s)")
        saved.append(entry)
    return saved


def check_archive(directory: Path, entry: Archived) -> Path:
    """The archive file of `entry`, after checking its size and sha256 against the index."""
    path = directory / entry.file
    if not path.is_file():
        raise DistError(
            f"{path} is missing (listed for {entry.tag} in {directory / INDEX})",
            fix="copy the whole directory --save wrote, or save the image again",
        )
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != entry.sha256:
        raise DistError(
            f"{path} is corrupt: sha256 {digest.hexdigest()[:16]}..., the index records {entry.sha256[:16]}...",
            "a damaged or substituted archive would load another toolchain than the one recorded",
            "copy the archive again from where it was saved, or rebuild the image (invoke images --build)",
        )
    return path


def load_images(client: docker.DockerClient, directory: Path, only: Iterable[str] = ()) -> list[Archived]:
    """Load the (selected) archives of `directory` into the engine, each checked before loading."""
    entries = read_index(directory)
    tags = select(entries, only)
    if not tags:
        raise ConfigError(f"no image of {directory / INDEX} matches {', '.join(only)}", fix="check --only")
    checked = [(entries[t], check_archive(directory, entries[t])) for t in tags]  # all verified before any load
    for entry, path in checked:
        start = time.monotonic()
        try:
            with path.open("rb") as handle:
                client.images.load(handle)
            found = client.images.get(entry.tag)
        except docker.errors.ImageNotFound:
            raise BackendError(f"loading {path} did not create {entry.tag}") from None
        except docker.errors.APIError as exc:
            raise BackendError(f"loading {path} failed", why=str(exc.explanation or exc)) from None
        if found.id != entry.id:
            raise BackendError(f"{path} loaded {entry.tag} as {found.id}, the index records {entry.id}")
        print(f"loaded {entry.tag} ({found.id[:19]}) from {path} in {time.monotonic() - start:.0f} s")
    return [entry for entry, _ in checked]
