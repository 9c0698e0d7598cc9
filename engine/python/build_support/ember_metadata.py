"""scikit-build-core metadata plugin: the wheel's version and the NumPy range it claims.

`version`: VERSION, with a local label (PEP 440 `+label`) when forge builds a variant wheel that
must not share its file name with the plain one: a CUDA cell's wheel is `ember-0.1.0+cu130-...`
(EMBER_WHEEL_LOCAL=cu130), the way CUDA builds of Python packages are told apart, so a release
holding the CPU and the CUDA wheel of one Python keeps both and pip can pin either.

`dependencies`: a wheel runs with the NumPy versions whose C ABI it was built for, which depends
on the NumPy headers it was compiled against; forge computes that range per cell (forge/wheel.py,
`numpy_requirement`) and passes it in EMBER_NUMPY_REQUIRES (e.g. ">=1.22,<2" for a build against
NumPy 1.26). A plain `pip wheel engine/python` builds against NumPy 2 headers (build-system
requires numpy>=2.0) with NPY_TARGET_VERSION 1.22 (src/arrays.h), which is DEFAULT.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

VERSION = "0.1.0"  # engine/CMakeLists.txt's project() version and ember.__version__ (a unit test keeps them equal)
DEFAULT = ">=1.22,<3"
LOCAL_LABEL = re.compile(r"[a-z0-9]+(?:\.[a-z0-9]+)*")


def version() -> str:
    local = os.environ.get("EMBER_WHEEL_LOCAL", "").strip()
    if not local:
        return VERSION
    if not LOCAL_LABEL.fullmatch(local):
        raise RuntimeError(f"EMBER_WHEEL_LOCAL={local!r} is not a PEP 440 local label such as 'cu130'")
    return f"{VERSION}+{local}"


def numpy_requirement() -> list[str]:
    spec = os.environ.get("EMBER_NUMPY_REQUIRES", "").strip() or DEFAULT
    if any(c in spec for c in ";\n") or not spec.startswith(("<", ">", "=", "!", "~")):
        raise RuntimeError(f"EMBER_NUMPY_REQUIRES={spec!r} is not a version specifier such as '>=1.22,<2'")
    return [f"numpy{spec}"]


def dynamic_metadata(field: str, settings: Mapping[str, object] | None = None) -> str | list[str]:
    if field == "version":
        return version()
    if field == "dependencies":
        return numpy_requirement()
    raise RuntimeError(f"ember_metadata provides `version` and `dependencies`, not {field!r}")
