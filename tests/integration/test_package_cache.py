"""A toolchain restored offline from the package cache (forge/pkgcache.py), real dockerd + mirror.

The committed bookworm gcc 12 lock's debs (apt-get download in the base image, checked by apt
against the signed index) and wheels (pip, --require-hashes against the lock) are cached; then
the image is built under a tag of this test's own with the network off (`--network none`),
from the cache alone, and the packages found inside equal the committed lock. A cache file
changed on disk is refused before any build. Cost: about 150 MB of downloads into
.cache/forge/packages (kept: a second run downloads nothing) and one image build, a few minutes.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from forge import daemon, images, locks, pkgcache
from forge.errors import DistError
from forge.matrix import Cell

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.release_job(cost="package cache refill, 14 min")]
CELL = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "12", None, "3.25", None)


@pytest.fixture(scope="module")
def client() -> Any:
    return daemon.ensure_daemon(os.environ)


def test_restore_a_toolchain_offline_with_the_same_lock(client: Any, tmp_path: Path) -> None:
    spec = images.ToolchainSpec.from_cell(CELL)
    lock = locks.read_lock(locks.lock_path(spec.name), spec.name)
    assert lock is not None
    base = images.ensure_base_image(client, spec.suite, images.debian_mirror(os.environ))
    start = time.monotonic()
    gone = pkgcache.fill(client, base.tag, lock)
    filled = time.monotonic() - start
    if gone:
        pytest.fail(f"the mirror no longer has {len(gone)} package(s) of the committed lock: {gone[:5]} (refresh it)")
    tag = f"forge-test/restored:{spec.name}-{uuid.uuid4().hex[:8]}"
    start = time.monotonic()
    try:
        images.build_from_cache(client, spec, base.tag, tag, {images.MANAGED_LABEL: "test"})
        restored = time.monotonic() - start
        found = locks.collect_lock(client, tag, spec.name)
        assert locks.diff_locks(lock, found) == [], "the restored image holds other versions than its lock"
        print(f"\nfilled the cache in {filled:.0f} s; restored {spec.name} offline in {restored:.0f} s; lock equal")
    finally:
        client.images.remove(tag, force=True)


def test_a_changed_cache_file_is_refused(tmp_path: Path) -> None:
    spec = images.ToolchainSpec.from_cell(CELL)
    lock = locks.read_lock(locks.lock_path(spec.name), spec.name)
    assert lock is not None
    cache = tmp_path / "cache"
    deb = tmp_path / "gcc-12_1_amd64.deb"
    deb.write_bytes(b"a package")
    key = "deb gcc-12:amd64"
    entries = {key: pkgcache.Entry(key, deb.name, pkgcache.store(cache, deb))}
    pkgcache.write_index(cache, lock, entries)
    pkgcache.blob_path(cache, entries[key].sha256).write_bytes(b"another package")
    assert key in pkgcache.missing(cache, lock)
    with pytest.raises(DistError, match="lacks"):
        pkgcache.offline_files(cache, lock)
