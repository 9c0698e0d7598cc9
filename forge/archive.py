"""Deterministic archives: the same tree gives the same bytes, whoever packs it, whenever, wherever.

Members are sorted by name; every mtime is SOURCE_DATE_EPOCH; owners are 0/0 with empty names;
modes are normalised to 0644 (0755 for directories and executables); gzip carries no name and
mtime 0; ZIP entries get a fixed date (the epoch, clamped to ZIP's 1980 floor), fixed
permissions and no extra fields. The umask, filesystem order and clock of the packer do not matter.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

ZIP_MIN_EPOCH = 315532800  # 1980-01-01T00:00:00Z, the earliest date a ZIP entry can hold


def _entries(root: Path, skip: Callable[[str], bool] | None = None) -> Iterator[Path]:
    """Every directory, file and link under root, sorted by their relative POSIX path; `skip` (given
    a relative path) leaves an entry out, and with a directory everything below it."""
    found: list[Path] = []
    for d, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(d) / name
            if skip is not None and skip(path.relative_to(root).as_posix()):
                if name in dirs:
                    dirs.remove(name)
                continue
            found.append(path)
    yield from sorted(found, key=lambda p: p.relative_to(root).as_posix())


def _mode(path: Path) -> int:
    st = path.lstat()
    if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o111:
        return 0o755
    return 0o644


def tar_bytes(root: Path, epoch: int, prefix: str = "", skip: Callable[[str], bool] | None = None) -> bytes:
    """An uncompressed POSIX tar of root's contents, under `prefix/` when given, without what `skip` names."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _entries(root, skip):
            rel = path.relative_to(root).as_posix()
            info = tar.gettarinfo(str(path), arcname=f"{prefix}/{rel}" if prefix else rel)
            info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
            info.mode = 0o777 if info.issym() else _mode(path)
            info.pax_headers = {}
            if info.islnk():  # a hard link depends on which copy came first: store the bytes again
                info.type, info.linkname, info.size = tarfile.REGTYPE, "", path.stat().st_size
            if info.isfile():
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)
    return buffer.getvalue()


def write_tar_gz(root: Path, out: Path, epoch: int, prefix: str = "") -> Path:
    """root's tree as a reproducible .tar.gz at out (gzip without a name or timestamp)."""
    data = tar_bytes(root, epoch, prefix)
    with out.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    return out


def write_zip(root: Path, out: Path, epoch: int) -> Path:
    """root's files as a reproducible .zip (wheels are zips): sorted, fixed dates and permissions."""
    date = time.gmtime(max(epoch, ZIP_MIN_EPOCH))[:6]
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in _entries(root):
            if path.is_dir() and not path.is_symlink():
                continue
            info = zipfile.ZipInfo(path.relative_to(root).as_posix(), date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so external_attr carries the mode
            if path.is_symlink():
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, path.readlink().as_posix())
            else:
                info.external_attr = (stat.S_IFREG | _mode(path)) << 16
                zf.writestr(info, path.read_bytes())
    return out
