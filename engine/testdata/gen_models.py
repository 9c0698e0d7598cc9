"""Generate real-architecture GraphDef fixtures (random weights) and TensorFlow's outputs.

Run with a Python that has tensorflow-cpu and keras-hub (the oracles):

    python engine/testdata/gen_models.py            # every model
    python engine/testdata/gen_models.py bert_tf1   # some

Each model is written with gen_graphs.py's layout (model.pb, input_<i>.npy, expected_<i>.npy,
manifest.json) under engine/testdata/graphs/<name>/, so tests/engine/test_tf_agreement.py runs
it. Their manifests add "rtol"/"atol" (real models accumulate float32 rounding over many
layers: rtol 1e-4) and "encodings": ["pb"] (the JSON copy of megabytes of weights is left out).
Models are frozen with convert_variables_to_constants_v2 and the expected values come from
running that very GraphDef in a TensorFlow session. Sizes are kept small: MobileNetV2 alpha 0.35
at 96x96 with 10 classes, a 2-layer BERT with hidden size 32.

`build_model(name)` is also imported by tests/engine/test_models_tf.py for models too large to
commit (ResNet50 and others), which are generated at test time.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import (
    convert_variables_to_constants_v2,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_graphs import Fixture, _endpoint, tf_outputs, write_fixture

OUT = Path(__file__).resolve().parent / "graphs"
v1 = tf.compat.v1


def freeze(fn: Callable[..., object], specs: list[tf.TensorSpec]) -> tuple[tf.compat.v1.GraphDef, list[str]]:
    """Traces `fn` with `specs` (named placeholders) and inlines its variables as constants."""
    concrete = tf.function(fn).get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete)
    return frozen.graph.as_graph_def(), [t.name for t in frozen.outputs]


def randomize_batch_norms(model: object, rng: np.random.Generator) -> None:
    """Random BatchNormalization statistics: freshly initialised ones (mean 0, variance 1,
    gamma 1, beta 0) let activations fade until every logit is ~1e-10 and softmax is uniform."""
    import keras

    draw = {
        "gamma": lambda shape: rng.uniform(0.5, 1.5, shape),
        "beta": lambda shape: rng.normal(0.0, 0.2, shape),
        "moving_mean": lambda shape: rng.normal(0.0, 0.2, shape),
        "moving_variance": lambda shape: rng.uniform(0.5, 1.5, shape),
    }
    for layer in model.layers:  # type: ignore[attr-defined]
        if isinstance(layer, keras.layers.BatchNormalization):
            # Only the weights the layer has (InceptionV3's have no gamma: scale=False).
            names = [w.path.split("/")[-1].split(":")[0] for w in layer.weights]
            values = [draw[n](w.shape) for n, w in zip(names, layer.get_weights(), strict=True)]
            layer.set_weights([v.astype(np.float32) for v in values])


def keras_cnn(ctor: Callable[..., object], size: int, seed: int, **kwargs: object) -> Fixture:
    """A Keras application with random weights; fetches its logits and their softmax."""
    import keras

    keras.utils.set_random_seed(seed)
    model = ctor(weights=None, input_shape=(size, size, 3), classifier_activation=None, **kwargs)
    rng = np.random.default_rng(seed)
    randomize_batch_norms(model, rng)

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        logits = model(x, training=False)
        return [logits, tf.nn.softmax(logits)]

    graph_def, fetches = freeze(run, [tf.TensorSpec([1, size, size, 3], tf.float32, name="image")])
    image = rng.uniform(-1.0, 1.0, size=(1, size, size, 3)).astype(np.float32)
    return Fixture(graph_def, {"image": image}, fetches)


def mobilenet_v2() -> Fixture:
    import keras

    return keras_cnn(keras.applications.MobileNetV2, 96, 11, alpha=0.35, classes=10)


def mobilenet_v1() -> Fixture:
    import keras

    return keras_cnn(keras.applications.MobileNet, 96, 12, alpha=0.25, classes=10)


def resnet50() -> Fixture:
    import keras

    return keras_cnn(keras.applications.ResNet50, 64, 13)


def efficientnet_b0() -> Fixture:
    import keras

    return keras_cnn(keras.applications.EfficientNetB0, 64, 14, classes=10)


def densenet121() -> Fixture:
    import keras

    return keras_cnn(keras.applications.DenseNet121, 64, 15, classes=10)


SEQ = 12
VOCAB = 100


def token_feeds(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Two sequences; the second is padded after 7 tokens."""
    ids = rng.integers(1, VOCAB, size=(2, SEQ)).astype(np.int32)
    mask = np.ones((2, SEQ), np.int32)
    mask[1, 7:] = 0
    ids[1, 7:] = 0
    segments = np.zeros((2, SEQ), np.int32)
    segments[:, SEQ // 2 :] = 1
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


def bert_keras_hub() -> Fixture:
    import keras
    import keras_hub

    keras.utils.set_random_seed(21)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=VOCAB,
        num_layers=2,
        num_heads=2,
        hidden_dim=32,
        intermediate_dim=64,
        max_sequence_length=16,
    )
    specs = [tf.TensorSpec([2, SEQ], tf.int32, name=n) for n in ("token_ids", "segment_ids", "padding_mask")]

    def run(token_ids: tf.Tensor, segment_ids: tf.Tensor, padding_mask: tf.Tensor) -> object:
        out = backbone(
            {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}, training=False
        )
        return [out["sequence_output"], out["pooled_output"]]

    graph_def, fetches = freeze(run, specs)
    return Fixture(graph_def, token_feeds(np.random.default_rng(21)), fetches)


def mha_encoder() -> Fixture:
    """A Keras TransformerEncoder block: MultiHeadAttention (Einsum), LayerNorm, GELU (Erf)."""
    import keras

    keras.utils.set_random_seed(22)
    x_in = keras.Input((SEQ, 32), batch_size=2)
    mask_in = keras.Input((SEQ,), batch_size=2, dtype="bool")
    attn_mask = keras.ops.logical_and(mask_in[:, None, :], mask_in[:, :, None])
    h = keras.layers.MultiHeadAttention(num_heads=4, key_dim=8)(x_in, x_in, attention_mask=attn_mask)
    h = keras.layers.LayerNormalization(epsilon=1e-6)(h + x_in)
    f = keras.layers.Dense(64, activation="gelu")(h)
    f = keras.layers.Dense(32, activation=keras.activations.gelu)(f)
    out = keras.layers.LayerNormalization(epsilon=1e-6)(f + h)
    model = keras.Model([x_in, mask_in], out)
    graph_def, fetches = freeze(
        lambda x, m: model([x, m], training=False),
        [tf.TensorSpec([2, SEQ, 32], tf.float32, name="x"), tf.TensorSpec([2, SEQ], tf.bool, name="mask")],
    )
    rng = np.random.default_rng(22)
    mask = np.ones((2, SEQ), bool)
    mask[1, 8:] = False
    return Fixture(graph_def, {"x": rng.standard_normal((2, SEQ, 32)).astype(np.float32), "mask": mask}, fetches)


def bert_tf1() -> Fixture:
    """A BERT encoder written with tf.compat.v1 ops, as the original BERT code builds it."""
    rng = np.random.default_rng(23)
    hidden, heads, layers, inter = 32, 4, 2, 64
    head = hidden // heads

    def w(*shape: int) -> tf.Tensor:
        return tf.constant((rng.standard_normal(shape) * 0.02 * 10).astype(np.float32))

    def layer_norm(x: tf.Tensor) -> tf.Tensor:
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return tf.nn.batch_normalization(x, mean, var, w(hidden) * 0.1 + 1.0, w(hidden), 1e-12)

    def dense(x: tf.Tensor, n_in: int, n_out: int) -> tf.Tensor:
        return tf.matmul(x, w(n_in, n_out)) + w(n_out)

    def gelu(x: tf.Tensor) -> tf.Tensor:
        return x * 0.5 * (1.0 + tf.math.erf(x / tf.sqrt(2.0)))

    graph = tf.Graph()
    with graph.as_default():
        ids = v1.placeholder(tf.int32, [2, SEQ], name="token_ids")
        segments = v1.placeholder(tf.int32, [2, SEQ], name="segment_ids")
        mask = v1.placeholder(tf.int32, [2, SEQ], name="padding_mask")
        batch, seq = 2, SEQ
        emb = tf.gather(w(VOCAB, hidden), ids)  # embedding lookup
        emb += tf.nn.embedding_lookup(w(2, hidden), segments)
        positions = tf.slice(w(16, hidden), [0, 0], [seq, -1])
        emb = layer_norm(emb + tf.expand_dims(positions, 0))
        # [B, 1, 1, S] additive mask: 0 where attended, -10000 where padded.
        adder = (1.0 - tf.cast(mask[:, tf.newaxis, tf.newaxis, :], tf.float32)) * -10000.0
        x = tf.reshape(emb, [batch * seq, hidden])
        for _ in range(layers):

            def split_heads(t: tf.Tensor) -> tf.Tensor:
                return tf.transpose(tf.reshape(t, [batch, seq, heads, head]), [0, 2, 1, 3])

            q = split_heads(dense(x, hidden, hidden))
            k = split_heads(dense(x, hidden, hidden))
            v = split_heads(dense(x, hidden, hidden))
            scores = tf.matmul(q, k, transpose_b=True) * (1.0 / np.sqrt(head))
            probs = tf.nn.softmax(scores + adder)
            ctx = tf.reshape(tf.transpose(tf.matmul(probs, v), [0, 2, 1, 3]), [batch * seq, hidden])
            x = layer_norm(dense(ctx, hidden, hidden) + x)
            x = layer_norm(dense(gelu(dense(x, hidden, inter)), inter, hidden) + x)
        seq_out = tf.reshape(x, [batch, seq, hidden], name="sequence_output")
        first = tf.squeeze(seq_out[:, 0:1, :], axis=1)
        pooled = tf.tanh(dense(first, hidden, hidden), name="pooled_output")
    return Fixture(graph.as_graph_def(), token_feeds(rng), [seq_out.name, pooled.name])


# Committed fixtures (small) and test-time ones (tests/engine/test_models_tf.py).
COMMITTED: dict[str, Callable[[], Fixture]] = {
    "model_mobilenet_v2": mobilenet_v2,
    "model_mobilenet_v1": mobilenet_v1,
    "model_bert_keras_hub": bert_keras_hub,
    "model_bert_tf1": bert_tf1,
    "model_mha_encoder": mha_encoder,
}
AT_TEST_TIME: dict[str, Callable[[], Fixture]] = {
    "resnet50": resnet50,
    "efficientnet_b0": efficientnet_b0,
    "densenet121": densenet121,
}
RTOL = 1e-4
ATOL = 1e-5


def write_model(folder: Path, fixture: Fixture) -> dict[str, object]:
    """Writes gen_graphs.py's layout without the JSON copy; returns the manifest."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "model.pb").write_bytes(fixture.graph_def.SerializeToString(deterministic=True))
    feeds = []
    for i, (feed, value) in enumerate(fixture.feeds.items()):
        np.save(folder / f"input_{i}.npy", value)
        feeds.append({"name": _endpoint(feed), "file": f"input_{i}.npy"})
    expected = []
    for i, value in enumerate(tf_outputs(fixture)):
        np.save(folder / f"expected_{i}.npy", value)
        expected.append(f"expected_{i}.npy")
    ops = sorted({n.op for n in fixture.graph_def.node})
    manifest: dict[str, object] = {
        "generator": f"engine/testdata/gen_models.py with tensorflow {tf.__version__}",
        "feeds": feeds,
        "fetches": [_endpoint(f) for f in fixture.fetches],
        "expected": expected,
        "rtol": RTOL,
        "atol": ATOL,
        "encodings": ["pb"],
        "ops": ops,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(names: list[str]) -> None:
    for name, make in COMMITTED.items():
        if names and name not in names:
            continue
        write_model(OUT / name, make())
        print(f"wrote {OUT / name}")


def generate(
    fixtures: dict[str, Callable[[], Fixture]],
    models: dict[str, Callable[[], Fixture]],
    names: list[str],
    generator: str,
) -> None:
    """The main of the per-op generators: writes the fixtures named (all when none are), `models`
    in this file's layout (.pb only, rtol 1e-4) and the rest in gen_graphs.py's, each manifest
    naming `generator`."""
    known = {**fixtures, **models}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown fixture(s) {unknown}; known: {sorted(known)}")
    for name, make in known.items():
        if names and name not in names:
            continue
        if name in models:
            write_model(OUT / name, make())
        else:
            write_fixture(name, make())
        manifest_path = OUT / name / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["generator"] = f"{generator} with tensorflow {tf.__version__}"
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
