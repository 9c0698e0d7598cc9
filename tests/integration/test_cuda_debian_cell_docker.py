"""The CUDA 11.8 and 12.4 cells end to end in docker, without a GPU: `invoke build --cell CELL`.

Their images hold Debian's non-free nvidia-cuda-toolkit of the cell's suite
(toolchains/cuda/debian.yaml, dockerfiles/debian-cuda-apt.Dockerfile, every package version
locked); ember's CUDA kernels compile with its nvcc and the cell's g++, the runtime linked
statically, and the installed libraries must embed sm_80 and sm_90 SASS and compute_90 PTX (the
cuda-arches step, with the image's cuobjdump). verify/gpu is "not run: no GPU" and the cell
passes; the manifest records the nvcc release found inside the image, which must be the one
toolchains/cuda/arches.yaml was recorded from.

A release-job test: each image is 1.6-1.9 GB of .debs and 7.6-7.9 GB as an image. Cost on 2 cores
at load average 5-8, measured 2026-12-01: the images 329 s (11.8) and 363 s (12.4) cold (apt
fetches at the mirror's ~200 MB/s; unpacking dominates); the 11.8 cell 591 s with its image warm,
of which the engine build 194 s, verify/ 27 s and the -g build of FORGE_DEBUG_INFO 329 s (left
out here: a second CUDA compile that checks nothing CUDA-specific). Warm (both images and the
ccache volume present), this file's two cells took 122 s together.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version
from rich.console import Console

from forge import cuda, daemon
from forge.build import BuildResult, build_cell
from forge.config import Config, load_data
from forge.log import Progress
from forge.matrix import request_for_cell_id

pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.release_job(cost="a 7.9 GB Debian CUDA image and a CUDA build per cell, about 8 min cold each"),
]
REPO = Path(__file__).resolve().parents[2]
CELLS = ["linux-x86_64-py3.11-np2.4-gcc11-cu11.8", "linux-x86_64-py3.13-np2.4-gcc13-cu12.4"]
Built = tuple[BuildResult, dict[str, Any], Path]


@pytest.fixture(scope="module", params=CELLS, ids=["cu11.8", "cu12.4"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    daemon.ensure_daemon(os.environ)
    tmp = tmp_path_factory.mktemp("cuda-debian-cell")
    cfg = Config(REPO, tmp / "dist", tmp / "cache", "docker", 2, True, True, 1700000000, False, False, False)
    cfg = replace(cfg, debug_info=False)
    result = build_cell(request_for_cell_id(request.param), load_data(REPO), cfg, Progress(Console(file=io.StringIO())))
    assert result.dist is not None and result.dist.name == request.param, result
    return result, json.loads((result.dist / "manifest.json").read_text()), result.dist


def test_the_kernels_compile_with_debians_nvcc_and_the_cells_gcc(built: Built) -> None:
    result, manifest, dist = built
    assert result.result == "passed", [s.describe() for s in result.suites if s.failed]
    version = manifest["cell"]["cuda"]
    recorded = cuda.load_arches()[Version(version)].nvcc_version  # what record_arches.py read
    assert manifest["cuda"]["nvcc"] == recorded, manifest["cuda"]
    configure = (dist / "logs" / "configure.log").read_text()
    assert "-DCMAKE_CUDA_COMPILER=/usr/bin/nvcc" in configure
    assert f"The CUDA compiler identification is NVIDIA {recorded}" in configure
    assert f"-DEMBER_GCC_VERSION={manifest['cell']['gcc']}" in configure
    assert "Building CUDA object" in (dist / "logs" / "build.log").read_text()


def test_the_installed_libraries_embed_the_default_architectures(built: Built) -> None:
    _, manifest, _ = built
    record = manifest["cuda"]
    assert record["asked"] == "sm_80,sm_90,compute_90" and record["problems"] == []
    framework = [lib for lib in record["embedded"] if lib.startswith("lib/libember_framework.so")]
    assert len(framework) == 1 and record["embedded"][framework[0]] == record["asked"], record
    suites = {s["name"]: s["status"] for s in manifest["verify"]["suites"]}
    assert suites["cuda-arches"] == "passed"
    assert suites.pop("gpu_gpu_kernels_test") == "not run: no GPU"
    assert set(suites.values()) == {"passed"}, suites
    assert manifest["result"] == "passed"
