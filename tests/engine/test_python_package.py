"""The `ember` Python package: build its wheel once (engine/python, scikit-build-core), check
what the wheel ships, and run verify/python against it installed in a fresh venv."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "verify" / "python" / "run.py"


@pytest.fixture(scope="session")
def ember_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [m for m in ("scikit_build_core", "nanobind", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(
            f"building the ember wheel needs {', '.join(missing)}: pip install scikit-build-core nanobind numpy"
        )
    out = tmp_path_factory.mktemp("wheel")
    argv = [sys.executable, str(RUNNER), "--build-only", "--wheel-dir", str(out)]
    argv += ["--build-dir", str(REPO / ".cache" / "python-build")]
    proc = subprocess.run(argv, capture_output=True, text=True, env={**_env(), "EMBER_PYTHON_WERROR": "ON"})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    (wheel,) = out.glob("ember-*.whl")
    return wheel


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_wheel_ships_extension_stubs_and_nothing_of_the_cpp_sdk(ember_wheel: Path) -> None:
    names = zipfile.ZipFile(ember_wheel).namelist()
    for want in ("ember/__init__.py", "ember/errors.py", "ember/lite.py", "ember/_ember.pyi", "ember/py.typed"):
        assert want in names, f"{want} missing from {ember_wheel.name}: {names}"
    assert any(n.startswith("ember/_ember.") and n.endswith((".so", ".pyd")) for n in names), names
    assert not [n for n in names if n.endswith((".h", ".a", ".cmake"))], names
    assert ember_wheel.stat().st_size < 10 * 1024 * 1024


def test_verify_python_passes_against_the_wheel(ember_wheel: Path, tmp_path: Path) -> None:
    argv = [sys.executable, str(RUNNER), "--wheel", str(ember_wheel), "--venv", str(tmp_path / "venv"), "--", "-q"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=1800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-8000:]
