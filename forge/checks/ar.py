"""Read the members of a Unix `ar` archive (static libraries), GNU or BSD long names.

Layout: the magic "!<arch>\\n", then per member a 60-byte header (name 16, mtime 12, uid 6,
gid 6, mode 8, size 10, "`\\n") and `size` bytes, padded to an even offset. BSD archives
(Apple's, zig's) write a long name as "#1/N", its N bytes leading the member's data.
"""

from __future__ import annotations

from pathlib import Path

MAGIC = b"!<arch>\n"
HEADER = 60
HEADER_END = b"`\n"


class ArError(ValueError):
    """The file is not a (readable) ar archive; the message says what is wrong."""


def read_members(path: Path) -> list[tuple[str, bytes]]:
    """(name, data) of each member of the archive at `path`; ArError when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ArError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return parse_members(data, path)


def parse_members(data: bytes, path: Path) -> list[tuple[str, bytes]]:
    """(name, data) of each member of `data`, the bytes of `path`. Any malformed input raises
    ArError and nothing else."""
    if not data.startswith(MAGIC):
        raise ArError(f"{path}: not an ar archive")
    members, offset = [], len(MAGIC)
    while offset < len(data):
        if offset + HEADER > len(data):
            raise ArError(f"{path}: truncated member header at offset {offset}")
        header = data[offset : offset + HEADER]
        if header[58:60] != HEADER_END:
            raise ArError(f"{path}: member header at offset {offset} does not end with '`\\n'")
        size = _decimal(header[48:58], path, offset, "size")
        start, end = offset + HEADER, offset + HEADER + size
        if end > len(data):
            raise ArError(f"{path}: member at offset {offset} runs past the end ({size} bytes)")
        name = header[:16].decode("ascii", "replace").strip()
        body = data[start:end]
        if name.startswith("#1/"):  # BSD: the name is the first N bytes of the body
            length = _decimal(name[3:].encode(), path, offset, "name length")
            if length > size:
                raise ArError(f"{path}: member name at offset {offset} is longer than the member")
            name, body = body[:length].rstrip(b"\0").decode("utf-8", "replace"), body[length:]
        members.append((name, body))
        offset = end + (size & 1)
    return members


def _decimal(field: bytes, path: Path, offset: int, what: str) -> int:
    text = field.decode("ascii", "replace").strip()
    if not text.isdigit() or not text.isascii():
        raise ArError(f"{path}: member at offset {offset} has a bad {what} {text!r}")
    return int(text)
