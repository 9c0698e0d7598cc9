#!/usr/bin/env python3
"""What `ember.Session.run` adds from Python, on ember-benchmark's 10-node elementwise graph.

One process, one graph, three figures (best of interleaved rounds, microseconds per step):

  cpp     ember's C++ Session::Run in a loop (the session's own C++ timer, feeds already tensors)
  python  ember.Session.run("n9:0", {"x:0": x}) from Python
  tf      tf.compat.v1.Session.run on the same GraphDef, when TensorFlow is importable

and the ratios, plus "added" = python - cpp (target: under 5 us). Both ember figures use one
session with inter_op_threads=-1 (inline) and =0 (the pool). Run against an installed wheel:

    python benchmarks/python_overhead.py [--steps 2000] [--rounds 5] [--no-tf]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verify" / "python"))
import ember
import graphs


def best_of(fn: object, steps: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()  # type: ignore[operator]
        best = min(best, (time.perf_counter() - t0) / steps)
    return best * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-tf", action="store_true")
    args = ap.parse_args()

    graph_bytes = graphs.chain10_graph()
    x = np.array([1, 2, 3, 4], np.float32)
    rows: list[tuple[str, float, float, float | None]] = []
    tf_us: float | None = None
    if not args.no_tf:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        try:
            import tensorflow as tf
        except ImportError:
            print("tensorflow not importable: no tf figure", file=sys.stderr)
        else:
            gd = tf.compat.v1.GraphDef()
            gd.ParseFromString(graph_bytes)
            g = tf.Graph()
            with g.as_default():
                tf.import_graph_def(gd, name="")
            cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
            with tf.compat.v1.Session(graph=g, config=cfg) as tsess:
                want = tsess.run("n9:0", {"x:0": x})
                tf_us = best_of(lambda: tsess.run("n9:0", {"x:0": x}), args.steps, args.rounds)
    for mode, inter in (("inline", -1), ("pool", 0)):
        cfg = ember.SessionConfig(inter_op_threads=inter, intra_op_threads=1)
        with ember.Session(ember.GraphDef.from_bytes(graph_bytes), cfg) as sess:
            got = sess.run("n9:0", {"x:0": x})
            if tf_us is not None:
                np.testing.assert_allclose(got, want, rtol=1e-6)
            # Rounds interleaved (C++, Python, C++, ...) so both see the same machine load;
            # each figure is its best round.
            cpp_rounds, py_rounds = [], []
            for _ in range(args.rounds):
                cpp_rounds.append(sess._time_cpp_run("n9:0", {"x:0": x}, args.steps) * 1e6)
                py_rounds.append(best_of(lambda: sess.run("n9:0", {"x:0": x}), args.steps, 1))
            cpp, py = min(cpp_rounds), min(py_rounds)
        rows.append((mode, cpp, py, tf_us))

    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}  cpus: {os.cpu_count()}")
    print(
        f"{'ember session':14} {'C++ Run us':>11} {'Python run us':>14} {'added us':>9} {'py/C++':>7} {'tf.v1 us':>9} {'tf/py':>6}"
    )
    for mode, cpp, py, tfv in rows:
        tf_cols = f"{tfv:9.2f} {tfv / py:6.2f}" if tfv is not None else f"{'-':>9} {'-':>6}"
        print(f"{mode:14} {cpp:11.2f} {py:14.2f} {py - cpp:9.2f} {py / cpp:7.2f} {tf_cols}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
