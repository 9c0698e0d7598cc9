"""Pure step planning: asserted on the plan alone, nothing runs."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from forge.backends.base import CONTAINER_WORKSPACE, Workspace
from forge.matrix import Cell
from forge.plan import BuildOptions, StepKind, plan_build
from forge.toolchains import Toolchains, load_toolchains

REPO = Path(__file__).resolve().parents[2]
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True)


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def cell(target: str, gcc: str | None = "12", cuda: str | None = None) -> Cell:
    return Cell(target, "bookworm", "3.11", "2.4", gcc, cuda, "3.25", None)


def test_host_plan_steps_in_order(toolchains: Toolchains) -> None:
    ws = Workspace(
        PurePosixPath("/repo"),
        PurePosixPath("/c/build"),
        PurePosixPath("/c/stage"),
        PurePosixPath("/c/vb"),
        PurePosixPath("/c/ccache"),
    )
    plan = plan_build(cell("host"), toolchains.targets["host"], ws, "local", OPTS)
    names = [s.name for s in plan.steps]
    assert names == [
        "prepare",
        "configure",
        "build",
        "install",
        "engine-tests",
        "verify-configure",
        "verify-build",
        "verify-run",
        "record",
    ]
    configure = plan.steps[1].argv
    assert configure[:7] == ("cmake", "-S", "/repo/engine", "-B", "/c/build", "-G", "Ninja")
    assert "-DCMAKE_INSTALL_PREFIX=/c/stage" in configure
    assert "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" in configure
    assert any(a.startswith("-DCMAKE_CXX_FLAGS=-ffile-prefix-map=/repo=.") for a in configure)
    assert not any("TOOLCHAIN_FILE" in a for a in configure)
    env = dict(plan.steps[1].env)
    assert env["SOURCE_DATE_EPOCH"] == "1700000000" and env["CCACHE_DIR"] == "/c/ccache"
    assert "-DEMBER_BUILD_TESTS=ON" in configure  # every engine test built is run, by the next step
    assert plan.steps[4].kind is StepKind.CTEST and plan.steps[4].cwd == PurePosixPath("/c/build")
    verify_configure = plan.steps[5].argv
    assert "-DCMAKE_PREFIX_PATH=/c/stage" in verify_configure and "/repo/verify" in verify_configure
    assert plan.steps[7].kind is StepKind.CTEST and plan.steps[7].cwd == PurePosixPath("/c/vb")


def test_cross_plan_uses_toolchain_file_and_container_paths(toolchains: Toolchains) -> None:
    plan = plan_build(cell("linux-aarch64"), toolchains.targets["linux-aarch64"], CONTAINER_WORKSPACE, "docker", OPTS)
    configure = next(s for s in plan.steps if s.name == "configure").argv
    assert "-DCMAKE_TOOLCHAIN_FILE=/src/toolchains/cmake/aarch64-linux-gnu.cmake" in configure
    assert "-DEMBER_GCC_VERSION=12" in configure
    assert "-DCMAKE_INSTALL_PREFIX=/stage" in configure
    steps = {s.name: s for s in plan.steps}
    assert "-DEMBER_BUILD_TESTS=OFF" in configure and "engine-tests" not in steps  # built only where run
    assert steps["verify-run"].description.endswith("under qemu-user")
    assert "-DCMAKE_TOOLCHAIN_FILE=/src/toolchains/cmake/aarch64-linux-gnu.cmake" in steps["verify-configure"].argv


def test_macos_plan_checks_macho_instead_of_running(toolchains: Toolchains) -> None:
    plan = plan_build(
        cell("macos-arm64", gcc=None), toolchains.targets["macos-arm64"], CONTAINER_WORKSPACE, "docker", OPTS
    )
    run = next(s for s in plan.steps if s.name == "verify-run")
    assert run.kind is StepKind.MACHO and run.argv == ()
    assert not any("EMBER_GCC_VERSION" in a for a in next(s for s in plan.steps if s.name == "configure").argv)


def test_cuda_and_no_ccache(toolchains: Toolchains) -> None:
    opts = BuildOptions(source_date_epoch=0, ccache=False)
    plan = plan_build(
        cell("linux-x86_64", "11", "11.8"), toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", opts
    )
    configure = next(s for s in plan.steps if s.name == "configure").argv
    assert "-DEMBER_CUDA=ON" in configure
    assert not any("LAUNCHER" in a for a in configure)
    assert "CCACHE_DIR" not in dict(next(s for s in plan.steps if s.name == "configure").env)


def test_plan_is_json_ready(toolchains: Toolchains) -> None:
    data = plan_build(cell("host"), toolchains.targets["host"], CONTAINER_WORKSPACE, "docker", OPTS).as_dict()
    assert data["cell"] == {**cell("host").as_dict(), "id": "host-py3.11-np2.4-gcc12-cpu"}
    assert data["steps"][3]["argv"] == ["cmake", "--build", "/build", "-j", "2"]


def test_the_image_is_the_docker_plans_first_step(toolchains: Toolchains) -> None:
    ws = Workspace(PurePosixPath("/src"), PurePosixPath("/build"), PurePosixPath("/stage"), PurePosixPath("/vb"))
    docker = plan_build(cell("host"), toolchains.targets["host"], ws, "docker", OPTS)
    assert [(s.name, s.kind) for s in docker.steps[:2]] == [("image", StepKind.IMAGE), ("prepare", StepKind.PREPARE)]
    assert not docker.steps[0].argv and "toolchains/locks/" in docker.steps[0].description
    local = plan_build(cell("host"), toolchains.targets["host"], ws, "local", OPTS)
    assert all(s.kind is not StepKind.IMAGE for s in local.steps)  # the host's toolchain: no image
    assert [s.name for s in docker.steps[1:]] == [s.name for s in local.steps]


def test_an_unchecked_build_makes_the_same_tree_and_runs_no_checks(toolchains: Toolchains) -> None:
    """repro's second build (Config.verify False): every step that makes the installed tree, the
    package or the wheel, configured exactly as a verifying build; no check and no -g build."""
    full = BuildOptions(source_date_epoch=1700000000, wheels=True, debug_info=True)
    bare = BuildOptions(source_date_epoch=1700000000, wheels=True, verify=False)
    checks = {
        "engine-tests",
        "verify-configure",
        "verify-build",
        "emulator",
        "verify-run",
        "wheel-verify",
        "wheel-grid",
    }
    for target in ("host", "linux-x86_64", "linux-aarch64", "macos-arm64"):
        made = {
            s.name: s
            for s in plan_build(cell(target), toolchains.targets[target], CONTAINER_WORKSPACE, "docker", full).steps
        }
        kept = {
            s.name: s
            for s in plan_build(cell(target), toolchains.targets[target], CONTAINER_WORKSPACE, "docker", bare).steps
        }
        assert checks & set(made) and not checks & set(kept), target
        assert not any(name.startswith("debuginfo-") for name in kept), target
        assert set(kept) == set(made) - checks - {n for n in made if n.startswith("debuginfo-")}, target
        for name, step in kept.items():  # the steps that remain are the verifying build's, argument for argument
            assert step == made[name], (target, name)
        if target in ("linux-x86_64", "linux-aarch64"):  # the wheel is compared, so it is built
            assert {"wheel-build", "wheel-repair"} <= set(kept), target
