"""A CUDA 13 cell, pure parts: its image (pinned toolkit wheels, its own template), its plan (the
CUDA flags, the embedded-architecture check after install) and the record of that check."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path, PurePosixPath
from types import ModuleType

import pytest
from packaging.version import Version

from forge import cuda, gpu_code, images
from forge.backends.base import CONTAINER_WORKSPACE
from forge.errors import ConfigError
from forge.gpu_code import LISTINGS_PREFIX
from forge.manifest import Manifest
from forge.matrix import Cell
from forge.plan import CUDA_ARCHES, BuildOptions, StepKind, plan_build
from forge.report import _css, toolchain_of
from forge.toolchains import Toolchains, load_toolchains

REPO = Path(__file__).resolve().parents[2]
OPTS = BuildOptions(source_date_epoch=1700000000, jobs=2, ccache=True)
CU13 = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "12", "13.0", "3.25", None)
CPU = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "12", None, "3.25", None)


@pytest.fixture(scope="module")
def toolchains() -> Toolchains:
    return load_toolchains(REPO / "toolchains")


def test_the_image_holds_the_pinned_toolkit_wheels_and_its_own_template() -> None:
    spec = images.ToolchainSpec.from_cell(CU13)
    assert spec.family == "debian-cuda" and spec.cuda == "13.0"
    assert spec.name == "bookworm-gcc12-py3.11-np2.4-cu13.0"  # its own lock, never the CPU image's
    reqs = spec.pip_requirements()
    assert reqs[0] == "numpy==2.4.*"
    assert "nvidia-cuda-nvcc==13.0.88" in reqs and "nvidia-cuda-cuobjdump==13.2.86" in reqs
    assert all("==" in r and "*" not in r for r in reqs[1:])  # every toolkit wheel pinned to one release
    cpu = images.ToolchainSpec.from_cell(CPU)
    assert (cpu.family, cpu.cuda, cpu.name) == ("debian", "", "bookworm-gcc12-py3.11-np2.4")


def test_both_cuda_templates_render_with_the_plain_templates_arguments() -> None:
    spec = images.ToolchainSpec.from_cell(CU13)
    args = images.toolchain_args(spec, "forge/base:bookworm-x", hashed=True)
    for name in ("debian-cuda", "debian-cuda-offline"):
        text = images.render_dockerfile((images.DOCKERFILES / f"{name}.Dockerfile").read_text(), args, name)
        assert 'ln -s "$1" /opt/cuda' in text and f"CUDACXX={cuda.IMAGE_NVCC}" in text
        assert "CUDAHOSTCXX=g++-12" in text and "--require-hashes" in text


def test_the_wheels_of_the_pinned_toolkit_are_pinned_exactly(tmp_path: Path) -> None:
    table = cuda.load_image_toolkits()
    assert {v for v, t in table.items() if t.source is cuda.ToolkitSource.PYPI} == {Version("13.0")}
    assert cuda.image_toolkit("13.0") is table[Version("13.0")] and cuda.image_toolkit("10.2") is None
    loose = tmp_path / "wheels.yaml"
    loose.write_text("toolkits:\n  '13.0': {root: nvidia/cu13, wheels: [nvidia-cuda-nvcc==13.0.*]}\n")
    with pytest.raises(ConfigError, match="not pinned to one release"):
        cuda.load_image_toolkits(loose)


def test_every_toolkit_has_an_image_from_the_source_toolchains_names(toolchains: Toolchains) -> None:
    assert cuda.load_no_image() == {}  # 11.8 and 12.4 come from Debian non-free now
    for source in toolchains.cuda:  # toolchains/cuda.yaml
        toolkit = cuda.image_toolkit(source.version)
        assert toolkit is not None and cuda.no_image_reason(source.version) is None, source.version
        assert toolkit.source is {"pypi": cuda.ToolkitSource.PYPI, "debian": cuda.ToolkitSource.DEBIAN}[source.provider]
        if toolkit.source is cuda.ToolkitSource.DEBIAN:  # the one suite whose archive has that release
            assert toolkit.suite in source.suites and toolkit.packages == (source.package,)
            assert toolkit.components == ("contrib", "non-free")  # nvidia-support is in contrib
            assert toolkit.nvcc == PurePosixPath("/usr/bin/nvcc")


def test_debian_toolkits_are_names_only_and_never_also_wheels(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels.yaml"
    wheels.write_text("toolkits:\n  '13.0': {root: nvidia/cu13, wheels: [nvidia-cuda-nvcc==13.0.88]}\n")
    entry = "{suite: bookworm, components: [non-free], packages: [%s], nvcc: /usr/bin/nvcc, cuobjdump: %s}"
    debian = tmp_path / "debian.yaml"
    debian.write_text("toolkits:\n  '11.8': " + entry % ("nvidia-cuda-toolkit", "/usr/bin/cuobjdump") + "\n")
    toolkit = cuda.load_image_toolkits(wheels, debian)[Version("11.8")]
    assert (toolkit.source.family, toolkit.packages) == ("debian-cuda-apt", ("nvidia-cuda-toolkit",))
    for number, (bad, match) in enumerate(
        [
            (entry % ("nvidia-cuda-toolkit=11.8.89", "/usr/bin/cuobjdump"), "is not a Debian suite, component or"),
            (entry % ("nvidia-cuda-toolkit", "usr/bin/cuobjdump"), "cuobjdump 'usr/bin/cuobjdump' is not an absolute"),
            ("{suite: bookworm, packages: [nvidia-cuda-toolkit]}", r"toolkits\.11\.8: expected exactly the keys"),
        ]
    ):
        (broken := tmp_path / f"debian{number}.yaml").write_text("toolkits:\n  '11.8': " + bad + "\n")
        with pytest.raises(ConfigError, match=match):
            cuda.load_image_toolkits(wheels, broken)
    (twice := tmp_path / "twice.yaml").write_text("toolkits:\n  '13.0': " + entry % ("x", "/usr/bin/cuobjdump") + "\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml: toolkits\.13\.0: CUDA 13\.0 is also in"):
        cuda.load_image_toolkits(wheels, twice)


def test_no_image_reasons_are_text_and_never_for_a_toolkit_with_an_image(tmp_path: Path) -> None:
    pinned = "toolkits:\n  '13.0': {root: nvidia/cu13, wheels: [nvidia-cuda-nvcc==13.0.88]}\n"
    debian = tmp_path / "debian.yaml"
    debian.write_text("toolkits: {}\n")
    (tmp_path / "none.yaml").write_text(pinned)
    assert cuda.load_no_image(tmp_path / "none.yaml", debian) == {}  # the mapping is optional
    (tmp_path / "one.yaml").write_text(pinned + "no_image:\n  '12.4': >-\n    PyPI holds\n    no nvcc 12.4\n")
    assert cuda.load_no_image(tmp_path / "one.yaml", debian) == {Version("12.4"): "PyPI holds no nvcc 12.4"}
    both = tmp_path / "both.yaml"
    both.write_text(pinned + "no_image:\n  '13.0': none on PyPI\n")
    with pytest.raises(ConfigError, match=r"CUDA 13\.0 both under toolkits \(or in debian\.yaml\) and no_image"):
        cuda.load_no_image(both, debian)
    with pytest.raises(ConfigError, match=r"CUDA 12\.4 both under toolkits"):  # the real debian.yaml has 12.4
        cuda.load_no_image(tmp_path / "one.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text(pinned + "no_image:\n  '12.4': ''\n")
    with pytest.raises(ConfigError, match=r"no_image\.12\.4: expected the reason"):
        cuda.load_no_image(empty, debian)


CU118 = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "11", "11.8", "3.25", None)


def test_a_debian_toolkit_image_installs_its_packages_from_its_suites_non_free() -> None:
    spec = images.ToolchainSpec.from_cell(CU118)
    assert (spec.family, spec.name) == ("debian-cuda-apt", "bookworm-gcc11-py3.11-np2.4-cu11.8")
    assert {"nvidia-cuda-toolkit", "g++-11", "gcc-11"} <= set(spec.apt_packages())
    assert spec.pip_requirements() == ["numpy==2.4.*"]  # no wheel of the toolkit
    args = images.toolchain_args(spec, "forge/base:bookworm-x", hashed=True)
    assert args["APT_COMPONENTS"] == "contrib non-free" and args["NVCC"] == "/usr/bin/nvcc"
    for name in ("debian-cuda-apt", "debian-cuda-apt-offline"):
        text = images.render_dockerfile((images.DOCKERFILES / f"{name}.Dockerfile").read_text(), args, name)
        assert "CUDACXX=/usr/bin/nvcc CUDAHOSTCXX=g++-11" in text
        assert "/usr/bin/cuobjdump --version" in text and "libcudart_static.a" in text
    online = (images.DOCKERFILES / "debian-cuda-apt.Dockerfile").read_text()
    rendered = images.render_dockerfile(online, args, "debian-cuda-apt")
    assert "s/^(deb [^ ]+ bookworm main)$/\\1 contrib non-free/" in rendered and "deb.debian.org" not in online
    # the CPU and PyPI-CUDA images get none of it (their content hashes do not move)
    assert "APT_COMPONENTS" not in images.toolchain_args(images.ToolchainSpec.from_cell(CU13), "b")
    assert "nvidia-cuda-toolkit" not in images.ToolchainSpec.from_cell(CPU).apt_packages()


def test_a_debian_toolkit_is_built_on_its_own_suite_only() -> None:
    spec = images.ToolchainSpec.from_cell(CU118)
    with pytest.raises(ConfigError, match=r"CUDA 11\.8 is packaged in Debian bookworm, not trixie"):
        replace(spec, suite="trixie", gcc="13", python="3.13").check()


def test_a_cell_without_an_image_toolkit_has_no_image_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda, "image_toolkit", lambda version, table=None: None)
    with pytest.raises(ConfigError, match=r"no image holds CUDA 12\.4's nvcc"):
        images.ToolchainSpec.from_cell(Cell("linux-x86_64", "trixie", "3.13", "2.4", "13", "12.4", "3.31", None))


def test_plan_uses_the_debian_toolkits_nvcc_and_cuobjdump(toolchains: Toolchains) -> None:
    plan = plan_build(CU118, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    steps = {s.name: s for s in plan.steps}
    assert "-DCMAKE_CUDA_COMPILER=/usr/bin/nvcc" in steps["configure"].argv
    argv = steps[CUDA_ARCHES].argv
    assert argv[argv.index("--cuobjdump") + 1] == "/usr/bin/cuobjdump"
    assert argv[argv.index("--nvcc") + 1] == "/usr/bin/nvcc"


def test_plan_passes_the_cuda_flags_and_checks_the_embedded_architectures(toolchains: Toolchains) -> None:
    plan = plan_build(CU13, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    names = [s.name for s in plan.steps]
    assert names.index("install") + 1 == names.index(CUDA_ARCHES) < names.index("verify-configure")
    configure = plan.steps[names.index("configure")].argv
    assert "-DEMBER_CUDA=ON" in configure
    assert "-DCMAKE_CUDA_ARCHITECTURES=80-real;90-real;90-virtual" in configure
    assert f"-DCMAKE_CUDA_COMPILER={cuda.IMAGE_NVCC}" in configure
    assert "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache" in configure
    assert f"-DCMAKE_CUDA_FLAGS=--keep --keep-dir={CONTAINER_WORKSPACE.build}" in configure  # no tmpxft_<pid>
    check = plan.steps[names.index(CUDA_ARCHES)]
    assert check.kind is StepKind.COMMAND
    assert check.argv == (
        "python3",
        "/src/toolchains/cuda/check_embedded.py",
        "--prefix",
        str(CONTAINER_WORKSPACE.prefix),
        "--cuobjdump",
        str(PurePosixPath("/opt/cuda/bin/cuobjdump")),
        "--nvcc",
        "/opt/cuda/bin/nvcc",
    )
    cpu = plan_build(CPU, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    assert CUDA_ARCHES not in [s.name for s in cpu.steps]
    assert not any("CUDA" in a for s in cpu.steps for a in s.argv)


def test_manifest_record_rejects_anything_but_one_listing_line() -> None:
    asked = cuda.parse_cuda_arch(cuda.DEFAULT_CUDA_ARCH)
    with pytest.raises(ConfigError, match="holds 0"):
        cuda.manifest_record(asked, None, "lib/x.so:\n")
    with pytest.raises(ConfigError, match=r"not what check_embedded\.py writes"):
        cuda.manifest_record(asked, None, f"{LISTINGS_PREFIX}{{\n")
    with pytest.raises(ConfigError, match=r"not what check_embedded\.py writes"):
        cuda.manifest_record(asked, None, f"{LISTINGS_PREFIX}{json.dumps({'nvcc': [0, '', '']})}\n")


def test_the_report_shows_not_run_no_gpu_as_neither_pass_nor_fail() -> None:
    assert _css("not run: no GPU") == "nogpu"
    assert _css("passed") == "pass" and _css("skipped") == "fail"


def _check_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_embedded", REPO / cuda.CHECK_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ELF = {
    "libember_framework.so": "ELF file    1: libember_framework.1.sm_80.cubin\nELF file    2: libember_framework.2.sm_90.cubin\n"
}
PTX = {"libember_framework.so": "PTX file    1: libember_framework.1.sm_90.ptx\n"}
NO_CODE = "cuobjdump info    : File '{}' does not contain device code"


def _listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """What the check script prints for a fake install tree, cuobjdump and nvcc answered here."""
    script = _check_script()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libember_framework.so").write_bytes(b"\x7fELF" + bytes(60))
    (tmp_path / "lib" / "libember_cc.so").write_bytes(b"\x7fELF" + bytes(60))  # no device code
    (tmp_path / "lib" / "ember-config.cmake").write_text("# not a library\n")
    (tmp_path / "lib" / "libember.so").symlink_to("libember_cc.so")

    def run(argv: list[str]) -> list[object]:
        if argv[0] == "nvcc":
            return [0, NVCC_VERSION, ""]
        name = Path(argv[2]).name
        if name not in ELF:
            return [255, "", NO_CODE.format(argv[2])]
        return [0, (ELF if argv[1] == "--list-elf" else PTX)[name], ""]

    monkeypatch.setattr(script, "run", run)
    assert script.main(["--prefix", str(tmp_path), "--cuobjdump", "cuobjdump", "--nvcc", "nvcc"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("arch", ["sm_80,sm_90,compute_90", "sm_80,sm_86,compute_90"])
def test_the_listing_is_checked_against_the_cells_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], arch: str
) -> None:
    out = _listed(tmp_path, monkeypatch, capsys)
    assert out.count(LISTINGS_PREFIX) == 1 and "lib/libember.so" not in out  # the symlink is not listed twice
    record = cuda.manifest_record(cuda.parse_cuda_arch(arch), "Build cuda_13.0.r13.0", out)
    assert record["nvcc"] == "13.0.88" and record["nvcc_probe"] == "Build cuda_13.0.r13.0"
    assert record["asked"] == arch
    assert record["embedded"] == {"lib/libember_cc.so": "", "lib/libember_framework.so": "sm_80,sm_90,compute_90"}
    if "sm_86" in arch:
        assert record["problems"] == ["lib/libember_framework.so lacks sm_86 (it embeds sm_80,sm_90,compute_90)"]
    else:
        assert record["problems"] == []


NVCC_VERSION = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Wed_Aug_20_01:58:59_PM_PDT_2025
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
"""


def test_nvcc_release_is_read_from_its_version_output() -> None:
    assert gpu_code.nvcc_release(NVCC_VERSION) == "13.0.88"
    with pytest.raises(ConfigError, match="printed no"):
        gpu_code.nvcc_release("nvcc: NVIDIA (R) Cuda compiler driver\n")


def test_the_report_names_the_nvcc_release_the_image_holds() -> None:
    def recorded(**fields: object) -> Manifest:
        return Manifest.from_json({"schema": 1, "forge": "0", "cell": {}, "result": "passed", **fields}, "m.json")

    nvcc = {"nvcc": "Build cuda_13.0.r13.0/compiler.36424714_0"}
    assert toolchain_of(recorded(toolchain=nvcc, cuda={"nvcc": "13.0.88"}))["nvcc"] == "nvcc 13.0.88"
    assert toolchain_of(recorded(toolchain={"nvcc": "Build cuda_13.0.r13.0"}))["nvcc"] == "Build cuda_13.0.r13.0"


def test_a_pinned_cuda_arch_reaches_the_configure_args_the_check_and_the_id(toolchains: Toolchains) -> None:
    pinned = replace(CU13, extra=(("cuda_arch", "sm_90"),))
    assert pinned.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm90" and pinned.as_dict()["cuda_arch"] == "sm_90"
    plan = plan_build(pinned, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    steps = {s.name: s for s in plan.steps}
    assert "-DCMAKE_CUDA_ARCHITECTURES=90-real" in steps["configure"].argv
    assert "(cuobjdump; sm_90 must be there)" in steps[CUDA_ARCHES].description
    assert plan.as_dict()["cell"]["cuda_arch"] == "sm_90"
    # The default targets, pinned or not, give the cell its id of before and the same flags.
    default = replace(CU13, extra=(("cuda_arch", cuda.DEFAULT_CUDA_ARCH),))
    assert default.id == CU13.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"
    plan = plan_build(default, toolchains.targets["linux-x86_64"], CONTAINER_WORKSPACE, "docker", OPTS)
    configure = next(s for s in plan.steps if s.name == "configure")
    assert "-DCMAKE_CUDA_ARCHITECTURES=80-real;90-real;90-virtual" in configure.argv


@pytest.mark.parametrize(
    ("spec", "canonical", "part"),
    [
        ("sm_80,sm_90,compute_90", "sm_80,sm_90,compute_90", ""),
        ("compute_90, SM_90 ,sm_80,sm_80", "sm_80,sm_90,compute_90", ""),
        ("sm_90", "sm_90", "sm90"),
        ("compute_90", "compute_90", "ptx90"),
        ("sm_80,sm_90", "sm_80,sm_90", "sm80.90"),
        ("sm_90a,compute_100,sm_120", "sm_90a,sm_120,compute_100", "sm90a.120+ptx100"),
    ],
)
def test_a_cuda_arch_has_one_spelling_and_one_id_part_that_reads_back(spec: str, canonical: str, part: str) -> None:
    assert gpu_code.canonical_cuda_arch(spec) == canonical
    assert gpu_code.cuda_arch_id(canonical) == part
    if part:  # the id's spelling reads back to the same targets
        assert re.fullmatch(gpu_code.ID_PATTERN, part) and gpu_code.canonical_cuda_arch(part) == canonical
    assert gpu_code.cuda_arch_id(None) == ""


def test_a_malformed_cuda_arch_is_a_config_error() -> None:
    assert gpu_code.canonical_cuda_arch("sm_90,") == "sm_90"  # a trailing comma is only an empty item
    for bad in ("sm_9", "sm90.", "ptx", "sm90+sm80"):
        with pytest.raises(ConfigError, match="is not a GPU target"):
            gpu_code.canonical_cuda_arch(bad)
