"""Real cross builds: linux-aarch64 with the local backend, verified under qemu; macos-arm64 in its
docker image (zig from PyPI inside), checked.

Both build a snapshot of the tree (FORGE_ROOT). The local one shares this checkout's compiler
cache; the docker one uses the zig image's cache volume, which keeps zig's libc++ (built once per
machine). Each cross build also builds the native linux-x86_64 reference it is compared with,
with the same backend. The other cross targets (linux-armv7,
macos-x86_64) are built by `invoke build --matrix matrix/cross.yaml --backend local`; they are
left out here to keep CI short. Missing cross packages are installed by forge's host-tools
step (apt-get, pip), so nothing here skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tinyrepo

from forge import daemon, repro
from forge.checks import elf, macho, tree

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """A snapshot of the sources forge builds (as repro takes one), sharing this checkout's
    compiler (and zig) cache, in a directory the container's build user can read."""
    top = tinyrepo.readable_dir("cross-")
    dest = repro.snapshot_sources(REPO, top / "repo")
    cache = REPO / ".cache" / "forge" / "ccache"
    cache.mkdir(parents=True, exist_ok=True)
    (dest / ".cache" / "forge").mkdir(parents=True)
    (dest / ".cache" / "forge" / "ccache").symlink_to(cache)
    yield dest
    shutil.rmtree(top, ignore_errors=True)


def build(
    root: Path, target: str, backend: str = "local"
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    env = {**os.environ, "FORGE_ROOT": str(root), "SOURCE_DATE_EPOCH": "1700000000"}
    plan = subprocess.run(
        [sys.executable, "-m", "invoke", "plan", "--target", target, "--backend", backend, "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert plan.returncode == 0, plan.stdout[-2000:] + plan.stderr[-2000:]
    cell_id = json.loads(plan.stdout)["cells"][0]["id"]
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--target", target, "--backend", backend],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    dist = root / "dist" / cell_id
    data = json.loads((dist / "manifest.json").read_text()) if (dist / "manifest.json").is_file() else {}
    return done, data, dist


def suites(data: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["status"] for s in data["verify"]["suites"]}


def test_linux_aarch64_cross_build_runs_verify_under_qemu(root: Path) -> None:
    done, data, dist = build(root, "linux-aarch64")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert data["result"] == "passed" and data["verify"]["mode"] == "emulated (qemu-aarch64)"
    assert "emulated (qemu-aarch64)" in done.stdout  # the build summary says so
    results = suites(data)
    session = [n for n in results if n.startswith("session_")]
    assert session and all(results[n] == "passed" for n in session), results
    for check in ("elf:arch", "parity:headers", "parity:symbols", "parity:verify"):
        assert results[check] == "passed", (check, results[check])
    assert data["verify"]["reference"].startswith("linux-x86_64-")
    libs = tree.shared_libraries(dist / "install")
    assert set(libs) >= {"ember_framework", "ember_cc"}
    assert {elf.read_elf(p).machine for p in libs.values()} == {"aarch64"}
    assert (dist / "logs" / "emulator.log").read_text().strip(), "the emulator probe printed nothing"


@pytest.mark.docker
def test_macos_arm64_docker_build_is_checked_not_run(root: Path) -> None:
    daemon.ensure_daemon(os.environ)  # fails loudly, saying how to start one, when no engine can be had
    done, data, dist = build(root, "macos-arm64", "docker")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert data["result"] == "passed" and data["verify"]["mode"] == "built and checked, not run"
    assert "built and checked, not run" in done.stdout
    results = suites(data)
    expected = ("macho:arch", "macho:minos", "macho:install-names", "macho:static-libs", "macho:consumer")
    for check in (*expected, "package", "parity:headers", "parity:symbols"):
        assert results[check] == "passed", (check, results[check])
    assert not any(n.startswith("session_") for n in results), "macOS binaries cannot run here"
    libs = tree.shared_libraries(dist / "install")
    framework = macho.read_macho(libs["ember_framework"])
    assert (framework.arch, framework.minos) == ("arm64", "13.0")
    assert framework.install_name == "@rpath/libember_framework.0.dylib"
    assert "@rpath/libember_framework.0.dylib" in macho.read_macho(libs["ember_cc"]).dylibs
    assert data["image"]["tag"].startswith("forge/toolchain:bookworm-gcc12-py3.11-np2.4-zig-")
    assert data["container_versions"]["cxx"], "the image's compiler was not probed"
    assert data["verify"]["reference"].startswith("linux-x86_64-")
