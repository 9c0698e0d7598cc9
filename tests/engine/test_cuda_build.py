"""ember's CUDA kernels compile with nvcc, warnings as errors for host and device code, and
embed the default architectures (sm_80 and sm_90 SASS, compute_90 PTX).

Only the CUDA object library (ember_cuda_obj) is built, so the check stays cheap. Without nvcc
the tests skip with the reason (install CUDA 13's nvcc, e.g. PyPI nvidia-cuda-nvcc); without
cuobjdump the architecture check skips (PyPI nvidia-cuda-cuobjdump has one). Running the kernels
needs a GPU: that is verify/gpu, which reports "not run: no GPU" here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forge import cuda

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _nvcc() -> str:
    nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("not run: nvcc not found (set CUDACXX or put CUDA's nvcc on PATH)")
    return nvcc


def _cuobjdump(nvcc: str) -> str | None:
    beside = Path(nvcc).resolve().parent / "cuobjdump"
    if beside.is_file():
        return str(beside)
    return shutil.which("cuobjdump")


@pytest.fixture(scope="module")
def cuda_objects(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    nvcc = _nvcc()
    build = tmp_path_factory.mktemp("cuda-build")
    configure = [
        "cmake", "-S", str(REPO / "engine"), "-B", str(build), "-G", "Ninja",
        "-DCMAKE_BUILD_TYPE=Release", "-DEMBER_CUDA=ON", "-DEMBER_WERROR=ON",
        f"-DCMAKE_CUDA_COMPILER={nvcc}", "-DEMBER_BUILD_TESTS=OFF", "-DEMBER_BUILD_TOOLS=OFF",
        "-DEMBER_BUILD_STATIC=OFF",
    ]  # fmt: skip
    if shutil.which("ccache"):
        configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
    for argv in (configure, ["cmake", "--build", str(build), "--target", "ember_cuda_obj", "-j", "2"]):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{(proc.stdout + proc.stderr)[-4000:]}"
    objects = sorted(build.rglob("*.cu.o"))
    sources = sorted((REPO / "engine" / "src" / "kernels" / "cuda").glob("*.cu"))
    assert {o.name.removesuffix(".o") for o in objects} == {s.name for s in sources}
    return objects


def test_cuda_kernels_compile_with_warnings_as_errors(cuda_objects: list[Path]) -> None:
    assert len(cuda_objects) >= 4 and all(o.stat().st_size > 0 for o in cuda_objects)


def test_cuda_objects_embed_the_default_architectures(cuda_objects: list[Path]) -> None:
    tool = _cuobjdump(_nvcc())
    if tool is None:
        pytest.skip("not run: cuobjdump not found (pip install nvidia-cuda-cuobjdump, or CUDA's own)")
    asked = cuda.parse_cuda_arch(cuda.DEFAULT_CUDA_ARCH)
    for obj in cuda_objects:
        listings = []
        for flag in ("--list-elf", "--list-ptx"):
            proc = subprocess.run([tool, flag, str(obj)], capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stderr
            listings.append(proc.stdout)
        embedded = cuda.embedded_arches(*listings)
        assert cuda.missing_arches(asked, embedded) == [], f"{obj.name} embeds {embedded}"
