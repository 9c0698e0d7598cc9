"""A Linux architecture is data: a toolchains/targets.yaml entry, its name in matrix/supported.yaml
and a CMake toolchain file. A fake riscv64 target added that way (no Python change) resolves,
plans (toolchain file, emulator), gets its image's cross packages, its emulator probe and its
ELF machine check, all from the data."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from forge import build, images
from forge.config import Config, load_data
from forge.matrix import Request
from forge.resolve import resolve
from forge.targets import cross, qemu
from forge.verify import SuiteStatus

REPO = Path(__file__).resolve().parents[2]

RISCV = """
  linux-riscv64:
    triple: riscv64-linux-gnu
    os: linux
    arch: riscv64
    compiler: {provider: debian, package: "g++-{gcc}-riscv64-linux-gnu"}
    toolchain_file: toolchains/cmake/riscv64-linux-gnu.cmake
    emulator: qemu-riscv64 -L /usr/riscv64-linux-gnu
    checker: qemu
    cuda: false
    elf_machine: 0xF3
    dynamic_loader: ld-linux-riscv64-lp64d.so.1
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the repository's data with the riscv64 entry, its supported target and toolchain file."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "toolchains", root / "toolchains", ignore=shutil.ignore_patterns("locks"))
    (root / "matrix").mkdir()
    supported = (REPO / "matrix" / "supported.yaml").read_text()
    (root / "matrix" / "supported.yaml").write_text(supported.replace("linux-armv7,", "linux-armv7, linux-riscv64,"))
    targets = root / "toolchains" / "targets.yaml"
    targets.write_text(targets.read_text().rstrip("\n") + "\n" + RISCV)
    (root / "toolchains" / "cmake" / "riscv64-linux-gnu.cmake").write_text("set(CMAKE_SYSTEM_PROCESSOR riscv64)\n")
    return root


def _elf64(machine: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, machine, 1, 0, 0, 0, 0, 64, 0, 0, 64, 0, 0)


def test_a_riscv64_target_is_data_plus_a_toolchain_file(repo: Path, tmp_path: Path) -> None:
    data = load_data(repo)
    target = data.toolchains.targets["linux-riscv64"]
    cell = resolve(Request.make("linux-riscv64", {"gcc": "12"}), data.toolchains, data.supported).cell
    assert cell.id.startswith("linux-riscv64-py") and cell.id.endswith("-gcc12-cpu")

    cfg = Config(repo, repo / "dist", tmp_path / "cache", "docker", 2, True, False, 1700000000, False, False, False)
    plan = build.plan_cell(cell, target, cfg, build.expected_workspace(cfg, cell), "docker", ccache_found=True)
    configure = next(s for s in plan.steps if s.name == "configure")
    assert "-DCMAKE_TOOLCHAIN_FILE=/src/toolchains/cmake/riscv64-linux-gnu.cmake" in configure.argv
    assert any("qemu-user" in s.description for s in plan.steps if s.name == "verify-run")

    spec = images.ToolchainSpec.from_cell(cell, target=target)
    assert spec.cross == ("g++-12-riscv64-linux-gnu", "qemu-user") and spec.arch == "riscv64"
    assert [t.apt for t in cross.target_tools(cell, target)] == ["g++-12-riscv64-linux-gnu", "qemu-user"]
    assert qemu.emulator_probe(target) == [
        "qemu-riscv64",
        "-L",
        "/usr/riscv64-linux-gnu",
        "/usr/riscv64-linux-gnu/lib/libc.so.6",
    ]
    assert cross.verify_mode(target) == "emulated (qemu-riscv64)"

    prefix = tmp_path / "install"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "libember_framework.so").write_bytes(_elf64(0xF3))
    results = {r.name: r for r in cross.parity_checks(target, prefix, [], None)}
    assert results["elf:arch"].status is SuiteStatus.PASSED
    (prefix / "lib" / "libember_framework.so").write_bytes(_elf64(0xB7))  # an aarch64 library: caught
    results = {r.name: r for r in cross.parity_checks(target, prefix, [], None)}
    assert (
        results["elf:arch"].status is SuiteStatus.FAILED
        and "is aarch64, not machine 0xf3" in results["elf:arch"].detail
    )


def test_per_architecture_facts_come_from_targets_yaml() -> None:
    targets = load_data(REPO).toolchains.targets
    assert (targets["linux-aarch64"].elf_machine, targets["linux-aarch64"].dynamic_loader) == (
        0xB7,
        "ld-linux-aarch64.so.1",
    )
    assert (targets["linux-armv7"].elf_machine, targets["linux-armv7"].hard_float) == (0x28, True)
    assert qemu.emulator_probe(targets["linux-armv7"])[3] == "/usr/arm-linux-gnueabihf/lib/libc.so.6"
