"""ember's sources with x86-64 SIMD code as clang compiles them for macos-x86_64 (zig), warnings as errors.

CI cross-builds macos-arm64 only (test_cross_build.py), where these files' AVX-512 paths are
compiled out, and GCC builds them for Linux. clang rejects code that GCC accepts: a static
function that only a Linux-only (AMX) path calls is unused on macOS, and it failed the
macos-x86_64 cells of the release matrix without any CI test noticing. Compiling the sources
(no link, no libc++ build) takes seconds.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from forge import host
from forge.errors import ToolMissingError
from forge.targets import cross

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "engine"
ZIG_CXX = REPO / "toolchains" / "cmake" / "zig-c++"
pytestmark = pytest.mark.integration

# What marks a source as having x86-only code: the intrinsics header, lite's AVX-512 helpers or
# per-ISA loops, or an x86-64 guard.
MARKERS = ("<immintrin.h>", '"lite/requant_avx512.h"', '"lite/loop_isa.h"', "__x86_64__")


def simd_sources() -> list[Path]:
    found = []
    for path in sorted((ENGINE / "src").rglob("*.cc")):
        text = path.read_text(encoding="utf-8")
        if any(m in text for m in MARKERS):
            found.append(path)
    return found


def test_the_simd_sources_are_found() -> None:
    names = {p.name for p in simd_sources()}
    assert {"gemm_int8.cc", "depthwise_avx512.cc", "gemm_f32.cc"} <= names, names


@pytest.fixture(scope="module")
def zig() -> None:
    log = Path(tempfile.gettempdir()) / "forge-test-host-tools.log"
    try:
        host.ensure((host.tool("zig"),), env=os.environ, why="clang for macos-x86_64", log_path=log)
    except ToolMissingError as exc:
        pytest.skip(f"zig (PyPI ziglang) is missing and cannot be installed here: {exc.fix}")
    if not cross.zig_present(host.module_python()):
        pytest.skip(f"zig (PyPI ziglang) is still missing after installing it (see {log})")


@pytest.mark.parametrize("source", simd_sources(), ids=lambda p: str(p.relative_to(ENGINE / "src")))
def test_simd_source_compiles_with_clang_for_macos_x86_64(zig: None, source: Path, tmp_path: Path) -> None:
    argv = [
        "sh",
        str(ZIG_CXX),
        "--target=x86_64-macos",
        "-std=c++17",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{ENGINE / 'include'}",
        f"-I{ENGINE / 'src'}",
        "-c",
        str(source),
        "-o",
        str(tmp_path / "out.o"),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, f"{source.relative_to(REPO)} (x86_64-macos, clang):\n{proc.stderr[-4000:]}"
    assert (tmp_path / "out.o").stat().st_size > 0
