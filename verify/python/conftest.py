"""verify/python: checks of the INSTALLED ember wheel, as its users would run them.

Run through verify/python/run.py (builds the wheel, installs it into a fresh venv, runs this
suite), or with any Python that has the wheel installed: ``python -m pytest verify/python``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))  # graphs.py


@pytest.fixture(scope="session", autouse=True)
def _installed_ember() -> None:
    import ember

    where = Path(ember.__file__).resolve()
    if (REPO / "engine" / "python") in where.parents:
        pytest.fail(f"ember was imported from the source tree ({where}), not from an installed wheel")
