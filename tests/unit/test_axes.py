"""The axis registry (forge/axes.py) is the one place an axis is declared.

A test entry added to the registry (monkeypatched, with its values in the entry) must reach matrix
parsing, the resolver, the cell id (and reading an id back) and the invoke tasks' flags and help.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from invoke.context import Context
from invoke.program import Program

from forge import axes, matrix, resolve
from forge.commands import plan as plan_cmd
from forge.errors import ConfigError
from forge.matrix import CELL_FIELDS, Cell, Request, expand_matrix, load_supported, request_for_cell_id
from forge.toolchains import load_toolchains

REPO = Path(__file__).resolve().parents[2]

BLAS = axes.Axis(
    "blas",
    "pin the BLAS library (openblas or none)",
    values="a test list",
    image="a -dev package in the image",
    known=lambda data: ["none", "openblas"],
    id_format=lambda v: f"blas{v}",
    id_pattern=r"blas(?P<blas>[a-z]+)",
    default="none",
)


@pytest.fixture
def with_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(axes, "REGISTRY", [*axes.REGISTRY, BLAS])


def load_tasks(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """tasks.py loaded afresh (it reads the registry when loaded); its Program hook is undone after the test."""
    monkeypatch.setattr(Program, "parse_tasks", Program.parse_tasks)
    spec = importlib.util.spec_from_file_location("forge_tasks_under_test", REPO / "tasks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # tasks.py finds itself there
    spec.loader.exec_module(module)
    return module


def test_the_registry_is_what_matrix_resolve_and_cell_read() -> None:
    assert (
        matrix.AXES
        == axes.names()
        == ("target", "suite", "python", "numpy", "gcc", "bazel", "cuda", "cuda_arch", "cmake")
    )
    assert axes.names(lambda a: a.request) == matrix.REQUEST_AXES
    assert resolve.VERSION_AXES == ("python", "numpy", "gcc", "bazel", "cuda", "cmake")
    assert set(CELL_FIELDS) <= set(axes.names()), "every Cell field is a registry axis"
    supported = load_supported(REPO / "matrix" / "supported.yaml")
    assert set(supported.specs) == set(axes.names(lambda a: a.supported))


def test_cell_ids_are_unchanged_by_the_registry() -> None:
    cell = Cell("linux-aarch64", "bookworm", "3.11", "2.4", "12", None, "3.25.1", None)
    assert cell.id == "linux-aarch64-py3.11-np2.4-gcc12-cpu"
    assert Cell("macos-arm64", "bookworm", "3.11", "2.4", None, "12.4", "3.25.1", None).id == (
        "macos-arm64-py3.11-np2.4-zig-cu12.4"
    )
    assert "extra" not in cell.as_dict() and Cell.from_values(cell.as_dict()) == cell
    # A Bazel cell names its Bazel between the compiler and the accelerator, and reads back.
    bz = Cell("linux-x86_64", "bookworm", "3.11", "2.4", "12", None, "3.25.1", "4.2.3")
    assert bz.id == "linux-x86_64-py3.11-np2.4-gcc12-bz4.2.3-cpu"
    assert matrix.request_for_cell_id(bz.id).pin("bazel") == "4.2.3"
    assert matrix.request_for_cell_id(cell.id).pin("bazel") is None


def test_a_new_axis_reaches_matrix_parsing(with_blas: None, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("axes:\n  target: [linux-x86_64]\n  blas: [openblas, none]\n")
    requests = expand_matrix(path, ("linux-x86_64",))
    assert [r.pin("blas") for r in requests if isinstance(r, Request)] == ["openblas", "none"]
    path.write_text("axes:\n  target: [linux-x86_64]\n  blsa: [openblas]\n")
    with pytest.raises(ConfigError, match="blsa"):
        expand_matrix(path, ("linux-x86_64",))


def test_a_new_axis_reaches_the_resolver_and_the_cell_id(with_blas: None) -> None:
    data = load_toolchains(REPO / "toolchains")
    supported = load_supported(REPO / "matrix" / "supported.yaml")
    pinned = resolve.resolve(Request.make("linux-x86_64", {"python": "3.11", "blas": "openblas"}), data, supported)
    assert pinned.cell.value("blas") == "openblas" and pinned.sources["blas"] == "pinned (openblas)"
    assert pinned.cell.id.endswith("-cpu-blasopenblas") and pinned.cell.as_dict()["blas"] == "openblas"
    default = resolve.resolve(Request.make("linux-x86_64", {"python": "3.11"}), data, supported)
    assert default.cell.id.endswith("-cpu-blasnone")
    with pytest.raises(ConfigError, match="blas"):
        resolve.resolve(Request.make("linux-x86_64", {"blas": "mkl"}), data, supported)
    back = request_for_cell_id(pinned.cell.id)
    assert back.pin("blas") == "openblas"
    assert resolve.resolve(back, data, supported).cell == pinned.cell


def test_a_new_axis_reaches_the_cli_flags_and_help(
    with_blas: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = load_tasks(monkeypatch)
    for name in ("build", "plan"):
        flags = {a.name: a for a in tasks.ns[name].get_arguments()}  # (invoke hands the help out once)
        assert "blas" in flags, f"invoke {name} --blas"
        assert flags["blas"].help == BLAS.help
    seen: list[Any] = []
    monkeypatch.setattr(plan_cmd, "run_plan", lambda target, matrix, pins, as_json, cli: seen.append(pins))
    tasks.ns["plan"](Context(), target="linux-x86_64", blas="openblas")
    assert seen == [{**dict.fromkeys(tasks.PIN_FLAGS), "blas": "openblas"}]


def test_every_existing_flag_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = load_tasks(monkeypatch)
    expect = {
        "build": {"python", "numpy", "gcc", "cuda", "cuda_arch", "bazel", "cmake", "target", "cell", "matrix", "jobs"},
        "plan": {"python", "numpy", "gcc", "cuda", "cuda_arch", "bazel", "cmake", "target", "cell", "matrix", "json"},
        "verify": {"python", "numpy", "gcc", "cuda", "target", "backend"},
        "upgrade": {"python", "numpy", "gcc", "cmake", "to_gcc", "to_suite"},
        "repro": {"python", "numpy", "gcc", "cuda", "cuda_arch", "matrix", "jobs"},
    }
    for name, flags in expect.items():
        arguments = tasks.ns[name].get_arguments()
        names = {a.name for a in arguments}
        assert flags <= names, f"invoke {name} lost {flags - names}"
        assert all(a.help for a in arguments), f"invoke {name}: every flag has its help"


def test_cuda_arch_is_an_axis_from_the_flag_the_matrix_and_the_id_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tasks = load_tasks(monkeypatch)
    flags = {a.name: a for a in tasks.ns["plan"].get_arguments()}
    assert flags["cuda_arch"].names == ("cuda-arch",) and flags["cuda_arch"].help == axes.get("cuda_arch").help
    seen: list[Any] = []
    monkeypatch.setattr(plan_cmd, "run_plan", lambda target, matrix, pins, as_json, cli: seen.append(pins))
    tasks.ns["plan"](Context(), target="linux-x86_64", cuda="13.0", cuda_arch="sm_90")
    assert seen[0]["cuda"] == "13.0" and seen[0]["cuda_arch"] == "sm_90"

    path = tmp_path / "m.yaml"
    path.write_text(
        "axes:\n  target: [linux-x86_64]\ninclude:\n"
        "  - {target: linux-x86_64, cuda: '13.0', cuda_arch: 'sm_80,compute_80'}\n"
    )
    requests = [r for r in expand_matrix(path, ("linux-x86_64",)) if isinstance(r, Request)]
    assert requests[-1].pin("cuda_arch") == "sm_80,compute_80"
    data = load_toolchains(REPO / "toolchains")
    supported = load_supported(REPO / "matrix" / "supported.yaml")
    cell = resolve.resolve(requests[-1], data, supported).cell
    assert cell.id == "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm80+ptx80"
    back = request_for_cell_id(cell.id)
    assert back.pin("cuda") == "13.0" and back.pin("cuda_arch") == "sm_80,compute_80"
    assert resolve.resolve(back, data, supported).cell == cell
    # An id without the part (every id of before) pins nothing: the default targets.
    default = request_for_cell_id("linux-x86_64-py3.11-np2.4-gcc12-cu13.0")
    assert default.pin("cuda_arch") is None
    assert resolve.resolve(default, data, supported).cell.value("cuda_arch") == "sm_80,sm_90,compute_90"
    assert request_for_cell_id("linux-x86_64-py3.11-np2.4-gcc12-cpu").pin("cuda_arch") is None
