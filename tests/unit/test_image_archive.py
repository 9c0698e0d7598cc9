"""The image archive index (forge/image_archive.py) on malformed input; no docker engine."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from forge import image_archive
from forge.errors import ConfigError, DistError


def test_archive_names_are_plain_files() -> None:
    assert image_archive.archive_name("forge/base:bookworm-0123abcd") == "forge-base-bookworm-0123abcd.tar"
    assert image_archive.SAFE_FILE.fullmatch(image_archive.archive_name("../../x:y"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "cannot be read"),
        ('{"format": 2, "images": []}', "not a forge image index"),
        ('{"format": 1, "images": [{"tag": "t"}]}', "lacks tag, id, file, size or sha256"),
        (
            '{"format": 1, "images": [{"tag": "t", "id": "i", "file": "../etc/passwd", "size": 1, "sha256": "%s"}]}'
            % ("0" * 64),
            "names the file",
        ),
    ],
)
def test_malformed_index_is_a_config_error_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / image_archive.INDEX).write_text(text)
    with pytest.raises(ConfigError) as info:
        image_archive.read_index(tmp_path)
    assert expected in info.value.what and image_archive.INDEX in info.value.what


def test_index_round_trip_and_sha256_check(tmp_path: Path) -> None:
    (tmp_path / "a.tar").write_bytes(b"archive")
    entry = image_archive.Archived("forge/base:x", "sha256:1", "a.tar", 7, hashlib.sha256(b"archive").hexdigest())
    image_archive.write_index(tmp_path, [entry])
    assert image_archive.read_index(tmp_path) == {"forge/base:x": entry}
    assert image_archive.check_archive(tmp_path, entry) == tmp_path / "a.tar"
    (tmp_path / "a.tar").write_bytes(b"archivE")
    with pytest.raises(DistError, match="is corrupt"):
        image_archive.check_archive(tmp_path, entry)


def test_select_by_glob() -> None:
    tags = ["forge/base:bookworm-1", "forge/toolchain:bookworm-gcc12-2", "forge/base:trixie-3"]
    assert image_archive.select(tags, ["forge/base:*"]) == ["forge/base:bookworm-1", "forge/base:trixie-3"]
    assert image_archive.select(tags, []) == sorted(tags)
