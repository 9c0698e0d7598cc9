"""dist/ is checked before a build, and a publish that fails keeps the previous result (no daemon)."""

from __future__ import annotations

import errno
import io
import json
import shutil
from collections import namedtuple
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from forge import build, manifest
from forge.config import load_config, load_data
from forge.errors import DistError
from forge.log import Progress
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-cpu"
Usage = namedtuple("Usage", "total used free")


def _previous(dist: Path, size: int) -> Path:
    """A published result of CELL whose manifest records `size` bytes."""
    cell = dist / CELL
    (cell / "install").mkdir(parents=True)
    (cell / "install" / "old.txt").write_text("old\n")
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "cell": {},
        "result": "passed",
        "files": {"old.txt": {"sha256": "0" * 64, "size": size}},
    }
    (cell / manifest.MANIFEST).write_text(json.dumps(data))
    return cell


def test_a_usable_dist_passes_and_is_created(tmp_path: Path) -> None:
    manifest.check_dist(tmp_path / "new" / "dist", CELL)
    assert (tmp_path / "new" / "dist").is_dir() and not list((tmp_path / "new" / "dist").iterdir())


def test_dist_that_is_a_file_is_one_error_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "dist").write_text("not a directory\n")
    with pytest.raises(DistError) as caught:
        manifest.check_dist(tmp_path / "dist", CELL)
    assert "exists and is not a directory" in caught.value.what and "writable directory" in caught.value.fix
    assert caught.value.exit_code == 11
    (tmp_path / "dist").unlink()
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / CELL).write_text("in the way\n")
    with pytest.raises(DistError, match=CELL):
        manifest.check_dist(tmp_path / "dist", CELL)


def test_read_only_dist_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "dist" / ".forge-write-probe-x"))

    monkeypatch.setattr(manifest.tempfile, "NamedTemporaryFile", read_only)
    with pytest.raises(DistError, match="Read-only file system") as caught:
        manifest.check_dist(tmp_path / "dist", CELL)
    assert "before building" in caught.value.why


def test_free_space_is_checked_against_the_cells_last_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    _previous(dist, 100 * 1024**2)
    monkeypatch.setattr(manifest.shutil, "disk_usage", lambda path: Usage(10**12, 0, 150 * 1024**2))
    with pytest.raises(DistError, match=r"150 MiB free, .* needs 200 MiB") as caught:
        manifest.check_dist(dist, CELL)
    assert "free space" in caught.value.fix
    monkeypatch.setattr(manifest.shutil, "disk_usage", lambda path: Usage(10**12, 0, 201 * 1024**2))
    manifest.check_dist(dist, CELL)
    monkeypatch.setattr(manifest.shutil, "disk_usage", lambda path: Usage(10**12, 0, 10 * 1024**2))
    with pytest.raises(DistError, match="needs 64 MiB"):  # a first build: the floor
        manifest.check_dist(tmp_path / "other", CELL)


def test_no_space_while_publishing_keeps_the_previous_result(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _previous(dist, 4)
    with pytest.raises(DistError) as caught, manifest.publishing(dist, CELL) as tmp:
        (tmp / "install").mkdir()
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp / "install" / "lib.so"))
    assert "No space left on device" in caught.value.why and "previous result" in caught.value.why
    assert "free space" in caught.value.fix
    assert (dist / CELL / "install" / "old.txt").read_text() == "old\n"
    assert sorted(p.name for p in dist.iterdir()) == [CELL]  # no staging directory left


def test_publishing_swaps_the_new_result_in_when_the_body_ends(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _previous(dist, 4)
    with manifest.publishing(dist, CELL) as tmp:
        (tmp / "new.txt").write_text("new\n")
        assert (dist / CELL / "install" / "old.txt").is_file()  # readers see the old result meanwhile
    assert sorted(p.name for p in (dist / CELL).iterdir()) == ["new.txt"]
    assert sorted(p.name for p in dist.iterdir()) == [CELL]


def test_a_failed_swap_puts_the_previous_result_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    _previous(dist, 4)
    tmp = manifest.staging_dir(dist, CELL)
    real_rename = Path.rename

    def rename(self: Path, target: Path) -> Path:
        if self == tmp:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(DistError, match="cannot publish"):
        manifest.publish(tmp, dist, CELL)
    assert (dist / CELL / "install" / "old.txt").read_text() == "old\n"
    assert sorted(p.name for p in dist.iterdir()) == [CELL]


def test_a_build_into_an_unusable_dist_fails_before_any_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a step ran although dist/ could not take the result")

    monkeypatch.setattr(build, "make_backend", never)
    monkeypatch.setattr(build, "ensure_reference", never)
    (tmp_path / "dist").write_text("a file\n")
    cfg = replace(load_config(REPO, {}, {"backend": "docker"}), dist=tmp_path / "dist", cache=tmp_path / "cache")
    progress = Progress(Console(file=io.StringIO()), live=False)
    with pytest.raises(DistError, match="not a directory"):
        build.build_cell(Request.make("linux-x86_64", {"python": "3.11"}), load_data(REPO), cfg, progress)
    assert (tmp_path / "dist").read_text() == "a file\n"
    shutil.rmtree(tmp_path / "cache")
