"""engine/tests (ember's own C++ tests of its internals), run through ctest and read by forge.

Every *_test.cc under engine/tests is built by the `ember_build` fixture; each must be a ctest
test here and pass. forge's own ctest reader decides, so a crash cannot read as a pass.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from forge.verify import parse_ctest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


# engine/CMakeLists.txt runs each lite test, and the framework's convolution tests (whose depthwise and
# fused GEMM are lite's on AVX-512), again under EMBER_CPU_ISA=<cap>.
ISA_CAPS = ("generic", "avx2", "avx512")
ISA_CAPPED_FRAMEWORK_TESTS = ("kernels_nn_test",)


def engine_test_names(tests: Path, x86_64: bool = platform.machine() in ("x86_64", "AMD64", "amd64")) -> set[str]:
    """ctest names engine/CMakeLists.txt gives its tests: lite/model_test.cc -> lite_model_test, and on
    x86-64 also lite_model_test_isa_generic, _isa_avx2 and _isa_avx512 (the capped runs; those of
    kernels_nn_test too)."""
    names = {p.relative_to(tests).with_suffix("").as_posix().replace("/", "_") for p in tests.rglob("*_test.cc")}
    capped = {
        f"{name}_isa_{cap}"
        for name in names
        if name.startswith("lite_") or name in ISA_CAPPED_FRAMEWORK_TESTS
        for cap in ISA_CAPS
    }
    return names | (capped if x86_64 else set())


def test_every_engine_test_is_run_and_passes(ember_build: Path) -> None:
    proc = subprocess.run(
        ["ctest", "--output-on-failure", "-j", "2"],
        cwd=ember_build,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    results = parse_ctest(proc.stdout, exited_ok=proc.returncode == 0)
    assert sorted(r.describe() for r in results if not r.passed) == []
    expected = engine_test_names(REPO / "engine" / "tests")
    assert len(expected) >= 11 and {r.name for r in results} == expected
