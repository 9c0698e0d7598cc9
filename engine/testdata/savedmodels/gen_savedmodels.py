"""Writes the SavedModel fixtures ember's tests load, with TensorFlow's own outputs.

Run from the repository root with tensorflow-cpu installed:
    python engine/testdata/savedmodels/gen_savedmodels.py [NAME...]
Each NAME/ holds the SavedModel (saved_model.pb, variables/), inputs (in_<sig>_<key>.npy),
TensorFlow's outputs (out_<sig>_<key>.npy, from the reloaded SavedModel's signatures) and
manifest.json. Weights are random (seeded); nothing is downloaded.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

HERE = Path(__file__).resolve().parent


class TwoSignatures(tf.Module):
    """Two variables, two signatures that share them."""

    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(1)
        self.w = tf.Variable(rng.randn(4, 3).astype(np.float32), name="w")
        self.b = tf.Variable(rng.randn(3).astype(np.float32), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def forward(self, x):
        return {"y": tf.nn.relu(tf.matmul(x, self.w) + self.b)}

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def scores(self, x):
        z = tf.matmul(x, self.w) + self.b
        return {"probs": tf.nn.softmax(z), "total": tf.reduce_sum(z, axis=1)}


def module_two_signatures(path: Path) -> dict:
    m = TwoSignatures()
    tf.saved_model.save(m, str(path), signatures={"serving_default": m.forward, "scores": m.scores})
    x = np.random.RandomState(2).randn(3, 4).astype(np.float32)
    return {"serving_default": {"x": x}, "scores": {"x": x}}


def keras_small(path: Path) -> dict:
    import keras

    keras.utils.set_random_seed(3)
    inp = keras.Input((8, 8, 3), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")(inp)
    h = keras.layers.DepthwiseConv2D(3, padding="same", name="dw")(h)
    h = keras.layers.MaxPooling2D(2, name="pool")(h)
    h = keras.layers.GlobalAveragePooling2D(name="gap")(h)
    out = keras.layers.Dense(5, activation="softmax", name="dense")(h)
    model = keras.Model(inp, out)
    tf.saved_model.save(model, str(path))
    x = np.random.RandomState(4).rand(2, 8, 8, 3).astype(np.float32)
    return {"serving_default": [x]}


def keras_rnn(path: Path) -> dict[str, object]:
    """A Keras GRU feeding a bidirectional LSTM: TF2's functional While with TensorLists in the
    cond/body functions, the layers' variables passed into the loops as resources."""
    import keras

    keras.utils.set_random_seed(6)
    inp = keras.Input((6, 4), name="seq")
    h = keras.layers.GRU(8, return_sequences=True)(inp)
    h = keras.layers.Bidirectional(keras.layers.LSTM(8))(h)
    out = keras.layers.Dense(3)(h)
    model = keras.Model(inp, out)
    tf.saved_model.save(model, str(path))
    x = np.random.RandomState(7).rand(2, 6, 4).astype(np.float32)
    return {"serving_default": [x]}


class WhileLoop(tf.Module):  # type: ignore[misc]
    """tf.while_loop over a TensorArray, reading a variable in the body, and a nested loop."""

    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable((np.random.RandomState(8).randn(4, 4) * 0.5).astype(np.float32), name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 2, 4], tf.float32)])  # type: ignore[untyped-decorator]
    def scan(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        steps = tf.shape(x)[0]
        xs = tf.TensorArray(tf.float32, size=steps).unstack(x)
        ys = tf.TensorArray(tf.float32, size=steps)

        def body(i: tf.Tensor, h: tf.Tensor, ys: tf.TensorArray) -> tuple[tf.Tensor, tf.Tensor, tf.TensorArray]:
            def inner(j: tf.Tensor, g: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
                return j + 1, g * 0.5 + tf.cast(j, tf.float32)

            _, g = tf.while_loop(lambda j, g: j < i, inner, [0, h])
            h = tf.tanh(tf.matmul(g, self.w) + xs.read(i))
            return i + 1, h, ys.write(i, h)

        _, h, ys = tf.while_loop(lambda i, h, ys: i < steps, body, [0, tf.zeros([2, 4]), ys])
        return {"last": h, "all": ys.stack()}


def while_loop(path: Path) -> dict[str, object]:
    m = WhileLoop()
    tf.saved_model.save(m, str(path), signatures={"serving_default": m.scan})
    return {"serving_default": {"x": np.random.RandomState(9).randn(5, 2, 4).astype(np.float32)}}


class CondModule(tf.Module):  # type: ignore[misc]
    """tf.cond in a tf.function, kept as TF2's functional If / StatelessIf with branch functions:
    a data-dependent cond, conds whose branches and predicate read variables (passed into the
    branches as resources) and a cond nested in a branch. Three signatures run the same function
    on inputs that take every branch."""

    def __init__(self) -> None:
        super().__init__()
        rng = np.random.RandomState(13)
        self.w = tf.Variable(rng.randn(4, 3).astype(np.float32), name="w")
        self.scale = tf.Variable(1.5, name="scale")
        self.threshold = tf.Variable(0.25, name="threshold")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])  # type: ignore[untyped-decorator]
    def classify(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        total = tf.reduce_sum(x)
        y = tf.cond(total > 0.0, lambda: tf.nn.relu(x) * 2.0, lambda: tf.abs(x) - 1.0)
        z = tf.cond(
            tf.reduce_mean(x) > self.threshold,
            lambda: tf.matmul(x, self.w),
            lambda: tf.matmul(x, self.w) * self.scale,
        )
        nested = tf.cond(
            total > 0.0,
            lambda: tf.cond(tf.reduce_max(x) > 1.0, lambda: x * 3.0, lambda: x + 3.0),
            lambda: -x,
        )
        return {"y": y, "z": z, "nested": nested}


def cond_module(path: Path) -> dict[str, object]:
    m = CondModule()
    fn = m.classify.get_concrete_function()
    tf.saved_model.save(m, str(path), signatures={"serving_default": fn, "small": fn, "negative": fn})
    rng = np.random.RandomState(14)
    return {
        "serving_default": {"x": rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)},
        "small": {"x": rng.uniform(0.3, 0.9, (2, 4)).astype(np.float32)},
        "negative": {"x": rng.uniform(-2.0, 0.1, (2, 4)).astype(np.float32)},
    }


def keras_image_ops(path: Path) -> dict:
    """Segmentation-style layers whose TF ops carry attrs a SavedModel strips when default:
    a dilated conv (SpaceToBatchND/BatchToSpaceND), a grouped conv, a transposed conv
    (Conv2DBackpropInput) and bilinear upsampling (ResizeBilinear)."""
    import keras

    keras.utils.set_random_seed(7)
    layers = keras.layers
    inp = keras.Input((16, 16, 3), name="image")
    h = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="stem")(inp)
    h = layers.Conv2D(8, 3, dilation_rate=2, padding="same", name="atrous")(h)
    h = layers.Conv2D(8, 3, padding="same", groups=4, activation="relu", name="grouped")(h)
    h = layers.Conv2DTranspose(4, 3, strides=2, padding="same", name="up_conv")(h)
    h = layers.Concatenate(name="skip")(
        [
            h,
            layers.UpSampling2D(2, interpolation="bilinear", name="up")(
                layers.Conv2D(4, 1, name="side")(layers.MaxPooling2D(2, name="pool")(inp))
            ),
        ]
    )
    out = layers.Conv2D(2, 1, name="head")(h)
    model = keras.Model(inp, out)
    tf.saved_model.save(model, str(path))
    x = np.random.RandomState(8).uniform(-1, 1, (2, 16, 16, 3)).astype(np.float32)
    return {"serving_default": [x]}


def mobilenet_v2(path: Path) -> dict:
    import keras

    keras.utils.set_random_seed(5)
    model = keras.applications.MobileNetV2(
        input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10, classifier_activation=None
    )
    # Keras' own init leaves BatchNorm at identity and the logits nearly equal: randomize every
    # weight (fan-in scaled; positive variances and scales) so that the logits differ.
    rng = np.random.RandomState(12)
    for w in model.weights:
        shape, name = tuple(w.shape), w.path
        if "variance" in name or "gamma" in name:
            w.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        elif "mean" in name or "beta" in name or "bias" in name:
            w.assign((rng.randn(*shape) * 0.1).astype(np.float32))
        else:
            fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
            if "depthwise" in name:
                fan_in = int(np.prod(shape[:2]))
            w.assign((rng.randn(*shape) * np.sqrt(2.0 / max(fan_in, 1))).astype(np.float32))
    tf.saved_model.save(model, str(path))
    x = np.random.RandomState(6).rand(1, 96, 96, 3).astype(np.float32)
    return {"serving_default": [x]}


class TinyBert(tf.Module):
    """A 2-layer BERT-style encoder: embeddings, LayerNorm, multi-head attention, GELU (erf)."""

    def __init__(self, vocab=50, seq=8, hidden=32, heads=4, ffn=64, layers=2):
        super().__init__()
        rng = np.random.RandomState(7)
        v = lambda *s: tf.Variable((rng.randn(*s) * 0.1).astype(np.float32))  # noqa: E731
        self.heads, self.hidden = heads, hidden
        self.tok = v(vocab, hidden)
        self.pos = v(seq, hidden)
        self.ln0 = (v(hidden), v(hidden))
        self.layers = []
        for _ in range(layers):
            self.layers.append(
                {
                    "qkv": v(hidden, 3 * hidden),
                    "qkv_b": v(3 * hidden),
                    "o": v(hidden, hidden),
                    "o_b": v(hidden),
                    "ln1": (v(hidden), v(hidden)),
                    "f1": v(hidden, ffn),
                    "f1_b": v(ffn),
                    "f2": v(ffn, hidden),
                    "f2_b": v(hidden),
                    "ln2": (v(hidden), v(hidden)),
                }
            )

    def _ln(self, x, p):
        mean = tf.reduce_mean(x, axis=-1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + 1e-12) * p[0] + p[1]

    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.int32, name="input_ids")])
    def encode(self, input_ids):
        b = tf.shape(input_ids)[0]
        h = tf.gather(self.tok, input_ids) + self.pos
        h = self._ln(h, self.ln0)
        dh = self.hidden // self.heads
        for p in self.layers:
            qkv = tf.matmul(h, p["qkv"]) + p["qkv_b"]
            q, k, val = tf.split(qkv, 3, axis=-1)
            split = lambda t: tf.transpose(tf.reshape(t, [b, 8, self.heads, dh]), [0, 2, 1, 3])  # noqa: E731
            att = tf.nn.softmax(tf.matmul(split(q), split(k), transpose_b=True) / np.sqrt(dh))
            ctx = tf.reshape(tf.transpose(tf.matmul(att, split(val)), [0, 2, 1, 3]), [b, 8, self.hidden])
            h = self._ln(h + tf.matmul(ctx, p["o"]) + p["o_b"], p["ln1"])
            f = tf.matmul(h, p["f1"]) + p["f1_b"]
            f = 0.5 * f * (1.0 + tf.math.erf(f / np.sqrt(2.0)))
            h = self._ln(h + tf.matmul(f, p["f2"]) + p["f2_b"], p["ln2"])
        return {"sequence_output": h, "pooled_output": tf.tanh(h[:, 0, :])}


def tiny_bert(path: Path) -> dict:
    m = TinyBert()
    tf.saved_model.save(m, str(path), signatures={"serving_default": m.encode})
    ids = np.random.RandomState(8).randint(0, 50, size=(2, 8)).astype(np.int32)
    return {"serving_default": {"input_ids": ids}}


def graph_with_functions() -> None:
    """A GraphDef (not a SavedModel) whose computation sits in a library function called through
    PartitionedCall, as .pb and as protobuf JSON: ember-run inlines such calls too."""
    from google.protobuf import json_format

    @tf.function
    def inner(a, b):
        return tf.nn.relu(a - b), a * b

    @tf.function
    def outer(x):
        p, q = inner(x, tf.constant(0.5))
        return tf.matmul(p, q, transpose_b=True) + 1.0

    cf = outer.get_concrete_function(tf.TensorSpec([2, 3], tf.float32, name="x"))
    path = HERE / "graph_with_functions"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    gd = cf.graph.as_graph_def()
    (path / "model.pb").write_bytes(gd.SerializeToString())
    (path / "model.json").write_text(json_format.MessageToJson(gd))
    x = (np.random.RandomState(9).randn(2, 3) + 1.0).astype(np.float32)
    np.save(path / "input_x.npy", x)
    np.save(path / "expected.npy", cf(tf.constant(x)).numpy())
    print("graph_with_functions ok")


def tf1_variables() -> None:
    """A TF1-style SavedModel (tf.compat.v1 Builder): reference variables (VariableV2), no
    functions, restored by the saver's save/restore_all (RestoreV2 + Assign)."""
    tf1 = tf.compat.v1
    path = HERE / "tf1_variables"
    shutil.rmtree(path, ignore_errors=True)
    g = tf.Graph()
    with g.as_default():
        tf1.disable_resource_variables()
        x = tf1.placeholder(tf.float32, [None, 4], name="x")
        rng = np.random.RandomState(10)
        w = tf1.get_variable("w", initializer=rng.randn(4, 3).astype(np.float32), use_resource=False)
        b = tf1.get_variable("b", initializer=rng.randn(3).astype(np.float32), use_resource=False)
        y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            builder = tf1.saved_model.Builder(str(path))
            sig = tf1.saved_model.predict_signature_def({"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig})
            builder.save()
            xv = np.random.RandomState(11).randn(2, 4).astype(np.float32)
            np.save(path / "in_serving_default_x.npy", xv)
            np.save(path / "out_serving_default_y.npy", sess.run(y, {x: xv}))
    manifest = {
        "serving_default": {
            "inputs": {"x": "in_serving_default_x.npy"},
            "outputs": {"y": "out_serving_default_y.npy"},
        }
    }
    (path / "fingerprint.pb").unlink(missing_ok=True)
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print("tf1_variables ok")


FIXTURES = {
    "module_two_signatures": module_two_signatures,
    "keras_small": keras_small,
    "keras_image_ops": keras_image_ops,
    "mobilenet_v2": mobilenet_v2,
    "tiny_bert": tiny_bert,
    "keras_rnn": keras_rnn,
    "while_loop": while_loop,
    "cond_module": cond_module,
}


SPECIAL = {"graph_with_functions": graph_with_functions, "tf1_variables": tf1_variables}


def main(names: list[str]) -> None:
    for name, make in SPECIAL.items():
        if not names or name in names:
            make()
    names = [n for n in names if n not in SPECIAL]
    if not names and len(sys.argv) > 1:
        return
    for name in names or list(FIXTURES):
        path = HERE / name
        shutil.rmtree(path, ignore_errors=True)
        feeds = FIXTURES[name](path)
        loaded = tf.saved_model.load(str(path))
        manifest = {}
        for sig, inputs in feeds.items():
            fn = loaded.signatures[sig]
            if isinstance(inputs, list):  # Keras names its signature inputs itself
                inputs = dict(zip(sorted(fn.structured_input_signature[1]), inputs, strict=True))
            outs = fn(**{k: tf.constant(v) for k, v in inputs.items()})
            entry = {"inputs": {}, "outputs": {}}
            for k, v in inputs.items():
                np.save(path / f"in_{sig}_{k}.npy", v)
                entry["inputs"][k] = f"in_{sig}_{k}.npy"
            for k, v in sorted(outs.items()):
                np.save(path / f"out_{sig}_{k}.npy", v.numpy())
                entry["outputs"][k] = f"out_{sig}_{k}.npy"
            manifest[sig] = entry
        (path / "fingerprint.pb").unlink(missing_ok=True)
        (path / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(name, "ok")


if __name__ == "__main__":
    main(sys.argv[1:])
