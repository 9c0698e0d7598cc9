"""ember's wheel per cell: the NumPy range rule, refusals, the grid's series, the wheelhouse lock
and the plan steps, asserted on data alone (nothing is built or downloaded)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from forge import wheel
from forge.backends.base import CONTAINER_WORKSPACE
from forge.errors import ConfigError, StepFailedError
from forge.matrix import Cell
from forge.plan import BuildOptions, plan_build
from forge.toolchains import Toolchains, load_toolchains
from forge.verify import SuiteStatus

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "engine/python/build_support/ember_metadata.py"
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True, wheels=True)


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def cell(target: str = "linux-x86_64", python: str = "3.11", numpy: str = "2.4", suite: str = "bookworm") -> Cell:
    return Cell(target, suite, python, numpy, "12", None, "3.25", None)


@pytest.mark.parametrize(
    ("built_with", "target", "claim"),
    [
        ("2.4", Version("1.22"), ">=1.22,<3"),  # NumPy 2 headers honour NPY_TARGET_VERSION
        ("2.0.2", Version("1.22"), ">=1.22,<3"),
        ("1.26", Version("1.22"), ">=1.22,<2"),  # 1.25+ honour it too, but 1.x cannot claim 2.x
        ("1.25", None, ">=1.25,<2"),
        ("1.24", Version("1.22"), ">=1.24,<2"),  # older headers ignore the define
        ("1.23.5", Version("1.22"), ">=1.23,<2"),
        ("2.1", Version("2.3"), ">=2.1,<3"),  # a target newer than the headers does not raise the floor
    ],
)
def test_numpy_range_rule(built_with: str, target: Version | None, claim: str) -> None:
    assert wheel.numpy_requirement(built_with, target) == SpecifierSet(claim)


def test_a_numpy1_build_never_claims_numpy2() -> None:
    for series in ("1.21", "1.22", "1.23", "1.24", "1.25", "1.26"):
        assert Version("2.0.0") not in wheel.numpy_requirement(series, Version("1.22"))


def test_bad_numpy_version_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a version"):
        wheel.numpy_requirement("two", None)


def test_numpy_target_read_from_the_extension_header() -> None:
    assert wheel.numpy_target("#define NPY_TARGET_VERSION NPY_1_22_API_VERSION\n") == Version("1.22")
    assert wheel.numpy_target("// nothing\n") is None
    # The real header states one, and the plan uses it.
    assert wheel.numpy_target(wheel.ARRAYS_H.read_text()) == Version("1.22")


def test_refusals_name_the_reason(toolchains: Toolchains) -> None:
    python_range = wheel.requires_python()
    assert wheel.wheel_refusal(cell(), toolchains.targets["linux-x86_64"], python_range) is None
    mac = wheel.wheel_refusal(cell("macos-arm64"), toolchains.targets["macos-arm64"], python_range)
    assert mac is not None and "macOS" in mac
    assert wheel.wheel_refusal(cell("linux-aarch64"), toolchains.targets["linux-aarch64"], python_range) is None
    armv7 = wheel.wheel_refusal(cell("linux-armv7"), toolchains.targets["linux-armv7"], python_range)
    assert armv7 is not None and "armv7" in armv7 and "debian_arch" in armv7 and "qemu" in armv7
    bullseye = cell(python="3.9", suite="bullseye")
    assert wheel.wheel_refusal(bullseye, toolchains.targets["linux-x86_64"], python_range) is None
    old = wheel.wheel_refusal(cell(python="3.8", suite="bullseye"), toolchains.targets["linux-x86_64"], python_range)
    assert old is not None and "3.8" in old and ">=3.9" in old and "pyproject.toml" in old


def test_grid_series_follow_toolchains_numpy_yaml(toolchains: Toolchains) -> None:
    series = wheel.grid_series(cell(), toolchains.numpy, SpecifierSet(">=1.21"))
    assert series[0] == "1.23" and series[-1] == "2.4" and "1.22" not in series  # 1.22 has no cp311 wheel
    assert wheel.grid_series(cell(python="3.13"), toolchains.numpy, SpecifierSet(">=1.21"))[0] == "2.1"
    assert "2.0" not in wheel.grid_series(cell(), toolchains.numpy, SpecifierSet(">=2.1"))


def test_plan_differs_when_only_numpy_differs(toolchains: Toolchains) -> None:
    target = toolchains.targets["linux-x86_64"]
    new = plan_build(cell(numpy="2.4"), target, CONTAINER_WORKSPACE, "docker", OPTS)
    old = plan_build(cell(numpy="1.26"), target, CONTAINER_WORKSPACE, "docker", OPTS)
    steps_new = {s.name: s for s in new.steps}
    steps_old = {s.name: s for s in old.steps}
    assert dict(steps_new["wheel-build"].env)["EMBER_NUMPY_REQUIRES"] == "<3,>=1.22"
    assert dict(steps_old["wheel-build"].env)["EMBER_NUMPY_REQUIRES"] == "<2,>=1.22"
    assert steps_new["wheel-repair"].argv != steps_old["wheel-repair"].argv
    assert "--numpy" in steps_old["wheel-verify"].argv and "1.26" in steps_old["wheel-verify"].argv


def test_wheel_steps_build_offline_against_the_installed_engine(toolchains: Toolchains) -> None:
    plan = plan_build(cell(), toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    steps = {s.name: s for s in plan.steps}
    names = [s.name for s in plan.steps]
    assert names.index("verify-run") < names.index("wheel-build") < names.index("wheel-grid") < names.index("record")
    tools = steps["wheel-tools"].argv
    assert "--no-index" in tools and "/build/ember-wheelhouse" in tools and "auditwheel==6.8.2" in tools
    build = steps["wheel-build"].argv
    assert {"--no-build-isolation", "--no-index"} <= set(build)
    assert "cmake.define.EMBER_PYTHON_USE_INSTALLED=ON" in build and "cmake.define.CMAKE_PREFIX_PATH=/stage" in build
    assert dict(steps["wheel-build"].env)["SOURCE_DATE_EPOCH"] == "1700000000"
    grid = steps["wheel-grid"].argv
    assert grid[grid.index("--numpy") + 1 :] == ("1.23", "1.24", "1.25", "1.26", "2.0", "2.1", "2.2", "2.3", "2.4")
    verify = steps["wheel-verify"].argv
    assert verify[verify.index("--oracle") + 1 :] == ("ai-edge-litert==2.3.0",)  # the live LiteRT checks run
    assert "--oracle" not in grid


def test_no_wheel_steps_where_refused_or_switched_off(toolchains: Toolchains) -> None:
    arm = plan_build(cell("linux-armv7"), toolchains.targets["linux-armv7"], CONTAINER_WORKSPACE, "docker", OPTS)
    assert not [s for s in arm.steps if s.name.startswith("wheel-")]
    off = BuildOptions(source_date_epoch=1700000000)  # the default: `invoke build` without --wheels
    x86 = plan_build(cell(), toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", off)
    assert not [s for s in x86.steps if s.name.startswith("wheel-")]
    refused = wheel.plan_wheel(cell("macos-x86_64"), toolchains.targets["macos-x86_64"])
    assert refused.as_dict()["status"] == "not built" and "macOS" in refused.as_dict()["reason"]


def test_a_cross_wheel_is_built_for_the_target_and_run_under_its_emulator(toolchains: Toolchains) -> None:
    target = toolchains.targets["linux-aarch64"]
    planned = wheel.plan_wheel(cell("linux-aarch64"), target)
    assert planned.builds and planned.arch == "aarch64" and planned.cross is not None
    assert planned.cross.ext_suffix == ".cpython-311-aarch64-linux-gnu.so"
    assert planned.cross.emulator == ("qemu-aarch64", "-L", "/usr/aarch64-linux-gnu")
    assert planned.as_dict()["cross"]["triple"] == "aarch64-linux-gnu"
    assert wheel.plan_wheel(cell(), toolchains.targets["linux-x86_64"]).cross is None
    steps = {s.name: s for s in plan_build(cell("linux-aarch64"), target, CONTAINER_WORKSPACE, "docker", OPTS).steps}
    assert "--oracle" not in steps["wheel-verify"].argv  # no LiteRT under the emulator
    local = wheel.plan_wheel(cell("linux-aarch64"), target, backend="local")  # no multiarch libpython on the host
    assert not local.builds and "--backend docker" in (local.refusal or "")
    assert not [
        s
        for s in plan_build(cell("linux-aarch64"), target, CONTAINER_WORKSPACE, "local", OPTS).steps
        if s.name.startswith("wheel-")
    ]
    assert wheel.plan_wheel(cell(), toolchains.targets["linux-x86_64"], backend="local").builds

    plan = plan_build(cell("linux-aarch64"), target, CONTAINER_WORKSPACE, "docker", OPTS)
    steps = {s.name: s for s in plan.steps}
    names = [s.name for s in plan.steps]
    assert names.index("wheel-tools") < names.index("wheel-target") < names.index("wheel-build")
    made = steps["wheel-target"].argv
    assert made[:3] == ("python3", "/src/verify/python/cell_wheel.py", "target")
    assert made[made.index("--cc") + 1] == "aarch64-linux-gnu-gcc-12"
    assert made[made.index("--wheelhouse") + 1] == "/build/ember-wheelhouse-target"
    build = steps["wheel-build"]
    env = dict(build.env)
    assert env["SETUPTOOLS_EXT_SUFFIX"] == ".cpython-311-aarch64-linux-gnu.so"
    assert env["_PYTHON_HOST_PLATFORM"] == "linux-aarch64"
    assert "cmake.define.CMAKE_TOOLCHAIN_FILE=/src/toolchains/cmake/aarch64-linux-gnu.cmake" in build.argv
    assert "cmake.define.Python_INCLUDE_DIR=/build/ember-wheel/target/include/python3.11" in build.argv
    assert "cmake.define.EMBER_NUMPY_INCLUDE_DIR=/build/ember-wheel/target/numpy-include" in build.argv
    for name in ("wheel-verify", "wheel-grid"):
        argv = steps[name].argv
        assert argv[argv.index("--target-python") + 1] == "/build/ember-wheel/target/bin/python3.11", name
        assert argv[argv.index("--emulator") + 1] == "qemu-aarch64 -L /usr/aarch64-linux-gnu", name
        assert argv[argv.index("--wheelhouse") + 1] == "/build/ember-wheelhouse-target", name
    assert "/build/ember-wheelhouse" in steps["wheel-tools"].argv  # the build tools: the build machine's


def test_a_cross_cell_has_a_wheelhouse_per_machine(toolchains: Toolchains, tmp_path: Path) -> None:
    arm = wheel.plan_wheel(cell("linux-aarch64"), toolchains.targets["linux-aarch64"])
    arm = replace(arm, cross=replace(arm.cross, build_arch="x86_64"))
    [(build, all_tools), (target, test_tools)] = wheel.wheelhouse_arches("3.11", arm)
    assert (build, all_tools) == ("x86_64", None)  # None: every tool of wheel.yaml, for the build machine
    assert target == "aarch64" and test_tools is not None
    assert test_tools.build == test_tools.check == () and test_tools.test == wheel.load_wheel_tools().test
    native = wheel.plan_wheel(cell(), toolchains.targets["linux-x86_64"])
    assert wheel.wheelhouse_arches("3.11", native) == [(native.arch, None)]
    sha = "a" * 64
    for arch in ("x86_64", "aarch64"):
        wheel.lock_path("3.11", arch, tmp_path).write_text(f"pytest-9.2.0-py3-none-any.whl {sha}\n# {arch}\n")
    both = wheel.wheelhouse_locks_sha256("3.11", arm, tmp_path)
    assert both != wheel.wheelhouse_locks_sha256("3.11", replace(arm, cross=None, arch="x86_64"), tmp_path)
    wheel.lock_path("3.11", "aarch64", tmp_path).write_text(f"pytest-9.2.0-py3-none-any.whl {sha}\n")
    assert wheel.wheelhouse_locks_sha256("3.11", arm, tmp_path) != both  # either lock changing rebuilds


def test_wheelhouse_lock_parsing() -> None:
    sha = "a" * 64
    text = f"# comment\nnumpy-2.4.1-cp311-cp311-manylinux_2_27_x86_64.whl {sha}\n\n"
    assert wheel.parse_wheelhouse_lock(text, "lock") == {"numpy-2.4.1-cp311-cp311-manylinux_2_27_x86_64.whl": sha}
    with pytest.raises(ConfigError, match="lock:1"):
        wheel.parse_wheelhouse_lock("numpy.whl deadbeef\n", "lock")
    with pytest.raises(ConfigError, match="not a wheel file name"):
        wheel.parse_wheelhouse_lock(f"numpy.tar.gz {sha}\n", "lock")
    rendered = wheel.render_wheelhouse_lock("cp311-x86_64", {"b-1-py3-none-any.whl": sha, "a-1-py3-none-any.whl": sha})
    assert wheel.parse_wheelhouse_lock(rendered, "x") == {"a-1-py3-none-any.whl": sha, "b-1-py3-none-any.whl": sha}


def test_download_is_for_the_cells_python_and_platform() -> None:
    argv = wheel.download_argv("3.13", "x86_64", Version("2.31"), Path("/d"), ["numpy==2.1.*"], deps=False)
    assert argv[1:4] == ["-m", "pip", "download"] and "--only-binary=:all:" in argv
    assert argv[argv.index("--python-version") + 1] == "3.13" and "cp313" in argv and "--no-deps" in argv
    assert "manylinux_2_31_x86_64" in argv and "manylinux_2_32_x86_64" not in argv


def test_wheel_tools_are_exact_pins(tmp_path: Path) -> None:
    tools = wheel.load_wheel_tools()
    assert all("==" in pin for pin in tools.all)
    assert tools.oracle == ("ai-edge-litert==2.3.0",) and tools.all[-1] == tools.oracle[0]  # locked with the rest
    bad = tmp_path / "wheel.yaml"
    bad.write_text('build: ["nanobind>=2"]\ncheck: []\ntest: []\noracle: []\nglibc: "2.31"\n')
    with pytest.raises(ConfigError, match="exact pin"):
        wheel.load_wheel_tools(bad)


def test_a_python_entry_replaces_its_lists_for_that_python_only() -> None:
    top = wheel.load_wheel_tools()
    assert wheel.load_wheel_tools(python="3.11") == top == wheel.load_wheel_tools(python="3.13")
    py39 = wheel.load_wheel_tools(python="3.9")
    assert "nanobind==2.9.2" in py39.build and "nanobind==3.1.0" in top.build  # nanobind 3 needs >= 3.10
    assert any(p.startswith("pip==") for p in py39.build)  # bullseye's pip 20.3 has no --config-settings
    assert py39.test == ("pytest==8.4.2",) and py39.oracle == ("ai-edge-litert==2.1.0",)
    assert py39.glibc == top.glibc


def test_a_bad_python_entry_is_one_clear_error(tmp_path: Path) -> None:
    head = 'build: []\ncheck: []\ntest: ["pytest==9.2.0"]\noracle: []\nglibc: "2.31"\npython:\n'
    bad = tmp_path / "wheel.yaml"
    for entry, message in [
        ('  "3.9": {tests: ["pytest==8.4.2"]}\n', r"wheel\.yaml:7.*tests"),  # a typo of a list name
        ('  "3.9": {test: ["pytest>=8"]}\n', "exact pin"),
        ('  "three": {test: ["pytest==8.4.2"]}\n', "not a CPython version"),
        ('  3.10: {test: ["pytest==8.4.2"]}\n', "outside ember's requires-python"),  # YAML reads 3.1
        ('  "3.9": ["pytest==8.4.2"]\n', "must map tool lists"),
    ]:
        bad.write_text(head + entry)
        with pytest.raises(ConfigError, match=message):
            wheel.load_wheel_tools(bad, python="3.9")
    bad.write_text(head + '  "3.9": {test: ["pytest==8.4.2"]}\n')
    assert wheel.load_wheel_tools(bad, python="3.9").test == ("pytest==8.4.2",)
    assert wheel.load_wheel_tools(bad, python="3.11").test == ("pytest==9.2.0",)


@pytest.mark.parametrize("lock", sorted(wheel.LOCK_DIR.glob("wheelhouse-cp*.txt")), ids=lambda p: p.stem)
def test_each_wheelhouse_lock_holds_its_pythons_pins(lock: Path) -> None:
    """The lock a cell's Python selects holds that Python's pins of wheel.yaml (its own, for 3.9)."""
    found = re.fullmatch(r"wheelhouse-cp3(\d+)-(\w+)", lock.stem)
    assert found, lock
    python, arch = f"3.{found[1]}", found[2]
    assert wheel.lock_path(python, arch) == lock
    files = wheel.parse_wheelhouse_lock(lock.read_text(), str(lock))
    pinned = {f"{parse_wheel_filename(f)[0]}=={parse_wheel_filename(f)[1]}" for f in files}
    tools = wheel.load_wheel_tools(python=python)
    # a wheelhouse's tags must fit its Python: no other CPython's extension wheel
    assert not [f for f in files if re.search(r"-cp3\d+-cp3\d+-", f) and f"-cp3{found[1]}-" not in f]
    assert set(map(wheel._canonical_pin, tools.test)) <= pinned
    if arch == "x86_64":  # the build machine's: every tool
        assert set(map(wheel._canonical_pin, tools.all)) <= pinned


def _fake_wheel(folder: Path, name: str, version: str, requires: list[str]) -> None:
    meta = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}\nlong description\nRequires-Dist: ignored\n"
    lines = "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", meta.format(name, version, lines))


def test_missing_requirements_are_judged_by_the_cells_python(tmp_path: Path) -> None:
    """pip download evaluates markers with the Python running it: a 3.9 wheelhouse needs what 3.11 skips."""
    _fake_wheel(
        tmp_path,
        "pytest",
        "8.4.2",
        ['tomli>=1; python_version < "3.11"', "pluggy<2,>=1.5", 'colorama; sys_platform == "win32"'],
    )
    _fake_wheel(tmp_path, "pluggy", "1.6.0", ['pytest; extra == "dev"'])
    assert wheel.missing_requirements(tmp_path, "3.11", "x86_64") == []
    assert wheel.missing_requirements(tmp_path, "3.9", "x86_64") == ["tomli>=1"]
    _fake_wheel(tmp_path, "tomli", "2.5.0", [])
    assert wheel.missing_requirements(tmp_path, "3.9", "x86_64") == []


def test_an_unlocked_wheelhouse_is_completed_for_the_cells_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first download brings what the host's markers select; the rest is fetched and locked too."""
    calls: list[list[str]] = []

    def download(argv: list[str], **kwargs: object) -> None:
        calls.append(list(argv))
        dest = Path(argv[argv.index("-d") + 1])
        if "pytest==8.4.2" in argv:
            _fake_wheel(dest, "pytest", "8.4.2", ['tomli>=1; python_version < "3.11"'])
        if "tomli>=1" in argv:
            _fake_wheel(dest, "tomli", "2.5.0", [])

    monkeypatch.setattr(wheel.proc, "run_logged", download)
    tools = wheel.WheelTools((), (), ("pytest==8.4.2",), Version("2.31"))
    house = wheel.ensure_wheelhouse(
        "3.9", "x86_64", [], tmp_path / "c", tmp_path / "log", tools=tools, lock_dir=tmp_path
    )
    assert sorted(p.name for p in house.iterdir()) == ["pytest-8.4.2-py3-none-any.whl", "tomli-2.5.0-py3-none-any.whl"]
    assert "tomli-2.5.0" in wheel.lock_path("3.9", "x86_64", tmp_path).read_text()
    assert len(calls) == 2 and "--no-deps" not in calls[1]


def test_a_python39_cell_plans_its_own_tools(toolchains: Toolchains) -> None:
    old = Cell("linux-x86_64", "bullseye", "3.9", "2.0", "10", None, "3.18", None)
    planned = wheel.plan_wheel(old, toolchains.targets["linux-x86_64"])
    assert planned.builds and planned.series[0] == "1.21" and planned.series[-1] == "2.0"
    steps = {
        s.name: s
        for s in plan_build(old, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS).steps
    }
    assert "nanobind==2.9.2" in steps["wheel-tools"].argv and "pip==26.0.1" in steps["wheel-tools"].argv
    verify = steps["wheel-verify"].argv
    assert "pytest==8.4.2" in verify and verify[verify.index("--oracle") + 1] == "ai-edge-litert==2.1.0"
    # the newer pip in the tools folder (first on PYTHONPATH) runs the build, which passes --config-settings
    assert dict(steps["wheel-build"].env)["PYTHONPATH"] == "/build/ember-wheel/tools"
    assert "--config-settings" in steps["wheel-build"].argv


def test_suites_from_the_cell_results() -> None:
    ok = wheel.verify_suite({"status": "passed", "numpy": "2.4.1", "counts": {"passed": 120, "failed": 0}})
    assert ok.status is SuiteStatus.PASSED and "2.4.1" in ok.detail
    no_oracle = {"status": "passed", "numpy": "1.22.4", "counts": {"passed": 100, "skipped": 43}}
    no_oracle["oracle"] = "not installed (ResolutionImpossible): its checks are skipped, the stored-output ones run"
    assert "oracle not installed" in wheel.verify_suite(no_oracle).detail  # a skip the summary states
    assert "oracle" not in ok.detail
    bad = wheel.verify_suite({"status": "failed", "numpy": "2.4.1", "counts": {"passed": 1, "failed": 2}})
    assert bad.status is SuiteStatus.FAILED
    rows = [
        {"numpy": "1.26.4", "verdict": "works as claimed"},
        {"numpy": "2.4.1", "verdict": "excluded, fails as claimed"},
    ]
    assert wheel.grid_suite(rows).status is SuiteStatus.PASSED
    assert wheel.grid_suite([*rows, {"numpy": "2.0.2", "verdict": "claim wrong"}]).status is SuiteStatus.FAILED
    assert wheel.grid_suite([]).status is SuiteStatus.FAILED  # nothing tried proves nothing


def test_workspace_paths() -> None:
    assert wheel.wheel_root(CONTAINER_WORKSPACE) == PurePosixPath("/build/ember-wheel")
    assert wheel.wheelhouse_dir(CONTAINER_WORKSPACE) == PurePosixPath("/build/ember-wheelhouse")


def _house(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, Path]:
    cache, locks = tmp_path / "cache", tmp_path / "locks"
    house = cache / "wheelhouse" / "cp311-x86_64"
    house.mkdir(parents=True)
    for name, data in files.items():
        (house / name).write_bytes(data)
    locks.mkdir()
    return cache, locks


NUMPY_WHEEL = "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.whl"
TOOL_WHEEL = "nanobind-3.1.0-py3-none-any.whl"


def test_a_complete_locked_wheelhouse_is_used_without_downloading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {NUMPY_WHEEL: b"numpy", TOOL_WHEEL: b"nanobind"}
    cache, locks = _house(tmp_path, files)
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    wheel.lock_path("3.11", "x86_64", locks).write_text(wheel.render_wheelhouse_lock("cp311-x86_64", hashes))

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("a complete wheelhouse must not be downloaded again")

    monkeypatch.setattr(wheel.proc, "run_logged", no_download)
    tools = wheel.WheelTools(("nanobind==3.1.0",), (), (), Version("2.31"))
    found = wheel.ensure_wheelhouse("3.11", "x86_64", ["2.4"], cache, tmp_path / "log", tools=tools, lock_dir=locks)
    assert found == cache / "wheelhouse" / "cp311-x86_64"
    # A series the grid needs but the lock lacks is a clear error, not a silent download.
    with pytest.raises(ConfigError, match=r"no NumPy wheel of series 1\.26"):
        wheel.ensure_wheelhouse("3.11", "x86_64", ["1.26", "2.4"], cache, tmp_path / "log", tools=tools, lock_dir=locks)
    # So is a tool of toolchains/wheel.yaml the lock does not hold.
    more = wheel.WheelTools(("nanobind==3.1.0", "scikit-build-core==1.1.2"), (), (), Version("2.31"))
    with pytest.raises(ConfigError, match=r"lacks scikit-build-core==1\.1\.2"):
        wheel.ensure_wheelhouse("3.11", "x86_64", ["2.4"], cache, tmp_path / "log", tools=more, lock_dir=locks)


def test_a_tampered_wheel_is_fetched_again_by_its_locked_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, locks = _house(tmp_path, {NUMPY_WHEEL: b"tampered"})
    good = hashlib.sha256(b"numpy").hexdigest()
    wheel.lock_path("3.11", "x86_64", locks).write_text(f"{NUMPY_WHEEL} {good}\n")
    calls: list[list[str]] = []

    def download(argv: list[str], **kwargs: object) -> None:
        calls.append(list(argv))
        (Path(argv[argv.index("-d") + 1]) / NUMPY_WHEEL).write_bytes(b"still wrong")

    monkeypatch.setattr(wheel.proc, "run_logged", download)
    with pytest.raises(StepFailedError, match="does not match"):
        wheel.ensure_wheelhouse(
            "3.11",
            "x86_64",
            ["2.4"],
            cache,
            tmp_path / "log",
            tools=wheel.WheelTools((), (), (), Version("2.31")),
            lock_dir=locks,
        )
    assert calls and "numpy==2.4.6" in calls[0] and "--no-deps" in calls[0]
    assert (cache / "wheelhouse" / "cp311-x86_64" / NUMPY_WHEEL).read_bytes() == b"tampered"  # nothing half-replaced


def test_local_backend_copy_in_replaces_the_destination(tmp_path: Path) -> None:
    from forge.backends.local import LocalBackend

    src, dest = tmp_path / "src", tmp_path / "build" / "ember-wheelhouse"
    src.mkdir()
    (src / "a.whl").write_text("a")
    dest.mkdir(parents=True)
    (dest / "stale.whl").write_text("old")
    LocalBackend().copy_in(src, PurePosixPath(dest))
    assert sorted(p.name for p in dest.iterdir()) == ["a.whl"]


def test_a_cuda_cells_wheel_gets_a_local_version_and_a_bazel_cell_builds_the_plain_one(
    toolchains: Toolchains,
) -> None:
    target = toolchains.targets["linux-x86_64"]
    cuda = replace(cell(), cuda="13.0")
    planned = wheel.plan_wheel(cuda, target)
    assert planned.builds and planned.local == "cu130" and planned.as_dict()["local_version"] == "cu130"
    steps = {s.name: s for s in plan_build(cuda, target, CONTAINER_WORKSPACE, "docker", OPTS).steps}
    assert dict(steps["wheel-build"].env)["EMBER_WHEEL_LOCAL"] == "cu130"
    cpu = {s.name: s for s in plan_build(cell(), target, CONTAINER_WORKSPACE, "docker", OPTS).steps}
    assert "EMBER_WHEEL_LOCAL" not in dict(cpu["wheel-build"].env) and wheel.plan_wheel(cell(), target).local is None
    pinned = replace(cuda, extra=(("cuda_arch", "sm_90,compute_90"),))
    assert wheel.plan_wheel(pinned, target).local == "cu130.sm90.ptx90"  # not the default cell's name
    assert Version(f"0.1.0+{wheel.plan_wheel(pinned, target).local}").local == "cu130.sm90.ptx90"
    bazel = wheel.plan_wheel(replace(cell(), bazel="4.2.3"), target)  # tried end to end: builds, verifies, grid passes
    assert bazel.builds and bazel.local is None


def test_the_metadata_plugin_gives_version_and_numpy_range(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("ember_metadata", PLUGIN)
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    monkeypatch.delenv("EMBER_WHEEL_LOCAL", raising=False)
    monkeypatch.delenv("EMBER_NUMPY_REQUIRES", raising=False)
    assert plugin.dynamic_metadata("version") == plugin.VERSION
    assert plugin.dynamic_metadata("dependencies") == ["numpy>=1.22,<3"]
    monkeypatch.setenv("EMBER_WHEEL_LOCAL", "cu130")
    monkeypatch.setenv("EMBER_NUMPY_REQUIRES", "<2,>=1.22")
    assert plugin.dynamic_metadata("version") == f"{plugin.VERSION}+cu130"
    assert Version(plugin.dynamic_metadata("version")).local == "cu130"
    assert plugin.dynamic_metadata("dependencies") == ["numpy<2,>=1.22"]
    monkeypatch.setenv("EMBER_WHEEL_LOCAL", "cu13 0")
    with pytest.raises(RuntimeError, match="EMBER_WHEEL_LOCAL"):
        plugin.dynamic_metadata("version")
    with pytest.raises(RuntimeError, match="not 'readme'"):
        plugin.dynamic_metadata("readme")
    # one version everywhere: the plugin, the engine's CMake project and ember.__version__
    cmake = re.search(r"project\(ember VERSION (\S+)", (REPO / "engine/CMakeLists.txt").read_text())
    module = re.search(r'"__version__"\) = "([^"]+)"', (REPO / "engine/python/src/module.cc").read_text())
    assert cmake is not None and module is not None and cmake.group(1) == module.group(1) == plugin.VERSION


class _CopyingBackend:
    """copy_out from a directory standing in for the container's wheel steps' output."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def copy_out(self, src: PurePosixPath, dst: Path) -> None:
        assert src == wheel.wheel_root(CONTAINER_WORKSPACE) / "out"
        shutil.copytree(self.out, dst)


def test_an_untested_wheel_is_collected_from_its_build_alone(tmp_path: Path) -> None:
    """repro's second build runs no wheel-verify or wheel-grid: collect takes wheel.json only, and
    a verifying build still fails without their results."""
    out = tmp_path / "out"
    (out / "wheel").mkdir(parents=True)
    whl = out / "wheel" / "ember-0.1.0-cp311-cp311-manylinux_2_34_x86_64.whl"
    whl.write_bytes(b"wheel bytes")
    info = {"file": whl.name, "sha256": hashlib.sha256(b"wheel bytes").hexdigest()}
    (out / "wheel.json").write_text(json.dumps(info))
    backend: Any = _CopyingBackend(out)
    bare = wheel.collect(backend, CONTAINER_WORKSPACE, tmp_path / "s1", tested=False)
    assert bare.suites == [] and bare.entry == {"status": "built", **info, "tested": False}
    assert bare.wheel is not None and bare.wheel.read_bytes() == b"wheel bytes"
    with pytest.raises(StepFailedError, match="no readable results"):
        wheel.collect(backend, CONTAINER_WORKSPACE, tmp_path / "s2")
    (out / "verify.json").write_text(json.dumps({"status": "passed", "counts": {"passed": 3}, "numpy": "2.4"}))
    (out / "grid.json").write_text(json.dumps({"rows": [{"numpy": "2.4", "verdict": "works as claimed"}]}))
    tested = wheel.collect(backend, CONTAINER_WORKSPACE, tmp_path / "s3")
    assert [s.status for s in tested.suites] == [SuiteStatus.PASSED, SuiteStatus.PASSED]
    assert "tested" not in tested.entry and tested.entry["verify"]["status"] == "passed"
