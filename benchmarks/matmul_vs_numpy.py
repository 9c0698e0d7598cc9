"""Compare ember-benchmark with NumPy (OpenBLAS) and TensorFlow, all on one thread, in one run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /opt/oracle/bin/python benchmarks/matmul_vs_numpy.py \
        [--ember-benchmark PATH] [--min-time SECONDS]

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set on some of these machines to work around old
OpenBLAS bugs; they slow a current NumPy down, so unset them for this command only (the script
prints which OpenBLAS kernel ran). TensorFlow's Conv2D is timed when tensorflow is importable.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Before NumPy loads: one BLAS thread (threadpoolctl below double-checks).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
CANDIDATES = [
    REPO / "engine" / "build-kernels" / "tools" / "ember_benchmark" / "ember-benchmark",
    REPO / ".cache" / "test-install" / "bin" / "ember-benchmark",
]


def best_time(fn: Callable[[], object], min_time: float) -> float:
    """Best wall time of fn over repetitions lasting at least min_time (after a warm-up)."""
    fn()
    best, total, reps = float("inf"), 0.0, 0
    while total < min_time or reps < 3:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, reps = min(best, dt), total + dt, reps + 1
    return best


def numpy_matmul(n: int, min_time: float) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return best_time(lambda: a @ b, min_time)


def tf_conv(min_time: float) -> float | None:
    try:
        import tensorflow as tf
    except ImportError:
        print("tensorflow not importable: TF Conv2D ratio not measured (use /opt/oracle/bin/python)")
        return None
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((1, 56, 56, 64), dtype=np.float32))
    f = tf.constant(rng.standard_normal((3, 3, 64, 64), dtype=np.float32))
    conv = tf.function(lambda: tf.nn.conv2d(x, f, strides=1, padding="SAME"))
    return best_time(lambda: conv().numpy(), min_time)


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return "threadpoolctl missing: relying on OPENBLAS_NUM_THREADS=1"
    threadpool_limits(1)
    return ", ".join(
        f"{i['internal_api']} {i.get('version')} {i.get('architecture')} threads={i['num_threads']}"
        for i in threadpool_info()
    )


def run_ember(tool: Path, min_time: float) -> dict[str, Any]:
    proc = subprocess.run([str(tool), "--json", "--min-time", str(min_time)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{tool} failed ({proc.returncode}):\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ember-benchmark", type=Path, default=None, help="path to ember-benchmark")
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per figure")
    args = parser.parse_args()
    tool = args.ember_benchmark or next((p for p in CANDIDATES if p.is_file()), None)
    if tool is None or not tool.is_file():
        sys.exit(
            "ember-benchmark not found: build engine/ (cmake --build engine/build-kernels) or pass --ember-benchmark"
        )

    print(f"BLAS: {blas_info()}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '<unset>')}")
    ember = run_ember(tool, args.min_time)
    figures = {f["name"]: f for f in ember["figures"]}
    print(f"ember gemm micro-kernel: {ember['gemm_kernel']}")
    print(f"{'figure':34} {'ember':>14} {'reference':>14} {'ratio':>7}")
    for n in (512, 1024):
        mine = figures[f"matmul_{n}"]
        ref = numpy_matmul(n, args.min_time)
        ref_gflops = 2.0 * n**3 / ref / 1e9
        print(
            f"{'MatMul ' + str(n) + '^3 vs NumPy':34} {mine['gflops']:9.1f} GF/s {ref_gflops:9.1f} GF/s"
            f" {mine['gflops'] / ref_gflops:6.2f}x"
        )
    conv = figures["conv2d_1x56x56x64_3x3x64"]
    tf_s = tf_conv(args.min_time)
    if tf_s is not None:
        print(
            f"{'Conv2D 1x56x56x64->64 3x3 vs TF':34} {conv['seconds'] * 1e3:9.3f} ms   {tf_s * 1e3:9.3f} ms  "
            f" {tf_s / conv['seconds']:6.2f}x"
        )
    for name, fig in figures.items():
        if name.startswith("session_run"):
            print(f"{name:34} {fig['seconds'] * 1e6:9.2f} us/step")


if __name__ == "__main__":
    main()
