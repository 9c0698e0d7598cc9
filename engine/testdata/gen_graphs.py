"""Generate TensorFlow GraphDef fixtures and TensorFlow's own outputs for them.

Run with a Python that has tensorflow-cpu (the oracle), from anywhere:

    /opt/oracle/bin/python engine/testdata/gen_graphs.py [NAME ...]

Each fixture is a folder under engine/testdata/graphs/<name>/ holding
  model.pb      binary tensorflow.GraphDef
  model.json    the same GraphDef in the protobuf JSON mapping (json_format.MessageToJson)
  input_<i>.npy the values fed
  expected_<i>.npy  what TensorFlow computed for fetch i, running this very GraphDef
  manifest.json {"feeds": [{"name", "file"}], "fetches": [...], "expected": [...]}
The files are small and committed, so tests need no TensorFlow.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

OUT = Path(__file__).resolve().parent / "graphs"
v1 = tf.compat.v1
# error_codes.proto names, as ember-run prints them.
_CODE_NAMES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}


@dataclass(frozen=True)
class Fixture:
    """A GraphDef with the values to feed and the tensors to fetch."""

    graph_def: tf.compat.v1.GraphDef
    feeds: dict[str, np.ndarray]
    fetches: list[str]


def rand(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def v1_graph(build: Callable[[], tuple[dict[str, np.ndarray], list[tf.Tensor]]]) -> Fixture:
    """Builds a TF1-style graph; `build` returns the feeds (by placeholder name) and fetches."""
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches = build()
    return Fixture(graph.as_graph_def(), feeds, [t.name for t in fetches])


def mlp() -> Fixture:
    """A two-layer MLP written with tf.Variable and frozen the TF2 way."""
    rng = np.random.default_rng(1)
    w1 = tf.Variable(rand(rng, 8, 16, scale=0.5), name="w1")
    b1 = tf.Variable(rand(rng, 16, scale=0.1), name="b1")
    w2 = tf.Variable(rand(rng, 16, 4, scale=0.5), name="w2")
    b2 = tf.Variable(rand(rng, 4, scale=0.1), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32, name="x")])  # type: ignore[untyped-decorator]
    def model(x: tf.Tensor) -> tf.Tensor:
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
        return tf.nn.softmax(tf.nn.bias_add(tf.matmul(h, w2), b2))

    frozen = convert_variables_to_constants_v2(model.get_concrete_function())
    graph_def = frozen.graph.as_graph_def()
    fetch = frozen.outputs[0].name
    return Fixture(graph_def, {"x": rand(rng, 4, 8)}, [fetch])


def convnet() -> Fixture:
    rng = np.random.default_rng(2)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 12, 12, 3], name="image")
        h = tf.nn.conv2d(x, rand(rng, 3, 3, 3, 8, scale=0.3), strides=1, padding="SAME", name="conv1")
        h = tf.nn.relu(tf.nn.bias_add(h, rand(rng, 8, scale=0.1)), name="relu1")
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")
        h = tf.nn.depthwise_conv2d(h, rand(rng, 3, 3, 8, 2, scale=0.3), strides=[1, 1, 1, 1], padding="SAME", name="dw")
        h = tf.nn.relu6(h, name="relu6")
        h = tf.nn.avg_pool2d(h, ksize=3, strides=2, padding="SAME", name="pool2")
        flat = tf.reshape(h, [2, -1], name="flatten")
        logits = tf.matmul(flat, rand(rng, 3 * 3 * 16, 5, scale=0.2), name="fc")
        probs = tf.nn.softmax(logits, name="probs")
        return {"image": rand(rng, 2, 12, 12, 3)}, [probs, h]

    return v1_graph(build)


def conv_variants() -> Fixture:
    """Odd sizes, strides, dilations, VALID and SAME, 1x1 and depthwise strides."""
    rng = np.random.default_rng(3)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [1, 11, 9, 4], name="x")
        outs = [
            tf.nn.conv2d(x, rand(rng, 3, 3, 4, 5), strides=2, padding="SAME", name="same_s2"),
            tf.nn.conv2d(x, rand(rng, 3, 2, 4, 3), strides=[1, 2, 3, 1], padding="VALID", name="valid_s23"),
            tf.nn.conv2d(x, rand(rng, 3, 3, 4, 2), strides=1, padding="SAME", dilations=2, name="dil2"),
            tf.nn.conv2d(x, rand(rng, 1, 1, 4, 6), strides=1, padding="VALID", name="pointwise"),
            tf.nn.conv2d(x, rand(rng, 4, 4, 4, 3), strides=3, padding="SAME", name="even_k_s3"),
            tf.nn.depthwise_conv2d(x, rand(rng, 3, 3, 4, 1), strides=[1, 2, 2, 1], padding="SAME", name="dw_s2"),
            tf.nn.depthwise_conv2d(x, rand(rng, 2, 3, 4, 3), strides=[1, 1, 1, 1], padding="VALID", name="dw_m3"),
            tf.nn.max_pool2d(x, ksize=[3, 2], strides=[2, 1], padding="SAME", name="maxpool_same"),
            tf.nn.avg_pool2d(x, ksize=[2, 3], strides=[1, 2], padding="SAME", name="avgpool_same"),
        ]
        return {"x": rand(rng, 1, 11, 9, 4)}, outs

    return v1_graph(build)


def fused_chains() -> Fixture:
    """What ember's graph optimizer folds and fuses (core/graph_optimizer.h), with TensorFlow
    running the unfused graph as the oracle: batch norms (FusedBatchNormV3 and the Mul/Sub/AddV2
    form Keras freezes) after Conv2D, DepthwiseConv2dNative and MatMul, BiasAdd, Relu/Relu6;
    and the cases it must leave alone: an inner tensor fetched, read twice, or fed."""
    rng = np.random.default_rng(6)

    def pos(*shape: int) -> np.ndarray:
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 10, 9, 6], name="x")
        conv = tf.nn.conv2d(x, rand(rng, 3, 3, 6, 8, scale=0.3), strides=1, padding="SAME", name="a_conv")
        bn, _, _ = v1.nn.fused_batch_norm(
            conv, pos(8), rand(rng, 8), mean=rand(rng, 8), variance=pos(8), epsilon=1e-3, is_training=False, name="a_bn"
        )
        a = tf.nn.relu(bn, name="a_relu")
        dw = tf.nn.depthwise_conv2d(x, rand(rng, 3, 3, 6, 2, scale=0.3), [1, 2, 2, 1], "SAME", name="b_dw")
        b = tf.nn.relu6(tf.add(tf.multiply(dw, pos(12), name="b_mul"), rand(rng, 12), name="b_add"), name="b_relu6")
        pw = tf.nn.conv2d(a, rand(rng, 1, 1, 8, 5, scale=0.3), strides=1, padding="VALID", name="c_pw")
        c = tf.nn.relu6(tf.nn.bias_add(pw, rand(rng, 5), name="c_bias"), name="c_relu6")
        # Keras's frozen batch norm: mul = gamma * rsqrt(var + eps); y = x * mul + (beta - mean * mul).
        var, gamma, beta, mean = (
            tf.constant(pos(4)),
            tf.constant(pos(4)),
            tf.constant(rand(rng, 4)),
            tf.constant(rand(rng, 4)),
        )
        mul = tf.multiply(tf.math.rsqrt(var + 1e-3), gamma, name="d_mul")
        dconv = tf.nn.conv2d(x, rand(rng, 2, 3, 6, 4, scale=0.3), strides=[1, 2, 1, 1], padding="VALID", name="d_conv")
        d = tf.add(tf.multiply(dconv, mul, name="d_mul_1"), tf.subtract(beta, mean * mul), name="d_add_1")
        flat = tf.reshape(x, [2, 540])
        e = tf.nn.relu(
            tf.nn.bias_add(tf.matmul(flat, rand(rng, 540, 7, scale=0.05), name="e_mm"), rand(rng, 7)), name="e_relu"
        )
        f = tf.add(
            tf.matmul(flat, rand(rng, 3, 540, scale=0.05), transpose_b=True, name="f_mm"), rand(rng, 1, 3), name="f_add"
        )
        # Left alone: g_bias is read twice; h_conv is fetched; i_scaled is fed.
        gconv = tf.nn.conv2d(x, rand(rng, 1, 1, 6, 3), strides=1, padding="SAME", name="g_conv")
        gb = tf.nn.bias_add(gconv, rand(rng, 3), name="g_bias")
        g = tf.concat([tf.nn.relu(gb), tf.sigmoid(gb)], axis=3, name="g_out")
        hconv = tf.nn.conv2d(x, rand(rng, 1, 1, 6, 3), strides=1, padding="SAME", name="h_conv")
        h = tf.nn.relu(tf.nn.bias_add(hconv, rand(rng, 3)), name="h_relu")
        iconv = tf.nn.conv2d(x, rand(rng, 1, 1, 6, 3), strides=1, padding="SAME", name="i_conv")
        scaled = tf.multiply(iconv, pos(3), name="i_scaled")
        i = tf.nn.relu(tf.add(scaled, rand(rng, 3)), name="i_relu")
        feeds = {"x": rand(rng, 2, 10, 9, 6), "i_scaled": rand(rng, 2, 10, 9, 3)}
        return feeds, [a, b, c, d, e, f, g, hconv, h, i]

    return v1_graph(build)


def padded_convs() -> Fixture:
    """EXPLICIT padding (Conv2D and DepthwiseConv2dNative, a padded 1x1, with dilation) and zero
    Pads before VALID or EXPLICIT convolutions, which ember's graph optimizer folds into EXPLICIT
    padding (ResNet's conv1_pad + 7x7/2, MobileNetV2's ZeroPadding2D + strided depthwise); and the
    Pads it must leave alone: by a nonzero value, read twice, before SAME. (A Pad of the channels
    is left alone too, tested in C++: TensorFlow 2.21's oneDNN rewrite folds it into the
    convolution and then fails on the depth.)"""
    rng = np.random.default_rng(11)

    def explicit(pads: list[int]) -> list[list[int]]:
        return [[0, 0], pads[0:2], pads[2:4], [0, 0]]

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 11, 9, 4], name="x")
        w33 = rand(rng, 3, 3, 4, 5, scale=0.3)
        outs = [
            tf.nn.conv2d(x, w33, strides=2, padding=explicit([1, 2, 0, 3]), name="explicit_s2"),
            tf.nn.conv2d(
                x, rand(rng, 3, 2, 4, 3), strides=1, padding=explicit([2, 0, 1, 1]), dilations=2, name="explicit_dil2"
            ),
            tf.nn.conv2d(x, rand(rng, 1, 1, 4, 6), strides=1, padding=explicit([1, 0, 0, 2]), name="explicit_1x1"),
            tf.raw_ops.DepthwiseConv2dNative(
                input=x,
                filter=rand(rng, 3, 3, 4, 2),
                strides=[1, 2, 2, 1],
                padding="EXPLICIT",
                explicit_paddings=[0, 0, 0, 1, 2, 1, 0, 0],
                name="explicit_dw",
            ),
        ]
        # Explicit, then a bias and relu: fused with its padding.
        econv = tf.nn.conv2d(x, rand(rng, 2, 2, 4, 3), strides=1, padding=explicit([1, 1, 0, 1]), name="e_conv")
        outs.append(tf.nn.relu(tf.nn.bias_add(econv, rand(rng, 3)), name="e_relu"))
        # conv1_pad + 7x7/2 VALID + batch norm + relu (ResNet's stem).
        padded = tf.pad(x, [[0, 0], [3, 3], [3, 3], [0, 0]], name="r_pad")
        rconv = tf.nn.conv2d(padded, rand(rng, 7, 7, 4, 6, scale=0.1), strides=2, padding="VALID", name="r_conv")
        bn, _, _ = v1.nn.fused_batch_norm(
            rconv,
            rng.uniform(0.5, 1.5, 6).astype(np.float32),
            rand(rng, 6),
            mean=rand(rng, 6),
            variance=rng.uniform(0.5, 1.5, 6).astype(np.float32),
            epsilon=1e-3,
            is_training=False,
            name="r_bn",
        )
        outs.append(tf.nn.relu(bn, name="r_relu"))
        # ZeroPadding2D(((0, 1), (0, 1))) + depthwise 3x3/2 VALID + relu6 (MobileNetV2).
        mpad = tf.pad(x, [[0, 0], [0, 1], [0, 1], [0, 0]], name="m_pad")
        mdw = tf.nn.depthwise_conv2d(mpad, rand(rng, 3, 3, 4, 1), [1, 2, 2, 1], "VALID", name="m_dw")
        outs.append(tf.nn.relu6(mdw, name="m_relu6"))
        # A Pad before a convolution with nothing after it; and before an EXPLICIT one (amounts add).
        outs.append(
            tf.nn.conv2d(tf.pad(x, [[0, 0], [2, 1], [0, 0], [0, 0]]), w33, strides=1, padding="VALID", name="p_conv")
        )
        outs.append(
            tf.nn.conv2d(
                tf.pad(x, [[0, 0], [1, 0], [1, 2], [0, 0]]),
                w33,
                strides=[1, 1, 2, 1],
                padding=explicit([0, 1, 1, 0]),
                name="pe_conv",
            )
        )
        # Left alone: a PadV2 by 1, a Pad also fetched, a Pad before SAME.
        outs.append(
            tf.nn.conv2d(
                tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], constant_values=1.0),
                w33,
                strides=1,
                padding="VALID",
                name="v_conv",
            )
        )
        shared = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], name="s_pad")
        outs.append(tf.nn.conv2d(shared, w33, strides=1, padding="VALID", name="s_conv"))
        outs.append(shared)
        outs.append(
            tf.nn.conv2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), w33, strides=1, padding="SAME", name="same_conv")
        )
        return {"x": rand(rng, 2, 11, 9, 4)}, outs

    return v1_graph(build)


def grouped_convs() -> Fixture:
    """Grouped Conv2D (Keras's Conv2D(groups=...): filter depth C / groups) as ResNeXt, RegNet
    and ConvNeXt use it: groups of several channels, strided, dilated, VALID, a grouped 1x1, one
    filter per channel (ConvNeXt's 7x7) and two; and the graph optimizer's fusions around it
    (batch norm + Relu, BiasAdd + Relu6, a zero Pad folded into its padding)."""
    rng = np.random.default_rng(12)

    def pos(*shape: int) -> np.ndarray:
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 11, 9, 8], name="x")
        outs = [
            tf.nn.conv2d(x, rand(rng, 3, 3, 2, 12), strides=1, padding="SAME", name="g4_same"),
            tf.nn.conv2d(x, rand(rng, 3, 2, 4, 6), strides=[1, 2, 3, 1], padding="VALID", name="g2_valid_s23"),
            tf.nn.conv2d(x, rand(rng, 3, 3, 4, 4), strides=1, padding="SAME", dilations=2, name="g2_dil2"),
            tf.nn.conv2d(x, rand(rng, 1, 1, 2, 8), strides=1, padding="VALID", name="g4_pointwise"),
            tf.nn.conv2d(x, rand(rng, 7, 7, 1, 8), strides=1, padding="SAME", name="g8_7x7"),
            tf.nn.conv2d(x, rand(rng, 3, 3, 1, 16), strides=2, padding="SAME", name="g8_m2_s2"),
        ]
        # Fused: batch norm + relu; bias + relu6; a zero Pad before a strided VALID convolution.
        bconv = tf.nn.conv2d(x, rand(rng, 3, 3, 2, 8, scale=0.3), strides=1, padding="SAME", name="b_conv")
        bn, _, _ = v1.nn.fused_batch_norm(
            bconv,
            pos(8),
            rand(rng, 8),
            mean=rand(rng, 8),
            variance=pos(8),
            epsilon=1e-3,
            is_training=False,
            name="b_bn",
        )
        outs.append(tf.nn.relu(bn, name="b_relu"))
        cconv = tf.nn.conv2d(x, rand(rng, 7, 7, 1, 8, scale=0.3), strides=1, padding="SAME", name="c_conv")
        outs.append(tf.nn.relu6(tf.nn.bias_add(cconv, rand(rng, 8)), name="c_relu6"))
        padded = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], name="p_pad")
        outs.append(tf.nn.conv2d(padded, rand(rng, 3, 3, 4, 6), strides=2, padding="VALID", name="p_conv"))
        return {"x": rand(rng, 2, 11, 9, 8)}, outs

    return v1_graph(build)


def grouped_conv_error(filter_shape: list[int]) -> Callable[[], Fixture]:
    """A Conv2D whose filter depth does not divide the input depth, or whose groups do not
    divide its output depth: shapes only known at run time, TensorFlow's error the oracle."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            w = v1.placeholder(tf.float32, None, name="w")
            out = tf.raw_ops.Conv2D(input=x, filter=w, strides=[1, 1, 1, 1], padding="SAME", name="conv")
            return {"x": np.ones([1, 4, 4, 6], np.float32), "w": np.ones(filter_shape, np.float32)}, [out]

        return v1_graph(build)

    return make


def conv_transpose() -> Fixture:
    """Conv2DBackpropInput, what tf.nn.conv2d_transpose and Keras's Conv2DTranspose emit: strides
    1 to 3, kernels 2 to 4, SAME, VALID and EXPLICIT, output sizes a stride cannot reach (Keras's
    output_padding), batch 2, odd sizes, and 2-value input_sizes (batch and depth implied)."""
    rng = np.random.default_rng(14)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 5, 7, 6], name="x")

        def ct(name: str, k: tuple[int, int], out: list[int], strides: list[int], padding: object) -> tf.Tensor:
            w = rand(rng, k[0], k[1], out[3], 6, scale=0.3)
            return tf.nn.conv2d_transpose(x, w, out, [1, *strides, 1], padding, name=name)

        outs = [
            ct("s1_k3_valid", (3, 3), [2, 7, 9, 4], [1, 1], "VALID"),
            ct("s2_k3_same", (3, 3), [2, 10, 14, 5], [2, 2], "SAME"),
            ct("s2_k3_same_outpad", (3, 3), [2, 9, 13, 3], [2, 2], "SAME"),
            ct("s3_k4_valid", (4, 4), [2, 16, 22, 2], [3, 3], "VALID"),
            ct("s3_k2_valid_outpad", (2, 2), [2, 15, 22, 4], [3, 3], "VALID"),
            ct("s2x3_k4x3_same", (4, 3), [2, 10, 21, 3], [2, 3], "SAME"),
            ct("s2_k3_explicit", (3, 3), [2, 8, 15, 4], [2, 2], [[0, 0], [1, 2], [0, 1], [0, 0]]),
        ]
        sizes2 = tf.raw_ops.Conv2DBackpropInput(
            input_sizes=[10, 14],
            filter=rand(rng, 2, 2, 3, 6),
            out_backprop=x,
            strides=[1, 2, 2, 1],
            padding="SAME",
            name="sizes2",
        )
        return {"x": rand(rng, 2, 5, 7, 6)}, [*outs, sizes2]

    return v1_graph(build)


def conv_transpose_error(input_sizes: list[int], filter_shape: list[int]) -> Callable[[], Fixture]:
    """A Conv2DBackpropInput whose shapes (known only at run time) TensorFlow refuses.

    Generate these with TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's own CPU kernel
    (Conv2DCustomBackpropInput) is the oracle; the oneDNN one fails them with an opaque ABORTED
    ("could not create a primitive descriptor"), or crashes on a 3-value input_sizes."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            dy = v1.placeholder(tf.float32, None, name="dy")
            w = v1.placeholder(tf.float32, None, name="w")
            out = tf.raw_ops.Conv2DBackpropInput(
                input_sizes=input_sizes, filter=w, out_backprop=dy, strides=[1, 2, 2, 1], padding="SAME", name="ct"
            )
            return {"dy": np.ones([1, 4, 4, 3], np.float32), "w": np.ones(filter_shape, np.float32)}, [out]

        return v1_graph(build)

    return make


def space_batch() -> Fixture:
    """SpaceToBatchND and BatchToSpaceND: TensorFlow's atrous convolution (what a dilated Keras
    Conv2D or Conv1D becomes in a GraphDef), SAME and VALID with odd sizes, and the raw ops with
    int32 and int64 indices, leading and trailing block dims of 1, 1 to 3 block dims, and
    integer data."""
    rng = np.random.default_rng(13)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 13, 11, 3], name="x")
        s = v1.placeholder(tf.float32, [2, 17, 3], name="s")
        q = v1.placeholder(tf.int32, [3, 4, 6, 5, 2], name="q")
        outs = [
            tf.nn.atrous_conv2d(x, rand(rng, 3, 3, 3, 4), rate=2, padding="SAME", name="atrous2_same"),
            tf.nn.atrous_conv2d(x, rand(rng, 3, 3, 3, 4), rate=3, padding="VALID", name="atrous3_valid"),
            tf.nn.convolution(x, rand(rng, 3, 2, 3, 5), padding="SAME", dilations=[2, 3], name="dil23_same"),
            tf.nn.convolution(s, rand(rng, 3, 3, 4), padding="SAME", dilations=[2], name="conv1d_dil2"),
            tf.nn.depthwise_conv2d(
                x, rand(rng, 3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME", dilations=[2, 2], name="dw_dil2"
            ),
        ]
        s2b = tf.raw_ops.SpaceToBatchND(
            input=x, block_shape=np.array([2, 3], np.int64), paddings=[[1, 2], [2, 2]], name="s2b_pad"
        )
        outs.append(s2b)
        outs.append(
            tf.raw_ops.BatchToSpaceND(
                input=s2b, block_shape=np.array([2, 3], np.int64), crops=[[1, 2], [2, 2]], name="b2s_roundtrip"
            )
        )
        outs.append(tf.raw_ops.BatchToSpaceND(input=s2b, block_shape=[2, 3], crops=[[0, 3], [4, 1]], name="b2s_crop"))
        outs.append(
            tf.raw_ops.SpaceToBatchND(input=q, block_shape=[1, 2, 1], paddings=[[0, 0], [1, 1], [0, 0]], name="s2b_mid")
        )
        outs.append(
            tf.raw_ops.SpaceToBatchND(input=q, block_shape=[2, 3, 5], paddings=[[0, 2], [0, 0], [3, 2]], name="s2b_3d")
        )
        outs.append(tf.raw_ops.BatchToSpaceND(input=q, block_shape=[3], crops=[[1, 1]], name="b2s_1d"))
        outs.append(
            tf.raw_ops.SpaceToBatchND(input=q, block_shape=[1, 1], paddings=[[0, 0], [0, 0]], name="s2b_trivial")
        )
        return {
            "x": rand(rng, 2, 13, 11, 3),
            "s": rand(rng, 2, 17, 3),
            "q": rng.integers(-100, 100, (3, 4, 6, 5, 2)).astype(np.int32),
        }, outs

    return v1_graph(build)


def space_batch_error(op: str, block: list[int], pads: list[list[int]]) -> Callable[[], Fixture]:
    """SpaceToBatchND or BatchToSpaceND with run-time arguments TensorFlow refuses."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            b = v1.placeholder(tf.int32, [len(block)], name="block")
            p = v1.placeholder(tf.int32, [len(pads), 2], name="pads")
            if op == "SpaceToBatchND":
                out = tf.raw_ops.SpaceToBatchND(input=x, block_shape=b, paddings=p, name="op")
            else:
                out = tf.raw_ops.BatchToSpaceND(input=x, block_shape=b, crops=p, name="op")
            feeds = {"x": np.ones([4, 5, 4, 1], np.float32), "block": np.array(block, np.int32)}
            feeds["pads"] = np.array(pads, np.int32)
            return feeds, [out]

        return v1_graph(build)

    return make


def elementwise() -> Fixture:
    rng = np.random.default_rng(4)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        a = v1.placeholder(tf.float32, [2, 3, 4], name="a")
        b = v1.placeholder(tf.float32, [3, 1], name="b")
        c = v1.placeholder(tf.float32, [], name="c")
        pos = v1.placeholder(tf.float32, [4], name="pos")
        raw = tf.raw_ops
        outs = [
            raw.Add(x=a, y=b, name="add"),
            raw.AddV2(x=a, y=c, name="addv2"),
            raw.Sub(x=b, y=a, name="sub"),
            raw.Mul(x=a, y=pos, name="mul"),
            raw.RealDiv(x=a, y=pos, name="div"),
            raw.Maximum(x=a, y=b, name="maximum"),
            raw.Minimum(x=c, y=a, name="minimum"),
            raw.Neg(x=a, name="neg"),
            raw.Square(x=a, name="square"),
            raw.Sqrt(x=pos, name="sqrt"),
            raw.Exp(x=a, name="exp"),
            raw.Tanh(x=a, name="tanh"),
            raw.Sigmoid(x=a, name="sigmoid"),
            raw.Relu(features=a, name="relu"),
            raw.Relu6(features=a * 4.0, name="relu6"),
            raw.Identity(input=b, name="identity"),
            tf.compat.v1.placeholder_with_default(tf.constant([1.5, 2.5]), [2], name="with_default"),
        ]
        feeds: dict[str, np.ndarray] = {
            "a": rand(rng, 2, 3, 4, scale=2.0),
            "b": rand(rng, 3, 1),
            "c": np.array(0.25, dtype=np.float32),
            "pos": np.abs(rand(rng, 4)) + 0.5,
        }
        return feeds, outs

    return v1_graph(build)


def reductions_shapes() -> Fixture:
    rng = np.random.default_rng(5)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 3, 4], name="x")
        y = v1.placeholder(tf.float32, [2, 1, 4], name="y")
        raw = tf.raw_ops
        outs = [
            tf.reduce_mean(x, axis=1, keepdims=True, name="mean_keep"),
            tf.reduce_sum(x, axis=-1, name="sum_last"),
            raw.Sum(input=x, axis=tf.constant([0, 2], dtype=tf.int64), keep_dims=False, name="sum_i64"),
            tf.reduce_mean(x, name="mean_all"),
            raw.Mean(input=x, axis=tf.constant([-3, 1]), keep_dims=True, name="mean_neg"),
            tf.transpose(x, [2, 0, 1], name="transpose"),
            raw.Transpose(x=x, perm=tf.constant([1, 0, 2], dtype=tf.int64), name="transpose_i64"),
            tf.expand_dims(x, -1, name="expand"),
            tf.expand_dims(x, 0, name="expand0"),
            tf.squeeze(y, axis=[1], name="squeeze"),
            tf.squeeze(tf.reshape(x, [1, 2, 1, 12]), name="squeeze_all"),
            tf.concat([x, y, x], axis=1, name="concat"),
            tf.concat([x, x], axis=-1, name="concat_neg"),
            tf.cast(x * 3.0, tf.int32, name="cast_i32"),
            tf.cast(x, tf.bool, name="cast_bool"),
            tf.cast(x * 10.0, tf.int64, name="cast_i64"),
            raw.Shape(input=x, out_type=tf.int32, name="shape"),
            raw.Shape(input=y, out_type=tf.int64, name="shape64"),
            tf.reshape(x, [4, -1], name="reshape"),
            tf.matmul(tf.reshape(x, [6, 4]), tf.reshape(y, [2, 4]), transpose_b=True, name="matmul_tb"),
            tf.matmul(tf.reshape(x, [4, 6]), tf.reshape(x, [4, 6]), transpose_a=True, name="matmul_ta"),
            tf.matmul(x, tf.reshape(y, [2, 4, 1]), name="batch_matmul"),
            raw.BatchMatMulV2(x=x, y=tf.reshape(y, [1, 2, 4]), adj_y=True, name="bmm_bcast"),
        ]
        return {"x": rand(rng, 2, 3, 4), "y": rand(rng, 2, 1, 4)}, outs

    return v1_graph(build)


def integers() -> Fixture:
    rng = np.random.default_rng(6)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        i = v1.placeholder(tf.int32, [3, 4], name="i")
        j = v1.placeholder(tf.int32, [4], name="j")
        k = v1.placeholder(tf.int64, [2, 3], name="k")
        u = v1.placeholder(tf.uint8, [5], name="u")
        s = v1.placeholder(tf.int8, [5], name="s")
        raw = tf.raw_ops
        outs = [
            raw.Add(x=i, y=j, name="add"),
            raw.Mul(x=i, y=j, name="mul"),
            raw.Sub(x=j, y=i, name="sub"),
            raw.Maximum(x=i, y=j, name="maximum"),
            raw.Minimum(x=i, y=j, name="minimum"),
            raw.Neg(x=i, name="neg"),
            raw.Square(x=j, name="square"),
            tf.reduce_sum(i, axis=0, name="sum"),
            tf.reduce_mean(i, axis=1, name="mean"),
            tf.matmul(i, tf.reshape(i, [4, 3]), name="matmul"),
            tf.cast(i, tf.float32, name="to_float"),
            raw.AddV2(x=k, y=tf.constant(7, tf.int64), name="add64"),
            tf.reduce_sum(k, name="sum64"),
            raw.AddV2(x=u, y=u, name="add_u8"),
            raw.AddV2(x=s, y=s, name="add_i8"),
            tf.cast(u, tf.int32, name="u8_to_i32"),
            tf.transpose(i, name="transpose"),
            tf.concat([i, i], axis=0, name="concat"),
            tf.nn.relu(i - 3, name="relu"),
        ]
        feeds: dict[str, np.ndarray] = {
            "i": rng.integers(-50, 50, size=(3, 4)).astype(np.int32),
            "j": rng.integers(-10, 10, size=(4,)).astype(np.int32),
            "k": rng.integers(-(2**40), 2**40, size=(2, 3)).astype(np.int64),
            "u": rng.integers(0, 255, size=(5,)).astype(np.uint8),
            "s": rng.integers(-128, 127, size=(5,)).astype(np.int8),
        }
        return feeds, outs

    return v1_graph(build)


def broadcast_error() -> Fixture:
    """Shapes only known at run time, and incompatible: TensorFlow's error is the oracle."""

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        a = v1.placeholder(tf.float32, None, name="a")
        b = v1.placeholder(tf.float32, None, name="b")
        out = tf.raw_ops.AddV2(x=a, y=b, name="add")
        return {"a": np.ones([2, 3], np.float32), "b": np.ones([4], np.float32)}, [out]

    return v1_graph(build)


def reshape_error() -> Fixture:
    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        a = v1.placeholder(tf.float32, None, name="a")
        out = tf.reshape(a, [4, 2], name="reshape")
        return {"a": np.ones([6], np.float32)}, [out]

    return v1_graph(build)


def placeholder_not_fed() -> Fixture:
    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        a = v1.placeholder(tf.float32, [2], name="a")
        b = v1.placeholder(tf.float32, [2], name="b")
        return {"a": np.ones([2], np.float32)}, [tf.raw_ops.Mul(x=a, y=b, name="mul")]

    return v1_graph(build)


def image_resize() -> Fixture:
    """ResizeBilinear and ResizeNearestNeighbor over every attr combination TF accepts.

    Up and down by non-integer factors (8x10 -> 13x17, 13x17 -> 5x7), batch 2, a 1x1 source and
    a 1x1 target (align_corners with one output row), float and int32 nearest, uint8 bilinear
    (float output). align_corners with half_pixel_centers is an error for both ops (ImageResizerState).
    """

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        rng = np.random.default_rng(21)
        x = v1.placeholder(tf.float32, [2, 8, 10, 3], name="x")
        z = v1.placeholder(tf.float32, [1, 13, 17, 4], name="z")
        i = v1.placeholder(tf.int32, [1, 3, 5, 2], name="i")
        u = v1.placeholder(tf.uint8, [1, 4, 3, 2], name="u")
        raw = tf.raw_ops
        outs = []
        for ac, hp in ((False, False), (True, False), (False, True)):
            tag = f"ac{int(ac)}_hp{int(hp)}"
            for src, size, what in ((x, [13, 17], "up"), (z, [5, 7], "down"), (x, [1, 1], "one")):
                for op, fn in (("bilinear", raw.ResizeBilinear), ("nearest", raw.ResizeNearestNeighbor)):
                    outs.append(
                        fn(images=src, size=size, align_corners=ac, half_pixel_centers=hp, name=f"{op}_{what}_{tag}")
                    )
            outs.append(
                raw.ResizeNearestNeighbor(
                    images=i, size=[7, 4], align_corners=ac, half_pixel_centers=hp, name=f"nearest_int_{tag}"
                )
            )
            outs.append(
                raw.ResizeBilinear(
                    images=u, size=[9, 5], align_corners=ac, half_pixel_centers=hp, name=f"bilinear_u8_{tag}"
                )
            )
        outs.append(raw.ResizeNearestNeighbor(images=x[:, :1, :1], size=[3, 2], name="nearest_from_1x1"))
        outs.append(raw.ResizeBilinear(images=x, size=[8, 10], name="bilinear_same_size"))
        feeds: dict[str, np.ndarray] = {
            "x": rng.uniform(-1, 1, (2, 8, 10, 3)).astype(np.float32),
            "z": rng.uniform(-1, 1, (1, 13, 17, 4)).astype(np.float32),
            "i": rng.integers(-1000, 1000, (1, 3, 5, 2)).astype(np.int32),
            "u": rng.integers(0, 256, (1, 4, 3, 2)).astype(np.uint8),
        }
        return feeds, outs

    return v1_graph(build)


def resize_error(
    op: str, shape: list[int], size: list[int], align_corners: bool = False, half_pixel: bool = False
) -> Callable[[], Fixture]:
    """A resize TensorFlow refuses at run time (size fed, input of unknown rank): its message is the oracle."""

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, None, name="x")
        s = v1.placeholder(tf.int32, None, name="size")
        fn = getattr(tf.raw_ops, op)
        out = fn(images=x, size=s, align_corners=align_corners, half_pixel_centers=half_pixel, name="resize")
        return {"x": np.ones(shape, np.float32), "size": np.array(size, np.int32)}, [out]

    return lambda: v1_graph(build)


def rearrange() -> Fixture:
    """MatrixBandPart (keras-hub decoders' causal masks: tf.linalg.band_part), Roll (Swin's
    shifted windows) and XlaDynamicUpdateSlice (keras.ops.slice_update, Swin's attention mask):
    bands with negative, zero, inner and whole-matrix bounds, constant and fed, int32 and int64;
    rolls summed on one axis, negative and wider than the axis, on int32; updates whose starts
    are clamped from either side."""
    from tensorflow.compiler.tf2xla.ops import gen_xla_ops

    rng = np.random.default_rng(23)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 3, 5, 6], name="x")
        q = v1.placeholder(tf.int32, [4, 7], name="q")
        lo = v1.placeholder(tf.int64, [], name="lo")
        u = v1.placeholder(tf.float32, [2, 3, 4], name="u")
        outs = [
            tf.linalg.band_part(x, -1, 0, name="causal"),
            tf.linalg.band_part(x, 0, -1, name="upper"),
            tf.linalg.band_part(x, 1, 2, name="band12"),
            tf.linalg.band_part(x, 5, 6, name="whole"),
            tf.linalg.band_part(x, lo, tf.constant(0, tf.int64), name="band_fed"),
            tf.linalg.band_part(q, tf.constant(2, tf.int32), tf.constant(1, tf.int32), name="band_int"),
            tf.roll(x, 1, 3, name="roll_last"),
            tf.roll(x, [3, -1, 2], [1, 1, -1], name="roll_summed"),
            tf.roll(x, [7, -9], [-4, 2], name="roll_wrap"),
            tf.roll(q, [2, 5], [0, 1], name="roll_int"),
        ]
        for i, start in enumerate([[0, 0, 0], [1, 2, 2], [3, -1, 9]]):
            outs.append(gen_xla_ops.xla_dynamic_update_slice(x[1], u, tf.constant(start, tf.int32), name=f"update{i}"))
        feeds = {
            "x": rand(rng, 2, 3, 5, 6),
            "q": rng.integers(-100, 100, (4, 7)).astype(np.int32),
            "lo": np.array(2, np.int64),
            "u": rand(rng, 2, 3, 4),
        }
        return feeds, outs

    return v1_graph(build)


def rearrange_error(op: str) -> Callable[[], Fixture]:
    """A band wider than the matrix, or a roll axis past the rank, fed at run time: TensorFlow's
    message is the oracle."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            k = v1.placeholder(tf.int32, None, name="k")
            if op == "MatrixBandPart":
                out = tf.raw_ops.MatrixBandPart(input=x, num_lower=k, num_upper=tf.constant(0), name="op")
                return {"x": np.ones([3, 4], np.float32), "k": np.array(9, np.int32)}, [out]
            out = tf.raw_ops.Roll(input=x, shift=tf.constant([1]), axis=k, name="op")
            return {"x": np.ones([3, 4], np.float32), "k": np.array([-3], np.int32)}, [out]

        return v1_graph(build)

    return make


def top_k() -> Fixture:
    """TopKV2 (tf.math.top_k, tf.sort, tf.argsort): ties going to the lower index, k of 0, 1, the
    whole row and fed at run time, negative values, int32 and int64 data, int64 k and indices,
    and sorted=false (compared as sets: TensorFlow leaves their order to its heap)."""
    rng = np.random.default_rng(31)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [3, 4, 9], name="x")
        q = v1.placeholder(tf.int32, [5, 7], name="q")
        k = v1.placeholder(tf.int32, [], name="k")
        outs: list[tf.Tensor] = []
        for i, kk in enumerate([0, 1, 3, 9]):
            outs += list(tf.math.top_k(x, kk, name=f"top{i}"))
        outs += list(tf.math.top_k(x, k, name="top_fed"))
        outs += list(tf.math.top_k(q, 4, name="top_int"))
        outs += list(tf.math.top_k(q, 7, name="top_int_all"))
        for i, kk in enumerate([2, 5, 6]):
            # Which entries, not their order: TensorFlow leaves that to its heap.
            values, indices = tf.raw_ops.TopKV2(input=q, k=kk, sorted=False, name=f"unsorted{i}")
            outs += [tf.sort(values), tf.sort(indices)]
        wide = tf.raw_ops.TopKV2(input=tf.cast(q, tf.int64), k=tf.constant(3, tf.int64), index_type=tf.int64)
        outs += list(wide)
        outs += [
            tf.sort(x, axis=1, name="sort_axis1"),
            tf.sort(q, direction="DESCENDING", name="sort_desc"),
            tf.argsort(x, axis=-1, name="argsort"),
            tf.argsort(q, axis=0, direction="DESCENDING", stable=True, name="argsort_desc"),
        ]
        xv = np.round(rand(rng, 3, 4, 9) * 2) / 2  # many ties
        xv[0, 0] = 1.0
        feeds: dict[str, np.ndarray] = {
            "x": xv,
            "q": rng.integers(-4, 4, (5, 7)).astype(np.int32),
            "k": np.array(5, np.int32),
        }
        return feeds, outs

    return v1_graph(build)


def top_k_error(k: int) -> Callable[[], Fixture]:
    """TopKV2 with a fed k TensorFlow refuses (negative, or past the row)."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            kk = v1.placeholder(tf.int32, None, name="k")
            out = tf.raw_ops.TopKV2(input=x, k=kk, name="op")
            return {"x": np.ones([2, 5], np.float32), "k": np.array(k, np.int32)}, [out.values]

        return v1_graph(build)

    return make


def scatter_gather_nd() -> Fixture:
    """GatherNd, ScatterNd, TensorScatterUpdate and TensorScatterAdd: index depths 0 to the full
    rank, outer index dims of rank 1 to 3, int32 and int64 indices, int32 and bool data, and
    repeated rows (ScatterNd and TensorScatterAdd add them)."""
    rng = np.random.default_rng(37)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        p = v1.placeholder(tf.float32, [4, 5, 3], name="p")
        q = v1.placeholder(tf.int32, [6, 4], name="q")
        i2 = v1.placeholder(tf.int64, [2, 3, 2], name="i2")
        outs = [
            tf.gather_nd(p, i2, name="gather_depth2"),
            tf.gather_nd(p, [[1], [3], [1]], name="gather_depth1"),
            tf.gather_nd(p, [[[0, 4, 2]], [[3, 0, 1]]], name="gather_full"),
            tf.gather_nd(p, np.zeros([2, 0], np.int32), name="gather_depth0"),
            tf.gather_nd(q, tf.constant([[5, 3], [0, 0]], tf.int64), name="gather_int"),
            tf.scatter_nd([[1], [3], [1]], tf.reshape(p[:3], [3, 15]), [5, 15], name="scatter_dup"),
            tf.scatter_nd(i2, tf.ones([2, 3, 3]), tf.constant([4, 5, 3], tf.int64), name="scatter_deep"),
            tf.scatter_nd([[0, 1], [2, 3], [0, 1]], q[0, :3], [3, 4], name="scatter_int"),
            tf.scatter_nd([[1], [1], [4]], tf.constant([True, False, True]), [5], name="scatter_bool"),
            tf.tensor_scatter_nd_update(p, [[0, 1], [3, 4]], tf.zeros([2, 3]), name="update"),
            tf.tensor_scatter_nd_update(q, [[[2]], [[5]]], tf.fill([2, 1, 4], 7), name="update_int"),
            tf.tensor_scatter_nd_add(p, [[1, 1, 1], [1, 1, 1], [0, 0, 0]], [1.0, 2.0, 3.0], name="add_dup"),
            tf.tensor_scatter_nd_add(q, tf.constant([[0], [5]], tf.int64), q[:2], name="add_int"),
        ]
        feeds = {
            "p": rand(rng, 4, 5, 3),
            "q": rng.integers(-50, 50, (6, 4)).astype(np.int32),
            "i2": np.array([[[0, 0], [3, 4], [2, 1]], [[1, 2], [0, 4], [3, 3]]], np.int64),
        }
        return feeds, outs

    return v1_graph(build)


def scatter_gather_nd_error(op: str) -> Callable[[], Fixture]:
    """An index row outside the tensor, or updates of the wrong shape: TensorFlow's message."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            i = v1.placeholder(tf.int32, None, name="i")
            feeds = {"x": np.ones([3, 4], np.float32), "i": np.array([[[0, 1], [2, 3]], [[1, 0], [2, 4]]], np.int32)}
            if op == "GatherNd":
                out = tf.raw_ops.GatherNd(params=x, indices=i, name="op")
            elif op == "ScatterNd":
                out = tf.raw_ops.ScatterNd(indices=i, updates=tf.ones([2, 2]), shape=[3, 4], name="op")
            else:
                feeds["i"] = np.array([[0], [2]], np.int32)
                out = tf.raw_ops.TensorScatterUpdate(tensor=x, indices=i, updates=tf.ones([2, 3]), name="op")
            return feeds, [out]

        return v1_graph(build)

    return make


def depth_space() -> Fixture:
    """DepthToSpace and SpaceToDepth (NHWC): block sizes 2 and 3, float and int32 data, and a
    round trip."""
    rng = np.random.default_rng(41)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 6, 12, 36], name="x")
        q = v1.placeholder(tf.int32, [1, 3, 2, 9], name="q")
        outs = [
            tf.nn.depth_to_space(x, 2, name="d2s2"),
            tf.nn.depth_to_space(x, 3, name="d2s3"),
            tf.nn.space_to_depth(x, 2, name="s2d2"),
            tf.nn.space_to_depth(x, 3, name="s2d3"),
            tf.nn.space_to_depth(tf.nn.depth_to_space(x, 3), 3, name="roundtrip"),
            tf.nn.depth_to_space(q, 3, name="d2s_int"),
            tf.nn.space_to_depth(tf.nn.depth_to_space(q, 3), 3, name="s2d_int"),
        ]
        feeds = {"x": rand(rng, 2, 6, 12, 36), "q": rng.integers(-100, 100, (1, 3, 2, 9)).astype(np.int32)}
        return feeds, outs

    return v1_graph(build)


def depth_space_error(op: str) -> Callable[[], Fixture]:
    """A depth (DepthToSpace) or a width (SpaceToDepth) the block does not divide."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            if op == "DepthToSpace":
                out = tf.raw_ops.DepthToSpace(input=x, block_size=2, name="op")
            else:
                out = tf.raw_ops.SpaceToDepth(input=x, block_size=2, name="op")
            return {"x": np.ones([1, 4, 5, 6], np.float32)}, [out]

        return v1_graph(build)

    return make


def local_response_norm() -> Fixture:
    """LRN with TensorFlow's defaults and with radius 0, 2 and wider than the depth, beta 0.5, 0.75
    and 1."""
    rng = np.random.default_rng(43)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 5, 4, 7], name="x")
        outs = [
            tf.nn.local_response_normalization(x, name="lrn_default"),
            tf.nn.local_response_normalization(x, 2, bias=2.0, alpha=1e-4, beta=0.75, name="lrn_alexnet"),
            tf.nn.local_response_normalization(x, 0, bias=0.5, alpha=0.3, beta=1.0, name="lrn_r0"),
            tf.nn.local_response_normalization(x, 9, bias=1.5, alpha=0.1, beta=0.5, name="lrn_wide"),
        ]
        return {"x": rand(rng, 2, 5, 4, 7, scale=2.0)}, outs

    return v1_graph(build)


def asserts() -> Fixture:
    """Assert nodes that hold, reached only through control edges as tf.debugging's are. (In a
    TF2 graph tf.debugging.Assert wraps the op in an If, which ember does not run; frozen
    functions lower that If to Switch/Merge.)"""
    rng = np.random.default_rng(47)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [1, 6, 8, 3], name="x")
        check = tf.raw_ops.Assert(condition=tf.reduce_all(x > -100.0), data=[x, tf.constant(3)], name="bounded")
        rank = tf.raw_ops.Assert(condition=tf.equal(tf.rank(x), 4), data=[tf.shape(x)], summarize=4, name="rank")
        with tf.control_dependencies([check, rank]):
            y = tf.identity(x * 2.0, name="y")
        return {"x": rand(rng, 1, 6, 8, 3)}, [y]

    return v1_graph(build)


def assert_error(summarize: int) -> Callable[[], Fixture]:
    """A failing Assert: TensorFlow's "assertion failed: [...]" summary of float, int, bool and
    2-D data, cut at `summarize` entries."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, [2, 3], name="x")
            data = [x, tf.constant([7, -8], tf.int64), tf.constant(True), tf.constant(1e-7), tf.zeros([0])]
            cond = tf.reduce_all(x > 0.0)
            check = tf.raw_ops.Assert(condition=cond, data=data, summarize=summarize, name="positive")
            with tf.control_dependencies([check]):
                y = tf.identity(x, name="y")
            return {"x": np.array([[1.5, -2.0, 123456789.0], [0.1, 4.0, 5.0]], np.float32)}, [y]

        return v1_graph(build)

    return make


def misc_math() -> Fixture:
    """Atan2 (signs, zeros, broadcasting), ReverseSequence (batch dim before and after the
    sequence dim, lengths 0 to full, int32 and int64), tf.linalg.diag and set_diag (batched,
    rectangular), SegmentSum (repeated and skipped ids, int32 data) and Unique (float with
    0.0 and -0.0, int32 with int64 positions)."""
    rng = np.random.default_rng(53)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        a = v1.placeholder(tf.float32, [4, 6], name="a")
        b = v1.placeholder(tf.float32, [6], name="b")
        s = v1.placeholder(tf.float32, [3, 5, 2], name="s")
        q = v1.placeholder(tf.int32, [8], name="q")
        outs = [
            tf.math.atan2(a, b, name="atan2"),
            tf.math.atan2(
                tf.constant([0.0, -0.0, 0.0, -0.0, 1.0, -1.0]), tf.constant([0.0, 0.0, -0.0, -0.0, 0.0, 0.0])
            ),
            tf.reverse_sequence(s, [2, 5, 0], seq_axis=1, batch_axis=0, name="rev_batch0"),
            tf.reverse_sequence(s, tf.constant([1, 3], tf.int32), seq_axis=1, batch_axis=2, name="rev_batch2"),
            tf.linalg.diag(s, name="diag"),
            tf.linalg.diag(q, num_rows=8, num_cols=10, padding_value=-1, name="diag_rect"),
            tf.linalg.set_diag(tf.tile(s, [1, 1, 3]), s[:, :, 0] * 0 + s[:, :5, 1], name="set_diag"),
            tf.linalg.set_diag(a, b[:4], name="set_diag_wide"),
            tf.math.segment_sum(a, [0, 0, 2, 5], name="segment_sum"),
            tf.math.segment_sum(q, tf.constant([1, 1, 1, 2, 2, 4, 4, 4], tf.int64), name="segment_int"),
        ]
        outs += list(tf.unique(tf.reshape(tf.round(s), [-1]), name="unique"))
        outs += list(tf.unique(q, out_idx=tf.int64, name="unique_int"))
        bv = rand(rng, 6)
        bv[0] = 0.0
        feeds = {
            "a": rand(rng, 4, 6),
            "b": bv,
            "s": rand(rng, 3, 5, 2),
            "q": np.array([3, -1, 3, 3, 7, -1, 0, 7], np.int32),
        }
        feeds["s"][0, 0, 0] = -0.0
        return feeds, outs

    return v1_graph(build)


def misc_math_error(op: str) -> Callable[[], Fixture]:
    """SegmentSum with unsorted ids and ReverseSequence with a length past the sequence."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            i = v1.placeholder(tf.int32, None, name="i")
            if op == "SegmentSum":
                out = tf.raw_ops.SegmentSum(data=x, segment_ids=i, name="op")
                return {"x": np.ones([3, 2], np.float32), "i": np.array([0, 2, 1], np.int32)}, [out]
            out = tf.raw_ops.ReverseSequence(input=x, seq_lengths=i, seq_dim=1, batch_dim=0, name="op")
            return {"x": np.ones([3, 2], np.float32), "i": np.array([1, 3, 0], np.int32)}, [out]

        return v1_graph(build)

    return make


def cond_functional() -> Fixture:
    """Conds outside loops as a TF2 graph holds them: StatelessIf nodes whose branches are
    functions of the GraphDef's library (cond_v1 is the same graph with TF1's Switch/Merge), as
    models have them for an is_training flag. Both branches are taken somewhere: the predicates
    come from the data, a branch holds constants (waiting on its pivot by a control edge) and a
    conv, one cond is nested in another's branch, one returns two values, one merges the
    Switch outputs directly, and one reads a fed flag (PlaceholderWithDefault, not fed)."""
    rng = np.random.default_rng(53)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 6, 6, 3], name="x")
        training = v1.placeholder_with_default(False, [], name="is_training")
        pos = tf.reduce_mean(x) > -10.0  # true
        neg = tf.logical_not(pos)
        w = rand(rng, 3, 3, 3, 4, scale=0.3)

        def conv_branch() -> tf.Tensor:
            return tf.nn.relu(tf.nn.conv2d(x, w, strides=1, padding="SAME") + tf.constant(0.5))

        def pool_branch() -> tf.Tensor:
            return tf.tile(tf.nn.avg_pool2d(x, 1, 1, "SAME")[..., :1], [1, 1, 1, 4]) * 3.0

        a = v1.cond(pos, conv_branch, pool_branch, name="cond_taken_true")
        b = v1.cond(neg, conv_branch, pool_branch, name="cond_taken_false")
        mean, var = tf.nn.moments(x, axes=[0, 1, 2])
        moving = (tf.constant(rng.standard_normal(3).astype(np.float32)), tf.constant(np.full(3, 0.8, np.float32)))
        m, v = v1.cond(training, lambda: (mean, var), lambda: moving, name="batch_norm_stats")
        normed = (x - m) * tf.math.rsqrt(v + 1e-3)

        def outer_true() -> tf.Tensor:
            inner = v1.cond(tf.reduce_max(x) > 100.0, lambda: x * 0.0, lambda: x - 1.0, name="inner")
            return inner * 2.0

        nested = v1.cond(pos, outer_true, lambda: x, name="outer")
        direct = v1.cond(neg, lambda: x, lambda: normed, name="direct")
        return {"x": rand(rng, 2, 6, 6, 3)}, [a, b, normed, nested, direct]

    return v1_graph(build)


def cond_v1() -> Fixture:
    """The conds of cond_functional as TF1 builds them (control flow v2 off): Switch and Merge
    in the root frame, the pivots' control edges reaching the branches' constants."""
    v1.disable_control_flow_v2()
    try:
        return cond_functional()
    finally:
        v1.enable_control_flow_v2()


def cond_tf2() -> Fixture:
    """tf.cond in a tf.function (an If of two branch functions), frozen with
    convert_variables_to_constants_v2, which lowers the If to Switch and Merge; a Keras layer
    with a data-dependent tf.cond, a cond nested in a branch, and one with two outputs."""
    rng = np.random.default_rng(59)
    dense = tf.keras.layers.Dense(5)
    dense.build((None, 4))

    @tf.function(input_signature=[tf.TensorSpec([3, 4], tf.float32, name="x")])  # type: ignore[untyped-decorator]
    def model(x: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        h = dense(x)
        y = tf.cond(tf.reduce_sum(h) > 0.0, lambda: tf.nn.relu(h), lambda: tf.nn.sigmoid(h))
        z = tf.cond(
            tf.reduce_max(x) > 5.0,
            lambda: tf.zeros_like(h),
            lambda: tf.cond(tf.reduce_min(x) < 0.0, lambda: h * 2.0, lambda: h - 1.0),
        )
        s, t = tf.cond(tf.reduce_mean(x) < 100.0, lambda: (x + 1.0, tf.shape(x)), lambda: (x, tf.shape(h)))
        return y + z, s, t

    frozen = convert_variables_to_constants_v2(model.get_concrete_function())
    graph_def = frozen.graph.as_graph_def()
    return Fixture(graph_def, {"x": rand(rng, 3, 4)}, [t.name for t in frozen.outputs])


def cond_dead_fetch_error() -> Fixture:
    """Fetching the untaken output of a Switch: TensorFlow's error for a dead tensor."""

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2], name="x")
        from tensorflow.python.ops import control_flow_ops

        false_out, _ = control_flow_ops.switch(x, tf.constant(True), name="switch")
        return {"x": np.array([1.0, 2.0], np.float32)}, [tf.identity(false_out, name="untaken")]

    return v1_graph(build)


FIXTURES: dict[str, Callable[[], Fixture]] = {
    "mlp": mlp,
    "convnet": convnet,
    "conv_variants": conv_variants,
    "fused_chains": fused_chains,
    "padded_convs": padded_convs,
    "grouped_convs": grouped_convs,
    "elementwise": elementwise,
    "reductions_shapes": reductions_shapes,
    "integers": integers,
    "error_broadcast": broadcast_error,
    "error_reshape": reshape_error,
    "error_placeholder": placeholder_not_fed,
    "error_grouped_conv_depth": grouped_conv_error([3, 3, 4, 4]),
    "error_grouped_conv_groups": grouped_conv_error([3, 3, 2, 4]),
    "space_batch": space_batch,
    "conv_transpose": conv_transpose,
    "error_conv_transpose_size": conv_transpose_error([1, 9, 8, 2], [3, 3, 2, 3]),
    "error_conv_transpose_depth": conv_transpose_error([1, 8, 8, 2], [3, 3, 2, 5]),
    "error_space_to_batch_divisible": space_batch_error("SpaceToBatchND", [2, 2], [[0, 0], [1, 0]]),
    "error_space_to_batch_block": space_batch_error("SpaceToBatchND", [2, 0], [[0, 0], [0, 0]]),
    "error_batch_to_space_batch": space_batch_error("BatchToSpaceND", [3, 1], [[0, 0], [0, 0]]),
    "error_batch_to_space_crops": space_batch_error("BatchToSpaceND", [2, 1], [[6, 5], [0, 0]]),
    "image_resize": image_resize,
    "error_resize_align_half": resize_error("ResizeBilinear", [1, 4, 4, 1], [8, 8], True, True),
    "error_resize_nearest_align_half": resize_error("ResizeNearestNeighbor", [1, 4, 4, 1], [8, 8], True, True),
    "error_resize_rank": resize_error("ResizeNearestNeighbor", [4, 4, 1], [8, 8]),
    "error_resize_size": resize_error("ResizeBilinear", [1, 4, 4, 1], [-2, 8]),
    "error_resize_size_shape": resize_error("ResizeNearestNeighbor", [1, 4, 4, 1], [8, 8, 1]),
    "rearrange": rearrange,
    "error_band_part_lower": rearrange_error("MatrixBandPart"),
    "error_roll_axis": rearrange_error("Roll"),
    "top_k": top_k,
    "error_top_k_negative": top_k_error(-1),
    "error_top_k_columns": top_k_error(6),
    "scatter_gather_nd": scatter_gather_nd,
    "error_gather_nd_index": scatter_gather_nd_error("GatherNd"),
    "error_scatter_nd_index": scatter_gather_nd_error("ScatterNd"),
    "error_tensor_scatter_shape": scatter_gather_nd_error("TensorScatterUpdate"),
    "depth_space": depth_space,
    "error_depth_to_space_depth": depth_space_error("DepthToSpace"),
    "error_space_to_depth_width": depth_space_error("SpaceToDepth"),
    "local_response_norm": local_response_norm,
    "asserts": asserts,
    "error_assert": assert_error(3),
    "error_assert_summarize": assert_error(10),
    "misc_math": misc_math,
    "error_segment_sum_order": misc_math_error("SegmentSum"),
    "error_reverse_sequence_length": misc_math_error("ReverseSequence"),
    "cond_functional": cond_functional,
    "cond_v1": cond_v1,
    "cond_tf2": cond_tf2,
    "error_cond_dead_fetch": cond_dead_fetch_error,
}


def tf_outputs(fixture: Fixture) -> list[np.ndarray]:
    """Runs the fixture's GraphDef in a TensorFlow session: the oracle."""
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(fixture.graph_def, name="")
    with v1.Session(graph=graph) as sess:
        feed = {graph.get_tensor_by_name(_tensor_name(n)): v for n, v in fixture.feeds.items()}
        return [np.asarray(v) for v in sess.run(fixture.fetches, feed_dict=feed)]


def _core_message(message: str) -> str:
    """The kernel's own message line, without the context TensorFlow wraps around it."""
    for line in message.splitlines():
        line = line.strip()
        if line and not line.startswith(("Graph execution error", "Detected at node", "Node:")):
            return line
    return message


def _tensor_name(name: str) -> str:
    return name if ":" in name else name + ":0"


def _endpoint(name: str) -> str:
    """ember-run's spelling: a bare node name for output 0."""
    return name[: -len(":0")] if name.endswith(":0") else name


def write_fixture(name: str, fixture: Fixture) -> None:
    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "model.pb").write_bytes(fixture.graph_def.SerializeToString(deterministic=True))
    (folder / "model.json").write_text(json_format.MessageToJson(fixture.graph_def, sort_keys=True) + "\n")
    feeds = []
    for i, (feed, value) in enumerate(fixture.feeds.items()):
        np.save(folder / f"input_{i}.npy", value)
        feeds.append({"name": _endpoint(feed), "file": f"input_{i}.npy"})
    expected = []
    error = None
    try:
        outputs = tf_outputs(fixture)
    except tf.errors.OpError as e:
        outputs = []
        # The first line only: TensorFlow appends node and traceback context after it.
        error = {"code": _CODE_NAMES[e.error_code], "message": _core_message(e.message)}
    for i, value in enumerate(outputs):
        np.save(folder / f"expected_{i}.npy", value)
        expected.append(f"expected_{i}.npy")
    manifest: dict[str, object] = {
        "generator": f"engine/testdata/gen_graphs.py with tensorflow {tf.__version__}",
        "feeds": feeds,
        "fetches": [_endpoint(f) for f in fixture.fetches],
        "expected": expected,
    }
    if error is not None:
        manifest["expected_error"] = error
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main(names: list[str]) -> None:
    """Writes the fixtures named (all of them when none are)."""
    unknown = [n for n in names if n not in FIXTURES]
    if unknown:
        raise SystemExit(f"unknown fixture(s) {unknown}; known: {sorted(FIXTURES)}")
    for name, make in FIXTURES.items():
        if names and name not in names:
            continue
        write_fixture(name, make())
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
