#!/usr/bin/env python3
"""Build the ember wheel, install it into a fresh venv and run verify/python against it.

    python verify/python/run.py                  # build, install, run the suite
    python verify/python/run.py -- -k lite -x    # arguments after -- go to pytest
    python verify/python/run.py --build-only     # just the wheel (path printed last)
    python verify/python/run.py --wheel W.whl    # test an existing wheel

The wheel comes from ``pip wheel engine/python``. Without build isolation when the build
requirements (scikit-build-core, nanobind, numpy) are importable here, so no network is needed;
``--isolated`` forces an isolated build. ``--build-dir`` keeps CMake's tree between runs. The
venv sees this Python's site-packages (numpy, pytest and the oracles TensorFlow and LiteRT)
but gets ember only from the wheel.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def build_wheel(out_dir: Path, build_dir: Path | None, isolated: bool) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("ember-*.whl"):
        old.unlink()
    argv = [sys.executable, "-m", "pip", "wheel", str(REPO / "engine" / "python"), "--no-deps", "-w", str(out_dir)]
    have_backend = all(importlib.util.find_spec(m) for m in ("scikit_build_core", "nanobind", "numpy"))
    if have_backend and not isolated:
        argv.append("--no-build-isolation")
    if build_dir is not None:
        argv += ["-C", f"build-dir={build_dir}"]
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(min(os.cpu_count() or 2, 4)))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-6000:] + proc.stderr[-6000:])
        raise SystemExit(f"pip wheel failed ({proc.returncode})")
    wheels = sorted(out_dir.glob("ember-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one ember wheel in {out_dir}, found {wheels}")
    return wheels[0]


def make_venv(where: Path, wheel: Path) -> Path:
    venv.EnvBuilder(system_site_packages=True, with_pip=False, clear=True).create(where)
    where = where.resolve()
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
    )
    return python


def run_suite(python: Path, pytest_args: list[str]) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = [str(python), "-m", "pytest", str(HERE), "-p", "no:cacheprovider", *pytest_args]
    return subprocess.run(argv, cwd=HERE, env=env).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, help="test this wheel instead of building one")
    parser.add_argument("--wheel-dir", type=Path, default=REPO / ".cache" / "python-wheel")
    parser.add_argument("--build-dir", type=Path, default=REPO / ".cache" / "python-build")
    parser.add_argument("--isolated", action="store_true", help="build with pip's build isolation")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--venv", type=Path, help="where to create the venv (default: a temporary directory)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()

    wheel = args.wheel or build_wheel(args.wheel_dir, args.build_dir, args.isolated)
    print(f"wheel: {wheel} ({wheel.stat().st_size / 1e6:.2f} MB)", flush=True)
    if args.build_only:
        return 0
    if args.venv is not None:
        return run_suite(make_venv(args.venv, wheel), args.pytest_args)
    with tempfile.TemporaryDirectory(prefix="ember-verify-") as tmp:
        return run_suite(make_venv(Path(tmp) / "venv", wheel), args.pytest_args)


if __name__ == "__main__":
    raise SystemExit(main())
