"""forge/cuda.py: a cell's cuda_arch against what each toolkit's nvcc reported
(toolchains/cuda/arches.yaml, recorded from the real nvcc 11.8, 12.4 and 13.0), and the
embedded-architecture check over cuobjdump listings."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from forge import cuda
from forge.errors import ConfigError, InfeasibleError


@pytest.fixture(scope="module")
def table() -> dict[Version, cuda.ToolkitArches]:
    return cuda.load_arches()


def test_recorded_toolkits_are_the_ones_forge_builds(table: dict[Version, cuda.ToolkitArches]) -> None:
    assert set(table) == {Version("11.8"), Version("12.4"), Version("13.0")}
    assert table[Version("13.0")].nvcc_version == "13.0.88"


def test_default_is_sm80_sm90_sass_and_compute90_ptx(table: dict[Version, cuda.ToolkitArches]) -> None:
    arch = cuda.check_cuda_arch("13.0", "", table)
    assert [str(t) for t in arch.sass] == ["sm_80", "sm_90"]
    assert [str(t) for t in arch.ptx] == ["compute_90"]
    assert arch.cmake_architectures() == "80-real;90-real;90-virtual"
    # Every recorded toolkit builds the default.
    for version in table:
        cuda.check_cuda_arch(str(version), cuda.DEFAULT_CUDA_ARCH, table)


def test_blackwell_needs_cuda_13(table: dict[Version, cuda.ToolkitArches]) -> None:
    assert str(cuda.check_cuda_arch("13.0", "sm_100,compute_100", table)) == "sm_100,compute_100"
    with pytest.raises(InfeasibleError) as e:
        cuda.check_cuda_arch("12.4", "sm_80,sm_100,compute_100", table)
    assert "cannot target sm_100" in e.value.why
    assert "cannot target compute_100" in e.value.why
    assert "sm_90" in e.value.why  # what it does accept is listed
    assert e.value.fix == "nearest feasible: cuda_arch=sm_80,sm_90,compute_90"


def test_cuda_13_dropped_maxwell_to_volta(table: dict[Version, cuda.ToolkitArches]) -> None:
    cuda.check_cuda_arch("11.8", "sm_35,compute_35", table)
    with pytest.raises(InfeasibleError) as e:
        cuda.check_cuda_arch("13.0", "sm_70", table)
    assert e.value.fix == "nearest feasible: cuda_arch=sm_75"


def test_patch_versions_use_the_minor_entry_and_unknown_toolkits_are_refused(
    table: dict[Version, cuda.ToolkitArches],
) -> None:
    cuda.check_cuda_arch("12.4.1", "sm_89", table)
    with pytest.raises(InfeasibleError) as e:
        cuda.check_cuda_arch("12.6", "sm_89", table)
    assert "record_arches.py" in e.value.fix


@pytest.mark.parametrize("bad", ["sm80", "gfx90a", "sm_", "compute_9", "sm_80,,foo"])
def test_malformed_targets_name_the_fix(bad: str) -> None:
    with pytest.raises(ConfigError) as e:
        cuda.parse_cuda_arch(bad)
    assert "sm_XX" in e.value.why


def test_malformed_arches_file_is_a_config_error(tmp_path: Path) -> None:
    f = tmp_path / "arches.yaml"
    f.write_text("toolkits:\n  '13.0': {nvcc: 13.0.88, gpu_code: [compute_90], gpu_arch: [compute_90]}\n")
    with pytest.raises(ConfigError, match="gpu_code holds sm_XX only"):
        cuda.load_arches(f)
    f.write_text("toolkits:\n  '13.0': {nvcc: 13.0.88, gpu_code: [sm_90]}\n")
    with pytest.raises(ConfigError, match="exactly the keys"):
        cuda.load_arches(f)


# What cuobjdump 13.5 (PyPI nvidia-cuda-cuobjdump) printed for libember_framework.so built with
# the default CMAKE_CUDA_ARCHITECTURES (80-real;90): a cubin per kernel file and architecture
# (first lines of each listing).
LIST_ELF = """\
ELF file    1: libember_framework.so.0.1.1.sm_80.cubin
ELF file    2: libember_framework.so.0.1.2.sm_90.cubin
ELF file    3: libember_framework.so.0.1.3.sm_80.cubin
ELF file    4: libember_framework.so.0.1.4.sm_90.cubin
"""
LIST_PTX = """\
PTX file    1: libember_framework.so.0.1.1.sm_90.ptx
PTX file    2: libember_framework.so.0.1.2.sm_90.ptx
"""


def test_embedded_arches_from_cuobjdump() -> None:
    got = cuda.embedded_arches(LIST_ELF, LIST_PTX)
    assert str(got) == "sm_80,sm_90,compute_90"
    asked = cuda.parse_cuda_arch(cuda.DEFAULT_CUDA_ARCH)
    assert cuda.missing_arches(asked, got) == []
    without_ptx = cuda.embedded_arches(LIST_ELF, "")
    assert [str(t) for t in cuda.missing_arches(asked, without_ptx)] == ["compute_90"]


def test_unrecognised_cuobjdump_output_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unrecognised cuobjdump line"):
        cuda.embedded_arches("cuobjdump info    : File 'x' does not contain device code\n", "")


def test_configure_args_follow_the_request() -> None:
    arch = cuda.parse_cuda_arch("sm_86,compute_86")
    assert cuda.configure_args(arch) == ["-DEMBER_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=86-real;86-virtual"]


def test_embedded_problems_name_the_library_and_the_missing_target() -> None:
    asked = cuda.parse_cuda_arch(cuda.DEFAULT_CUDA_ARCH)
    good = (LIST_ELF, LIST_PTX)
    assert cuda.embedded_problems(asked, {"lib/libember_framework.so.0.1.0": good}) == []
    sm80_only = ("ELF file    1: libember_framework.so.0.1.1.sm_80.cubin\n", "")
    problems = cuda.embedded_problems(asked, {"lib/libember_framework.so.0.1.0": sm80_only})
    assert problems == ["lib/libember_framework.so.0.1.0 lacks sm_90, compute_90 (it embeds sm_80)"]
    # cuobjdump prints nothing for a library without device code (libember_cc): fine alone,
    # but a CUDA build where no library has any is refused.
    assert cuda.embedded_problems(asked, {"lib/libember_cc.so": ("", ""), "lib/libember_framework.so": good}) == []
    assert cuda.embedded_problems(asked, {"lib/libember_cc.so": ("", "")}) == [
        "no installed library embeds GPU code (asked for sm_80,sm_90,compute_90)"
    ]


def test_cuobjdump_on_a_library_without_device_code() -> None:
    # What cuobjdump 13.5 did for libember_cc.so (host code only): exit 255, a note on stderr.
    note = "cuobjdump info    : File '/x/libember_cc.so' does not contain device code\n"
    assert cuda.cuobjdump_listing(255, "", note, path="lib/libember_cc.so") == ""
    assert cuda.cuobjdump_listing(0, LIST_ELF, "", path="lib/x.so") == LIST_ELF
    with pytest.raises(ConfigError, match=r"cuobjdump failed on lib/x\.so"):
        cuda.cuobjdump_listing(1, "", "cuobjdump fatal   : Could not open input file\n", path="lib/x.so")
