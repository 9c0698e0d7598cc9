"""Toolchain lock parsing, diffing and reconciliation (pure; no daemon)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge import locks
from forge.errors import ConfigError

QUERY = "deb gcc-12:amd64 12.2.0-14\ndeb libc6:amd64 2.36-9+deb12u10\npip numpy 2.1.3\npip Pip 23.0.1\nnoise\n"


def test_query_output_becomes_packages() -> None:
    assert locks.parse_query_output(QUERY) == {
        "deb gcc-12:amd64": "12.2.0-14",
        "deb libc6:amd64": "2.36-9+deb12u10",
        "pip numpy": "2.1.3",
        "pip pip": "23.0.1",
    }


def test_lock_text_round_trips() -> None:
    lock = locks.Lock("bookworm-gcc12-py3.11-np2.1", locks.parse_query_output(QUERY))
    again = locks.parse_lock(locks.format_lock(lock), lock.name, "x.txt")
    assert again == lock
    assert again.digest() == lock.digest()


def test_malformed_lock_line_names_file_and_line() -> None:
    with pytest.raises(ConfigError, match=r"x\.txt:3"):
        locks.parse_lock("# c\ndeb a 1\ngarbage\n", "n", "x.txt")


def test_diff_shows_added_removed_and_changed() -> None:
    old = locks.Lock("n", {"deb a": "1", "deb b": "1", "pip c": "1"})
    new = locks.Lock("n", {"deb a": "1", "deb b": "2", "pip d": "4"})
    assert locks.diff_locks(old, new) == ["~ deb b 1 -> 2", "- pip c 1", "+ pip d 4"]


def test_reconcile_creates_then_accepts_equal_then_rejects_drift(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "n.txt"
    first = locks.Lock("n", {"deb gcc-12:amd64": "12.2.0-14", "pip numpy": "2.1.3"})
    assert locks.reconcile(path, first, update=False) == "created"
    assert locks.reconcile(path, first, update=False) == "unchanged"
    drifted = locks.Lock("n", {"deb gcc-12:amd64": "12.2.0-15", "pip numpy": "2.1.3"})
    with pytest.raises(locks.LockMismatchError) as err:
        locks.reconcile(path, drifted, update=False)
    assert "~ deb gcc-12:amd64 12.2.0-14 -> 12.2.0-15" in err.value.why
    assert "--update-locks" in err.value.fix
    assert "12.2.0-14" in path.read_text()  # a failed check leaves the committed lock alone
    assert locks.reconcile(path, drifted, update=True) == "updated"
    assert "12.2.0-15" in path.read_text()


def test_lock_path_uses_the_image_name(tmp_path: Path) -> None:
    assert locks.lock_path("trixie-gcc14-py3.13-np2.1", tmp_path) == tmp_path / "trixie-gcc14-py3.13-np2.1.txt"


WHEEL = "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
DIGEST = "sha256:" + "9" * 64


def test_wheel_hashes_are_read_from_the_image_and_kept_in_the_lock() -> None:
    found = locks.parse_query_output(f"deb a:amd64 1\npip numpy 2.4.6\nwheel {WHEEL} {DIGEST}\n")
    assert found[f"wheel {WHEEL}"] == DIGEST
    lock = locks.Lock("n", found)
    assert locks.parse_lock(locks.format_lock(lock), "n", "x.txt") == lock
    with pytest.raises(ConfigError, match="sha256"):
        locks.parse_lock(f"wheel {WHEEL} md5:abc\n", "n", "x.txt")


def test_requirements_pin_each_wheel_by_hash_or_are_none() -> None:
    lock = locks.Lock("n", {"pip numpy": "2.4.6", f"wheel {WHEEL}": DIGEST})
    assert locks.requirements_from_lock(lock, ["numpy==2.4.*"]) == f"numpy==2.4.6 --hash={DIGEST}\n"
    assert locks.requirements_from_lock(lock, ["numpy==2.4.*", "ziglang==0.15.1"]) is None  # zig not pinned yet
    assert locks.requirements_from_lock(lock, ["numpy==2.5.*"]) is None  # the pin moved: resolve again
    assert locks.requirements_from_lock(None, ["numpy==2.4.*"]) is None


def test_a_lock_without_hashes_gains_them_but_other_drift_still_fails(tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    old = locks.Lock("n", {"deb a:amd64": "1", "pip numpy": "2.4.6"})
    path.write_text(locks.format_lock(old))
    assert (
        locks.reconcile(path, locks.Lock("n", {**old.packages, f"wheel {WHEEL}": DIGEST}), False) == "hashes recorded"
    )
    assert DIGEST in path.read_text()
    changed = locks.Lock("n", {**old.packages, f"wheel {WHEEL}": "sha256:" + "0" * 64})
    with pytest.raises(locks.LockMismatchError, match="differ"):  # a substituted wheel is drift
        locks.reconcile(path, changed, update=False)
