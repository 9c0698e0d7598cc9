"""The resolver: one concrete cell per request, or every reason plus the nearest alternatives."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from forge import cuda
from forge.errors import ConfigError, InfeasibleError
from forge.matrix import Request, Supported, load_supported
from forge.resolve import HostFacts, cuda_arch_problem, not_built_yet, resolve
from forge.toolchains import Toolchains, load_toolchains

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data() -> tuple[Toolchains, Supported]:
    return load_toolchains(REPO / "toolchains"), load_supported(REPO / "matrix" / "supported.yaml")


def infeasible(data: tuple[Toolchains, Supported], target: str, **pins: str) -> InfeasibleError:
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make(target, pins), *data, unbuilt=False)
    return info.value


def test_cuda_without_an_image_is_refused_with_the_reason(
    data: tuple[Toolchains, Supported], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A toolkit of toolchains/cuda.yaml that neither wheels.yaml nor debian.yaml gives an image
    (none today: the tables are patched) is refused with wheels.yaml's no_image reason."""
    real = cuda.image_toolkit
    monkeypatch.setattr(cuda, "image_toolkit", lambda v, table=None: None if v.startswith("12.") else real(v, table))
    monkeypatch.setattr(cuda, "no_image_reason", lambda v, table=None: "PyPI holds no nvcc 12.4: no cicc")
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"cuda": "12.4"}), *data)
    cell = resolve(Request.make("linux-x86_64", {"cuda": "12.4"}), *data, unbuilt=False).cell
    assert info.value.why == not_built_yet(cell, data[0], None)["cuda"]
    assert info.value.why.startswith(
        "no forge image holds CUDA 12.4's nvcc (debian nvidia-cuda-toolkit) yet: PyPI holds no nvcc 12.4: no cicc;"
    )
    assert "CUDA toolkits with an image: 11.8, 13.0;" in info.value.why
    assert info.value.fix.splitlines() == [
        "drop --cuda (nearest feasible: linux-x86_64-py3.11-np2.4-gcc12-cpu)",
        "or --cuda 11.8 -> linux-x86_64-py3.11-np2.4-gcc11-cu11.8",
        "or --cuda 13.0 -> linux-x86_64-py3.11-np2.4-gcc12-cu13.0",
        "to build it: invoke build --cell linux-x86_64-py3.11-np2.4-gcc12-cpu",
    ]
    # a request that is infeasible anyway says why, not merely "not built yet"
    assert "has no CUDA toolkit" in infeasible(data, "macos-arm64", cuda="12.4").why
    assert resolve(Request.make("linux-x86_64", {"cuda": "none"}), *data).cell.cuda is None


def test_cuda_from_debian_non_free_resolves_to_its_suite_and_host_gcc(data: tuple[Toolchains, Supported]) -> None:
    """The release matrix's 11.8 and 12.4 includes, and what an open request resolves to."""
    cu118 = resolve(Request.make("linux-x86_64", {"python": "3.11", "gcc": "11", "cuda": "11.8"}), *data).cell
    assert cu118.id == "linux-x86_64-py3.11-np2.4-gcc11-cu11.8" and cu118.suite == "bookworm"
    cu124 = resolve(Request.make("linux-x86_64", {"python": "3.13", "gcc": "13", "cuda": "12.4"}), *data).cell
    assert cu124.id == "linux-x86_64-py3.13-np2.4-gcc13-cu12.4" and cu124.suite == "trixie"
    # left open, gcc is the newest the toolkit's host_config.h accepts in its one suite
    assert resolve(Request.make("linux-x86_64", {"cuda": "11.8"}), *data).cell.gcc == "11"
    assert resolve(Request.make("linux-x86_64", {"cuda": "12.4"}), *data).cell.gcc == "13"
    why = infeasible(data, "linux-x86_64", cuda="11.8", gcc="12").why
    assert "nvcc 11.8 accepts host gcc <=11 (its crt/host_config.h); gcc 12 would be used" in why
    assert "packaged for trixie, not bookworm" in infeasible(data, "linux-x86_64", cuda="12.4", python="3.11").why


def test_cuda13_from_pypi_resolves_and_builds(data: tuple[Toolchains, Supported]) -> None:
    resolution = resolve(Request.make("linux-x86_64", {"cuda": "13.0"}), *data)
    cell = resolution.cell
    assert cell.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"
    assert (cell.suite, cell.gcc, cell.cuda) == ("bookworm", "12", "13.0")
    assert not_built_yet(cell, data[0], None) == {}
    trixie = resolve(Request.make("linux-x86_64", {"cuda": "13.0", "python": "3.13"}), *data).cell
    assert (trixie.suite, trixie.gcc) == ("trixie", "14")  # nvcc 13.0 takes host gcc <= 15


def test_cuda_is_refused_for_the_local_backend(data: tuple[Toolchains, Supported]) -> None:
    host = HostFacts("bookworm", "12", "3.11", "3.25", "x86_64")
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("host", {"cuda": "13.0"}), *data, host)
    assert "the local backend builds with the host's tools only" in info.value.why
    assert "--backend docker" in info.value.why


def test_cuda_arch_is_checked_against_the_toolkits_own_list() -> None:
    assert cuda_arch_problem("13.0") is None  # the default: sm_80, sm_90 SASS + compute_90 PTX
    assert cuda_arch_problem("11.8") is None and cuda_arch_problem("12.4") is None
    problem = cuda_arch_problem("13.0", "sm_70,sm_90,compute_90")
    assert problem is not None
    assert problem.startswith("cuda_arch=sm_70,sm_90,compute_90 cannot be built with CUDA 13.0: ")
    assert "CUDA 13.0 (nvcc 13.0.88) cannot target sm_70; it accepts sm_75, sm_80" in problem
    assert problem.endswith("(nearest feasible: cuda_arch=sm_75,sm_90,compute_90)")
    assert "cuda_arch=sm_90,compute_100" in str(cuda_arch_problem("12.4", "sm_90,compute_100"))


def test_default_cell_is_bookworm_gcc12_newest_numpy(data: tuple[Toolchains, Supported]) -> None:
    resolution = resolve(Request.make("linux-x86_64"), *data)
    assert resolution.cell.id == "linux-x86_64-py3.11-np2.4-gcc12-cpu"
    assert resolution.cell.suite == "bookworm" and resolution.cell.cmake == "3.25"
    assert resolution.sources["gcc"] == "Debian bookworm default"


def test_pins_pick_the_suite(data: tuple[Toolchains, Supported]) -> None:
    cell = resolve(Request.make("linux-aarch64", {"gcc": "14"}), *data).cell
    assert (cell.suite, cell.python, cell.gcc) == ("trixie", "3.13", "14")
    cell = resolve(Request.make("linux-x86_64", {"python": "3.9"}), *data).cell
    assert (cell.suite, cell.gcc, cell.numpy, cell.bazel) == ("bullseye", "10", "2.0", None)  # CMake builds it
    cell = resolve(Request.make("linux-x86_64", {"numpy": ">=2.1,<2.3", "python": "3.13"}), *data).cell
    assert cell.numpy == "2.2"


def test_cuda_cells(data: tuple[Toolchains, Supported]) -> None:
    cell = resolve(Request.make("linux-x86_64", {"cuda": "11.8"}), *data, unbuilt=False).cell
    assert (cell.suite, cell.gcc, cell.cuda) == ("bookworm", "11", "11.8")
    assert cell.id.endswith("-gcc11-cu11.8")
    resolution = resolve(Request.make("linux-x86_64", {"cuda": "12.4"}), *data, unbuilt=False)
    assert (resolution.cell.suite, resolution.cell.gcc) == ("trixie", "13")
    assert resolution.sources["gcc"] == "Debian trixie (newest gcc the constraints allow)"
    assert resolve(Request.make("linux-x86_64", {"cuda": "none"}), *data).cell.cuda is None


def test_python311_with_gcc14(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "linux-x86_64", python="3.11", gcc="14")
    assert "bookworm provides gcc 12, 11, not 14 (gcc 14 comes from trixie)" in error.why
    assert "trixie provides python 3.13, not 3.11 (python 3.11 comes from bookworm)" in error.why
    assert "python 3.13 instead of 3.11 -> linux-x86_64-py3.13-np2.4-gcc14-cpu" in error.fix
    assert "gcc 12 instead of 14 -> linux-x86_64-py3.11-np2.4-gcc12-cpu" in error.fix
    assert error.fix.endswith("\nto build the first: invoke build --cell linux-x86_64-py3.13-np2.4-gcc14-cpu")


def test_cuda118_with_gcc12(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "linux-x86_64", cuda="11.8", gcc="12")
    assert error.why == "nvcc 11.8 accepts host gcc <=11 (its crt/host_config.h); gcc 12 would be used"
    assert "gcc 11 instead of 12 -> linux-x86_64-py3.11-np2.4-gcc11-cu11.8" in error.fix
    assert "cuda none instead of 11.8" in error.fix


def test_cuda124_with_gcc14(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "linux-x86_64", cuda="12.4", gcc="14")
    assert error.why == "nvcc 12.4 accepts host gcc <=13 (its crt/host_config.h); gcc 14 would be used"
    assert "gcc 13 instead of 14 -> linux-x86_64-py3.13-np2.4-gcc13-cu12.4" in error.fix
    # an image holds nvcc 12.4 (Debian trixie non-free), so the refusal offers its cell first
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"cuda": "12.4", "gcc": "14"}), *data)
    assert info.value.why == error.why
    assert info.value.fix == (
        "nearest feasible: gcc 13 instead of 14 -> linux-x86_64-py3.13-np2.4-gcc13-cu12.4; "
        "cuda none instead of 12.4 -> linux-x86_64-py3.13-np2.4-gcc14-cpu\n"
        "to build the first: invoke build --cell linux-x86_64-py3.13-np2.4-gcc13-cu12.4"
    )
    assert resolve(Request.make("linux-x86_64", {"cuda": "13.0", "gcc": "14"}), *data).cell.id.endswith("-gcc14-cu13.0")


def test_numpy121_with_python313(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "linux-x86_64", numpy="1.21", python="3.13")
    assert "numpy 1.21 has wheels for python >=3.7,<3.11 only; python 3.13 has none" in error.why
    assert "python 3.9 instead of 3.13 -> linux-x86_64-py3.9-np1.21-gcc10-cpu" in error.fix
    assert "numpy 2.4 instead of 1.21" in error.fix


def test_macos_with_cuda(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "macos-arm64", cuda="12.4")
    assert "target macos-arm64 has no CUDA toolkit" in error.why
    assert "cuda none instead of 12.4 -> macos-arm64-py3.11-np2.4-zig-cpu" in error.fix


def test_macos_with_gcc(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "macos-x86_64", gcc="12")
    assert "built with zig (clang), not gcc" in error.why


def test_unknown_values_suggest(data: tuple[Toolchains, Supported]) -> None:
    with pytest.raises(ConfigError) as info:
        resolve(Request.make("linux-x86-64"), *data)
    assert "did you mean `linux-x86_64`" in info.value.what
    with pytest.raises(ConfigError) as info:
        resolve(Request.make("linux-x86_64", {"gcc": "15"}), *data)
    assert "unknown gcc version `15`" in info.value.what and "9, 10, 11, 12, 13, 14" in info.value.why


def test_outside_supported_range(data: tuple[Toolchains, Supported]) -> None:
    toolchains, supported = data
    narrow = Supported({**supported.specs, "python": SpecifierSet(">=3.11")}, supported.targets)
    with pytest.raises(InfeasibleError, match="outside what ember supports"):
        resolve(Request.make("linux-x86_64", {"python": "3.9"}), toolchains, narrow)


def test_local_backend_is_pinned_to_the_host(data: tuple[Toolchains, Supported]) -> None:
    host = HostFacts(suite="bookworm", gcc="12", python="3.11", cmake="3.25", arch="x86_64")
    cell = resolve(Request.make("host"), *data, host=host).cell
    assert cell.id == "host-py3.11-np2.4-gcc12-cpu"
    with pytest.raises(InfeasibleError) as info:
        resolve(Request.make("linux-x86_64", {"gcc": "14"}), *data, host=host)
    assert "local backend uses the host's gcc 12" in info.value.why
    unknown_host = HostFacts(suite="noble", gcc="13", python="3.12", cmake="3.28", arch="x86_64")
    assert resolve(Request.make("host"), *data, host=unknown_host).cell.suite == "noble"


def test_a_cuda_cell_resolves_its_pinned_cuda_arch(data: tuple[Toolchains, Supported]) -> None:
    pinned = resolve(Request.make("linux-x86_64", {"cuda": "13.0", "cuda_arch": "compute_90,SM_90"}), *data)
    assert pinned.cell.value("cuda_arch") == "sm_90,compute_90"  # its one spelling
    assert pinned.cell.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm90+ptx90"
    assert pinned.sources["cuda_arch"] == "pinned (compute_90,SM_90)"
    default = resolve(Request.make("linux-x86_64", {"cuda": "13.0"}), *data)
    assert default.cell.value("cuda_arch") == "sm_80,sm_90,compute_90"
    assert default.cell.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"
    assert default.sources["cuda_arch"] == "default (forge/gpu_code.py DEFAULT_CUDA_ARCH)"
    spelled = resolve(Request.make("linux-x86_64", {"cuda": "13.0", "cuda_arch": "sm_80,sm_90,compute_90"}), *data)
    assert spelled.cell == default.cell


def test_a_cpu_cell_has_no_cuda_arch_and_refuses_a_pin(data: tuple[Toolchains, Supported]) -> None:
    cpu = resolve(Request.make("linux-x86_64", {"python": "3.11"}), *data)
    assert cpu.cell.value("cuda_arch") is None and cpu.cell.extra == ()
    assert "cuda_arch" not in cpu.cell.as_dict() and "cuda_arch" not in cpu.sources
    for pins in ({"cuda_arch": "sm_90"}, {"cuda": "none", "cuda_arch": "sm_90"}):
        with pytest.raises(ConfigError) as info:
            resolve(Request.make("linux-x86_64", pins, origin="matrix/m.yaml:7 (include)"), *data)
        assert info.value.what == (
            "matrix/m.yaml:7 (include): cuda_arch sm_90 pins the GPU targets of a CPU cell (no cuda asked)"
        )
        assert info.value.fix.startswith("add --cuda X.Y") and info.value.fix.endswith("or drop cuda_arch")


def test_a_cuda_arch_the_toolkit_cannot_build_is_refused_with_the_nearest(data: tuple[Toolchains, Supported]) -> None:
    error = infeasible(data, "linux-x86_64", cuda="13.0", cuda_arch="sm_70,compute_90")
    assert error.why == cuda_arch_problem("13.0", "sm_70,compute_90")
    assert "cannot target sm_70" in error.why and "(nearest feasible: cuda_arch=sm_75,compute_90)" in error.why
    nearest, default = error.fix.splitlines()[0].removeprefix("nearest feasible: ").split("; ")
    assert nearest == "cuda_arch sm_75,compute_90 instead of sm_70,compute_90 -> " + (
        "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm75+ptx90"
    )
    assert default == "cuda_arch sm_80,sm_90,compute_90 instead of sm_70,compute_90 -> " + (
        "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"
    )
    assert error.fix.splitlines()[1] == "to build the first: invoke build --cell " + nearest.rsplit(" -> ")[-1]
    # ... and one it can build is not refused by the default's check
    assert resolve(Request.make("linux-x86_64", {"cuda": "13.0", "cuda_arch": "sm_120"}), *data).cell.id.endswith(
        "-cu13.0-sm120"
    )
    with pytest.raises(ConfigError, match=r"^error: command line: cuda_arch: 'sm_9' is not a GPU target"):
        resolve(Request.make("linux-x86_64", {"cuda": "13.0", "cuda_arch": "sm_9"}), *data)
