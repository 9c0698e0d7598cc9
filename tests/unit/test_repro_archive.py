"""forge.archive: the same tree packed under different umasks, mtimes, creation orders and
clocks gives the same bytes; the archives read back as the tree with normalised metadata."""

from __future__ import annotations

import gzip
import os
import tarfile
import zipfile
from pathlib import Path

from forge import archive

EPOCH = 1700000000
NAMES = ["lib/libz.so.1", "bin/tool", "include/a.h", "include/b.h", "share/doc/readme.txt"]


def _tree(root: Path, order: list[str], umask: int, mtime: int) -> Path:
    old = os.umask(umask)
    try:
        for name in order:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(name.encode() * 3)
            if name.startswith("bin/"):
                path.chmod(0o700 if umask == 0o077 else 0o755)
        (root / "lib" / "libz.so").symlink_to("libz.so.1")
        os.link(root / "include" / "a.h", root / "include" / "hard.h")
        for path in root.rglob("*"):
            os.utime(path, (mtime, mtime), follow_symlinks=False)
    finally:
        os.umask(old)
    return root


def _two_trees(tmp_path: Path) -> tuple[Path, Path]:
    return (
        _tree(tmp_path / "one", NAMES, 0o022, 1_000_000_000),
        _tree(tmp_path / "two" / "deeper", list(reversed(NAMES)), 0o077, 1_800_000_000),
    )


def test_tar_gz_is_byte_identical_across_packers(tmp_path: Path) -> None:
    one, two = _two_trees(tmp_path)
    a = archive.write_tar_gz(one, tmp_path / "a.tar.gz", EPOCH, prefix="ember")
    b = archive.write_tar_gz(two, tmp_path / "b.tar.gz", EPOCH, prefix="ember")
    assert a.read_bytes() == b.read_bytes()
    raw = a.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0"  # gzip magic, mtime 0
    assert raw[3] & 0x08 == 0  # no FNAME field
    with tarfile.open(a) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and "ember/include/hard.h" in names
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (EPOCH, 0, 0, "", "")
        assert not m.islnk()
    modes = {m.name: m.mode for m in members}
    assert modes["ember/bin/tool"] == 0o755 and modes["ember/include/a.h"] == 0o644 and modes["ember/bin"] == 0o755
    link = next(m for m in members if m.name == "ember/lib/libz.so")
    assert link.issym() and link.linkname == "libz.so.1"


def test_different_epoch_changes_the_tar(tmp_path: Path) -> None:
    one, _ = _two_trees(tmp_path)
    assert archive.tar_bytes(one, EPOCH) != archive.tar_bytes(one, EPOCH + 1)
    assert gzip.decompress(archive.write_tar_gz(one, tmp_path / "x.tgz", EPOCH).read_bytes()) == archive.tar_bytes(
        one, EPOCH
    )


def test_zip_is_byte_identical_across_packers(tmp_path: Path) -> None:
    one, two = _two_trees(tmp_path)
    a = archive.write_zip(one, tmp_path / "a.whl", EPOCH)
    b = archive.write_zip(two, tmp_path / "b.whl", EPOCH)
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as zf:
        infos = zf.infolist()
        assert zf.read("include/hard.h") == zf.read("include/a.h")
    names = [i.filename for i in infos]
    assert names == sorted(names)
    assert {i.date_time for i in infos} == {(2023, 11, 14, 22, 13, 20)}
    assert {i.filename: i.external_attr >> 16 & 0o777 for i in infos}["bin/tool"] == 0o755


def test_zip_clamps_dates_before_1980(tmp_path: Path) -> None:
    one, _ = _two_trees(tmp_path)
    with zipfile.ZipFile(archive.write_zip(one, tmp_path / "old.zip", 0)) as zf:
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
