"""ember built with Bazel, offline, next to the CMake build: the libraries, tools and verify
suites build and pass, and forge.bazel_sync finds the two descriptions in sync (same sources
compiled, same installed headers/libraries/programs, same SONAME, NEEDED and exports).

Bazel is Debian's bazel-bootstrap (installed here with apt when missing) with repository
stand-ins (toolchains/bazel/README.md): nothing is downloaded. CMake's side is the `ember_install` fixture's Release build (tests/conftest.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge import bazel_sync

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration
JOBS = str(min(os.cpu_count() or 2, 2))
# --symlink_prefix=/: no bazel-bin/bazel-out/bazel-testlogs/bazel-ember links in the checkout
# (pytest and other tools walking it would follow them into the output base); the directories
# come from `bazel info` with the same flags, so its configuration is the build's.
BUILD_FLAGS = ["--jobs", JOBS, "--local_cpu_resources", JOBS, "--symlink_prefix=/"]


def _install_bazel() -> str:
    """The bazel program, apt-installing bazel-bootstrap when missing; a loud skip with the
    reason when that cannot be done here. (bazel-bootstrap-source is optional: bazel_argv uses
    its stand-ins when they are there, WORKSPACE's own otherwise.)"""
    if shutil.which("bazel"):
        return "bazel"
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        why = "apt-get is missing" if apt is None else "not root"
        pytest.skip(f"SKIPPED LOUDLY: bazel-bootstrap is not installed and cannot be ({why}); Bazel build untested")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in ([apt, "update", "-q"], [apt, "install", "-y", "-q", "bazel-bootstrap"]):
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"SKIPPED LOUDLY: `{' '.join(argv)}` failed, Bazel build untested:\n{proc.stderr[-2000:]}")
    assert shutil.which("bazel"), "bazel-bootstrap installed but no bazel on PATH"
    return "bazel"


def _bazel(argv: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=3600)


def _info(argv: list[str], key: str) -> Path:
    """A directory `bazel info KEY` names for the build flags the tests build with."""
    proc = _bazel(argv, "info", *BUILD_FLAGS, key)
    path = proc.stdout.strip()
    assert proc.returncode == 0 and path.startswith("/"), f"bazel info {key}: {_tail(proc)}"
    return Path(path)


def _tail(proc: subprocess.CompletedProcess[str]) -> str:
    # bookworm's linux-sandbox logs each mount on stderr: keep Bazel's own lines
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "linux-sandbox" not in line]
    return "\n".join(lines[-60:])


@pytest.fixture(scope="module")
def bazel() -> list[str]:
    if not Path("/usr/include/eigen3/Eigen/Core").is_file():
        pytest.fail("ember's Bazel build takes Eigen from Debian: apt-get install libeigen3-dev")
    return bazel_sync.bazel_argv(_install_bazel(), REPO)


@pytest.fixture(scope="module")
def bazel_build(bazel: list[str]) -> Path:
    """Libraries, tools, the install tree and the verify suites, built; returns bazel-bin."""
    links_before = set(REPO.glob("bazel-*"))
    proc = _bazel(
        bazel, "build", *BUILD_FLAGS, "//engine:libraries", "//engine:tools", "//engine:install", "//verify/..."
    )
    assert proc.returncode == 0, _tail(proc)
    new_links = sorted(p.name for p in set(REPO.glob("bazel-*")) - links_before)
    assert not new_links, f"bazel build left convenience links in the checkout: {new_links}"
    return _info(bazel, "bazel-bin")


def test_libraries_have_cmakes_sonames_and_no_build_paths(bazel: list[str], bazel_build: Path) -> None:
    install = bazel_build / "engine" / "install"
    for lib in bazel_sync.LIBRARIES:
        facts = bazel_sync.library_facts(install / "lib" / lib)
        assert facts.soname == lib + ".0"
        assert (install / "lib" / (lib + ".0")).resolve() == (install / "lib" / (lib + ".0.1.0")).resolve()
        assert facts.exports, f"{lib} exports nothing"
    assert "libember_framework.so.0" in bazel_sync.library_facts(install / "lib" / "libember_cc.so").needed
    assert "libember_framework.so.0" not in bazel_sync.library_facts(install / "lib" / "libember_lite.so").needed
    output_base = str(_info(bazel, "output_base"))
    leaks = [str(REPO).encode(), output_base.encode(), b"/proc/self/cwd"]
    for path in sorted((install / "lib").glob("*.so.0.1.0")) + sorted((install / "bin").iterdir()):
        data = path.read_bytes()
        found = [leak.decode() for leak in leaks if leak in data]
        assert not found, f"{path.name} holds build paths: {found}"


def test_tools_run_from_the_install_tree(bazel_build: Path, tmp_path: Path) -> None:
    install = bazel_build / "engine" / "install"
    assert sorted(p.name for p in (install / "bin").iterdir()) == [
        "ember-benchmark",
        "ember-convert",
        "ember-lite-run",
        "ember-run",
    ]
    # $ORIGIN/../lib finds the installed libraries, as CMake's INSTALL_RPATH does
    model = REPO / "engine" / "testdata" / "lite" / "add.tflite"
    argv = [str(install / "bin" / "ember-lite-run"), str(model)]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert "error while loading shared libraries" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "output_0.npy").is_file(), "ember-lite-run wrote no output"


def test_verify_suites_pass_under_bazel(bazel: list[str], bazel_build: Path) -> None:
    proc = _bazel(bazel, "test", *BUILD_FLAGS, "//verify/...")
    assert proc.returncode == 0, _tail(proc)
    logs = _info(bazel, "bazel-testlogs") / "verify"
    ran = sorted(p.parent.name for p in logs.glob("*/test.log"))
    assert {"session_client_session_test", "session_direct_session_test", "lite_roundtrip_test"} <= set(ran), ran
    for name in ran:
        text = (logs / name / "test.log").read_text(errors="replace")
        assert " passed, 0 failed" in text, f"{name}:\n{text[-2000:]}"
    roundtrip = (logs / "lite_roundtrip_test" / "test.log").read_text(errors="replace")
    assert "SKIPPED ConvertedGraphRuns" not in roundtrip, "ember-convert's models were not produced"


def test_engine_tests_pass_under_bazel(bazel: list[str], bazel_build: Path) -> None:
    """engine/tests as Bazel runs them in a Bazel cell: every *_test.cc, from engine/tests in the
    runfiles tree with its testdata, offline."""
    proc = _bazel(bazel, "test", *BUILD_FLAGS, "--build_tests_only", "//engine/...")
    assert proc.returncode == 0, _tail(proc)
    logs = _info(bazel, "bazel-testlogs") / "engine"
    expected = sorted(
        "_".join(src.relative_to(REPO / "engine" / "tests").with_suffix("").parts)
        for src in (REPO / "engine" / "tests").rglob("*_test.cc")
    )
    assert sorted(p.parent.name for p in logs.glob("*/test.log")) == expected
    for name in expected:
        text = (logs / name / "test.log").read_text(errors="replace")
        assert " passed, 0 failed" in text, f"{name}:\n{text[-2000:]}"


def test_static_archives_serve_the_verify_suites(bazel: list[str], bazel_build: Path, tmp_path: Path) -> None:
    """forge/bazel_install.py's prefix, with verify/ linked to ember::*_static (EMBER_VERIFY_STATIC):
    the archives hold every kernel (the anchors pull them in) and the imported targets link."""
    output_base = _info(bazel, "output_base")
    prefix, build = tmp_path / "prefix", tmp_path / "verify-static"
    install = [sys.executable, str(REPO / "forge" / "bazel_install.py"), "--output-base", str(output_base)]
    configure = ["cmake", "-S", str(REPO / "verify"), "-B", str(build), "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"]
    for argv in (
        [*install, "--source", str(REPO), "--prefix", str(prefix)],
        [*configure, "-DEMBER_VERIFY_STATIC=ON"],
        ["cmake", "--build", str(build), "-j", JOBS],
        ["ctest", "--test-dir", str(build), "--output-on-failure", "-j", JOBS],
    ):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{argv}:\n{(proc.stdout + proc.stderr)[-3000:]}"
    programs = [p for p in build.rglob("*_test") if p.is_file() and os.access(p, os.X_OK)]
    assert programs, "verify built no suites"
    for program in programs:  # linked statically: no libember_*.so needed
        needed = bazel_sync.library_facts(program).needed
        assert not [n for n in needed if n.startswith("libember_")], f"{program.name} needs {needed}"


def test_cmake_and_bazel_descriptions_are_in_sync(bazel: list[str], bazel_build: Path, ember_install: Path) -> None:
    cmake_build = REPO / ".cache" / "test-build"  # the ember_install fixture's build directory
    verify_build = REPO / ".cache" / "bazel-sync-verify"
    export = "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"
    for argv in (
        ["cmake", "-S", str(REPO / "engine"), "-B", str(cmake_build), export],
        [
            "cmake",
            "-S",
            str(REPO / "verify"),
            "-B",
            str(verify_build),
            "-G",
            "Ninja",
            f"-DCMAKE_PREFIX_PATH={ember_install}",
            export,
        ],
    ):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = bazel_sync.check(
        workspace=REPO,
        cmake_builds=[cmake_build, verify_build],
        cmake_install=ember_install,
        bazel_install=bazel_build / "engine" / "install",
        bazel_source_paths=bazel_sync.query_bazel_sources(bazel, REPO),
    )
    report = "\n".join(r.describe() for r in results)
    sources = results[0]
    assert sources.count >= 40, report  # every library, tool, engine test and verify suite source
    assert all(r.same for r in results), report
