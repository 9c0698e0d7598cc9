"""Matrix and toolchain data: loading, validation (file:line, did you mean) and expansion."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from forge.errors import ConfigError
from forge.matrix import Excluded, Request, expand_matrix, load_supported
from forge.toolchains import Checker, load_toolchains

REPO = Path(__file__).resolve().parents[2]
TARGETS = ("host", "linux-x86_64", "linux-aarch64", "linux-armv7", "macos-x86_64", "macos-arm64")


def write(tmp_path: Path, text: str, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_repo_data_loads() -> None:
    data = load_toolchains(REPO / "toolchains")
    assert [s.name for s in data.suites] == ["bookworm", "trixie", "bullseye"]
    assert data.suite("trixie").gcc == ("14", "13", "12")
    assert data.suite("bullseye").bazel == "3.5.1"
    cuda = {c.version: c for c in data.cuda}
    assert cuda["11.8"].host_gcc.contains("11") and not cuda["11.8"].host_gcc.contains("12")
    assert cuda["13.0"].provider == "pypi"
    assert data.targets["linux-aarch64"].checker is Checker.QEMU
    assert data.targets["macos-arm64"].checker is Checker.MACHO
    for target in data.targets.values():
        if target.toolchain_file:
            assert (REPO / target.toolchain_file).is_file(), target.toolchain_file
    supported = load_supported(REPO / "matrix" / "supported.yaml")
    assert set(supported.targets) == set(data.targets)


def test_named_matrices_expand() -> None:
    for name in ("release.yaml", "ci.yaml"):
        items = expand_matrix(REPO / "matrix" / name, TARGETS)
        assert items, name


def test_expansion_with_include_and_exclude(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        axes:
          target: [linux-x86_64, macos-arm64]
          python: ["3.11", "3.13"]
        exclude:
          - {target: "macos-*", python: "3.11"}
        include:
          - {target: linux-aarch64, gcc: "12"}
        """,
    )
    items = expand_matrix(path, TARGETS)
    requests = [i for i in items if isinstance(i, Request)]
    excluded = [i for i in items if isinstance(i, Excluded)]
    assert [(r.target, r.pin("python")) for r in requests[:3]] == [
        ("linux-x86_64", "3.11"),
        ("linux-x86_64", "3.13"),
        ("macos-arm64", "3.13"),
    ]
    assert requests[3].target == "linux-aarch64" and requests[3].pin("gcc") == "12"
    assert requests[3].origin == f"{path}:7 (include)"
    assert len(excluded) == 1 and excluded[0].request.target == "macos-arm64"
    assert excluded[0].reason == f"excluded by {path}:5"


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "axes:\n  target: [linux-x86_64\n  python: ['3.11']\n")
    with pytest.raises(ConfigError) as info:
        expand_matrix(path, TARGETS)
    assert f"{path}:3" in info.value.what and "malformed YAML" in info.value.what


def test_unknown_axis_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "axes:\n  target: [host]\n  pyton: ['3.11']\n")
    with pytest.raises(ConfigError) as info:
        expand_matrix(path, TARGETS)
    assert f"{path}:3" in info.value.what
    assert "did you mean `python`" in info.value.what
    assert "numpy" in info.value.why  # lists the valid axes


def test_unknown_target_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "axes:\n  target: [linux-arm64]\n")
    with pytest.raises(ConfigError) as info:
        expand_matrix(path, TARGETS)
    assert f"{path}:2" in info.value.what
    assert "did you mean `linux-armv7`" in info.value.what or "did you mean `linux-aarch64`" in info.value.what


def test_unquoted_version_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "axes:\n  target: [host]\ninclude:\n  - {target: host, python: 3.10}\n")
    with pytest.raises(ConfigError) as info:
        expand_matrix(path, TARGETS)
    assert f"{path}:4" in info.value.what and "quoted" in info.value.what


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "axes:\n  target: [host]\naxes:\n  target: [host]\n")
    with pytest.raises(ConfigError, match="duplicate key"):
        expand_matrix(path, TARGETS)


def test_toolchain_data_errors_name_the_line(tmp_path: Path) -> None:
    root = tmp_path / "toolchains"
    root.mkdir()
    for name in ("cuda.yaml", "numpy.yaml", "targets.yaml"):
        (root / name).write_text((REPO / "toolchains" / name).read_text())
    (root / "debian.yaml").write_text("suites:\n  bookworm:\n    gcc: ['12']\n    pythn: '3.11'\n")
    with pytest.raises(ConfigError) as info:
        load_toolchains(root)
    assert "debian.yaml:4" in info.value.what and "did you mean `python`" in info.value.what
