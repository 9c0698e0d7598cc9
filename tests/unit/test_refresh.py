"""invoke upgrade --refresh-locks: what it offers and when (forge/refresh.py); no daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge import locks
from forge.commands import refresh
from forge.config import load_config
from forge.errors import ConfigError, RegressionFoundError

REPO = Path(__file__).resolve().parents[2]
NAME = "bookworm-gcc12-py3.11-np2.4"


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    committed, fresh = tmp_path / "committed", tmp_path / "fresh"
    for d, version in ((committed, "12.2.0-14"), (fresh, "12.2.0-15")):
        d.mkdir()
        lock = locks.Lock(NAME, {"deb gcc-12:amd64": version, "deb make:amd64": "4.3-4.1"})
        locks.lock_path(NAME, d).write_text(locks.format_lock(lock))
    return committed, fresh


def test_new_lock_is_only_printed_without_accept(tmp_path: Path) -> None:
    committed, fresh = _dirs(tmp_path)
    before = locks.lock_path(NAME, committed).read_text()
    message, written = refresh.offer(NAME, committed, fresh, 0, False, "invoke upgrade --target x --refresh-locks")
    assert written is None and locks.lock_path(NAME, committed).read_text() == before
    assert "~ deb gcc-12:amd64 12.2.0-14 -> 12.2.0-15" in message
    assert "invoke upgrade --target x --refresh-locks --accept" in message


def test_accept_writes_the_new_lock(tmp_path: Path) -> None:
    committed, fresh = _dirs(tmp_path)
    _, written = refresh.offer(NAME, committed, fresh, 0, True, "cmd")
    assert written == locks.lock_path(NAME, committed)
    assert written.read_text() == locks.lock_path(NAME, fresh).read_text()


def test_a_regression_withholds_the_lock_even_with_accept(tmp_path: Path) -> None:
    committed, fresh = _dirs(tmp_path)
    before = locks.lock_path(NAME, committed).read_text()
    with pytest.raises(RegressionFoundError) as info:
        refresh.offer(NAME, committed, fresh, 2, True, "cmd")
    assert "not offered" in info.value.what
    assert locks.lock_path(NAME, committed).read_text() == before


def test_candidate_builds_elsewhere_with_its_own_locks(tmp_path: Path) -> None:
    cfg = load_config(REPO, {"SOURCE_DATE_EPOCH": "1700000000"}, {})
    ws = refresh.workspace(cfg)
    cand = refresh.candidate_config(cfg, ws)
    assert cand.dist != cfg.dist and cand.lock_dir == ws.lock_dir and cand.update_locks
    assert cfg.lock_dir is None  # the baseline keeps toolchains/locks/


def test_a_cell_without_a_toolchain_image_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        refresh.run_refresh("host", {}, {"backend": "local"})
    assert "without a forge toolchain image" in info.value.what


class FakeImages:
    def __init__(self, existing: set[str]) -> None:
        self.tags = set(existing) | {"forge/toolchain:x-refresh-1"}
        self.removed: list[str] = []

    def list(self, name: str) -> list[str]:
        return [name] if name in self.tags else []

    def get(self, tag: str) -> FakeImages:
        self._current = tag
        return self

    def tag(self, repository: str, tag: str) -> None:
        self.tags.add(f"{repository}:{tag}")

    def remove(self, tag: str) -> None:
        self.removed.append(tag)
        self.tags.discard(tag)


class FakeClient:
    def __init__(self, existing: set[str]) -> None:
        self.images = FakeImages(existing)


def test_the_fresh_image_takes_a_free_tag_but_never_moves_a_shared_one() -> None:
    free = FakeClient(set())
    assert refresh.adopt_fresh_image(free, "forge/toolchain:x-abc", "forge/toolchain:x-refresh-1") == (
        "forge/toolchain:x-abc"
    )
    assert free.images.tags == {"forge/toolchain:x-abc"}
    shared = FakeClient({"forge/toolchain:x-abc"})
    tagged: list[str] = []
    shared.images.tag = lambda repository, tag: tagged.append(tag)  # type: ignore[method-assign]
    refresh.adopt_fresh_image(shared, "forge/toolchain:x-abc", "forge/toolchain:x-refresh-1")
    assert tagged == [] and shared.images.removed == ["forge/toolchain:x-refresh-1"]
