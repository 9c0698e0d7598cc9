"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND agree with LiteRT's reference kernels.

TensorFlow's converter wraps a dilated Keras Conv1D / Conv2D of a model with a dynamic batch in
SPACE_TO_BATCH_ND, CONV_2D, BATCH_TO_SPACE_ND (with a static batch it folds them into one dilated
CONV_2D), float and full-integer int8 alike; Conv1D's are rank 3 ([b, h, c], a [1] block). The
explicit tf.space_to_batch_nd / tf.batch_to_space models of a static batch of 2 have the padded
SPACE_TO_BATCH_ND output as a model output, on an int8 input whose zero point is not 0 (the
padding is the output zero point). Each model must contain both operators, so that these tests
cannot silently stop covering them. Every model runs through `ember-lite-run` on one thread and
on two (EMBER_LITE_SPLIT_ALL=1: every kernel split, the same bytes as one thread) and through
LiteRT with OpResolverType.BUILTIN_REF: int8 outputs equal element for element, float ones within
the agreement tolerance (rtol 1e-5, atol 1e-5).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lite_quant import full_integer

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle: pip install '.[test]'")
tf = pytest.importorskip("tensorflow", reason="the models are made with TensorFlow's converter")

pytestmark = pytest.mark.integration

OPS = ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND")


def _explicit_2d(t: Any) -> list[Any]:
    s = tf.space_to_batch_nd(t, [2, 3], [[1, 0], [2, 1]])
    return [s, tf.batch_to_space(s * 2.0, [2, 3], [[0, 1], [1, 2]])]


def _explicit_1d(t: Any) -> list[Any]:
    s = tf.space_to_batch_nd(t, [3], [[1, 0]])
    return [s, tf.batch_to_space(s, [3], [[2, 1]])]


# name: (input shape without the batch, the batch (None: dynamic), the layer).
def _cases() -> dict[str, tuple[tuple[int, ...], int | None, Callable[[], Any]]]:
    k = tf.keras.layers
    init = "glorot_uniform"
    return {
        "conv1d_dil2_same": (
            (20, 6),
            None,
            lambda: k.Conv1D(8, 3, dilation_rate=2, padding="same", bias_initializer=init),
        ),
        "conv1d_dil2_causal": (
            (20, 6),
            None,
            lambda: k.Conv1D(8, 3, dilation_rate=2, padding="causal", bias_initializer=init),
        ),
        # 23 rows at dilation 3: padded to 24, and the output cropped.
        "conv1d_dil3_valid": (
            (23, 5),
            None,
            lambda: k.Conv1D(7, 3, dilation_rate=3, padding="valid", bias_initializer=init),
        ),
        "conv2d_dil2x3_same": (
            (11, 13, 5),
            None,
            lambda: k.Conv2D(7, 3, dilation_rate=(2, 3), padding="same", bias_initializer=init),
        ),
        "conv2d_dil2x3_valid_relu": (
            (11, 13, 5),
            None,
            lambda: k.Conv2D(7, 3, dilation_rate=(2, 3), padding="valid", activation="relu", bias_initializer=init),
        ),
        "explicit_2d_batch2": (
            (7, 9, 3),
            2,
            lambda: k.Lambda(_explicit_2d, output_shape=[(12, 4, 4, 3), (2, 7, 9, 3)]),
        ),
        "explicit_1d_batch2": ((8, 4), 2, lambda: k.Lambda(_explicit_1d, output_shape=[(6, 3, 4), (2, 6, 4)])),
    }


def _convert(name: str, int8: bool, cache: Path) -> Path:
    path = cache / f"{name}_{'int8' if int8 else 'float'}.tflite"
    if path.exists():
        return path
    shape, batch, layer = _cases()[name]
    tf.keras.utils.set_random_seed(1)
    inp = tf.keras.Input(shape=shape, batch_size=batch)
    conv = tf.lite.TFLiteConverter.from_keras_model(tf.keras.Model(inp, layer()(inp)))
    if int8:
        # An asymmetric range: the input zero point (the padding's value) is not 0.
        full_integer(conv, shape, low=-1.0, high=3.0, batch=batch or 1)
    path.write_bytes(conv.convert())
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("space_batch_models")


def _reference(model: Path, x: np.ndarray) -> list[np.ndarray]:
    interp = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def _ember(install: Path, model: Path, x: np.ndarray, out: Path, threads: int) -> list[np.ndarray]:
    out.mkdir()
    np.save(out / "x.npy", x)
    argv = [str(install / "bin" / "ember-lite-run"), str(model), "--input", f"0={out / 'x.npy'}"]
    argv += ["--outdir", str(out), "--num_threads", str(threads)]
    env = {**os.environ, **({"EMBER_LITE_SPLIT_ALL": "1"} if threads > 1 else {})}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    outs = sorted(out.glob("output_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    return [np.load(p) for p in outs]


@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float"])
@pytest.mark.parametrize("name", sorted(_cases()))
def test_space_batch_models_match_litert(
    ember_install: Path, model_dir: Path, tmp_path: Path, name: str, int8: bool
) -> None:
    model = _convert(name, int8, model_dir)
    ops = [o["op_name"] for o in litert.Interpreter(model_path=str(model))._get_ops_details()]
    for op in OPS:
        assert op in ops, f"the converter no longer emits {op} for {name}: {ops}"
    shape = tuple(litert.Interpreter(model_path=str(model)).get_input_details()[0]["shape"])
    rng = np.random.default_rng(7)
    if int8:
        x = rng.integers(-128, 128, size=shape).astype(np.int8)
    else:
        x = rng.normal(0.0, 1.5, size=shape).astype(np.float32)
    ref = _reference(model, x)
    one = _ember(ember_install, model, x, tmp_path / "t1", 1)
    assert len(one) == len(ref)
    for i, (ours, want) in enumerate(zip(one, ref, strict=True)):
        assert ours.dtype == want.dtype and ours.shape == want.shape, f"output {i}: {ours.shape} vs {want.shape}"
        if int8:
            np.testing.assert_array_equal(ours, want, err_msg=f"output {i}")
        else:
            np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5, err_msg=f"output {i}")
    two = _ember(ember_install, model, x, tmp_path / "t2", 2)
    assert [o.tobytes() for o in two] == [o.tobytes() for o in one], "2 threads differ from 1"
