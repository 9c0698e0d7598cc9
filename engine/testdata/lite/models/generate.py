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


def convert(fixture: Fixture, int8: bool) -> bytes:
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(fixture.graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as sess:
        conv = to_session_converter(fixture, sess)
        if int8:
            rng = np.random.default_rng(5)
            shapes = [v.shape for v in fixture.feeds.values()]

            def rep() -> object:
                for _ in range(8):
                    yield [rng.uniform(-1.0, 1.0, size=s).astype(np.float32) for s in shapes]

            conv.optimizations = [tf.lite.Optimize.DEFAULT]
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


MODELS: dict[str, tuple[Callable[[], Fixture], bool]] = {
    "ops_cnn": (ops_cnn, False),
    "pad_cnn_int8": (pad_cnn_int8_source, True),
    "ops_misc": (ops_misc, False),
    "ops_shape": (ops_shape, False),
    "bert_tf1": (gen_models.bert_tf1, False),
    "bert_keras_hub": (gen_models.bert_keras_hub, False),
    "mha_encoder": (gen_models.mha_encoder, False),
    "mobilenet_v2": (gen_models.mobilenet_v2, False),
    "mobilenet_v2_int8": (gen_models.mobilenet_v2, True),
    "mobilenet_v1_int8": (gen_models.mobilenet_v1, True),
}


def main(names: list[str]) -> None:
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name, (make, int8) in MODELS.items():
        if names and name not in names:
            continue
        fixture = make()
        model = convert(fixture, int8)
        (HERE / f"{name}.tflite").write_bytes(model)
        inputs = lite_inputs(model, fixture)
        resolver = "ref"
        outputs = run_litert(model, inputs, resolver)
        for i, x in enumerate(inputs):
            np.save(HERE / f"{name}.input_{i}.npy", x)
        for i, y in enumerate(outputs):
            np.save(HERE / f"{name}.expected_{i}.npy", y)
        manifest[name] = {
            "oracle": f"ai_edge_litert {resolver}",
            "exact": int8,
            "rtol": 1e-4,
            "atol": 1e-5,
            "inputs": len(inputs),
            "outputs": len(outputs),
            "generator": f"engine/testdata/lite/models/generate.py with tensorflow {tf.__version__}",
        }
        print(f"wrote {name}.tflite ({len(model)} bytes)")
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
