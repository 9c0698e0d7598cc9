"""ember lite agrees with LiteRT on real-model .tflite files (engine/testdata/lite/models).

Float models (BERT encoders written with Keras, KerasHub and tf.compat.v1, a Keras
MultiHeadAttention encoder, MobileNetV2, `ops_misc` with each transformer op on its own, Keras
LSTM/GRU/Bidirectional(LSTM) layers and a tf.while_loop + tf.cond model: WHILE and IF; Keras 2
LSTM layers fused into UNIDIRECTIONAL_SEQUENCE_LSTM, and that op's peephole / projection /
layer-norm / CIFG forms)
are compared with LiteRT's reference kernels (BUILTIN_REF) to rtol 1e-4, computed live on the
stored inputs; int8 CNNs (MobileNetV2, MobileNet) must equal them exactly.
The stored expected outputs are checked too, so a LiteRT upgrade that changes them shows up.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle: pip install '.[test]'")

pytestmark = pytest.mark.integration

MODELS_DIR = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "lite" / "models"
MANIFEST = json.loads((MODELS_DIR / "manifest.json").read_text())
RESOLVERS = {
    "ref": litert.OpResolverType.BUILTIN_REF,
    "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
}


def run_litert(model: Path, inputs: list[np.ndarray], resolver: str) -> list[np.ndarray]:
    interp = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=RESOLVERS[resolver])
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def run_ember(install: Path, model: Path, inputs: list[Path], out: Path) -> list[np.ndarray]:
    argv = [str(install / "bin" / "ember-lite-run"), str(model), "--outdir", str(out)]
    for i, path in enumerate(inputs):
        argv += ["--input", f"{i}={path}"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    outs = sorted(out.glob("output_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    return [np.load(p) for p in outs]


def test_manifest_lists_the_models() -> None:
    assert {"bert_tf1", "bert_keras_hub", "mobilenet_v2", "mobilenet_v2_int8", "ops_misc"} <= set(MANIFEST)
    assert {"lstm", "lstm_seq", "gru", "bilstm", "while_cond"} <= set(MANIFEST)
    assert {"lstm_fused", "bilstm_fused", "lstm_fused_variants"} <= set(MANIFEST)


@pytest.mark.parametrize("name", ["lstm_fused", "lstm_fused_variants"])
def test_lstm_state_carries_over_invokes_as_in_litert(ember_install: Path, tmp_path: Path, name: str) -> None:
    """UNIDIRECTIONAL_SEQUENCE_LSTM's state tensors are variables: LiteRT starts them at zero and
    keeps the last step's state for the next Invoke. ember's second Invoke on the same input
    gives LiteRT's second output (which differs from its first)."""
    model = MODELS_DIR / f"{name}.tflite"
    x_path = MODELS_DIR / f"{name}.input_0.npy"
    x = np.load(x_path)
    interp = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=RESOLVERS["ref"])
    interp.allocate_tensors()
    seen = []
    for _ in range(2):
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        seen.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
    assert np.abs(seen[0] - seen[1]).max() > 1e-3, "LiteRT's state did not carry over: nothing to compare"
    argv = [str(ember_install / "bin" / "ember-lite-run"), str(model), "--outdir", str(tmp_path)]
    argv += ["--input", f"0={x_path}", "--repeat", "2"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "output_0.npy"), seen[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_matches_litert(ember_install: Path, tmp_path: Path, name: str) -> None:
    entry = MANIFEST[name]
    model = MODELS_DIR / f"{name}.tflite"
    input_files = [MODELS_DIR / f"{name}.input_{i}.npy" for i in range(entry["inputs"])]
    inputs = [np.load(p) for p in input_files]
    resolver = entry["oracle"].split()[-1]
    want = run_litert(model, inputs, resolver)
    stored = [np.load(MODELS_DIR / f"{name}.expected_{i}.npy") for i in range(entry["outputs"])]
    got = run_ember(ember_install, model, input_files, tmp_path)
    assert len(got) == len(want) == len(stored)
    for i, (g, w, s) in enumerate(zip(got, want, stored, strict=True)):
        where = f"{name} output {i}"
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        if entry["exact"] or w.dtype != np.float32:
            np.testing.assert_array_equal(g, w, err_msg=where)
            np.testing.assert_array_equal(s, w, err_msg=f"{where}: stored vs live LiteRT")
        else:
            np.testing.assert_allclose(g, w, rtol=entry["rtol"], atol=entry["atol"], err_msg=where)
            np.testing.assert_allclose(s, w, rtol=entry["rtol"], atol=entry["atol"], err_msg=f"{where}: stored")
