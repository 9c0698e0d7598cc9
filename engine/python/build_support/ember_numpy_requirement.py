"""scikit-build-core metadata plugin: the NumPy range the wheel claims (`Requires-Dist: numpy...`).

A wheel runs with the NumPy versions whose C ABI it was built for, which depends on the NumPy
headers it was compiled against; forge computes that range per cell (forge/wheel.py,
`numpy_requirement`) and passes it in EMBER_NUMPY_REQUIRES (e.g. ">=1.22,<2" for a build against
NumPy 1.26). A plain `pip wheel engine/python` builds against NumPy 2 headers (build-system
requires numpy>=2.0) with NPY_TARGET_VERSION 1.22 (src/arrays.h), which is DEFAULT.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

DEFAULT = ">=1.22,<3"


def dynamic_metadata(field: str, settings: Mapping[str, object] | None = None) -> list[str]:
    if field != "dependencies":
        raise RuntimeError(f"ember_numpy_requirement provides `dependencies`, not {field!r}")
    spec = os.environ.get("EMBER_NUMPY_REQUIRES", "").strip() or DEFAULT
    if any(c in spec for c in ";\n") or not spec.startswith(("<", ">", "=", "!", "~")):
        raise RuntimeError(f"EMBER_NUMPY_REQUIRES={spec!r} is not a version specifier such as '>=1.22,<2'")
    return [f"numpy{spec}"]
