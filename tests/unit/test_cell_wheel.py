"""verify/python/cell_wheel.py's pure parts: reading a wheel's NumPy claim, comparing ranges,
grid verdicts and pytest's JUnit counts (the script itself runs inside a cell)."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "verify" / "python" / "cell_wheel.py"


@pytest.fixture(scope="module")
def cw() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cell_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_wheel(path: Path, requires: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        lines = ["Metadata-Version: 2.1", "Name: ember", "Version: 0.1.0"] + [f"Requires-Dist: {r}" for r in requires]
        archive.writestr("ember-0.1.0.dist-info/METADATA", "\n".join(lines) + "\n")
    return path


def test_requires_numpy_reads_the_one_unconditional_claim(cw: ModuleType, tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path / "ember-0.1.0-cp311-cp311-linux_x86_64.whl", ["numpy<2,>=1.22", 'pytest>=7; extra == "test"']
    )
    assert cw.requires_numpy(wheel) == "numpy<2,>=1.22"
    assert cw.same_range("numpy<2,>=1.22", "numpy>=1.22,<2")
    assert not cw.same_range("numpy<3,>=1.22", "numpy>=1.22,<2")
    bare = make_wheel(tmp_path / "bare.whl", [])
    with pytest.raises(SystemExit):
        cw.requires_numpy(bare)


def test_grid_verdicts(cw: ModuleType) -> None:
    assert cw.verdict(claimed=True, works=True) == "works as claimed"
    assert cw.verdict(claimed=True, works=False) == "claim wrong"
    assert cw.verdict(claimed=False, works=False) == "excluded, fails as claimed"
    assert cw.verdict(claimed=False, works=True) == "excluded, yet works"


def test_junit_counts(cw: ModuleType, tmp_path: Path) -> None:
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite tests="5" failures="1" errors="0" skipped="2">'
        '<testcase name="a"><skipped message="LiteRT is the live oracle"/></testcase>'
        '<testcase name="b"><skipped message="LiteRT is the live oracle"/></testcase>'
        "</testsuite></testsuites>"
    )
    counts, reasons = cw.junit_counts(xml)
    assert counts == {"passed": 2, "failed": 1, "errors": 0, "skipped": 2}
    assert reasons == ["LiteRT is the live oracle"]
    assert cw.junit_counts(tmp_path / "missing.xml") == ({}, [])
