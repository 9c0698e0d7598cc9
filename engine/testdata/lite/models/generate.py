"""Generate real-model .tflite fixtures and LiteRT's outputs for them.

    python engine/testdata/lite/models/generate.py

The models are engine/testdata/gen_models.py's (random weights), converted by TensorFlow's
TFLiteConverter from the very frozen GraphDefs that the GraphDef fixtures hold:

  NAME.tflite, NAME.input_<i>.npy, NAME.expected_<i>.npy, and manifest.json listing each model
  with its oracle and tolerance.

LiteRT's reference kernels (OpResolverType.BUILTIN_REF) are the oracle: float models within
rtol 1e-4, int8 CNNs (int8 input and output, calibrated on random images) bit-exact. (BUILTIN_REF
runs these int8 models; LiteRT's optimized kernels differ from it by one step in a few outputs.) `ops_misc` holds one float model with
each transformer op ember lite added on its own (strided slices with masks, gather with
batch_dims, casts, selects, comparisons), so every kernel is checked apart from the models.
`ops_int8` does the same for the int8 activations and elementwise ops of kernels_int8_misc.cc,
on inputs that take every int8 value, saturation included. `lstm`, `lstm_seq`, `gru`, `bilstm`
(Keras recurrent layers) and `while_cond` (tf.while_loop, tf.cond) hold WHILE and IF operators
with subgraphs of their own. `lstm_fused`, `bilstm_fused` (Keras 2 LSTMs, made with tf-keras) and
`lstm_fused_variants` hold UNIDIRECTIONAL_SEQUENCE_LSTM.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import gen_models  # noqa: E402
from gen_graphs import Fixture  # noqa: E402

RESOLVERS = {"ref": OpResolverType.BUILTIN_REF, "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}


def to_session_converter(fixture: Fixture, sess: tf.compat.v1.Session) -> tf.lite.TFLiteConverter:
    graph = sess.graph
    ins = [graph.get_tensor_by_name(n if ":" in n else n + ":0") for n in fixture.feeds]
    outs = [graph.get_tensor_by_name(n) for n in fixture.fetches]
    return tf.compat.v1.lite.TFLiteConverter.from_session(sess, ins, outs)


def convert(fixture: Fixture, quant: bool | str) -> bytes:
    """The fixture as .tflite: quant False or "float" (float32), True or "int8" (full integer,
    calibrated on random inputs), "float16" (float16 weights, DEQUANTIZE to float32 at run time)
    or "dynamic" (dynamic range: int8 weights, float activations, the hybrid kernels)."""
    mode = ("int8" if quant else "float") if isinstance(quant, bool) else quant
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(fixture.graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as sess:
        conv = to_session_converter(fixture, sess)
        if mode != "float":
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
        if mode == "float16":
            conv.target_spec.supported_types = [tf.float16]
        if mode == "int8":
            rng = np.random.default_rng(5)
            shapes = [v.shape for v in fixture.feeds.values()]

            def rep() -> object:
                for _ in range(8):
                    yield [rng.uniform(-1.0, 1.0, size=s).astype(np.float32) for s in shapes]

            conv.representative_dataset = rep
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        return bytes(conv.convert())


def run_litert(model: bytes, inputs: list[np.ndarray], resolver: str) -> list[np.ndarray]:
    interp = Interpreter(model_content=model, experimental_op_resolver_type=RESOLVERS[resolver])
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def lite_inputs(model: bytes, fixture: Fixture) -> list[np.ndarray]:
    """The fixture's feeds in the model's input order, quantized for int8 inputs."""
    details = Interpreter(model_content=model).get_input_details()
    values = list(fixture.feeds.values())
    by_name = {k.split(":")[0]: v for k, v in fixture.feeds.items()}
    out = []
    for i, d in enumerate(details):
        name = d["name"].split(":")[0]
        x = by_name.get(name, values[i])
        if d["dtype"] == np.int8:
            scale, zp = d["quantization"]
            x = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
        out.append(x.astype(d["dtype"]))
    return out


def ops_misc() -> Fixture:
    """One float model with every transformer op of ember lite's kernels_misc*.cc."""
    rng = np.random.default_rng(41)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 3, 4, 5], name="x")
        ids = v1.placeholder(tf.int32, [2, 3], name="ids")
        table = tf.constant(rng.standard_normal((7, 4)).astype(np.float32))
        y = tf.constant(rng.standard_normal((4, 5)).astype(np.float32))
        outs = [
            x[:, 1:, ::2, :] - y[0],
            x[..., 1:4:2],
            x[-1, ..., -1],
            x[:, tf.newaxis, 1:, ::-1],
            tf.gather(table, ids),
            tf.gather(x, tf.constant([[2, 0], [1, 1]]), axis=1, batch_dims=1),
            tf.transpose(x, [0, 2, 3, 1]),
            tf.matmul(x, tf.transpose(x, [0, 1, 3, 2])),
            tf.matmul(x, y, transpose_b=True),
            tf.cast(ids, tf.float32) * 0.5,
            tf.cast(tf.cast(x * 3.0, tf.int32), tf.float32),
            tf.where(x > y, x, -y),
            tf.where(tf.less(ids, 3), ids, ids * 2),
            tf.cast(tf.logical_and(x > 0.0, tf.less_equal(x, y)), tf.float32),
            tf.cast(tf.logical_or(tf.equal(ids, 3), tf.not_equal(ids, 4)), tf.int32),
            tf.math.squared_difference(x, y),
            tf.math.rsqrt(tf.abs(x) + 0.5),
            tf.tanh(x),
            tf.sigmoid(x),
            tf.exp(x),
            tf.math.log(tf.abs(x) + 0.1),
            tf.sqrt(tf.abs(x)),
            -x,
            tf.square(x),
            tf.maximum(x, y),
            tf.minimum(x, y),
            tf.pow(tf.abs(x) + 0.1, y),
            x / (tf.abs(y) + 0.5),
            tf.nn.gelu(x, approximate=True),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.standard_normal((2, 3, 4, 5)).astype(np.float32),
        "ids": rng.integers(0, 7, (2, 3)).astype(np.int32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def ops_shape() -> Fixture:
    """Shape and reduction ops of decoder models: SPLIT, SPLIT_V, UNPACK, PACK, TILE,
    EXPAND_DIMS, SQUEEZE, SUM, REDUCE_MAX/MIN/ANY/ALL."""
    rng = np.random.default_rng(42)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 6, 4], name="x")
        ids = v1.placeholder(tf.int32, [2, 6], name="ids")
        a, b, c = tf.split(x, 3, axis=1)
        p, q = tf.split(x, [1, 3], axis=-1)
        rows = tf.unstack(x, axis=0)
        outs = [
            a - c,
            b,
            q * 2.0,
            p,
            rows[1],
            tf.stack([ids, ids * 2], axis=1),
            tf.stack([rows[0], rows[1]], axis=-1),
            tf.tile(x, [1, 2, 3]),
            tf.tile(ids, [3, 1]),
            tf.expand_dims(x, 2) * 3.0,
            tf.squeeze(x[:, :1, :], axis=1) + 1.0,
            tf.reduce_sum(x, axis=[0, 2]),
            tf.reduce_sum(ids, axis=1, keepdims=True),
            tf.reduce_max(x, axis=-1),
            tf.reduce_min(x, axis=1, keepdims=True),
            tf.cast(tf.reduce_any(x > 1.0, axis=2), tf.int32),
            tf.cast(tf.reduce_all(x > -1.5, axis=[1]), tf.int32),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {"x": rng.standard_normal((2, 6, 4)).astype(np.float32), "ids": rng.integers(0, 9, (2, 6)).astype(np.int32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def ops_cnn() -> Fixture:
    """CNN ops of ResNet/MobileNetV3-style models: PAD (ZeroPadding2D), PADV2, HARD_SWISH."""
    rng = np.random.default_rng(43)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 9, 9, 4], name="image")
        w = tf.constant(rng.standard_normal((3, 3, 4, 6)).astype(np.float32) * 0.3)
        h = tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]])
        h = tf.nn.conv2d(h, w, strides=2, padding="VALID")
        h = h * tf.nn.relu6(h + 3.0) / 6.0
        h = tf.nn.max_pool2d(tf.pad(tf.nn.relu(h), [[0, 0], [1, 1], [1, 1], [0, 0]]), 2, 2, "VALID")
        outs = [
            tf.identity(h, name="out0"),
            tf.identity(tf.pad(x, [[0, 0], [1, 0], [0, 1], [0, 0]], constant_values=-2.0), name="out1"),
        ]
    return Fixture(
        graph.as_graph_def(), {"image": rng.uniform(-1, 1, (1, 9, 9, 4)).astype(np.float32)}, [o.name for o in outs]
    )


def ops_int8() -> Fixture:
    """int8 activations of EfficientNet (swish, squeeze-excite), MobileNetV3 and ConvNeXt
    (LayerNormalization, GELU): LOGISTIC, TANH, HARD_SWISH, GELU, LEAKY_RELU, RSQRT and
    SQUARED_DIFFERENCE (same shapes and broadcast). The inputs run through every int8 value, and
    each op's input is scaled past the range where its output saturates."""
    rng = np.random.default_rng(45)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 160], name="x")
        y = v1.placeholder(tf.float32, [2, 160], name="y")
        row = tf.constant(rng.uniform(-1, 1, 160).astype(np.float32))
        wide = x * 8.0
        outs = [
            tf.sigmoid(wide),
            wide * tf.sigmoid(wide),
            tf.tanh(x * 4.0),
            wide * tf.nn.relu6(wide + 3.0) / 6.0,
            # Two inputs: the two GELUs would share their 0.5 * x, and the converter would then
            # fuse only one of them.
            tf.nn.gelu(x * 4.0 + row, approximate=False),
            tf.nn.gelu(x * 4.0 + row[::-1], approximate=True),
            tf.nn.leaky_relu(x * 4.0, alpha=0.2),
            tf.math.rsqrt(tf.nn.relu(x) + 0.01),
            tf.math.squared_difference(x, y),
            tf.math.squared_difference(x, row),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    # Both rows sweep [-1, 1]: with the calibrated input scale of about 2/255 every int8 code
    # appears; y is x shuffled so that the differences span their whole range too.
    sweep = np.linspace(-1.0, 1.0, 320).astype(np.float32).reshape(2, 160)
    feeds = {"x": sweep, "y": rng.permutation(sweep.ravel()).reshape(2, 160)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def elu() -> Fixture:
    """ELU (Keras activation="elu"). LiteRT's reference resolver has no ELU, so these fixtures'
    oracle is its builtin kernel (BUILTIN_ORACLE), expm1 in float. TFLiteConverter keeps ELU in
    float in an int8 model too: elu_int8 runs it between DEQUANTIZE and QUANTIZE. The negative
    side reaches -8, where ELU is -1 to within an int8 output step."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 160], name="x")
        outs = [tf.nn.elu(x * 8.0), tf.nn.elu(x * 0.5 + 0.25)]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {"x": np.linspace(-1.0, 1.0, 320).astype(np.float32).reshape(2, 160)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def sub_int8() -> Fixture:
    """int8 SUB (EfficientNetV2's Normalization layer): broadcasts [1, H, W, 3] against [3] either
    way round and [2, 1, 128] against [3, 1], constants with zero points -128 and 127, fused RELU6,
    outputs saturating at both ends. In c - image the constant has the larger, power-of-two
    scale (1/32): the image's multiplier then ends in 8 zero bits and 64 of its rescaled values
    are exact ties, but one step of the input stage (2^-19 of an output step) never reaches the
    output at calibrated scales; p - q, rescaled by sub_int8_ties, is where it does."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        image = v1.placeholder(tf.float32, [1, 8, 16, 3], name="image")
        y = v1.placeholder(tf.float32, [2, 1, 128], name="y")
        z = v1.placeholder(tf.float32, [3, 1], name="z")
        p = v1.placeholder(tf.float32, [8, 1], name="p")
        q = v1.placeholder(tf.float32, [1, 8], name="q")
        pot = tf.constant(np.array([-4.0, 3.96875, 0.5], np.float32))
        outs = [
            pot - image,
            image - tf.constant(np.array([0.5, 1.0, 2.0], np.float32)),
            image - tf.constant(np.array([-0.5, -1.0, -2.0], np.float32)),
            tf.nn.relu6(tf.constant(np.array([-1.0, 3.0, 7.0], np.float32)) - image * 4.0),
            tf.constant(np.array([-0.5, -1.0, -2.0], np.float32)) - tf.nn.relu(image),
            y - z,
            y * 50.0 - z * 0.01,
            p - q,
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    # Every int8 code of the image and y; z's extremes beyond its calibration push y - z past
    # the calibrated output range at both ends.
    sweep = np.linspace(-1.0, 1.0, 384).astype(np.float32)
    feeds = {
        "image": sweep.reshape(1, 8, 16, 3),
        "y": np.linspace(-1.0, 1.0, 256, dtype=np.float32).reshape(2, 1, 128),
        "z": np.array([[-1.0], [0.0], [1.0]], np.float32),
        # Codes on SUB_TIE_SCALES (sub_int8_ties): (23, 90) and (-23, -90) hit the tie.
        "p": np.array([[-128], [-23], [-1], [0], [5], [23], [64], [127]], np.float32) * SUB_TIE_SCALES[0],
        "q": np.array([[-128, -90, -7, 0, 1, 33, 90, 127]], np.float32) * np.float32(SUB_TIE_SCALES[1]),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


# Scales (zero points 0) that sub_int8_ties gives sub_int8's p - q: input 1's, a power of two,
# is the larger, so input 2's multiplier ends in 7 zero bits and its rescaled 23 * 2^20 and
# 90 * 2^20 are exact ties; the output scale, 1/1545 of input 1's, is fine enough that one step
# there moves the output: there a real subtraction and ADD with input 2's multiplier negated
# give different outputs (found by search; calibrated scales never do).
SUB_TIE_SCALES = (2.0**-5, 0.007995661348104477, 2.0224715626682155e-05)


def sub_int8_ties(model: bytes) -> bytes:
    """Sets the scales of sub_int8's p - q (the SUB of inputs p and q) to SUB_TIE_SCALES."""
    from tensorflow.lite.tools import flatbuffer_utils

    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    g = m.subgraphs[0]
    names = {i: g.tensors[i].name.decode() for i in g.inputs}
    for op in g.operators:
        if [names.get(i) for i in op.inputs] == ["p", "q"]:
            for t, scale in zip([*op.inputs, op.outputs[0]], SUB_TIE_SCALES, strict=True):
                g.tensors[t].quantization.scale = [scale]
                g.tensors[t].quantization.zeroPoint = [0]
            return bytes(flatbuffer_utils.convert_object_to_bytearray(m))
    raise ValueError("sub_int8: no SUB of p and q")


def pad_cnn_int8_source() -> Fixture:
    """A ResNet stem (ZeroPadding2D, strided conv, ReLU, padded max pool) for an int8 model."""
    rng = np.random.default_rng(44)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 16, 16, 3], name="image")
        w = tf.constant(rng.standard_normal((5, 5, 3, 8)).astype(np.float32) * 0.3)
        h = tf.nn.conv2d(tf.pad(x, [[0, 0], [2, 2], [2, 2], [0, 0]]), w, strides=2, padding="VALID")
        h = tf.nn.relu(tf.nn.bias_add(h, tf.constant(rng.normal(0, 0.1, 8).astype(np.float32))))
        h = tf.nn.max_pool2d(tf.pad(h, [[0, 0], [1, 1], [1, 1], [0, 0]]), 3, 2, "VALID")
        out = tf.identity(h, name="out")
    return Fixture(graph.as_graph_def(), {"image": rng.uniform(-1, 1, (1, 16, 16, 3)).astype(np.float32)}, [out.name])


def grouped_conv() -> Fixture:
    """Grouped CONV_2D (Keras's Conv2D(groups=...)) of ResNeXt, RegNet and ConvNeXt models.

    Groups of 4 and 2 channels (strided, SAME and VALID, bias, ReLU), one filter per channel
    (groups = C: ConvNeXt's 7x7 and a 3x3, ember's depthwise rows), two filters per channel, and
    a grouped 1x1.
    """
    rng = np.random.default_rng(48)
    v1 = tf.compat.v1

    def conv(h: tf.Tensor, k: int, depth: int, out: int, stride: int, padding: str) -> tf.Tensor:
        w = tf.constant(rng.normal(0, 1 / np.sqrt(k * k * depth), (k, k, depth, out)).astype(np.float32))
        b = tf.constant(rng.normal(0, 0.1, out).astype(np.float32))
        return tf.nn.bias_add(tf.nn.conv2d(h, w, stride, padding), b)

    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 12, 12, 8], name="image")
        h = tf.nn.relu(conv(x, 3, 2, 16, 1, "SAME"))  # 4 groups
        h = tf.nn.relu(conv(h, 3, 4, 16, 2, "VALID"))  # 4 groups, strided
        h = conv(h, 7, 1, 16, 1, "SAME")  # groups = C, 7x7
        h = tf.nn.relu6(conv(h, 3, 1, 16, 1, "SAME"))  # groups = C, 3x3
        h = conv(h, 3, 1, 32, 2, "SAME")  # groups = C, two filters each
        out = tf.identity(conv(h, 1, 8, 16, 1, "VALID"), name="out")  # 4 groups, 1x1
    return Fixture(graph.as_graph_def(), {"image": rng.uniform(-1, 1, (1, 12, 12, 8)).astype(np.float32)}, [out.name])


def pointwise_tails_source() -> Fixture:
    """1x1 CONV_2Ds whose output channels leave the last group of 4 16-channel blocks short.

    ember packs int8 1x1 convolutions' weights in groups of 4 blocks here: 152 channels are 10
    blocks in 12 and 728 (Xception's middle flow) 46 in 48, the last group's second block half
    used; 104 channels are 7 blocks in 8, the 7th half used. 81 rows (a 9x9 image) and 9 rows.
    """
    rng = np.random.default_rng(46)
    v1 = tf.compat.v1

    def conv(h: tf.Tensor, out: int, relu: bool) -> tf.Tensor:
        depth = h.shape[-1]
        w = tf.constant(rng.normal(0, 1 / np.sqrt(depth), (1, 1, depth, out)).astype(np.float32))
        b = tf.constant(rng.normal(0, 0.1, out).astype(np.float32))
        y = tf.nn.bias_add(tf.nn.conv2d(h, w, 1, "VALID"), b)
        return tf.nn.relu(y) if relu else y

    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 9, 9, 24], name="image")
        small = tf.nn.max_pool2d(x, 3, 3, "VALID")  # 3x3: 9 rows
        outs = [
            conv(x, 152, True),
            conv(x, 728, False),
            conv(x, 104, True),
            conv(small, 728, True),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {"image": rng.uniform(-1, 1, (1, 9, 9, 24)).astype(np.float32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def resize_ops() -> Fixture:
    """RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR with each align_corners/half_pixel_centers
    combination the converter keeps, up (8x10 -> 13x17) and down (8x10 -> 5x7) by non-integer
    factors, on a batch of 2. The int8 model runs ResizeBilinearInteger's 10-bit fixed point."""
    rng = np.random.default_rng(47)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 8, 10, 3], name="image")
        raw = tf.raw_ops
        outs = []
        for ac, hp in ((False, False), (True, False), (False, True)):
            for size in ([13, 17], [5, 7]):
                tag = f"{size[0]}x{size[1]}_ac{int(ac)}_hp{int(hp)}"
                kw = {"images": x, "size": size, "align_corners": ac, "half_pixel_centers": hp}
                outs.append(tf.identity(raw.ResizeBilinear(**kw), name=f"bilinear_{tag}"))
                outs.append(tf.identity(raw.ResizeNearestNeighbor(**kw), name=f"nearest_{tag}"))
    feeds = {"image": rng.uniform(-1, 1, (2, 8, 10, 3)).astype(np.float32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def extra_ops() -> Fixture:
    """PRELU (alpha shared over the spatial axes, as Keras's PReLU(shared_axes=[1, 2]), and one
    alpha per element), LEAKY_RELU with a small and an above-1 alpha, REDUCE_MAX and REDUCE_MIN
    (Keras's GlobalMaxPooling1D; one axis and two with keep_dims) and BATCH_MATMUL of two
    activations (Keras's MultiHeadAttention) with adj_x, adj_y and broadcast batch dims."""
    rng = np.random.default_rng(48)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 6, 4], name="x")
        a = v1.placeholder(tf.float32, [2, 1, 5, 7], name="a")
        b = v1.placeholder(tf.float32, [3, 7, 6], name="b")
        bt = v1.placeholder(tf.float32, [3, 6, 7], name="bt")
        at = v1.placeholder(tf.float32, [1, 7, 5], name="at")

        def prelu(h: tf.Tensor, alpha: np.ndarray) -> tf.Tensor:
            # Keras's PReLU.call, which the converter fuses into PRELU.
            return tf.nn.relu(h) + tf.constant(-alpha) * tf.nn.relu(-h)

        outs = [
            prelu(x, rng.uniform(-0.5, 0.9, (1, 1, 4)).astype(np.float32)),
            # Its own input: the two PReLUs would share relu(-x), and the converter would then
            # fuse neither.
            prelu(x * 1.5, rng.uniform(-0.5, 0.9, (5, 6, 4)).astype(np.float32)),
            tf.nn.leaky_relu(x, alpha=0.01),
            tf.nn.leaky_relu(x, alpha=1.7),
            tf.reduce_max(x, axis=1),
            tf.reduce_min(x, axis=[1, 2], keepdims=True),
            # RELU and ADD give the int8 operands zero points of their own (-128, about -64).
            tf.linalg.matmul(a, tf.nn.relu(b)),
            tf.linalg.matmul(a, bt + 0.5, adjoint_b=True),
            tf.linalg.matmul(at, b, adjoint_a=True),
            tf.linalg.matmul(at, bt, adjoint_a=True, adjoint_b=True),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.uniform(-1, 1, (2, 5, 6, 4)).astype(np.float32),
        "a": rng.uniform(-1, 1, (2, 1, 5, 7)).astype(np.float32),
        "b": rng.uniform(-1, 1, (3, 7, 6)).astype(np.float32),
        "bt": rng.uniform(-1, 1, (3, 6, 7)).astype(np.float32),
        "at": rng.uniform(-1, 1, (1, 7, 5)).astype(np.float32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def conv_transpose() -> Fixture:
    """TRANSPOSE_CONV (Keras's Conv2DTranspose) as U-Net and GAN decoders use it: a bias the
    converter fuses (version 3) with a fused ReLU (version 4), none (versions 1 and 2), strides 1 to
    3, SAME and VALID, output sizes a stride cannot reach (output_padding), batch 2."""
    rng = np.random.default_rng(47)
    v1 = tf.compat.v1

    def ct(h: tf.Tensor, k: int, out: list[int], stride: int, padding: str, bias: bool, relu: bool) -> tf.Tensor:
        w = tf.constant(rng.normal(0, 1 / np.sqrt(k * k * h.shape[-1]), (k, k, out[3], h.shape[-1])).astype(np.float32))
        y = tf.nn.conv2d_transpose(h, w, out, stride, padding)
        if bias:
            y = tf.nn.bias_add(y, tf.constant(rng.normal(0, 0.3, out[3]).astype(np.float32)))
        return tf.nn.relu(y) if relu else y

    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 7, 6], name="image")
        h = ct(x, 3, [2, 10, 14, 8], 2, "SAME", True, True)  # bias + ReLU: version 4
        outs = [
            ct(h, 4, [2, 31, 43, 3], 3, "VALID", True, False),  # bias: version 3
            ct(h, 3, [2, 12, 16, 5], 1, "VALID", False, False),  # no bias: version 1/2
            ct(x, 3, [2, 9, 13, 4], 2, "SAME", True, False),  # output_padding
            ct(x, 2, [2, 11, 15, 4], 2, "VALID", True, False),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    return Fixture(
        graph.as_graph_def(), {"image": rng.uniform(-1, 1, (2, 5, 7, 6)).astype(np.float32)}, [o.name for o in outs]
    )


def conv3d_ops() -> Fixture:
    """CONV_3D and CONV_3D_TRANSPOSE (Keras's Conv3D and Conv3DTranspose, video and volumetric
    models): SAME and VALID, strides mixing 1 and 2, a dilated conv, a bias and ReLU the converter
    fuses, a 1x1x1 conv, and transposes with output sizes a stride cannot reach, batch 2."""
    rng = np.random.default_rng(53)
    v1 = tf.compat.v1

    def weights(*shape: int) -> tf.Tensor:
        fan_in = int(np.prod(shape[:3])) * shape[3]
        return tf.constant(rng.normal(0, 1 / np.sqrt(fan_in), shape).astype(np.float32))

    def bias(n: int) -> tf.Tensor:
        return tf.constant(rng.normal(0, 0.3, n).astype(np.float32))

    def conv(
        h: tf.Tensor, k: tuple[int, int, int], m: int, strides: list[int], padding: str, **kw: object
    ) -> tf.Tensor:
        return tf.nn.conv3d(h, weights(*k, h.shape[-1], m), [1, *strides, 1], padding, **kw)  # type: ignore[arg-type]

    def transpose(h: tf.Tensor, k: tuple[int, int, int], out: list[int], strides: list[int], padding: str) -> tf.Tensor:
        w = weights(*k, out[4], h.shape[-1])
        return tf.nn.conv3d_transpose(h, w, out, [1, *strides, 1], padding) + bias(out[4])

    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 6, 7, 3], name="volume")
        h = tf.nn.relu(conv(x, (3, 3, 3), 8, [1, 2, 1], "SAME") + bias(8))
        outs = [
            conv(x, (3, 2, 3), 4, [1, 1, 1], "VALID"),
            conv(x, (2, 3, 3), 5, [2, 1, 2], "SAME") + bias(5),
            conv(x, (3, 3, 2), 4, [1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1]),
            conv(h, (1, 1, 1), 6, [1, 1, 1], "VALID"),
            transpose(h, (3, 3, 3), [2, 10, 6, 14, 4], [2, 2, 2], "SAME"),
            transpose(h, (2, 3, 2), [2, 11, 8, 15, 3], [2, 2, 2], "VALID"),
            transpose(x, (3, 3, 3), [2, 9, 11, 7, 2], [2, 2, 1], "SAME"),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {"volume": rng.uniform(-1, 1, (2, 5, 6, 7, 3)).astype(np.float32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def keras_rnn(build: Callable[[object], object], shape: tuple[int, int, int], seed: int) -> Fixture:
    """A Keras model around a recurrent layer, random weights. TFLiteConverter writes the layer's
    time loop as a WHILE whose cond and body are subgraphs of their own (Keras 3 LSTM/GRU)."""
    import keras

    keras.utils.set_random_seed(seed)
    inp = keras.Input(shape=shape[1:], batch_size=shape[0])
    model = keras.Model(inp, build(inp))

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        return [model(x, training=False)]

    graph_def, fetches = gen_models.freeze(run, [tf.TensorSpec(shape, tf.float32, name="x")])
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype(np.float32)
    return Fixture(graph_def, {"x": x}, fetches)


def lstm() -> Fixture:
    """Keras LSTM (last state only) + Dense: WHILE, its body's GATHER of one time step, SPLIT
    into the gates; the body passes the input sequence through unchanged."""
    import keras

    return keras_rnn(lambda x: keras.layers.Dense(4)(keras.layers.LSTM(16)(x)), (1, 10, 8), 61)


def lstm_seq() -> Fixture:
    """Keras LSTM(return_sequences=True): the body writes each step into the output sequence
    with SLICEs of run-time begin/size and a CONCATENATION."""
    import keras

    return keras_rnn(lambda x: keras.layers.LSTM(8, return_sequences=True)(x), (2, 6, 5), 62)


def gru() -> Fixture:
    """Keras GRU + Dense: SUB of a constant scalar and STRIDED_SLICEs in the body."""
    import keras

    return keras_rnn(lambda x: keras.layers.Dense(4)(keras.layers.GRU(12)(x)), (1, 9, 6), 63)


def bilstm() -> Fixture:
    """Keras Bidirectional(LSTM): two WHILEs (four subgraphs), REVERSE_V2 of the sequence."""
    import keras

    layer = keras.layers.Bidirectional(keras.layers.LSTM(8))
    return keras_rnn(lambda x: keras.layers.Dense(3)(layer(x)), (1, 7, 6), 64)


def while_cond() -> Fixture:
    """tf.while_loop and tf.cond in a tf.function: WHILE with a run-time trip count (input n),
    loop variables the body updates and one it passes through, and IF on the loop's result.

    No loop variable is a permutation of others here: LiteRT 2.3 copies a body's outputs into
    its inputs one by one, so swapped variables (`a, b = b, a`) both end up with one value there,
    unlike TensorFlow and ember (engine/tests/lite/control_flow_test.cc checks ember's swap)."""
    rng = np.random.default_rng(65)
    w = tf.constant(rng.normal(0.0, 0.5, (6, 6)).astype(np.float32))

    def run(x: tf.Tensor, n: tf.Tensor) -> list[tf.Tensor]:
        def body(i: tf.Tensor, h: tf.Tensor, a: tf.Tensor, b: tf.Tensor) -> tuple[tf.Tensor, ...]:
            return i + 1, tf.tanh(tf.matmul(h, w) + x), a + 0.5 * h, b

        start = [tf.constant(0), x, x * 2.0, x * 3.0]
        i, h, a, b = tf.while_loop(lambda i, h, a, b: i < n, body, start)
        y = tf.cond(tf.reduce_sum(h) > 0.0, lambda: h * 2.0 + a, lambda: tf.exp(h) - b)
        return [h, a, y, tf.cast(i, tf.float32)]

    specs = [tf.TensorSpec([2, 6], tf.float32, name="x"), tf.TensorSpec([], tf.int32, name="n")]
    graph_def, fetches = gen_models.freeze(run, specs)
    feeds = {"x": rng.uniform(-1.0, 1.0, (2, 6)).astype(np.float32), "n": np.array(3, np.int32)}
    return Fixture(graph_def, feeds, fetches)


# int8: TensorFlow 2.21's calibrator crashes on these models (Keras LSTM, and a tf.while_loop
# with one FULLY_CONNECTED), so the control-flow fixtures are float only.
def cumsum_ops() -> Fixture:
    """CUMSUM (tf.math.cumsum: keras-hub Falcon's ALiBi positions come from a cumulative sum of
    its padding mask): float32, int32 and int64, first, middle, last and negative axes,
    exclusive, reverse and both."""
    rng = np.random.default_rng(47)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 3, 4], name="x")
        ids = v1.placeholder(tf.int32, [3, 7], name="ids")
        outs = [
            tf.math.cumsum(x, axis=0),
            tf.math.cumsum(x, axis=1),
            tf.math.cumsum(x, axis=-1, exclusive=True),
            tf.math.cumsum(x, axis=2, reverse=True),
            tf.math.cumsum(x, axis=-3, exclusive=True, reverse=True),
            tf.math.cumsum(ids, axis=1),
            tf.math.cumsum(ids, axis=0, exclusive=True, reverse=True),
            tf.math.cumsum(tf.cast(ids, tf.int64) * 1000003, axis=-1, reverse=True),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.standard_normal((2, 5, 3, 4)).astype(np.float32),
        "ids": rng.integers(-50, 50, (3, 7)).astype(np.int32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def dynamic_update_slice() -> Fixture:
    """DYNAMIC_UPDATE_SLICE (keras.ops.slice_update, as Swin builds its attention mask): float32
    and int32, constant and run-time start indices, starts clamped from below and above, and a
    constant operand."""
    from tensorflow.compiler.tf2xla.ops import gen_xla_ops

    rng = np.random.default_rng(53)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [3, 5, 6], name="x")
        u = v1.placeholder(tf.float32, [2, 3, 4], name="u")
        start = v1.placeholder(tf.int32, [3], name="start")
        update = gen_xla_ops.xla_dynamic_update_slice
        base = tf.constant(rng.integers(-9, 9, (4, 7)).astype(np.int32))
        outs = [
            update(x, u, tf.constant([0, 0, 0])),
            update(x, u, tf.constant([1, 2, 2])),
            update(x, u, tf.constant([3, -1, 9])),
            update(x, u, start),
            update(base, tf.constant([[5, 6, 7]], tf.int32), tf.constant([2, 6])),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.standard_normal((3, 5, 6)).astype(np.float32),
        "u": rng.standard_normal((2, 3, 4)).astype(np.float32),
        "start": np.array([-2, 1, 5], np.int32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def index_ops() -> Fixture:
    """DEPTH_TO_SPACE, SPACE_TO_DEPTH, TOPK_V2 (top_k, sort and argsort descending; tied values),
    BROADCAST_TO (int32 and int64 shapes), FLOOR_DIV and FLOOR_MOD (float32, int32, int64; both
    divisor signs, broadcasting), ONE_HOT (axes -1, 0 and 1; int32 and int64 indices, some out of
    range; float32, int32, int64 and bool values), GATHER_ND (constant and run-time int32/int64
    indices, whole slices) and SCATTER_ND (duplicate indices summed; tensor_scatter_nd_update)."""
    rng = np.random.default_rng(59)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 4, 6, 8], name="x")
        v = v1.placeholder(tf.float32, [3, 10], name="v")
        ids = v1.placeholder(tf.int32, [3, 4], name="ids")
        a = v1.placeholder(tf.int32, [4, 6], name="a")
        pts = v1.placeholder(tf.int32, [5, 2], name="pts")
        ids64 = tf.cast(ids, tf.int64)
        top = tf.math.top_k(v, 4)
        top_ids = tf.math.top_k(ids, 3)
        outs = [
            tf.nn.depth_to_space(x, 2),
            tf.nn.space_to_depth(x, 2),
            tf.nn.depth_to_space(tf.cast(x * 10.0, tf.int32), 2),
            tf.nn.space_to_depth(x[:, :, :, :3], 2),
            top.values,
            top.indices,
            tf.sort(v, axis=-1, direction="DESCENDING"),
            tf.argsort(v, axis=-1, direction="DESCENDING", stable=True),
            top_ids.values,
            top_ids.indices,
            tf.math.top_k(ids64 * 3, 1).values,
            tf.broadcast_to(v[:1], [3, 10]),
            tf.broadcast_to(tf.reshape(v[0, :4], [4, 1, 1]), [2, 4, 5, 3]),
            tf.broadcast_to(ids, [2, 3, 4]),
            tf.broadcast_to(tf.reshape(ids64, [3, 1, 4]), tf.constant([3, 2, 4], tf.int64)),
            tf.math.floormod(v, 0.7),
            tf.math.floormod(v, -0.7),
            tf.math.floordiv(v, 0.3),
            tf.math.floordiv(v, v[::-1] * 2.0 - 0.05),
            tf.math.floormod(v, v[0] * 2.0 - 0.05),
            tf.math.floormod(a, tf.constant([3, -3, 5, -5, 7, -2], tf.int32)),
            tf.math.floordiv(a, tf.constant([[3], [-3], [4], [-7]], tf.int32)),
            tf.math.floormod(tf.cast(a, tf.int64) * 1000000007, tf.constant(-97, tf.int64)),
            tf.one_hot(ids, 6),
            tf.one_hot(ids, 5, on_value=3, off_value=-1, axis=0, dtype=tf.int32),
            tf.one_hot(ids64, 4, axis=1, dtype=tf.int64),
            tf.cast(tf.one_hot(ids, 7, on_value=True, off_value=False, dtype=tf.bool), tf.int32),
            tf.gather_nd(v, [[0, 1], [2, 9], [1, 0]]),
            tf.gather_nd(v, [[2], [0], [2]]),
            tf.gather_nd(x, pts),
            tf.gather_nd(ids, tf.cast(pts[:, :1], tf.int64) % 3),
            tf.scatter_nd(pts[:, :1] % 4, tf.reshape(v[:, :5], [5, 3]), [4, 3]),
            tf.scatter_nd(pts % [3, 4], tf.range(5, dtype=tf.int32) * 7, [3, 4]),
            tf.tensor_scatter_nd_update(v, [[0], [2]], tf.ones([2, 10])),
            tf.scatter_nd([[1, 1], [0, 2], [1, 1]], [1.5, 2.5, -4.0], [2, 3]),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.standard_normal((2, 4, 6, 8)).astype(np.float32),
        "v": np.round(rng.standard_normal((3, 10)), 1).astype(np.float32),
        "ids": rng.integers(-1, 7, (3, 4)).astype(np.int32),
        "a": rng.integers(-50, 50, (4, 6)).astype(np.int32),
        "pts": np.array([[0, 1], [1, 3], [0, 2], [1, 0], [0, 1]], np.int32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def index_ops_int8_source() -> Fixture:
    """int8 DEPTH_TO_SPACE, SPACE_TO_DEPTH, TOPK_V2 (tied values), BROADCAST_TO, GATHER_ND and
    SCATTER_ND (a duplicate index: raw int8 sums) for an int8 model. LiteRT's reference resolver
    has only version 1 of DEPTH_TO_SPACE, so this fixture's oracle is its builtin resolver
    (BUILTIN_ORACLE), whose kernels for these ops move the same bytes."""
    rng = np.random.default_rng(61)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 4, 6, 8], name="x")
        v = v1.placeholder(tf.float32, [3, 10], name="v")
        top = tf.math.top_k(v, 4)
        outs = [
            tf.nn.depth_to_space(x, 2),
            tf.nn.space_to_depth(x, 2),
            top.values,
            top.indices,
            tf.sort(v, axis=-1, direction="DESCENDING"),
            tf.broadcast_to(v[:1], [3, 10]),
            tf.broadcast_to(tf.reshape(v[0, :4], [4, 1, 1]), [2, 4, 5, 3]),
            tf.gather_nd(v, [[0, 1], [2, 9], [1, 0], [0, 1]]),
            tf.gather_nd(x, [[0, 3], [0, 1]]),
            tf.scatter_nd([[1], [3], [1]], v, [5, 10]),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    feeds = {
        "x": rng.uniform(-1, 1, (1, 4, 6, 8)).astype(np.float32),
        "v": np.round(rng.uniform(-1, 1, (3, 10)), 1).astype(np.float32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def extra_builtins() -> Fixture:
    """ARG_MAX/ARG_MIN (int64 and int32 outputs, negative axes, ties), FULLY_CONNECTED with
    run-time weights (tf.einsum "ij,kj->ik" and tf.matmul of two activations, with a bias and
    ReLU), LOG_SOFTMAX, L2_NORMALIZATION (a zero row: the epsilon), MIRROR_PAD (REFLECT and
    SYMMETRIC, float32 and int32) and REDUCE_PROD (one axis, two with keep_dims, int32)."""
    rng = np.random.default_rng(71)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 6], name="x")
        a = v1.placeholder(tf.float32, [4, 10], name="a")
        b = v1.placeholder(tf.float32, [6, 10], name="b")
        ids = v1.placeholder(tf.int32, [3, 7], name="ids")
        bias = tf.constant(rng.normal(0, 0.5, 6).astype(np.float32))
        img = tf.reshape(x, [1, 2, 5, 6])
        outs = [
            tf.argmax(x, axis=1),
            tf.argmin(x, axis=-1, output_type=tf.int32),
            tf.argmax(ids, axis=0, output_type=tf.int32),  # small integers: ties
            tf.argmin(tf.cast(tf.cast(x * 2.0, tf.int32), tf.float32), axis=2),  # truncated: ties
            tf.einsum("ij,kj->ik", a, b),
            tf.nn.relu(tf.einsum("ij,kj->ik", a, b * 2.0) + bias),
            tf.matmul(tf.reshape(a, [2, 2, 10]), tf.transpose(b)),
            tf.nn.log_softmax(x * 4.0),
            tf.math.l2_normalize(x, axis=-1),
            tf.pad(img, [[0, 0], [1, 1], [2, 4], [1, 0]], "REFLECT"),
            tf.pad(img, [[0, 0], [2, 0], [0, 5], [3, 6]], "SYMMETRIC"),
            tf.pad(ids, [[2, 2], [1, 6]], "REFLECT"),
            tf.reduce_prod(x, axis=1),
            tf.reduce_prod(x + 1.0, axis=[0, -1], keepdims=True),
            tf.reduce_prod(ids, axis=-1),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    xv = rng.standard_normal((2, 5, 6)).astype(np.float32)
    xv[1, 2, :] = 0.0  # L2_NORMALIZATION of a zero row
    feeds = {
        "x": xv,
        "a": rng.standard_normal((4, 10)).astype(np.float32),
        "b": rng.standard_normal((6, 10)).astype(np.float32),
        "ids": rng.integers(-3, 4, (3, 7)).astype(np.int32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def extra_builtins_int8_source() -> Fixture:
    """The int8 versions of extra_builtins' ops that LiteRT's int8 kernels run: ARG_MAX/ARG_MIN of
    int8 codes, FULLY_CONNECTED with run-time int8 weights (zero point -128 after the RELU),
    MIRROR_PAD of int8, L2_NORMALIZATION onto its fixed 1/128 output scale (a zero row too),
    LOG_SOFTMAX onto its fixed 16/256 scale (zero point 127)."""
    rng = np.random.default_rng(72)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 5, 6], name="x")
        a = v1.placeholder(tf.float32, [4, 10], name="a")
        b = v1.placeholder(tf.float32, [6, 10], name="b")
        img = tf.reshape(x, [1, 2, 5, 6])
        outs = [
            tf.argmax(x, axis=1),
            tf.argmin(x, axis=-1, output_type=tf.int32),
            tf.einsum("ij,kj->ik", a, tf.nn.relu(b)),
            tf.pad(img, [[0, 0], [1, 1], [2, 4], [1, 0]], "REFLECT"),
            tf.pad(img, [[0, 0], [2, 0], [0, 5], [3, 6]], "SYMMETRIC"),
            tf.math.l2_normalize(x, axis=-1),
            tf.math.l2_normalize(a * 0.05, axis=-1),
            tf.nn.log_softmax(x * 4.0),
            tf.nn.log_softmax(a * 12.0),  # differences past the output range: -128
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    xv = rng.uniform(-1, 1, (2, 5, 6)).astype(np.float32)
    xv[0, 3, :] = 0.0  # L2_NORMALIZATION of a zero row
    feeds = {
        "x": xv,
        "a": rng.uniform(-1, 1, (4, 10)).astype(np.float32),
        "b": rng.uniform(-1, 1, (6, 10)).astype(np.float32),
    }
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def unary_math() -> Fixture:
    """FLOOR, CEIL, ROUND (halves to even: -2.5, -0.5, 0.5, 1.5, 2.5 are in the input), SIN, COS
    and SIGN (float with 0 and -0, and int32): tf.round / tf.sign of post-processing heads,
    sinusoidal position embeddings."""
    rng = np.random.default_rng(59)
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [3, 8], name="x")
        ids = v1.placeholder(tf.int32, [2, 5], name="ids")
        outs = [
            tf.floor(x),
            tf.math.ceil(x),
            tf.round(x),
            tf.sin(x * 3.0),
            tf.cos(x * 3.0),
            tf.sign(x),
            tf.sign(ids),
        ]
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
    x = rng.uniform(-4, 4, (3, 8)).astype(np.float32)
    x[0, :8] = [-2.5, -0.5, 0.5, 1.5, 2.5, 0.0, -0.0, 3.5]
    feeds = {"x": x, "ids": rng.integers(-3, 4, (2, 5)).astype(np.int32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


# name -> (fixture, quantization: False float32, True int8, or "float16" / "dynamic")
def hybrid_ops() -> Fixture:
    """Ops that dynamic-range quantization (mode "dynamic") gives int8 weights of >= 1024
    elements and LiteRT runs with hybrid kernels: CONV_2D (SAME and strided VALID, grouped),
    DEPTHWISE_CONV_2D (depth multiplier 4, dilated, strided), FULLY_CONNECTED on 2-D and 3-D
    inputs; two images, so that each batch is quantized on its own."""
    rng = np.random.default_rng(71)
    v1 = tf.compat.v1

    def const(*shape: int) -> tf.Tensor:
        return tf.constant((rng.standard_normal(shape) * 0.3).astype(np.float32))

    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 9, 9, 16], name="x")
        h = tf.nn.relu(tf.nn.conv2d(x, const(3, 3, 16, 32), 1, "SAME") + const(32))
        c = tf.nn.conv2d(h, const(3, 3, 32, 16), 2, "VALID") + const(16)
        g = tf.nn.conv2d(h, const(3, 3, 8, 64), 1, "SAME")
        d = tf.nn.relu6(tf.nn.depthwise_conv2d(h, const(3, 3, 32, 4), [1, 1, 1, 1], "SAME") + const(128))
        e = tf.nn.depthwise_conv2d(d, const(3, 3, 128, 1), [1, 1, 1, 1], "SAME", dilations=[2, 2])
        f = tf.nn.depthwise_conv2d(d, const(3, 3, 128, 1), [1, 2, 2, 1], "VALID")
        m = tf.reduce_mean(h, axis=[1, 2])
        fc = tf.matmul(m, const(32, 48)) + const(48)
        seq = tf.reshape(h, [2, 81, 32])
        fc3 = tf.nn.relu(tf.einsum("bsc,cd->bsd", seq, const(32, 40)))
        outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate([c, g, e, f, fc, fc3])]
    feeds = {"x": rng.uniform(-1, 1, (2, 9, 9, 16)).astype(np.float32)}
    return Fixture(graph.as_graph_def(), feeds, [o.name for o in outs])


def hybrid_symmetric(model: bytes) -> bytes:
    """The other forms of LiteRT's hybrid kernels, which TFLiteConverter does not emit itself:
    FULLY_CONNECTED without asymmetric_quantize_inputs (rows quantized symmetrically) and
    CONV_2D / FULLY_CONNECTED weights with one per-tensor scale (the int8 values rescaled to the
    largest channel scale; CONV_2D then quantizes its input symmetrically)."""
    from tensorflow.lite.tools import flatbuffer_utils

    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
    g = m.subgraphs[0]
    for op in g.operators:
        opts = op.builtinOptions
        if hasattr(opts, "asymmetricQuantizeInputs"):
            opts.asymmetricQuantizeInputs = False
        code = m.operatorCodes[op.opcodeIndex]
        if max(code.builtinCode, code.deprecatedBuiltinCode) == 3:  # CONV_2D: per-tensor below
            w = g.tensors[op.inputs[1]]
            q = w.quantization
            grouped = g.tensors[op.inputs[0]].shape[3] != w.shape[3]  # LiteRT: per channel only
            if w.type != 9 or q is None or q.scale is None or len(q.scale) < 2 or grouped:
                continue
            buf = m.buffers[w.buffer]
            values = np.frombuffer(bytes(buf.data), np.int8).reshape(w.shape).astype(np.float32)
            scales = np.asarray(q.scale, np.float32)
            top = float(scales.max())
            values = np.clip(np.round(values * (scales / top).reshape(-1, 1, 1, 1)), -127, 127)
            buf.data = np.frombuffer(values.astype(np.int8).tobytes(), np.uint8)
            q.scale = np.array([top], np.float32)
            q.zeroPoint = np.array([0], np.int64)
            q.quantizedDimension = 0
    return bytes(flatbuffer_utils.convert_object_to_bytearray(m))


MODELS: dict[str, tuple[Callable[[], Fixture], bool | str]] = {
    "lstm": (lstm, False),
    "lstm_seq": (lstm_seq, False),
    "gru": (gru, False),
    "bilstm": (bilstm, False),
    "while_cond": (while_cond, False),
    "cumsum": (cumsum_ops, False),
    "unary_math": (unary_math, False),
    "lstm_float16": (lstm, "float16"),
    "ops_cnn_float16": (ops_cnn, "float16"),
    "mobilenet_v2_float16": (gen_models.mobilenet_v2, "float16"),
    "hybrid_ops_dynamic": (hybrid_ops, "dynamic"),
    "hybrid_sym_dynamic": (hybrid_ops, "dynamic"),
    "lstm_dynamic": (lstm, "dynamic"),
    "mobilenet_v2_dynamic": (gen_models.mobilenet_v2, "dynamic"),
    "dynamic_update_slice": (dynamic_update_slice, False),
    "index_ops": (index_ops, False),
    "index_ops_int8": (index_ops_int8_source, True),
    "extra_builtins": (extra_builtins, False),
    "extra_builtins_int8": (extra_builtins_int8_source, True),
    "extra_ops": (extra_ops, False),
    "extra_ops_int8": (extra_ops, True),
    "resize": (resize_ops, False),
    "resize_int8": (resize_ops, True),
    "ops_cnn": (ops_cnn, False),
    "pad_cnn_int8": (pad_cnn_int8_source, True),
    "pointwise_tails_int8": (pointwise_tails_source, True),
    "grouped_conv": (grouped_conv, False),
    "grouped_conv_int8": (grouped_conv, True),
    "conv_transpose": (conv_transpose, False),
    "conv_transpose_int8": (conv_transpose, True),
    "conv3d_ops": (conv3d_ops, False),
    "ops_misc": (ops_misc, False),
    "ops_int8": (ops_int8, True),
    "sub_int8": (sub_int8, True),
    "elu": (elu, False),
    "elu_int8": (elu, True),
    "ops_shape": (ops_shape, False),
    "bert_tf1": (gen_models.bert_tf1, False),
    "bert_keras_hub": (gen_models.bert_keras_hub, False),
    "mha_encoder": (gen_models.mha_encoder, False),
    "mobilenet_v2": (gen_models.mobilenet_v2, False),
    "mobilenet_v2_int8": (gen_models.mobilenet_v2, True),
    "mobilenet_v1_int8": (gen_models.mobilenet_v1, True),
}


def keras2_lstm_models() -> dict[str, tuple[bytes, list[np.ndarray]]]:
    """Keras 2 (tf_keras) LSTM layers, which TensorFlow's converter fuses into one
    UNIDIRECTIONAL_SEQUENCE_LSTM each (Keras 3's become WHILE loops): stacked LSTMs (sequences,
    then the last state) and a Bidirectional LSTM, batch 2. `lstm_fused_variants` is the first
    with its layers rewritten into the op's other forms, which no Keras layer makes: peepholes,
    a projection with a bias and a clip, layer normalization, and CIFG (no input gate) in the
    second layer. Needs tf-keras of TensorFlow's version (`pip install tf-keras==2.21.*`)."""
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tf_keras as k2
    from tensorflow.lite.tools import flatbuffer_utils

    k2.utils.set_random_seed(71)
    x = k2.Input((7, 5), batch_size=2)
    stacked = k2.Model(x, k2.layers.Dense(3)(k2.layers.LSTM(6)(k2.layers.LSTM(8, return_sequences=True)(x))))
    y = k2.Input((6, 4), batch_size=2)
    bidi = k2.Model(y, k2.layers.Bidirectional(k2.layers.LSTM(5, return_sequences=True))(y))
    rng = np.random.default_rng(72)
    out: dict[str, tuple[bytes, list[np.ndarray]]] = {}
    for name, model, shape in (("lstm_fused", stacked, (2, 7, 5)), ("bilstm_fused", bidi, (2, 6, 4))):
        flat = tf.lite.TFLiteConverter.from_keras_model(model).convert()
        out[name] = (flat, [rng.uniform(-2, 2, shape).astype(np.float32)])

    m = flatbuffer_utils.convert_bytearray_to_object(bytearray(out["lstm_fused"][0]))
    g = m.subgraphs[0]

    def constant(values: np.ndarray, name: str) -> int:
        buf = type(m.buffers[0])()
        buf.data = np.frombuffer(values.astype(np.float32).tobytes(), np.uint8)
        m.buffers.append(buf)
        t = type(g.tensors[0])()
        t.shape = np.array(values.shape, np.int32)
        t.type = 0  # FLOAT32
        t.buffer = len(m.buffers) - 1
        t.name = name.encode()
        g.tensors.append(t)
        return len(g.tensors) - 1

    lstms = [op for op in g.operators if m.operatorCodes[op.opcodeIndex].builtinCode == 44]
    first, second = lstms
    n_cell = g.tensors[first.inputs[2]].shape[0]
    n_out = g.tensors[first.inputs[6]].shape[1]
    first.inputs = list(first.inputs) + [-1] * (24 - len(first.inputs))
    for i in (9, 10, 11):  # peepholes
        first.inputs[i] = constant(rng.uniform(-0.5, 0.5, (n_cell,)), f"peephole_{i}")
    for i in (20, 21, 22, 23):  # layer normalization coefficients
        first.inputs[i] = constant(rng.uniform(0.5, 1.5, (n_cell,)), f"layer_norm_{i}")
    # A projection to the same width (the next layer reads n_out values per step).
    first.inputs[16] = constant(rng.uniform(-0.5, 0.5, (n_out, n_cell)), "projection")
    first.inputs[17] = constant(rng.uniform(-0.2, 0.2, (n_out,)), "projection_bias")
    first.builtinOptions.projClip = 0.6
    first.builtinOptions.cellClip = 1.5
    second.inputs = list(second.inputs)
    for i in (1, 5, 12):  # CIFG: no input gate
        second.inputs[i] = -1
    variants = bytes(flatbuffer_utils.convert_object_to_bytearray(m))
    out["lstm_fused_variants"] = (variants, out["lstm_fused"][1])
    return out


# Models with an op that LiteRT's reference resolver lacks: its builtin kernels are the oracle.
BUILTIN_ORACLE = {"elu", "elu_int8", "unary_math"}
# DEPTH_TO_SPACE version 2 (int8) is missing from the reference resolver.
BUILTIN_ORACLE.add("index_ops_int8")


def main(names: list[str]) -> None:
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name, (make, quant) in MODELS.items():
        if names and name not in names:
            continue
        fixture = make()
        model = convert(fixture, quant)
        if name == "sub_int8":
            model = sub_int8_ties(model)
        if name == "hybrid_sym_dynamic":
            model = hybrid_symmetric(model)
        (HERE / f"{name}.tflite").write_bytes(model)
        inputs = lite_inputs(model, fixture)
        resolver = "builtin" if name in BUILTIN_ORACLE else "ref"
        outputs = run_litert(model, inputs, resolver)
        for i, x in enumerate(inputs):
            np.save(HERE / f"{name}.input_{i}.npy", x)
        for i, y in enumerate(outputs):
            np.save(HERE / f"{name}.expected_{i}.npy", y)
        manifest[name] = {
            "oracle": f"ai_edge_litert {resolver}",
            "exact": quant is True,
            "rtol": 1e-4,
            "atol": 1e-5,
            "inputs": len(inputs),
            "outputs": len(outputs),
            "generator": f"engine/testdata/lite/models/generate.py with tensorflow {tf.__version__}",
        }
        print(f"wrote {name}.tflite ({len(model)} bytes)")
    if not names or any(n.endswith("_fused") or n.endswith("_fused_variants") for n in names):
        for name, (model, inputs) in keras2_lstm_models().items():
            if names and name not in names:
                continue
            (HERE / f"{name}.tflite").write_bytes(model)
            outputs = run_litert(model, inputs, "ref")
            for i, x in enumerate(inputs):
                np.save(HERE / f"{name}.input_{i}.npy", x)
            for i, y in enumerate(outputs):
                np.save(HERE / f"{name}.expected_{i}.npy", y)
            manifest[name] = {
                "oracle": "ai_edge_litert ref",
                "exact": False,
                "rtol": 1e-4,
                "atol": 1e-5,
                "inputs": len(inputs),
                "outputs": len(outputs),
                "generator": f"engine/testdata/lite/models/generate.py with tensorflow {tf.__version__} and tf-keras",
            }
            print(f"wrote {name}.tflite ({len(model)} bytes)")
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
