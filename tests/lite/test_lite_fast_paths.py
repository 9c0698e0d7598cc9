"""ember lite's convolution fast paths agree with LiteRT's reference kernels on every ISA.

Small models made here with TensorFlow's converter hit each path: depthwise rows (odd channel
counts, strides, dilation, channel tails of 8 and of other sizes), 1x1 convolutions as a direct
GEMM (input depth a multiple of 4 or not, 8-channel output tails), convolutions reading their
filter rows (or, dilated, their taps) in place from a padded input, im2col convolutions, a
1001-class softmax and a global average pool (MEAN). Each runs through `ember-lite-run` with
EMBER_CPU_ISA capped at generic, avx2 and avx512 and at amx (no cap: the AMX tiles / AVX-512 VNNI /
AVX2 / portable dispatch), and by LiteRT with OpResolverType.BUILTIN_REF: int8 outputs equal element for element, float
within the agreement tolerance; and again on two threads with every kernel split, byte for byte.
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

litert = pytest.importorskip("ai_edge_litert.interpreter", reason="ai-edge-litert is the oracle")
tf = pytest.importorskip("tensorflow", reason="the models are made with TensorFlow's converter")

pytestmark = pytest.mark.integration

# amx: no cap (AMX's tiles where the CPU has them, else the best of the others); avx512: VNNI.
ISAS = ["generic", "avx2", "avx512", "amx"]


def _layers() -> dict[str, tuple[tuple[int, int, int], Callable[[], Any]]]:
    k = tf.keras.layers
    init = "glorot_uniform"
    return {
        "dw_c20": ((9, 11, 20), lambda: k.DepthwiseConv2D(3, padding="same", bias_initializer=init)),
        "dw_c24_s2_relu6": (
            (10, 9, 24),
            lambda: k.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6", bias_initializer=init),
        ),
        "dw_c40_valid_dil2": (
            (12, 12, 40),
            lambda: k.DepthwiseConv2D(3, dilation_rate=2, padding="valid", bias_initializer=init),
        ),
        # Dilated 3x3 (int8: the VNNI row buffer, its filter columns dil_w apart and its rows
        # dil_h apart): a last block of 4 channels, rows or columns dilated alone.
        "dw_c20_dil3_relu": (
            (11, 13, 20),
            lambda: k.DepthwiseConv2D(3, dilation_rate=3, padding="same", activation="relu", bias_initializer=init),
        ),
        "dw_c32_dil2x1": (
            (10, 9, 32),
            lambda: k.DepthwiseConv2D(3, dilation_rate=(2, 1), padding="same", bias_initializer=init),
        ),
        "dw_c16_dil1x4_valid": (
            (7, 15, 16),
            lambda: k.DepthwiseConv2D(3, dilation_rate=(1, 4), padding="valid", bias_initializer=init),
        ),
        # 3x3 without padding, stride 2 and an odd width: the VNNI row buffer's columns and
        # its last 16-channel block of 1 channel (33).
        "dw_c33_3x3_s2_valid": (
            (9, 10, 33),
            lambda: k.DepthwiseConv2D(3, strides=2, padding="valid", bias_initializer=init),
        ),
        "dw_c16_5x5": ((8, 8, 16), lambda: k.DepthwiseConv2D(5, padding="same", bias_initializer=init)),
        # float 5x5 rows inside the image: weights in registers, four columns at a time, a last
        # block of 8 channels; dilated, and at stride 2 (MobileNetV3's / EfficientNet's 5x5).
        "dw_c72_5x5_relu6": (
            (13, 14, 72),
            lambda: k.DepthwiseConv2D(5, padding="same", activation="relu6", bias_initializer=init),
        ),
        "dw_c24_5x5_dil2": (
            (15, 17, 24),
            lambda: k.DepthwiseConv2D(5, dilation_rate=2, padding="same", bias_initializer=init),
        ),
        "dw_c40_5x5_s2": (
            (17, 16, 40),
            lambda: k.DepthwiseConv2D(5, strides=2, padding="same", bias_initializer=init),
        ),
        # int8 VNNI rows of four-row groups (DepthwiseRowI8VnniKxK): a 7x7 window (a second group
        # of three rows) without padding and a last block of one channel, a 3x5 window at
        # stride (1, 2), a 2x2 window, a 1x1 one.
        "dw_c33_7x7_valid": ((12, 13, 33), lambda: k.DepthwiseConv2D(7, padding="valid", bias_initializer=init)),
        "dw_c20_3x5_s12": (
            (9, 11, 20),
            lambda: k.DepthwiseConv2D((3, 5), strides=(1, 2), padding="same", bias_initializer=init),
        ),
        "dw_c17_2x2": ((6, 7, 17), lambda: k.DepthwiseConv2D(2, padding="same", bias_initializer=init)),
        "dw_c24_1x1_relu": (
            (5, 6, 24),
            lambda: k.DepthwiseConv2D(1, activation="relu", bias_initializer=init),
        ),
        # Three output rows on two threads: the rows' channels are split in 32-channel parts.
        "dw_c72_3x3_rows3": ((3, 3, 72), lambda: k.DepthwiseConv2D(3, padding="same", bias_initializer=init)),
        "dw_c48_5x5_s2_rows3": (
            (6, 6, 48),
            lambda: k.DepthwiseConv2D(5, strides=2, padding="same", bias_initializer=init),
        ),
        "dw_dm2": ((6, 7, 5), lambda: k.DepthwiseConv2D(3, depth_multiplier=2, padding="same", bias_initializer=init)),
        # Depth multipliers over 1 read the input with each channel repeated (the multiplier-1
        # rows: int8 3x3 VNNI at 48 channels, 5x5 at stride 2 with 36).
        "dw_dm3_c16": (
            (9, 8, 16),
            lambda: k.DepthwiseConv2D(3, depth_multiplier=3, padding="same", bias_initializer=init),
        ),
        "dw_dm4_5x5_s2": (
            (11, 12, 9),
            lambda: k.DepthwiseConv2D(5, strides=2, depth_multiplier=4, padding="same", bias_initializer=init),
        ),
        "pw_c16_to_24": ((7, 9, 16), lambda: k.Conv2D(24, 1, bias_initializer=init)),
        "pw_c8_to_8_relu": ((11, 5, 8), lambda: k.Conv2D(8, 1, activation="relu", bias_initializer=init)),
        "pw_c6_to_40": ((5, 6, 6), lambda: k.Conv2D(40, 1, bias_initializer=init)),
        "pw_c32_to_56": ((9, 9, 32), lambda: k.Conv2D(56, 1, bias_initializer=init)),
        # Groups of three 16-channel blocks (int8), each whole: MobileNetV2's 8 -> 48 expansion.
        "pw_c8_to_96": ((7, 6, 8), lambda: k.Conv2D(96, 1, bias_initializer=init)),
        # Few pixels, many channels: two threads split the output channels (int8: groups of
        # the packed weights, with 4-row tiles on 6x6; float: 16-column panels on 3x3).
        "pw_c24_to_144_6x6": ((6, 6, 24), lambda: k.Conv2D(144, 1, bias_initializer=init)),
        "pw_c112_to_200_3x3": ((3, 3, 112), lambda: k.Conv2D(200, 1, bias_initializer=init)),
        "conv3x3_c3_to_16_s2": ((13, 11, 3), lambda: k.Conv2D(16, 3, strides=2, padding="same", bias_initializer=init)),
        "conv3x3_c12_to_24": ((7, 8, 12), lambda: k.Conv2D(24, 3, padding="same", bias_initializer=init)),
        # Output rows of 16 pixels or more whose filter rows are 32-64 bytes long or split into
        # such chunks: AMX's tiles (int8, where the CPU has them), with a last row tile that
        # overlaps the one before it (20 and 17 pixels) and a 16-channel block left over (40).
        "conv3x3_c32_to_40_w20": ((18, 20, 32), lambda: k.Conv2D(40, 3, padding="same", bias_initializer=init)),
        "conv3x3_c16_to_32_s2_w17": (
            (34, 34, 16),
            lambda: k.Conv2D(32, 3, strides=2, padding="same", bias_initializer=init),
        ),
        # Filter rows read in place from a padded copy of the input (float and int8): a tall
        # filter, unequal strides and no padding. Dilated filters read each tap in place (with
        # column dilation) or each filter row (rows dilated only). int8 runs that are not whole
        # 4-byte groups (3-channel taps, 6-byte taps, 5-channel rows of 15 bytes, 1x1 over 6
        # channels) read pixels padded to 4 or 8 bytes. Filters of more than 64 taps take im2col.
        "conv3x3_c5_to_12": ((9, 8, 5), lambda: k.Conv2D(12, 3, padding="same", bias_initializer=init)),
        "conv5x3_c4_to_20_s2x1_valid": (
            (11, 9, 4),
            lambda: k.Conv2D(20, (5, 3), strides=(2, 1), padding="valid", bias_initializer=init),
        ),
        "conv3x3_c8_to_16_dil2": (
            (10, 10, 8),
            lambda: k.Conv2D(16, 3, dilation_rate=2, padding="same", bias_initializer=init),
        ),
        "conv3x2_c6_to_12_dil2x1_valid": (
            (11, 7, 6),
            lambda: k.Conv2D(12, (3, 2), dilation_rate=(2, 1), padding="valid", bias_initializer=init),
        ),
        "conv3x3_c3_to_8_dil3": (
            (12, 10, 3),
            lambda: k.Conv2D(8, 3, dilation_rate=3, padding="same", bias_initializer=init),
        ),
        "conv3x3_c6_to_20_dil2": (
            (9, 9, 6),
            lambda: k.Conv2D(20, 3, dilation_rate=2, padding="same", bias_initializer=init),
        ),
        "conv9x9_c4_to_16_dil2": (
            (20, 19, 4),
            lambda: k.Conv2D(16, 9, dilation_rate=2, padding="same", bias_initializer=init),
        ),
        # A residual ADD (two same-shape int8 inputs of different scales; 300 values: a
        # masked last vector) behind the 1x1 conv that feeds it.
        "add_residual_c12": ((5, 5, 12), lambda: lambda t: k.Add()([t, k.Conv2D(12, 1, bias_initializer=init)(t)])),
        # A classifier's softmax (int8: per-difference tables; float: split rows) and a global
        # average pool of several 64-channel chunks (MEAN's [outer, inner, depth] path).
        "softmax_1001": ((1, 1, 1001), lambda: k.Softmax()),
        # Attention-like rows: many short rows, whole rows to each thread (float).
        "softmax_rows48_c40": ((48, 40), lambda: k.Softmax()),
        # Broadcast ADD / MUL in runs (int8: the vector kernels, a broadcast input repeated):
        # squeeze-and-excite's [1, 1, C] scale, a pooled [1, 1, C] shift, a scalar, a [H, 1, C]
        # mean along the width, and SUB (int8: scalar per run).
        "mul_se_c40": (
            (6, 7, 40),
            lambda: lambda t: t * k.Dense(40, activation="sigmoid")(k.GlobalAveragePooling2D(keepdims=True)(t)),
        ),
        "add_pooled_c24": ((5, 6, 24), lambda: lambda t: t + k.GlobalAveragePooling2D(keepdims=True)(t)),
        # int8: one stream with the repeating input read cyclically; rows longer than the 64-byte
        # step and not a multiple of it (two threads start mid-row), the repeating input first.
        "mul_se_c100": (
            (4, 5, 100),
            lambda: lambda t: t * k.Dense(100, activation="sigmoid")(k.GlobalAveragePooling2D(keepdims=True)(t)),
        ),
        "add_pooled_first_c100": (
            (4, 5, 100),
            lambda: k.Lambda(lambda t: tf.reduce_mean(t, axis=[1, 2], keepdims=True) + t),
        ),
        # The broadcast input first (float: rows of the small input's size either way).
        "mul_pooled_first_c20": (
            (5, 6, 20),
            lambda: k.Lambda(lambda t: tf.reduce_mean(t, axis=[1, 2], keepdims=True) * t),
        ),
        "mul_scalar_c20": ((5, 6, 20), lambda: lambda t: k.Concatenate()([t, t * 0.75])),
        # int8 with a scalar: a table of the 256 outputs made per Invoke, then looked up (a
        # constant, and a scalar computed at run time).
        "add_scalar_c20": ((5, 6, 20), lambda: lambda t: k.Concatenate()([t, t + 0.5])),
        "mul_by_max_c24": ((5, 6, 24), lambda: k.Lambda(lambda t: t * tf.reduce_max(t, axis=[1, 2, 3], keepdims=True))),
        "add_width_mean_c16": (
            (5, 7, 16),
            lambda: lambda t: t + k.Lambda(lambda u: tf.reduce_mean(u, axis=2, keepdims=True))(t),
        ),
        "sub_pooled_c12": ((5, 6, 12), lambda: lambda t: t - k.GlobalAveragePooling2D(keepdims=True)(t)),
        # LayerNormalization: MEAN over the last axis (rows in fours, then the rest: 7 rows),
        # SQUARED_DIFFERENCE against a [rows, 1] mean, RSQRT; MAXIMUM / MINIMUM broadcasts (int8:
        # the stored values, one quantization).
        "layer_norm_rows7_c48": ((7, 48), lambda: k.LayerNormalization()),
        # Rows in sixteens (eight values of each transposed per step), 5 rows left, 4 values left.
        "layer_norm_rows37_c52": ((37, 52), lambda: k.LayerNormalization()),
        "mean_rows37_c52": ((37, 52), lambda: k.Lambda(lambda t: tf.reduce_mean(t, axis=-1))),
        # int8 SQUARED_DIFFERENCE's table of outputs: input 1 varying along the run (same
        # shapes), and input 0 the broadcast one.
        "sqdiff_same_c70": ((9, 70), lambda: k.Lambda(lambda t: tf.math.squared_difference(t, t[..., ::-1]))),
        "sqdiff_mean_first_c70": (
            (9, 70),
            lambda: k.Lambda(lambda t: tf.math.squared_difference(tf.reduce_mean(t, axis=-1, keepdims=True), t)),
        ),
        "max_min_rows9_c20": (
            (9, 20),
            lambda: k.Lambda(
                lambda t: (
                    tf.maximum(t, tf.reduce_mean(t, axis=-1, keepdims=True))
                    - tf.minimum(t, tf.reduce_max(t, axis=-1, keepdims=True) * 0.5)
                )
            ),
        ),
        # PAD (the fill by element width, int8 the zero point): uneven amounts on each side.
        "pad_c24": ((5, 6, 24), lambda: k.ZeroPadding2D(((1, 2), (3, 0)))),
        # PAD's rows: channels padded too (runs of C), and PADV2's constant on every axis.
        "pad_channels_c5": ((4, 3, 5), lambda: k.Lambda(lambda t: tf.pad(t, [[0, 0], [2, 1], [0, 0], [3, 1]]))),
        "padv2_all_axes_c6": (
            (3, 4, 6),
            lambda: k.Lambda(lambda t: tf.pad(t, [[1, 1], [0, 2], [1, 0], [0, 2]], constant_values=0.5)),
        ),
        # FULLY_CONNECTED over many rows (a transformer's tokens): float one GEMM in 8-row blocks,
        # int8 (VNNI) 4-row blocks with 4-block groups, a last block of 2 rows, 50 columns.
        "dense_rows22_c40_to_50": ((22, 40), lambda: k.Dense(50, bias_initializer=init)),
        "mean_hw_c200": ((5, 5, 200), lambda: k.GlobalAveragePooling2D(keepdims=True)),
        # Float element loops that vectorise (HARD_SWISH, LEAKY_RELU; LOGISTIC and TANH with
        # vec_math.h's e^x and tanh, swish as LOGISTIC and MUL); int8 their own kernels.
        "logistic_c24": ((5, 7, 24), lambda: k.Activation("sigmoid")),
        "tanh_c24": ((5, 7, 24), lambda: k.Activation("tanh")),
        # int8 EXP and LOG: 256-entry tables as LiteRT's (LOG's input from a sigmoid, so 0 is met).
        "exp_c24": ((5, 7, 24), lambda: k.Activation("exponential")),
        "log_sigmoid_c24": ((5, 7, 24), lambda: k.Lambda(lambda t: tf.math.log(tf.math.sigmoid(t)))),
        # SELU: int8 GREATER (each input rescaled, LiteRT's ComparisonWithScaling), EXP, SELECT_V2.
        "selu_c24": ((5, 7, 24), lambda: k.Activation("selu")),
        "abs_c24": ((5, 7, 24), lambda: k.Lambda(lambda t: tf.math.abs(t))),
        "sqrt_abs_c24": ((5, 7, 24), lambda: k.Lambda(lambda t: tf.math.sqrt(tf.math.abs(t)))),
        # softsign x / (1 + |x|): int8 ABS, ADD and DIV (LiteRT's fixed-point reciprocal).
        "softsign_c24": ((5, 7, 24), lambda: k.Activation("softsign")),
        "swish_c19": ((5, 7, 19), lambda: k.Activation("swish")),
        # int8 MUL of x and a table activation of x (one table over x): the activation as the
        # MUL's first input (x off zero: a nonzero zero point), and a LOGISTIC read by the MUL
        # and by a CONCATENATION too.
        "tanh_times_x_c21": ((5, 6, 21), lambda: k.Lambda(lambda t: tf.math.tanh(t + 1.5) * (t + 1.5))),
        "swish_fanout_c18": (
            (5, 6, 18),
            lambda: k.Lambda(lambda t: tf.concat([t * tf.math.sigmoid(t), tf.math.sigmoid(t)], axis=-1)),
        ),
        "gelu_c24": ((5, 7, 24), lambda: k.Activation("gelu")),
        "gelu_tanh_c24": ((5, 7, 24), lambda: k.Lambda(lambda t: tf.nn.gelu(t, approximate=True))),
        "hard_swish_c24": ((5, 7, 24), lambda: k.Activation("hard_swish")),
        "leaky_relu_c13": ((5, 7, 13), lambda: k.LeakyReLU(negative_slope=0.2)),
        # TRANSPOSE_CONV as one GEMM (float; int8 with VNNI) then a gather of each output's
        # taps: stride 2 with SAME padding and a channel tail, a 4x4 VALID filter at stride 2, a
        # fused relu at stride 1 (int8 without VNNI: the direct gather).
        "tconv3x3_s2_c12_to_20": (
            (6, 7, 12),
            lambda: k.Conv2DTranspose(20, 3, strides=2, padding="same", bias_initializer=init),
        ),
        "tconv4x4_s2_valid_c8_to_16": (
            (5, 4, 8),
            lambda: k.Conv2DTranspose(16, 4, strides=2, padding="valid", bias_initializer=init),
        ),
        "tconv3x3_s1_relu_c5_to_9": (
            (6, 5, 5),
            lambda: k.Conv2DTranspose(9, 3, padding="same", activation="relu", bias_initializer=init),
        ),
        # RESIZE_BILINEAR (int8: 20-bit weights in 32-bit lanes, by rows from 8 channels up: each
        # input row's horizontal blend once): half-pixel centres up and
        # down (Keras's Resizing), and align_corners.
        "resize_up_c20": ((7, 6, 20), lambda: k.Resizing(15, 11, interpolation="bilinear")),
        "resize_down_c9": ((13, 17, 9), lambda: k.Resizing(6, 7, interpolation="bilinear")),
        # int8 by rows (8 channels and more): rows down, columns up.
        "resize_mixed_c8": ((9, 5, 8), lambda: k.Resizing(4, 12, interpolation="bilinear")),
        "resize_align_c16": (
            (5, 7, 16),
            lambda: k.Lambda(lambda t: tf.compat.v1.image.resize_bilinear(t, (9, 13), align_corners=True)),
        ),
        # Pools over whole chunks of channels and a tail (70: int8 maxima 64 + 6, the others
        # 2 x 32 + 6), windows cut by SAME padding (averages over fewer taps), a relu6 after.
        "maxpool_c70_3x3_s2": ((9, 11, 70), lambda: k.MaxPooling2D(3, strides=2, padding="same")),
        "avgpool_c70_3x3_s2": ((9, 11, 70), lambda: k.AveragePooling2D(3, strides=2, padding="same")),
        "avgpool_c20_2x2_relu6": ((7, 9, 20), lambda: lambda t: k.ReLU(6.0)(k.AveragePooling2D(2)(t))),
        "maxpool_c8_2x2_relu6": ((8, 6, 8), lambda: lambda t: k.ReLU(6.0)(k.MaxPooling2D(2)(t))),
        # int8: the window's rows folded in pairs (5 rows: a pair, a pair, one), 4 columns.
        "maxpool_c16_5x4_s1": ((9, 8, 16), lambda: k.MaxPooling2D((5, 4), strides=1, padding="same")),
    }


def _convert(name: str, int8: bool, cache: Path) -> Path:
    path = cache / f"{name}_{'int8' if int8 else 'float'}.tflite"
    if path.exists():
        return path
    shape, layer = _layers()[name]
    tf.keras.utils.set_random_seed(1)
    inp = tf.keras.Input(shape=shape, batch_size=1)
    model = tf.keras.Model(inp, layer()(inp))
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        full_integer(conv, shape)
    path.write_bytes(conv.convert())
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fast_path_models")


def _reference(model: Path, x: np.ndarray) -> np.ndarray:
    interp = litert.Interpreter(model_path=str(model), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    out: np.ndarray = interp.get_tensor(interp.get_output_details()[0]["index"]).copy()
    return out


def _ember(install: Path, model: Path, x: np.ndarray, isa: str, tmp: Path, threads: int = 1) -> np.ndarray:
    out_dir = tmp / f"{isa}_t{threads}"
    out_dir.mkdir()
    np.save(tmp / "x.npy", x)
    argv = [
        str(install / "bin" / "ember-lite-run"),
        str(model),
        "--input",
        f"0={tmp / 'x.npy'}",
        "--outdir",
        str(out_dir),
        "--num_threads",
        str(threads),
    ]
    env = {**os.environ, "EMBER_CPU_ISA": isa, **({"EMBER_LITE_SPLIT_ALL": "1"} if threads > 1 else {})}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    out: np.ndarray = np.load(out_dir / "output_0.npy")
    return out


@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float"])
@pytest.mark.parametrize("name", sorted(_layers()))
def test_fast_paths_match_litert_on_every_isa(
    ember_install: Path, model_dir: Path, tmp_path: Path, name: str, int8: bool
) -> None:
    model = _convert(name, int8, model_dir)
    shape = (1, *_layers()[name][0])
    rng = np.random.default_rng(3)
    if int8:
        x = rng.integers(-128, 128, size=shape).astype(np.int8)
    else:
        x = rng.normal(0.0, 1.5, size=shape).astype(np.float32)
    ref = _reference(model, x)
    for isa in ISAS:
        ours = _ember(ember_install, model, x, isa, tmp_path)
        assert ours.dtype == ref.dtype and ours.shape == ref.shape
        if int8:
            np.testing.assert_array_equal(ours, ref, err_msg=f"EMBER_CPU_ISA={isa}")
        else:
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5, err_msg=f"EMBER_CPU_ISA={isa}")
        # Every kernel split over two threads: the same bytes.
        split = _ember(ember_install, model, x, isa, tmp_path, threads=2)
        assert split.tobytes() == ours.tobytes(), f"EMBER_CPU_ISA={isa}: 2 threads differ from 1"


def test_float_softmax_extremes_match_litert_on_every_isa(ember_install: Path, model_dir: Path, tmp_path: Path) -> None:
    """The float softmax's own exponential (vectorized, not std::exp) over a classifier row of
    logits spread wide, with masked (-inf), huge negative and repeated maximal entries, and over
    a row of equal values; each ISA within the agreement tolerance, two threads byte for byte."""
    model = _convert("softmax_1001", False, model_dir)
    rng = np.random.default_rng(11)
    wide = rng.uniform(-120.0, 30.0, size=(1, 1, 1, 1001)).astype(np.float32)
    wide[0, 0, 0, ::97] = -np.inf
    wide[0, 0, 0, 5::89] = -1e30
    wide[0, 0, 0, [3, 500]] = 30.0
    flat = np.full((1, 1, 1, 1001), 7.25, dtype=np.float32)
    for case, x in enumerate((wide, flat)):
        ref = _reference(model, x)
        assert np.isfinite(ref).all() and ref.sum() == pytest.approx(1.0, abs=1e-4)
        for isa in ISAS:
            work = tmp_path / f"{isa}_{case}"
            work.mkdir()
            ours = _ember(ember_install, model, x, isa, work)
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-7, err_msg=f"EMBER_CPU_ISA={isa}")
            split = _ember(ember_install, model, x, isa, work, threads=2)
            assert split.tobytes() == ours.tobytes(), f"EMBER_CPU_ISA={isa}: 2 threads differ from 1"


def _dense_on_sequences() -> tuple[Any, tuple[int, ...], set[str]]:
    # Keras Dense on a rank-3 and a rank-4 input: SHAPE, GATHER, REDUCE_PROD, PACK, RESHAPE,
    # FULLY_CONNECTED, RESHAPE, with placeholder shapes ([1, 1], [1, units]) between the RESHAPEs.
    k = tf.keras.layers
    inp = tf.keras.Input(shape=(16, 32))  # batch None: dynamic
    x = k.Dense(48, activation="gelu")(inp)
    x = k.LayerNormalization()(k.Dense(32)(x) + inp)
    grid = k.Dense(8)(k.Reshape((4, 4, 32))(x))  # rank 4: three dims gathered
    return tf.keras.Model(inp, k.Flatten()(grid)), (16, 32), {"SHAPE", "REDUCE_PROD", "FULLY_CONNECTED"}


def _conv_transpose_decoder() -> tuple[Any, tuple[int, ...], set[str]]:
    # Conv2DTranspose on a dynamic batch: its output_shape is SHAPE, STRIDED_SLICE, PACK.
    k = tf.keras.layers
    inp = tf.keras.Input(shape=(8, 8, 6))
    skip = k.Conv2D(8, 3, padding="same", activation="relu")(inp)
    up = k.Conv2DTranspose(8, 2, strides=2)(k.MaxPooling2D()(skip))
    return tf.keras.Model(inp, k.Conv2D(3, 1)(k.Concatenate()([up, skip]))), (8, 8, 6), {"SHAPE", "TRANSPOSE_CONV"}


def _causal_attention() -> tuple[Any, tuple[int, ...], set[str]]:
    # A causal mask on a dynamic batch: FILL of SHAPE (ones), LOGICAL_AND with the band, and
    # SELECT_V2 of the (int8: quantized) scores.
    inp = tf.keras.Input(shape=(12, 16))
    out = tf.keras.layers.MultiHeadAttention(2, 8)(inp, inp, use_causal_mask=True)
    return tf.keras.Model(inp, out), (12, 16), {"SHAPE", "FILL", "SELECT_V2"}


@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float"])
@pytest.mark.parametrize(
    "build",
    [_dense_on_sequences, _conv_transpose_decoder, _causal_attention],
    ids=["dense_seq", "conv_transpose", "causal_attention"],
)
def test_shape_computations_on_a_dynamic_batch_are_evaluated(
    ember_install: Path, tmp_path: Path, int8: bool, build: Callable[[], tuple[Any, tuple[int, ...], set[str]]]
) -> None:
    """Shapes computed in the graph from a dynamic batch. Dense on a sequence: the converter
    writes placeholder shapes for the tensors between its RESHAPEs, and ember refused the model
    ("cannot reshape [1,16,32] to [1,1]") or, sized by the placeholders, wrote past its arena.
    Conv2DTranspose: ember refused its output_shape as not constant. A causal attention mask:
    ember had no FILL, nor an int8 SELECT_V2. Shape computations are now
    evaluated and folded before planning, and the placeholders refined. Against LiteRT's
    reference kernels on every ISA, one thread and two."""
    tf.keras.utils.set_random_seed(5)
    keras_model, shape, expected_ops = build()
    conv = tf.lite.TFLiteConverter.from_keras_model(keras_model)
    if int8:
        full_integer(conv, shape)
    model = tmp_path / "dynamic.tflite"
    model.write_bytes(conv.convert())
    probe = litert.Interpreter(model_path=str(model))
    ops = {o["op_name"] for o in probe._get_ops_details()}
    assert expected_ops <= ops, f"the converter's pattern changed: {sorted(ops)}"
    if build is _dense_on_sequences:
        placeholders = [t for t in probe.get_tensor_details() if list(t["shape_signature"]) == [-1, -1]]
        assert placeholders, "no tensor left with both dims open: the case this test covers is gone"
    rng = np.random.default_rng(6)
    x = (
        rng.integers(-128, 128, size=(1, *shape)).astype(np.int8)
        if int8
        else rng.uniform(-2, 2, size=(1, *shape)).astype(np.float32)
    )
    ref = _reference(model, x)
    for isa in ISAS:
        work = tmp_path / isa
        work.mkdir()
        ours = _ember(ember_install, model, x, isa, work)
        assert ours.shape == ref.shape
        if int8:
            np.testing.assert_array_equal(ours, ref, err_msg=f"EMBER_CPU_ISA={isa}")
        else:
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5, err_msg=f"EMBER_CPU_ISA={isa}")
        split = _ember(ember_install, model, x, isa, work, threads=2)
        assert split.tobytes() == ours.tobytes(), f"EMBER_CPU_ISA={isa}: 2 threads differ from 1"


@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float"])
def test_dynamic_batch_reshape_through_shape_matches_litert(ember_install: Path, tmp_path: Path, int8: bool) -> None:
    """EfficientNet's and MobileNetV3's squeeze-and-excite as keras.applications builds them:
    Reshape on a dynamic batch converts to SHAPE, STRIDED_SLICE, PACK and RESHAPE (ember refused
    SHAPE, so neither model loaded). Against LiteRT's reference kernels on every ISA: int8 byte
    for byte, float within the agreement tolerance."""
    tf.keras.utils.set_random_seed(3)
    k = tf.keras.layers
    inp = tf.keras.Input(shape=(5, 6, 24))  # batch None: dynamic
    se = k.Reshape((1, 1, 24))(k.Dense(24, activation="sigmoid")(k.GlobalAveragePooling2D()(inp)))
    conv = tf.lite.TFLiteConverter.from_keras_model(tf.keras.Model(inp, inp * se))
    if int8:
        full_integer(conv, (5, 6, 24))
    model = tmp_path / "se_dynamic.tflite"
    model.write_bytes(conv.convert())
    ops = [o["op_name"] for o in litert.Interpreter(model_path=str(model))._get_ops_details()]
    assert "SHAPE" in ops, f"the converter no longer emits SHAPE here: {ops}"
    rng = np.random.default_rng(4)
    x = (
        rng.integers(-128, 128, size=(1, 5, 6, 24)).astype(np.int8)
        if int8
        else rng.uniform(-2, 2, size=(1, 5, 6, 24)).astype(np.float32)
    )
    ref = _reference(model, x)
    for isa in ISAS:
        work = tmp_path / isa
        work.mkdir()
        ours = _ember(ember_install, model, x, isa, work)
        if int8:
            np.testing.assert_array_equal(ours, ref, err_msg=f"EMBER_CPU_ISA={isa}")
        else:
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5, err_msg=f"EMBER_CPU_ISA={isa}")


def test_float_mean_over_rows_sums_each_row_in_order(ember_install: Path, model_dir: Path, tmp_path: Path) -> None:
    """A float MEAN over the last axis sums each row in order, as LiteRT's reference does (the
    rows in sixteens, transposed, or four scalar chains): the same floats as a serial float32 sum
    and as LiteRT's kernel, on every ISA and split over two threads."""
    model = _convert("mean_rows37_c52", False, model_dir)
    x = np.random.default_rng(8).normal(0.0, 100.0, size=(1, 37, 52)).astype(np.float32)
    serial = np.cumsum(x, axis=-1, dtype=np.float32)[..., -1] / np.float32(52)
    ref = _reference(model, x)
    np.testing.assert_array_equal(ref, serial)
    for isa in ISAS:
        work = tmp_path / isa
        work.mkdir()
        np.testing.assert_array_equal(_ember(ember_install, model, x, isa, work), ref, err_msg=f"EMBER_CPU_ISA={isa}")
        split = _ember(ember_install, model, x, isa, work, threads=2)
        np.testing.assert_array_equal(split, ref, err_msg=f"EMBER_CPU_ISA={isa}, two threads")


@pytest.mark.parametrize(
    "name",
    [
        "logistic_c24",
        "tanh_c24",
        "gelu_c24",
        "hard_swish_c24",
        "leaky_relu_c13",
        "exp_c24",
        "log_sigmoid_c24",
        "selu_c24",
        "abs_c24",
        "softsign_c24",
        "sqrt_abs_c24",
    ],
)
def test_int8_table_ops_match_litert_for_every_input_value(
    ember_install: Path, model_dir: Path, tmp_path: Path, name: str
) -> None:
    """The int8 activations that read a 256-entry table (on AVX-512 VBMI: four 64-byte registers
    and two byte permutes per 64 values) for each of the 256 int8 inputs, at shuffled positions
    and with a partial last vector: bit-exact with LiteRT's reference kernels on every ISA."""
    model = _convert(name, True, model_dir)
    interp = litert.Interpreter(model_path=str(model))
    shape = tuple(interp.get_input_details()[0]["shape"])
    count = int(np.prod(shape))
    values = np.tile(np.arange(-128, 128, dtype=np.int8), count // 256 + 1)[:count]
    assert count >= 256 and count % 64 != 0, f"{name}: {count} values do not hold every int8 once and a partial vector"
    x = np.random.default_rng(5).permutation(values).reshape(shape)
    ref = _reference(model, x)
    for isa in ISAS:
        work = tmp_path / isa
        work.mkdir()
        np.testing.assert_array_equal(_ember(ember_install, model, x, isa, work), ref, err_msg=f"EMBER_CPU_ISA={isa}")


@pytest.mark.parametrize(
    ("name", "rtol", "atol"),
    [
        ("logistic_c24", 1e-6, 1e-30),
        ("tanh_c24", 1e-6, 1e-30),
        ("gelu_c24", 1e-5, 1e-30),
        ("gelu_tanh_c24", 1e-5, 1e-6),
    ],
)
def test_float_logistic_and_tanh_over_their_range_match_litert(
    ember_install: Path, model_dir: Path, tmp_path: Path, name: str, rtol: float, atol: float
) -> None:
    """LOGISTIC's, TANH's and GELU's own e^x, tanh and 1 + erf (vec_math.h, vectorised, not the C
    library's) over a sweep of the line: both sides of TANH's polynomial / exponential switch at
    0.625 and of erf's at 1 and 2, LOGISTIC's cutoffs and the exponential's floor, tiny and huge
    magnitudes, the saturated tails, infinities and NaN;
    each ISA within `rtol` of LiteRT's reference kernels (which call std::exp, std::tanh and
    std::erf / erfc; GELU's far negative tail, 1e-24 and below, carries e^(-x^2)'s conditioning:
    2e-6 relative), with no absolute slack but for the tanh form of GELU (LiteRT's own tanh there
    reaches -1 exactly from -7.9, where 1 + tanh keeps 1e-7 in ours: the agreement tolerance's
    1e-6), two threads byte for byte."""
    model = _convert(name, False, model_dir)
    values = np.concatenate(
        [
            np.linspace(-12.0, 12.0, 600),
            np.array([0.625, -0.625, 0.62499994, 0.62500006, 1e-30, -1e-30, 1e-7, -3e-4, 0.0, -0.0]),
            np.array([1.4142135, -1.4142135, 1.4142137, -1.4142137, 2.828427, -2.828427, 2.8284273]),
            np.array([44.0, -44.0, 88.0, -88.0, 100.0, -100.0, 1e30, -1e30, np.inf, -np.inf]),
            # LOGISTIC's cutoffs (e^x below -9, 1 above 16.619047), the exponential's floor (0
            # below -87.3; the first exponent whose 2^n is 2^-126), NaN.
            np.array([-9.0, -9.000001, -8.999999, 16.619047, 16.61905, 16.619045, 43.65, -43.65]),
            np.array([-87.0, -87.29, -87.3, -87.31, -86.9, -103.0, 87.3, np.nan, -np.nan]),
        ]
    ).astype(np.float32)
    x = np.resize(values, (1, 5, 7, 24)).astype(np.float32)
    ref = _reference(model, x)
    for isa in ISAS:
        ours = _ember(ember_install, model, x, isa, tmp_path / isa if (tmp_path / isa).mkdir() is None else tmp_path)
        np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, err_msg=f"EMBER_CPU_ISA={isa}")
        split = _ember(ember_install, model, x, isa, tmp_path / isa, threads=2)
        assert split.tobytes() == ours.tobytes(), f"EMBER_CPU_ISA={isa}: 2 threads differ from 1"


@pytest.mark.parametrize(
    ("axis", "keepdims"), [(-1, False), ((1, 2), True), ((0, 1, 2, 3), False)], ids=["last", "hw_keep", "all"]
)
def test_int8_sum_matches_litert_builtin_kernel(ember_install: Path, tmp_path: Path, axis: Any, keepdims: bool) -> None:
    """int8 SUM with the output quantized unlike the input (Keras AdditiveAttention's reduce_sum):
    int32 sums rescaled in float as LiteRT's QuantizedMeanOrSum(compute_sum). The oracle is
    LiteRT's builtin kernel: its reference SUM leaves the output unwritten on these models
    (every value -1 here; its Eval ignores the helper's failure)."""
    tf.keras.utils.set_random_seed(8)
    k = tf.keras.layers
    inp = tf.keras.Input(shape=(6, 5, 12))
    x = k.Conv2D(12, 1)(inp)
    out = k.Lambda(lambda t: tf.reduce_sum(tf.tanh(t), axis=axis, keepdims=keepdims))(x)
    conv = tf.lite.TFLiteConverter.from_keras_model(tf.keras.Model(inp, out))
    full_integer(conv, (6, 5, 12))
    model = tmp_path / "sum.tflite"
    model.write_bytes(conv.convert())
    ops = [o["op_name"] for o in litert.Interpreter(model_path=str(model))._get_ops_details()]
    assert "SUM" in ops, ops
    x_in = np.random.default_rng(2).integers(-128, 128, size=(1, 6, 5, 12)).astype(np.int8)
    interp = litert.Interpreter(
        model_path=str(model), experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    )
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x_in)
    interp.invoke()
    ref = interp.get_tensor(interp.get_output_details()[0]["index"])
    assert len(np.unique(ref)) > 1 or ref.size == 1
    ours = _ember(ember_install, model, x_in, "amx", tmp_path)
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize(
    ("arch", "size"), [("MobileNetV3Small", 96), ("EfficientNetB0", 64)], ids=["mobilenet_v3_small", "efficientnet_b0"]
)
def test_whole_int8_keras_applications_equal_litert_reference(
    ember_install: Path, tmp_path: Path, arch: str, size: int
) -> None:
    """Whole keras.applications networks (random weights, dynamic batch, full-integer
    quantization): every int8 output byte equal to LiteRT's reference kernels, one thread and two.
    The classifier's softmax is left out (classifier_activation=None): LiteRT's reference int8
    SOFTMAX aborts the process on these logits; ember's softmax is checked on its own above."""
    tf.keras.utils.set_random_seed(7)
    model = getattr(tf.keras.applications, arch)(
        input_shape=(size, size, 3), weights=None, classes=16, classifier_activation=None
    )
    rng = np.random.default_rng(0)
    # Fresh BatchNormalization statistics let activations fade to constant logits.
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            layer.set_weights([rng.uniform(0.5, 1.5, w.shape).astype(np.float32) for w in layer.get_weights()])
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    full_integer(conv, (size, size, 3), low=-1.0, high=1.0, samples=4)
    path = tmp_path / f"{arch}.tflite"
    path.write_bytes(conv.convert())
    x = np.random.default_rng(9).integers(-128, 128, size=(1, size, size, 3)).astype(np.int8)
    ref = _reference(path, x)
    assert ref.shape == (1, 16) and len(np.unique(ref)) > 4, f"degenerate logits: {ref}"
    ours = _ember(ember_install, path, x, "amx", tmp_path)
    np.testing.assert_array_equal(ours, ref)
    split = _ember(ember_install, path, x, "amx", tmp_path, threads=2)
    assert split.tobytes() == ours.tobytes(), "2 threads differ from 1"
