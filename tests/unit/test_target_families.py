"""Target families as strategies (forge/targets/): every target of toolchains/targets.yaml maps to
one family (native, qemu, zig), each family answers the same questions (tools, image extras,
compiler probe, how the verify suites run, artifact checks, wheel and Bazel refusals), the stages
ask the family instead of branching, and a Linux architecture added as data (riscv64, here from a
YAML entry in tmp_path) is handled by the qemu family with no Python change."""

from __future__ import annotations

import shutil
import struct
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest
from test_layers import import_graph

from forge import bazel, host, images, wheel
from forge.backends.base import Workspace
from forge.errors import ConfigError
from forge.matrix import Cell
from forge.plan import BuildOptions, StepKind, plan_build
from forge.targets import cross, native, qemu, zig
from forge.targets.base import ImageExtras, ToolNeed
from forge.targets.family import FAMILIES, family_for
from forge.toolchains import Checker, Target, Toolchains, load_toolchains
from forge.verify import SuiteStatus

REPO = Path(__file__).resolve().parents[2]
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True, debug_info=True)
WS = Workspace(
    PurePosixPath("/src"), PurePosixPath("/b"), PurePosixPath("/s"), PurePosixPath("/vb"), PurePosixPath("/cc")
)
EXPECTED = {
    "host": "native",
    "linux-x86_64": "native",
    "linux-aarch64": "qemu",
    "linux-armv7": "qemu",
    "macos-x86_64": "zig",
    "macos-arm64": "zig",
}


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def cell(target: str, gcc: str | None = "12") -> Cell:
    return Cell(target, "bookworm", "3.11", "2.4", gcc, None, "3.25", None)


def test_every_target_maps_to_one_family(toolchains: Toolchains) -> None:
    assert set(FAMILIES) == set(Checker), "one family per checker value"
    assert {name: family_for(t).name for name, t in toolchains.targets.items()} == EXPECTED


def test_native_runs_the_suites_as_built(toolchains: Toolchains) -> None:
    host_target, x86 = toolchains.targets["host"], toolchains.targets["linux-x86_64"]
    tests = native.NATIVE.test_run(x86)
    assert (tests.runs, tests.how, tests.mode, tests.probe) == (True, "natively", "native", ())
    assert native.NATIVE.compiler_probe(cell("host"), host_target, "x86_64") == ["c++", "--version"]
    assert native.NATIVE.compiler_probe(cell("linux-x86_64"), x86, "x86_64") == ["g++-12", "--version"]
    assert native.NATIVE.compiler_probe(cell("linux-x86_64"), x86, "aarch64") == [
        "x86_64-linux-gnu-g++-12",
        "--version",
    ]
    assert native.NATIVE.compiler(cell("host"), host_target) is None  # whatever c++ the machine has
    compiler = native.NATIVE.compiler(cell("linux-x86_64"), x86)
    assert compiler is not None and compiler.install == "apt-get install g++-12"
    assert native.NATIVE.image_extras(cell("linux-x86_64"), x86) == ImageExtras()
    assert native.NATIVE.host_tools(cell("linux-x86_64"), x86) == ()
    assert native.NATIVE.wheel_refusal(x86) is None and native.NATIVE.bazel_refusal(x86) is None
    assert native.NATIVE.uses_gcc and native.NATIVE.debug_info


def test_qemu_runs_the_suites_under_the_emulator(toolchains: Toolchains) -> None:
    arm = toolchains.targets["linux-armv7"]
    tests = qemu.QEMU.test_run(arm)
    assert tests.runs and tests.how == "under qemu-user" and tests.mode == "emulated (qemu-arm)"
    assert tests.probe == ("qemu-arm", "-L", "/usr/arm-linux-gnueabihf", "/usr/arm-linux-gnueabihf/lib/libc.so.6")
    assert "qemu-user" in tests.probe_fix and "/usr/arm-linux-gnueabihf" in tests.probe_fix
    assert qemu.QEMU.compiler_probe(cell("linux-armv7"), arm, "x86_64") == ["arm-linux-gnueabihf-g++-12", "--version"]
    assert qemu.QEMU.image_extras(cell("linux-armv7"), arm) == ImageExtras(
        cross=("g++-12-arm-linux-gnueabihf", "qemu-user"), arch="armv7"
    )
    assert qemu.QEMU.host_tools(cell("linux-armv7"), arm) == (
        ToolNeed("arm-linux-gnueabihf-g++-12", "g++-12-arm-linux-gnueabihf"),
        ToolNeed("qemu-user"),
    )
    assert host.tool("qemu-user").apt == qemu.EMULATOR_PACKAGE  # the table entry the tool need names
    refusal = qemu.QEMU.wheel_refusal(arm)
    assert refusal is not None and refusal.startswith("no armv7 wheel yet")
    assert "native Linux only" in (qemu.QEMU.bazel_refusal(arm) or "")
    assert qemu.QEMU.uses_gcc and qemu.QEMU.debug_info


def test_a_qemu_target_with_a_debian_arch_gets_its_python_and_a_wheel(toolchains: Toolchains) -> None:
    arm64 = toolchains.targets["linux-aarch64"]
    assert arm64.debian_arch == "arm64"
    assert qemu.QEMU.image_extras(cell("linux-aarch64"), arm64) == ImageExtras(
        cross=("g++-12-aarch64-linux-gnu", "qemu-user"),
        arch="aarch64",
        dpkg_arch="arm64",
        foreign=("libpython3.11-dev:arm64",),
        multiarch="aarch64-linux-gnu",
    )
    assert qemu.QEMU.wheel_refusal(arm64) is None
    spec = images.ToolchainSpec.from_cell(cell("linux-aarch64"), target=arm64)
    assert spec.family == "debian-multiarch" and spec.name.endswith("-aarch64")
    assert "libpython3.11-dev:arm64" not in spec.apt_packages()  # a layer of its own, after debian.Dockerfile's
    args = images.toolchain_args(spec, "base")
    assert (args["DPKG_ARCH"], args["FOREIGN_PACKAGES"]) == ("arm64", "libpython3.11-dev:arm64")
    assert args["MULTIARCH"] == "aarch64-linux-gnu"
    for template in ("debian-multiarch.Dockerfile", "debian-multiarch-offline.Dockerfile"):
        images.render_dockerfile((REPO / "dockerfiles" / template).read_text(), args, template)  # every arg used
    native_args = images.toolchain_args(images.ToolchainSpec.from_cell(cell("linux-x86_64"), target=None), "base")
    assert "DPKG_ARCH" not in native_args


def test_the_multiarch_template_starts_as_the_debian_one() -> None:
    """Its instructions before the multiarch layer are debian.Dockerfile's: the engine's layer cache shares them."""

    def instructions(name: str) -> list[str]:
        text = (REPO / "dockerfiles" / name).read_text()
        return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    plain, multi = instructions("debian.Dockerfile"), instructions("debian-multiarch.Dockerfile")
    layer = multi.index("RUN dpkg --add-architecture @DPKG_ARCH@ \\")
    assert multi[:layer] == plain[:layer] and multi[layer + 5 :] == plain[layer:]
    assert multi[layer + 4] == " && ln -s . /usr/@MULTIARCH@/lib/@MULTIARCH@"


def test_zig_checks_macos_binaries_and_says_why_they_do_not_run(toolchains: Toolchains) -> None:
    mac = toolchains.targets["macos-arm64"]
    tests = zig.ZIG.test_run(mac)
    assert not tests.runs and tests.mode == "built and checked, not run" and tests.probe == ()
    assert "cannot run" in tests.why_not and "Mach-O" in tests.how
    assert not zig.ZIG.uses_gcc and not zig.ZIG.debug_info
    assert zig.ZIG.compiler_probe(cell("macos-arm64", None), mac, "x86_64") == ["python3", "-m", "ziglang", "version"]
    compiler = zig.ZIG.compiler(cell("macos-arm64", None), mac)
    assert compiler is not None and compiler.install == "pip install ziglang==0.15.1"
    assert zig.ZIG.image_extras(cell("macos-arm64", None), mac) == ImageExtras(
        pip=("ziglang==0.15.1",), arch="zig", suite_gcc=True
    )
    assert zig.ZIG.host_tools(cell("macos-arm64", None), mac) == (ToolNeed("zig"),)
    assert dict(zig.ZIG.compiler_env("/cc"))["ZIG_GLOBAL_CACHE_DIR"] == "/cc/zig"
    assert zig.ZIG.compiler_env(None) == ()
    assert (zig.ZIG.wheel_refusal(mac) or "").startswith("no macOS wheel")
    assert "native Linux only" in (zig.ZIG.bazel_refusal(mac) or "")


def _elf64(machine: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, machine, 1, 0, 0, 0, 0, 64, 0, 0, 64, 0, 0)


def test_artifact_checks_read_the_families_formats(toolchains: Toolchains, tmp_path: Path) -> None:
    aarch64 = toolchains.targets["linux-aarch64"]
    lib = tmp_path / "install" / "lib" / "libember_framework.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(_elf64(0xB7))
    [check] = family_for(aarch64).artifact_checks(aarch64, tmp_path / "install", None)
    assert (check.name, check.status) == ("elf:arch", SuiteStatus.PASSED)
    lib.write_bytes(_elf64(0x3E))
    [check] = family_for(aarch64).artifact_checks(aarch64, tmp_path / "install", None)
    assert check.status is SuiteStatus.FAILED and "is x86_64, not aarch64" in check.detail
    mac = toolchains.targets["macos-x86_64"]
    results = {r.name: r for r in family_for(mac).artifact_checks(mac, tmp_path / "install", tmp_path / "vb")}
    assert results["macho:arch"].status is SuiteStatus.FAILED and "not Mach-O" in results["macho:arch"].detail
    assert "macho:consumer" in results and "macho:minos" in results


def test_the_stages_ask_the_family(toolchains: Toolchains) -> None:
    """What plan, images, wheel, bazel and cross do for each target is what its family answers."""
    python_range = wheel.requires_python(REPO / "engine" / "python" / "pyproject.toml")
    for name, target in toolchains.targets.items():
        family = family_for(target)
        c = cell(name, "12" if family.uses_gcc else None)
        tests = family.test_run(target)
        plan = plan_build(c, target, WS, "docker", OPTS)
        steps = {s.name: s for s in plan.steps}
        run = steps["verify-run"]
        assert run.kind is (StepKind.CTEST if tests.runs else StepKind.MACHO), name
        assert run.description.endswith(tests.how), name
        assert ("emulator" in steps) == bool(tests.probe), name
        if tests.probe:
            assert steps["emulator"].argv == tests.probe
        assert ("debuginfo-build" in steps) == family.debug_info, name
        assert set(family.compiler_env("/cc")) <= set(steps["configure"].env), name
        assert cross.verify_mode(target) == tests.mode
        if name != "host":  # the host target's image is the local backend's (no toolchain spec)
            spec = images.ToolchainSpec.from_cell(c, target=target)
            extras = family.image_extras(c, target)
            assert (spec.cross, spec.arch) == (extras.cross, extras.arch), name
            assert (spec.dpkg_arch, spec.foreign, spec.multiarch) == (
                extras.dpkg_arch,
                extras.foreign,
                extras.multiarch,
            )
            assert spec.family == ("debian-multiarch" if target.debian_arch else spec.family), name
            assert set(extras.pip) <= set(spec.pip), name
        refusal = family.wheel_refusal(target)
        assert refusal is None or wheel.wheel_refusal(c, target, python_range) == refusal, name
        assert (family.bazel_refusal(target) is None) == (bazel.violations(c, target) == []), name


def test_a_target_whose_data_does_not_fit_its_family_is_refused(toolchains: Toolchains) -> None:
    arm = toolchains.targets["linux-aarch64"]
    with pytest.raises(ConfigError) as info:
        family_for(replace(arm, emulator=None))
    assert "linux-aarch64" in info.value.what and "emulator" in (info.value.why or "")
    mac = toolchains.targets["macos-arm64"]
    with pytest.raises(ConfigError, match="not a valid zig target"):
        family_for(replace(mac, min_os=None))
    with pytest.raises(ConfigError, match="not a valid native target"):
        family_for(replace(arm, checker=Checker.RUN))  # a run target with an emulator


from test_targets_data import RISCV  # noqa: E402  (the same riscv64 entry the data test adds)


def test_a_linux_architecture_is_data_the_qemu_family_handles(tmp_path: Path) -> None:
    """riscv64 as a targets.yaml entry (no Python change): the qemu family answers for it from its data."""
    root = tmp_path / "toolchains"
    shutil.copytree(REPO / "toolchains", root, ignore=shutil.ignore_patterns("locks", "cmake", "bazel", "cuda"))
    (root / "targets.yaml").write_text((root / "targets.yaml").read_text().rstrip("\n") + "\n" + RISCV)
    target: Target = load_toolchains(root).targets["linux-riscv64"]
    family = family_for(target)
    assert family is qemu.QEMU
    c = cell("linux-riscv64")
    tests = family.test_run(target)
    assert tests.probe == ("qemu-riscv64", "-L", "/usr/riscv64-linux-gnu", "/usr/riscv64-linux-gnu/lib/libc.so.6")
    assert tests.mode == "emulated (qemu-riscv64)"
    assert family.image_extras(c, target) == ImageExtras(
        cross=("g++-12-riscv64-linux-gnu", "qemu-user"), arch="riscv64"
    )
    assert family.compiler_probe(c, target, "x86_64") == ["riscv64-linux-gnu-g++-12", "--version"]
    assert (family.wheel_refusal(target) or "").startswith("no riscv64 wheel yet")
    plan = plan_build(c, target, WS, "docker", OPTS)
    names = [s.name for s in plan.steps]
    assert names.index("emulator") == names.index("verify-run") - 1
    lib = tmp_path / "install" / "lib" / "libember_cc.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(_elf64(0xF3))
    [check] = family.artifact_checks(target, tmp_path / "install", None)
    assert check.status is SuiteStatus.PASSED


def test_families_are_leaves_of_the_import_graph() -> None:
    """forge/targets' families import data and checks only: the stages import them, never the reverse."""
    graph = import_graph()
    allowed = {"forge.toolchains", "forge.matrix", "forge.errors", "forge.verify", "forge.checks", "forge.targets"}
    for module in ("base", "native", "qemu", "zig", "family"):
        edges = graph[f"forge.targets.{module}"]
        stray = [m for m in edges if not any(m == a or m.startswith(a + ".") for a in allowed)]
        assert not stray, f"forge.targets.{module} imports {stray}"
        assert "forge.targets.cross" not in edges
