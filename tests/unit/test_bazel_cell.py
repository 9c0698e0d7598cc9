"""Bazel cells: the -bzX.Y.Z id, the supported window, the plan's Bazel steps, the image's
bazel-bootstrap, the version check, Bazel's cache-hit line and the installer of Bazel's outputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest
from packaging.specifiers import SpecifierSet

from forge import bazel, bazel_install, images, provenance
from forge.backends.base import CONTAINER_WORKSPACE
from forge.errors import ConfigError, InfeasibleError, StepFailedError, ToolMissingError
from forge.matrix import Request, Supported, expand_matrix, load_supported, request_for_cell_id
from forge.plan import BuildOptions, StepKind, plan_build
from forge.resolve import resolve
from forge.toolchains import Toolchains, load_toolchains

REPO = Path(__file__).resolve().parents[2]
BAZEL_CELL = "linux-x86_64-py3.11-np2.4-gcc12-bz4.2.3-cpu"


@pytest.fixture(scope="module")
def data() -> tuple[Toolchains, Supported]:
    return load_toolchains(REPO / "toolchains"), load_supported(REPO / "matrix" / "supported.yaml")


def test_a_bazel_pin_builds_with_the_suites_bazel_and_names_it(data: tuple[Toolchains, Supported]) -> None:
    resolution = resolve(Request.make("linux-x86_64", {"bazel": "4.2.3"}), *data)
    assert resolution.cell.id == BAZEL_CELL
    assert (resolution.cell.suite, resolution.cell.bazel) == ("bookworm", "4.2.3")
    assert resolution.sources["bazel"] == "pinned (4.2.3)"
    old = resolve(Request.make("linux-x86_64", {"bazel": "3.5.1"}), *data).cell
    assert old.id == "linux-x86_64-py3.9-np2.0-gcc10-bz3.5.1-cpu" and old.suite == "bullseye"
    cmake = resolve(Request.make("linux-x86_64"), *data).cell
    assert cmake.bazel is None and cmake.id == "linux-x86_64-py3.11-np2.4-gcc12-cpu"


def test_a_bazel_cell_id_round_trips(data: tuple[Toolchains, Supported]) -> None:
    for cell_id in (BAZEL_CELL, "linux-x86_64-py3.9-np2.0-gcc10-bz3.5.1-cpu", "linux-x86_64-py3.11-np2.4-gcc12-cpu"):
        request = request_for_cell_id(cell_id)
        assert resolve(request, *data).cell.id == cell_id
    assert request_for_cell_id(BAZEL_CELL).pin("bazel") == "4.2.3"
    assert request_for_cell_id("linux-x86_64-py3.11-np2.4-gcc12-cpu").pin("bazel") is None
    with pytest.raises(ConfigError, match=r"bzX\.Y\.Z"):
        request_for_cell_id("linux-x86_64-py3.11-np2.4-gcc12-bz-cpu")


def test_bazel_is_refused_where_ember_has_no_bazel_build(data: tuple[Toolchains, Supported]) -> None:
    for target in ("linux-aarch64", "macos-arm64"):
        with pytest.raises(InfeasibleError) as info:
            resolve(Request.make(target, {"bazel": "4.2.3"}), *data)
        assert "native Linux only" in info.value.why
        assert "bazel" in info.value.fix and f"-> {target}-py3.11-np2.4-" in info.value.fix


def test_the_supported_window_is_enforced_with_the_nearest_feasible_cell(data: tuple[Toolchains, Supported]) -> None:
    toolchains, supported = data
    assert supported.specs["bazel"] == SpecifierSet(">=3.5,<8")
    newer = Supported({**supported.specs, "bazel": SpecifierSet(">=4,<8")}, supported.targets)
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"bazel": "3.5.1"}), toolchains, newer)
    assert "bazel 3.5.1 is outside what ember supports (bazel >=4,<8" in info.value.what
    assert "4.2.3" in info.value.why
    assert info.value.fix.splitlines() == [
        f"nearest feasible: bazel 4.2.3 -> {BAZEL_CELL}",
        f"to build it: invoke build --cell {BAZEL_CELL}",
    ]
    older = Supported({**supported.specs, "bazel": SpecifierSet("<4")}, supported.targets)
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"bazel": "4.2.3"}), toolchains, older)
    assert info.value.fix.startswith("nearest feasible: bazel 3.5.1 -> linux-x86_64-py3.9-np2.0-gcc10-bz3.5.1-cpu")
    none = Supported({**supported.specs, "bazel": SpecifierSet(">=7")}, supported.targets)
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"bazel": "4.2.3"}), toolchains, none)
    assert info.value.fix == "pick bazel >=7" and "no toolchain offers one" in info.value.why


def test_a_matrix_file_pins_bazel(tmp_path: Path, data: tuple[Toolchains, Supported]) -> None:
    path = tmp_path / "m.yaml"
    path.write_text('axes:\n  target: [linux-x86_64]\n  bazel: ["4.2.3"]\n')
    (request,) = expand_matrix(path, data[1].targets)
    assert isinstance(request, Request) and resolve(request, *data).cell.id == BAZEL_CELL


def _plan(
    cell_id: str, data: tuple[Toolchains, Supported], verify: bool = True
) -> list[tuple[str, StepKind, tuple[str, ...]]]:
    cell = resolve(request_for_cell_id(cell_id), *data).cell
    opts = BuildOptions(1700000000, verify=verify)
    plan = plan_build(cell, data[0].targets[cell.target], CONTAINER_WORKSPACE, "docker", opts)
    return [(s.name, s.kind, s.argv) for s in plan.steps]


def test_an_unchecked_bazel_build_leaves_out_bazel_test_and_verify(data: tuple[Toolchains, Supported]) -> None:
    """repro's second build of a Bazel cell: bazel build and install exactly as checked, no tests."""
    bare, full = _plan(BAZEL_CELL, data, verify=False), _plan(BAZEL_CELL, data)
    assert [name for name, _, _ in bare] == ["image", "prepare", "bazel-build", "install", "record"]
    assert bare[2:4] == full[2:4]


def test_a_bazel_cell_plans_bazel_then_cmakes_verify(data: tuple[Toolchains, Supported]) -> None:
    steps = _plan(BAZEL_CELL, data)
    assert [name for name, _, _ in steps] == [
        "image",
        "prepare",
        "bazel-build",
        "install",
        "bazel-test",
        "verify-configure",
        "verify-build",
        "verify-run",
        "record",
    ]
    build = steps[2][2]
    assert build[:2] == ("bazel", "--batch") and "build" in build
    assert "--disk_cache=/bazel-cache/disk" in build and "--symlink_prefix=/" in build
    assert f"--output_base=/bazel-cache/output-base/{BAZEL_CELL}" in build
    assert "--jobs=2" in build and "//engine:install" in build
    install = steps[3][2]
    assert install[:2] == ("python3", "/src/forge/bazel_install.py") and install[-2:] == ("--prefix", "/stage")
    test = steps[4][2]
    assert test[:2] == ("bazel", "--batch") and test[-2:] == ("--build_tests_only", "//engine/...")
    # the test step shares the build's options (another CC would configure and rebuild everything)
    assert build[build.index("build") + 1 : -len(bazel.TARGETS)] == test[test.index("test") + 1 : -2]
    assert steps[5][2][:3] == ("cmake", "-S", "/src/verify") and "-DCMAKE_PREFIX_PATH=/stage" in steps[5][2]
    cmake = _plan("linux-x86_64-py3.11-np2.4-gcc12-cpu", data)
    assert [name for name, _, _ in cmake][:5] == ["image", "prepare", "configure", "build", "install"]
    assert not any("bazel" in " ".join(argv) for _, _, argv in cmake)


def test_only_bazel_cells_images_get_bazel(data: tuple[Toolchains, Supported]) -> None:
    cmake_cell = resolve(Request.make("linux-x86_64"), *data).cell
    bazel_cell = replace(cmake_cell, bazel="4.2.3")
    cmake_spec, bazel_spec = images.ToolchainSpec.from_cell(cmake_cell), images.ToolchainSpec.from_cell(bazel_cell)
    assert bazel.PACKAGE not in cmake_spec.apt_packages() and bazel.PACKAGE in bazel_spec.apt_packages()
    assert cmake_spec.name == "bookworm-gcc12-py3.11-np2.4" and bazel_spec.name == "bookworm-gcc12-py3.11-np2.4-bz4.2.3"
    # the CMake cell's image inputs are what they were before Bazel cells: no new argument
    assert "bazel" not in images.toolchain_args(cmake_spec, "base").get("APT_PACKAGES", "")
    with pytest.raises(ConfigError, match="bazel-bootstrap"):
        images.ToolchainSpec.from_cell(replace(cmake_cell, bazel="3.5.1"))


def _outputs(answers: dict[str, str]) -> Callable[[Sequence[str]], str | None]:
    return lambda argv: answers.get(argv[0])


def test_the_version_comes_from_the_debian_package_when_bazel_has_none() -> None:
    found = bazel.probe_version(_outputs({"bazel": "bazel no_version\n", "dpkg-query": "4.2.3+ds-9"}))
    assert found == "4.2.3 (bazel-bootstrap 4.2.3+ds-9)"
    assert bazel.probe_version(_outputs({"bazel": "bazel 6.4.0\n"})) == "6.4.0 (bazel 6.4.0)"
    bullseye = _outputs({"bazel": "bazel 3.5.1- (@non-git)\n", "dpkg-query": "3.5.1+ds-3"})
    assert bazel.probe_version(bullseye) == "3.5.1 (bazel-bootstrap 3.5.1+ds-3)"
    assert (
        bazel.probe_version(_outputs({"bazel": "bazel no_version\n"}))
        == "unknown (bazel no_version; bazel-bootstrap not installed)"
    )
    assert bazel.probe_version(_outputs({})) is None
    assert bazel.upstream_version("1:3.5.1+ds-3") == "3.5.1"


def test_the_version_found_must_be_the_cells(data: tuple[Toolchains, Supported]) -> None:
    cell = resolve(Request.make("linux-x86_64", {"bazel": "4.2.3"}), *data).cell
    bazel.require_version("4.2.3 (bazel-bootstrap 4.2.3+ds-9)", cell, "docker")
    with pytest.raises(ToolMissingError, match=r"asks for Bazel 4\.2\.3"):
        bazel.require_version("3.5.1 (bazel-bootstrap 3.5.1+ds-3)", cell, "docker")
    with pytest.raises(ToolMissingError, match="no bazel in this machine"):
        bazel.require_version(None, cell, "local")
    bazel.require_version(None, replace(cell, bazel=None), "local")  # CMake cells need none


def test_bazels_process_line_gives_the_cache_hits() -> None:
    log = "INFO: Analyzed 12 targets.\nINFO: 85 processes: 81 disk cache hit, 4 internal.\nINFO: Build completed\n"
    counts = bazel.parse_processes(log, "b.log")
    assert (counts.total, counts.cache_hits, counts.executed) == (85, 81, 0)
    old = bazel.parse_processes("INFO: 193 processes: 3 remote cache hit, 190 processwrapper-sandbox.\n", "b.log")
    assert (old.cache_hits, old.executed) == (3, 190)
    assert bazel.parse_processes("INFO: 1 process: 1 internal.\n", "b.log").executed == 0
    assert bazel.parse_processes("INFO: 0 processes.\n", "b.log").total == 0
    for bad in ("INFO: Build completed\n", "INFO: 5 processes: 3 disk cache hit, 1 internal.\n"):
        with pytest.raises(StepFailedError):
            bazel.parse_processes(bad, "b.log")
    with pytest.raises(StepFailedError, match="cannot read"):
        bazel.parse_processes("INFO: 5 processes: 5 disk cache hit; 2 x.\n", "b.log")


def _fake_output_base(root: Path, extra: str = "") -> Path:
    """An output base as `bazel build //engine:install` leaves it (libraries as tiny ELF stubs)."""
    bin_dir = root / "execroot" / "ember" / "bazel-out" / "k8-opt" / "bin"
    tree = bin_dir / "engine" / "install"
    listed = ["include/ember/session.h", "bin/ember-run"]
    (tree / "include" / "ember").mkdir(parents=True)
    (tree / "include" / "ember" / "session.h").write_text("#pragma once\n")
    (tree / "bin").mkdir()
    (tree / "bin" / "ember-run").write_bytes(b"\x7fELF\x02tool")
    (tree / "lib").mkdir()
    for name in ("framework", "cc", "lite"):
        (tree / "lib" / f"libember_{name}.so.0.1.0").write_bytes(b"\x7fELF\x02\x01\x01")
        (tree / "lib" / f"libember_{name}.so.0").symlink_to(f"libember_{name}.so.0.1.0")
        (tree / "lib" / f"libember_{name}.so").symlink_to(f"libember_{name}.so.0")
        listed += [f"lib/libember_{name}.so{suffix}" for suffix in ("", ".0", ".0.1.0")]
        (tree / "lib" / f"libember_{name}.a").write_bytes(b"!<arch>\n")
        listed.append(f"lib/libember_{name}.a")
    (bin_dir / "engine" / "install.manifest").write_text("\n".join(sorted(listed + [extra] * bool(extra))) + "\n")
    return root


def test_bazels_outputs_install_as_cmakes_layout_with_package_files(tmp_path: Path) -> None:
    output_base = _fake_output_base(tmp_path / "ob")
    prefix = tmp_path / "stage"
    (prefix / "stale").mkdir(parents=True)
    assert bazel_install.main(["--output-base", str(output_base), "--source", str(REPO), "--prefix", str(prefix)]) == 0
    assert not (prefix / "stale").exists() and not list(prefix.glob(".bazel-install-*"))
    assert (prefix / "lib" / "libember_cc.so").readlink() == Path("libember_cc.so.0")
    targets = (prefix / "lib" / "cmake" / "ember" / "emberTargets.cmake").read_text()
    assert 'IMPORTED_LOCATION "${_IMPORT_PREFIX}/lib/libember_cc.so.0.1.0"' in targets
    assert 'IMPORTED_SONAME "libember_cc.so.0"' in targets and '"Threads::Threads;ember::framework"' in targets
    # the static archives, as CMake exports ember_<name>_static: ember::cc_static links framework_static
    assert (prefix / "lib" / "libember_cc.a").read_bytes() == b"!<arch>\n"
    assert oct((prefix / "lib" / "libember_cc.a").stat().st_mode & 0o777) == "0o644"
    assert "add_library(ember::cc_static STATIC IMPORTED)" in targets
    assert 'IMPORTED_LOCATION "${_IMPORT_PREFIX}/lib/libember_framework.a"' in targets
    assert '"Threads::Threads;ember::framework_static"' in targets
    assert "foreach(_ember_target ember::framework ember::cc ember::lite ember::framework_static" in targets
    config = (prefix / "lib" / "cmake" / "ember" / "ember-config.cmake").read_text()
    assert "@" not in config and 'include("${CMAKE_CURRENT_LIST_DIR}/emberTargets.cmake")' in config
    version = (prefix / "lib" / "cmake" / "ember" / "ember-config-version.cmake").read_text()
    assert 'set(PACKAGE_VERSION "0.1.0")' in version and 'STREQUAL "8"' in version
    pc = (prefix / "lib" / "pkgconfig" / "ember_cc.pc").read_text()
    assert "prefix=${pcfiledir}/../..\n" in pc and "Version: 0.1.0" in pc and "@" not in pc
    assert sorted(p.name for p in (prefix / "lib" / "pkgconfig").iterdir()) == [
        "ember_cc.pc",
        "ember_framework.pc",
        "ember_lite.pc",
    ]


def test_the_installer_refuses_paths_that_leave_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output_base = _fake_output_base(tmp_path / "ob", extra="../etc/passwd")
    prefix = tmp_path / "stage"
    assert bazel_install.main(["--output-base", str(output_base), "--source", str(REPO), "--prefix", str(prefix)]) == 1
    assert "not a path under include/, lib/ or bin/" in capsys.readouterr().err
    assert not (prefix / "lib").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert bazel_install.main(["--output-base", str(empty), "--source", str(REPO), "--prefix", str(prefix)]) == 1
    assert "expected one configuration" in capsys.readouterr().err


def test_a_rebuild_of_a_bazel_cell_pins_bazel(data: tuple[Toolchains, Supported]) -> None:
    cell = resolve(Request.make("linux-x86_64", {"bazel": "4.2.3"}), *data).cell
    request = provenance.rebuild_request(cell)
    assert request.pin("bazel") == "4.2.3" and resolve(request, *data).cell == cell
    assert provenance.rebuild_request(replace(cell, bazel=None)).pin("bazel") is None


def test_the_bazel_cache_lives_in_a_volume_named_like_ccaches() -> None:
    from forge.backends import docker as backend

    assert (
        backend.bazel_volume("bookworm-gcc12-py3.11-np2.4-bz4.2.3") == "forge-bazel-bookworm-gcc12-py3.11-np2.4-bz4.2.3"
    )
    assert CONTAINER_WORKSPACE.bazel_cache == PurePosixPath("/bazel-cache")


def test_manifests_from_before_bazel_cells_read_as_cmake_cells() -> None:
    cell: dict[str, str | None] = {"id": "host-py3.11-np2.4-gcc12-cpu", "target": "host", "python": "3.11"}
    cell |= {"numpy": "2.4", "gcc": "12", "cuda": None, "suite": "bookworm", "cmake": "3.25"}
    manifest = {
        "backend": "docker",
        "source_tree_hash": "ab" * 32,
        "source_date_epoch": 1700000000,
        "input_hash": "d" * 64,
        "files": {},
    }
    legacy = provenance.parse_recorded({**manifest, "cell": {**cell, "bazel": "4.2.3"}}, "m.json")
    assert legacy.cell.bazel is None and legacy.cell.id == "host-py3.11-np2.4-gcc12-cpu"
    built = {**cell, "bazel": "4.2.3", "id": "host-py3.11-np2.4-gcc12-bz4.2.3-cpu"}
    assert provenance.parse_recorded({**manifest, "cell": built}, "m.json").cell.bazel == "4.2.3"


def test_a_repro_snapshot_holds_what_a_bazel_build_reads(tmp_path: Path) -> None:
    from forge import repro

    snapshot = repro.snapshot_sources(REPO, tmp_path / "snap")
    for part in bazel.SOURCE_PATHS:
        assert (snapshot / part).exists(), part
    assert (snapshot / "WORKSPACE").read_bytes() == (REPO / "WORKSPACE").read_bytes()
