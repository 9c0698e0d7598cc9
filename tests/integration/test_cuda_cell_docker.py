"""The CUDA 13 cell end to end in docker, without a GPU: `invoke build --cell CELL`.

Its image holds PyPI's nvcc 13.0 (toolchains/cuda/wheels.yaml, sha256-locked); ember's CUDA
kernels compile with it for the cell's architectures, and the installed libraries must embed
exactly those: sm_80 and sm_90 SASS and compute_90 PTX by default, sm_90 SASS alone for the
cell that pins cuda_arch (the axis' representative cell; the cuda-arches step lists them with the image's
cuobjdump; forge checks the listing, a `cuda-arches` result), and verify/gpu,
which needs a GPU to run, must be reported "not run: no GPU": neither passed nor failed, with
the cell passing. The manifest must record the nvcc found inside the image.

Cost on 2 cores at load average 4-7, measured 2026-12-01 (FORGE_DEBUG_INFO's -g build is left out
here: it is a second CUDA compile and checks nothing CUDA-specific): warm (the image and its
ccache volume present) 68-75 s; cold (no image, empty ccache volume) 319 s: the image 34 s (pip
fetches ~90 MB of CUDA wheels; the apt layer is the CPU bookworm image's, from Docker's layer
cache), the engine build 243 s, verify/ 27 s.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from forge import daemon
from forge.build import BuildResult, build_cell
from forge.config import Config, load_data
from forge.log import Progress
from forge.matrix import request_for_cell_id

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"
# (cell id, the GPU targets its libraries must embed): the default targets, and the cuda_arch axis'
# representative cell, pinned to sm_90 SASS alone (its id part -sm90; no PTX, no sm_80)
CELLS = [(CELL, "sm_80,sm_90,compute_90"), (f"{CELL}-sm90", "sm_90")]
Built = tuple[BuildResult, dict[str, Any], Path, str]


@pytest.fixture(scope="module", params=CELLS, ids=["default-arches", "cuda_arch-sm90"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    cell_id, asked = request.param
    daemon.ensure_daemon(os.environ)
    tmp = tmp_path_factory.mktemp("cuda-cell")
    cfg = Config(REPO, tmp / "dist", tmp / "cache", "docker", 2, True, True, 1700000000, False, False, False)
    cfg = replace(cfg, debug_info=False)
    result = build_cell(request_for_cell_id(cell_id), load_data(REPO), cfg, Progress(Console(file=io.StringIO())))
    assert result.dist is not None and result.dist.name == cell_id, result
    return result, json.loads((result.dist / "manifest.json").read_text()), result.dist, asked


def test_the_kernels_compile_with_the_images_nvcc(built: Built) -> None:
    result, manifest, dist, asked = built
    assert result.result == "passed", [s.describe() for s in result.suites if s.failed]
    assert manifest["cell"]["cuda"] == "13.0" and manifest["cell"]["id"] == dist.name
    assert manifest["cell"]["cuda_arch"] == asked
    assert "cuda_13.0" in manifest["toolchain"]["nvcc"], manifest["toolchain"]  # the build's probe, in the image
    assert manifest["cuda"]["nvcc"] == "13.0.88"  # the release the cuda-arches step read in the image
    configure = (dist / "logs" / "configure.log").read_text()
    assert "-DEMBER_CUDA=ON" in configure and "-DCMAKE_CUDA_COMPILER=/opt/cuda/bin/nvcc" in configure
    assert "The CUDA compiler identification is NVIDIA 13.0.88" in configure
    assert "Building CUDA object" in (dist / "logs" / "build.log").read_text()


def test_the_installed_libraries_embed_the_asked_architectures(built: Built) -> None:
    _, manifest, dist, asked = built
    record = manifest["cuda"]
    assert record["asked"] == asked and record["problems"] == []
    framework = [lib for lib in record["embedded"] if lib.startswith("lib/libember_framework.so")]
    assert len(framework) == 1 and record["embedded"][framework[0]] == asked, record  # exactly these, no more
    assert record["embedded"]["lib/libember_framework.a"] == asked, record  # static consumers get the kernels too
    assert {s["name"]: s["status"] for s in manifest["steps"]}["cuda-arches"] == "ok"
    checks = {s["name"]: s["status"] for s in manifest["verify"]["suites"]}
    assert checks["cuda-arches"] == "passed"
    assert "ELF file" in (dist / "logs" / "cuda-arches.log").read_text()


def test_verify_gpu_is_not_run_no_gpu_and_the_rest_passes(built: Built) -> None:
    _, manifest, _, _ = built
    suites = {s["name"]: s["status"] for s in manifest["verify"]["suites"]}
    assert suites.pop("gpu_gpu_kernels_test") == "not run: no GPU"
    assert suites and set(suites.values()) == {"passed"}, suites
    assert manifest["verify"]["failed"] == 0 and manifest["verify"]["passed"] == len(suites)
    assert manifest["result"] == "passed"
