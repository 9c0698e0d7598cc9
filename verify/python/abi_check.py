#!/usr/bin/env python3
"""The NumPy ABI grid's check of one installed ember + NumPy pair (cell_wheel.py grid runs it).

Imports ember (its extension imports NumPy's C API table, where an ABI mismatch shows), runs
TensorFlow's `integers` and `mlp` GraphDef fixtures and LiteRT's `add` model through the wheel, and
compares with the outputs TensorFlow and LiteRT stored. Exit 0 when all agree; otherwise the
traceback's last line says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import ember
import numpy as np

REPO = Path(__file__).resolve().parents[2]
GRAPHS = REPO / "engine" / "testdata" / "graphs"
LITE = REPO / "engine" / "testdata" / "lite"


def check_graph(name: str) -> None:
    folder = GRAPHS / name
    manifest = json.loads((folder / "manifest.json").read_text())
    feeds = {f"{f['name']}:0": np.load(folder / f["file"]) for f in manifest["feeds"]}
    fetches = [f if ":" in f else f"{f}:0" for f in manifest["fetches"]]
    with ember.Session(ember.GraphDef.from_file(str(folder / "model.pb"))) as sess:
        results = sess.run(fetches, feed_dict=feeds)
    assert len(results) == len(fetches) == len(manifest["expected"]), name
    for fetch, got, file in zip(fetches, results, manifest["expected"]):
        want = np.load(folder / file)
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{fetch}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{name}/{fetch}")


def check_lite(name: str) -> None:
    interp = ember.lite.Interpreter(model_path=str(LITE / f"{name}.tflite"))
    interp.allocate_tensors()
    inputs = [np.load(p) for p in sorted(LITE.glob(f"{name}.input_*.npy"))]
    details = interp.get_input_details()
    assert len(details) == len(inputs), name
    for detail, x in zip(details, inputs):
        interp.set_tensor(detail["index"], x)
    interp.invoke()
    outputs, expected = interp.get_output_details(), sorted(LITE.glob(f"{name}.expected_*.npy"))
    assert len(outputs) == len(expected), name
    for detail, file in zip(outputs, expected):
        np.testing.assert_allclose(interp.get_tensor(detail["index"]), np.load(file), rtol=1e-5, atol=1e-6)


def main() -> None:
    check_graph("integers")
    check_graph("mlp")
    check_lite("add")
    print(f"ember with numpy {np.__version__}: ok")


if __name__ == "__main__":
    main()
