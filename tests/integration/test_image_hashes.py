"""pip's downloads in a toolchain image are pinned by the sha256 its lock records (real dockerd).

The bookworm image is built from requirements rendered from its committed lock, with
--require-hashes; the wheels it holds hash as the lock says. The same image with one recorded
hash changed must fail to build, naming the mismatch, and leave no tag behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from forge import daemon, images, locks
from forge.errors import StepFailedError
from forge.matrix import Cell

pytestmark = [pytest.mark.integration, pytest.mark.docker]
CELL = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "12", None, "3.25", None)


@pytest.fixture(scope="module")
def client() -> Any:
    return daemon.ensure_daemon(os.environ)


def test_the_image_installs_exactly_the_wheels_its_lock_pins(client: Any) -> None:
    spec = images.ToolchainSpec.from_cell(CELL)
    requirements, hashed = images.pip_requirements_file(spec)
    assert hashed and "--hash=sha256:" in requirements, "the committed bookworm lock records its wheels' sha256"
    _, image = images.ensure_toolchain_image(client, spec, images.debian_mirror(os.environ))
    found = locks.collect_lock(client, image.tag, spec.name)
    committed = locks.read_lock(locks.lock_path(spec.name), spec.name)
    assert committed is not None
    wheels = {k: v for k, v in found.packages.items() if k.startswith("wheel ")}
    assert wheels and wheels == {k: v for k, v in committed.packages.items() if k.startswith("wheel ")}


def test_a_wheel_whose_hash_differs_from_the_lock_fails_the_image_build(client: Any, tmp_path: Path) -> None:
    spec = images.ToolchainSpec.from_cell(CELL)
    committed = locks.read_lock(locks.lock_path(spec.name), spec.name)
    assert committed is not None
    tampered = {k: ("sha256:" + "0" * 64 if k.startswith("wheel ") else v) for k, v in committed.packages.items()}
    locks.lock_path(spec.name, tmp_path).write_text(locks.format_lock(locks.Lock(spec.name, tampered)))
    with pytest.raises(StepFailedError) as caught:
        images.ensure_toolchain_image(client, spec, images.debian_mirror(os.environ), lock_dir=tmp_path)
    assert "DO NOT MATCH THE HASHES" in caught.value.why, caught.value.why[-2000:]
    base = images.ensure_base_image(client, spec.suite, images.debian_mirror(os.environ))
    assert client.images.list(name=images.plan_image(spec, base.tag, base.id, lock_dir=tmp_path).tag) == []
