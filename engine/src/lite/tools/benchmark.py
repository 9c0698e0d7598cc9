"""Time ember lite against LiteRT on the int8 benchmark models of issue 6.

    python engine/src/lite/tools/benchmark.py BUILD/ember-lite-run [BUILD/ember-benchmark] [--threads 1,2]

Makes FULLY_CONNECTED 1x1024->1024 and CONV_2D 1x56x56x64->64 3x3 int8 models with
TensorFlow's converter, then reports, for each thread count, the median time per invoke of:
ember (num_threads N), LiteRT default (XNNPACK, num_threads N) and, at the first count only,
LiteRT BUILTIN_REF (reference kernels, single-threaded). ember-lite-run checks that ember's
output at every count equals BUILTIN_REF's; with ember-benchmark given, ember's time (and load
time) is `ember-benchmark --model`'s, otherwise ember-lite-run --repeat's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def int8_model(fn, shape: tuple[int, ...]) -> bytes:  # type: ignore[no-untyped-def]
    concrete = tf.function(fn).get_concrete_function(tf.TensorSpec(shape, tf.float32))
    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    rng = np.random.default_rng(0)

    def rep():  # type: ignore[no-untyped-def]
        for _ in range(8):
            yield [rng.normal(size=shape).astype(np.float32)]

    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = rep
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    return bytes(conv.convert())


def time_litert(
    path: Path, x: np.ndarray, resolver: OpResolverType, repeat: int, threads: int = 1
) -> tuple[float, np.ndarray]:
    interp = Interpreter(model_path=str(path), num_threads=threads, experimental_op_resolver_type=resolver)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"]).copy()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e6, out


def time_ember_benchmark(bench: str, path: Path, repeat: int, threads: int) -> tuple[float, float]:
    """Median over 5 processes of ember-benchmark's median invoke and load times, in us."""
    invoke, load = [], []
    for _ in range(5):
        argv = [bench, "--model", str(path), "--repeat", str(repeat), "--threads", str(threads), "--json"]
        report = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
        invoke.append(report["invoke_median_us"])
        load.append(report["load_us"])
    return float(np.median(invoke)), float(np.median(load))


def time_ember(runner: str, path: Path, x: np.ndarray, repeat: int, tmp: Path, threads: int) -> float:
    np.save(tmp / "x.npy", x)
    times = []
    for _ in range(1 if repeat == 1 else 5):
        argv = [runner, str(path), str(tmp / "x.npy"), "--outdir", str(tmp), "--repeat", str(repeat)]
        out = subprocess.run(
            [*argv, "--num_threads", str(threads)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        times.append(float(re.search(r"invoke_median_us ([0-9.]+)", out).group(1)))  # type: ignore[union-attr]
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runner", help="ember-lite-run")
    parser.add_argument("bench", nargs="?", default=None, help="ember-benchmark (optional)")
    parser.add_argument("--threads", default="1,2", help="comma-separated num_threads values")
    args = parser.parse_args()
    runner, bench = args.runner, args.bench
    threads = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(1)
    w_fc = tf.constant(rng.normal(0, 0.05, size=(1024, 1024)).astype(np.float32))
    w_conv = tf.constant(rng.normal(0, 0.05, size=(3, 3, 64, 64)).astype(np.float32))
    cases = {
        "FULLY_CONNECTED 1x1024->1024": (lambda x: tf.matmul(x, w_fc), (1, 1024), 200),
        "CONV_2D 1x56x56x64->64 3x3": (lambda x: tf.nn.conv2d(x, w_conv, 1, "SAME"), (1, 56, 56, 64), 20),
    }
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}, {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        head = f"{'model':32} {'thr':>3} {'ember us':>10} {'REF us':>10} {'XNNPACK us':>11} {'XNN/ember':>9}"
        print(f"{head} {'REF/ember':>9}")
        for name, (fn, shape, repeat) in cases.items():
            path = tmp / "m.tflite"
            path.write_bytes(int8_model(fn, shape))
            x = rng.integers(-128, 128, size=shape).astype(np.int8)
            ref, ref_out = time_litert(path, x, OpResolverType.BUILTIN_REF, max(3, repeat // 10))
            for t in threads:
                xnn, _ = time_litert(path, x, OpResolverType.AUTO, repeat, t)
                ours = time_ember(runner, path, x, 1 if bench else repeat, tmp, t)
                if not np.array_equal(np.load(tmp / "output_0.npy"), ref_out):
                    raise SystemExit(f"{name}: ember's output with {t} threads differs from LiteRT BUILTIN_REF")
                load = ""
                if bench:
                    ours, load_us = time_ember_benchmark(bench, path, repeat, t)
                    load = f"  (ember-benchmark, load {load_us:.0f} us, {path.stat().st_size} bytes)"
                ref_cell = f"{ref:10.1f}" if t == threads[0] else f"{'':10}"
                ref_ratio = f"{ref / ours:9.1f}" if t == threads[0] else f"{'':9}"
                print(f"{name:32} {t:3d} {ours:10.1f} {ref_cell} {xnn:11.1f} {xnn / ours:9.2f} {ref_ratio}{load}")


if __name__ == "__main__":
    main()
