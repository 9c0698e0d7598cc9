"""ember lite's num_threads: results agree with LiteRT and do not depend on the thread count.

Every real model of engine/testdata/lite/models runs through `ember-lite-run --num_threads N`
for N = 1, 2 and 4 and through LiteRT (its manifest's oracle) with the same num_threads: int8
outputs equal LiteRT's exactly, float ones within the manifest's tolerance, and every thread
count gives the same bytes as one thread (int8 and float: each output is one sum in the same
order whichever thread computes it). The small operator fixtures run with EMBER_LITE_SPLIT_ALL=1,
which splits every CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED however small, on each ISA
path. Invalid values fail with a message that names num_threads.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle: pip install '.[test]'")

pytestmark = pytest.mark.integration

LITE = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "lite"
MODELS_DIR = LITE / "models"
MANIFEST = json.loads((MODELS_DIR / "manifest.json").read_text())
FIXTURES = sorted(p.stem for p in LITE.glob("*.tflite"))
THREADS = [1, 2, 4]
RESOLVERS = {
    "ref": litert.OpResolverType.BUILTIN_REF,
    "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
}


def run_ember(
    install: Path, model: Path, inputs: list[Path], out: Path, threads: int, env: dict[str, str] | None = None
) -> list[np.ndarray]:
    out.mkdir(parents=True, exist_ok=True)
    argv = [str(install / "bin" / "ember-lite-run"), str(model), "--outdir", str(out), "--num_threads", str(threads)]
    for i, path in enumerate(inputs):
        argv += ["--input", f"{i}={path}"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    outs = sorted(out.glob("output_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    return [np.load(p) for p in outs]


def run_litert(model: Path, inputs: list[np.ndarray], resolver: str, threads: int) -> list[np.ndarray]:
    interp = litert.Interpreter(
        model_path=str(model), num_threads=threads, experimental_op_resolver_type=RESOLVERS[resolver]
    )
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_real_models_at_each_thread_count(ember_install: Path, tmp_path: Path, name: str) -> None:
    entry = MANIFEST[name]
    model = MODELS_DIR / f"{name}.tflite"
    input_files = [MODELS_DIR / f"{name}.input_{i}.npy" for i in range(entry["inputs"])]
    inputs = [np.load(p) for p in input_files]
    resolver = entry["oracle"].split()[-1]
    one: list[np.ndarray] = []
    for threads in THREADS:
        got = run_ember(ember_install, model, input_files, tmp_path / f"t{threads}", threads)
        want = run_litert(model, inputs, resolver, threads)
        assert len(got) == len(want) == entry["outputs"]
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            where = f"{name} output {i}, num_threads={threads}"
            assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
            if entry["exact"] or w.dtype != np.float32:
                np.testing.assert_array_equal(g, w, err_msg=where)
            else:
                np.testing.assert_allclose(g, w, rtol=entry["rtol"], atol=entry["atol"], err_msg=where)
        if threads == 1:
            one = got
        for i, (g, o) in enumerate(zip(got, one, strict=True)):
            assert g.tobytes() == o.tobytes(), f"{name} output {i}: {threads} threads differ from one thread"


@pytest.mark.parametrize("isa", ["generic", "avx2", "avx512"])
def test_every_kernel_split_on_each_isa(ember_install: Path, tmp_path: Path, isa: str) -> None:
    """The operator fixtures with every kernel split over 2 and 4 threads: the same bytes as one
    thread, and LiteRT's stored outputs (int8 exactly, float to 1e-5)."""
    env = {"EMBER_LITE_SPLIT_ALL": "1", "EMBER_CPU_ISA": isa}
    for name in FIXTURES:
        input_files = sorted(LITE.glob(f"{name}.input_*.npy"))
        expected = [np.load(p) for p in sorted(LITE.glob(f"{name}.expected_*.npy"))]
        one = run_ember(ember_install, LITE / f"{name}.tflite", input_files, tmp_path / name / "t1", 1, env)
        for g, e in zip(one, expected, strict=True):
            if e.dtype == np.float32:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(g, e, err_msg=name)
        for threads in (2, 4):
            many = run_ember(
                ember_install, LITE / f"{name}.tflite", input_files, tmp_path / name / f"t{threads}", threads, env
            )
            assert [m.tobytes() for m in many] == [o.tobytes() for o in one], f"{name}: {threads} threads ({isa})"


@pytest.mark.parametrize("value", ["-2", "257", "two", "1.5"])
def test_invalid_num_threads_is_a_clear_error(ember_install: Path, tmp_path: Path, value: str) -> None:
    argv = [str(ember_install / "bin" / "ember-lite-run"), str(LITE / "relu.tflite"), "--outdir", str(tmp_path)]
    proc = subprocess.run([*argv, "--num_threads", value], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "num_threads" in proc.stderr and value in proc.stderr, proc.stderr
