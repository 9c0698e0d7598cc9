"""Generate while-loop GraphDef fixtures (Keras RNN layers, tf.while_loop) and TensorFlow's outputs.

Run with a Python that has tensorflow-cpu:

    python engine/testdata/gen_loops.py              # every fixture
    python engine/testdata/gen_loops.py model_gru    # some

Each fixture is a tf.function frozen with convert_variables_to_constants_v2 (gen_models.py's
`freeze`), which lowers TF2's functional While into the v1 loop TensorFlow itself runs: Enter,
Merge, Switch, LoopCond, NextIteration and Exit in a frame, TensorList ops (DT_VARIANT) for the
TensorArrays, and unused DT_VARIANT Placeholders. They are written in gen_models.py's layout
under engine/testdata/graphs/<name>/ (rtol 1e-4, .pb only), so tests/engine/test_tf_agreement.py
runs them; the `error_*` ones record TensorFlow's error instead of outputs. Sizes are small:
hidden size 8-16, sequences of 5-9 steps, batch 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tensorflow as tf
from gen_graphs import _CODE_NAMES, Fixture, _core_message, _endpoint, tf_outputs
from gen_models import OUT, freeze, write_model

BATCH = 2


def keras_rnn(seed: int, seq: int, features: int, make: Callable[[], object], head: int = 0) -> Fixture:
    """`make()`'s layer on a [BATCH, seq, features] input, optionally followed by a Dense(head)."""
    import keras

    keras.utils.set_random_seed(seed)
    inputs = keras.Input((seq, features), batch_size=BATCH)
    out = make()(inputs)  # type: ignore[operator]
    if head:
        out = keras.layers.Dense(head)(out)
    model = keras.Model(inputs, out)
    graph_def, fetches = freeze(
        lambda x: model(x, training=False), [tf.TensorSpec([BATCH, seq, features], tf.float32, name="x")]
    )
    x = np.random.default_rng(seed).standard_normal((BATCH, seq, features)).astype(np.float32)
    return Fixture(graph_def, {"x": x}, fetches)


def lstm() -> Fixture:
    import keras

    return keras_rnn(31, 7, 5, lambda: keras.layers.LSTM(12), head=3)


def lstm_sequences() -> Fixture:
    import keras

    return keras_rnn(32, 6, 4, lambda: keras.layers.LSTM(8, return_sequences=True))


def gru() -> Fixture:
    import keras

    return keras_rnn(33, 8, 6, lambda: keras.layers.GRU(10), head=4)


def bilstm() -> Fixture:
    import keras

    return keras_rnn(34, 5, 4, lambda: keras.layers.Bidirectional(keras.layers.LSTM(8)), head=3)


def simple_rnn() -> Fixture:
    import keras

    return keras_rnn(35, 9, 3, lambda: keras.layers.SimpleRNN(16, return_sequences=True))


def stacked_rnn() -> Fixture:
    """Two loops in sequence: a GRU's sequences feed an LSTM."""
    import keras

    def make() -> Callable[[object], object]:
        first = keras.layers.GRU(8, return_sequences=True)
        second = keras.layers.LSTM(8)
        return lambda x: second(first(x))

    return keras_rnn(36, 6, 4, make)


def tensor_array_loop() -> Fixture:
    """A hand-written tf.while_loop: unstack a TensorArray, accumulate, write a TensorArray."""
    rng = np.random.default_rng(37)
    w = tf.constant(rng.standard_normal((4, 4)).astype(np.float32) * 0.5)

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        steps = tf.shape(x)[0]
        xs = tf.TensorArray(tf.float32, size=steps).unstack(x)
        ys = tf.TensorArray(tf.float32, size=steps, element_shape=[BATCH, 4])

        def body(i: tf.Tensor, h: tf.Tensor, ys: tf.TensorArray) -> tuple[tf.Tensor, tf.Tensor, tf.TensorArray]:
            h = tf.tanh(tf.matmul(h, w) + xs.read(i))
            return i + 1, h, ys.write(i, h * 2.0)

        _, h, ys = tf.while_loop(lambda i, h, ys: i < steps, body, [0, tf.zeros([BATCH, 4]), ys])
        return [h, ys.stack()]

    graph_def, fetches = freeze(run, [tf.TensorSpec([6, BATCH, 4], tf.float32, name="x")])
    return Fixture(graph_def, {"x": rng.standard_normal((6, BATCH, 4)).astype(np.float32)}, fetches)


def nested_loops() -> Fixture:
    """A while_loop inside a while_loop, the inner one reading the outer's loop variable."""

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        def outer(i: tf.Tensor, acc: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            def inner(j: tf.Tensor, a: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
                return j + 1, a * 0.5 + tf.cast(i * j, tf.float32) + x

            _, acc = tf.while_loop(lambda j, a: j < i + 2, inner, [0, acc])
            return i + 1, tf.sin(acc)

        n, acc = tf.while_loop(lambda i, a: i < 4, outer, [0, x])
        return [n, acc]

    graph_def, fetches = freeze(run, [tf.TensorSpec([BATCH, 3], tf.float32, name="x")])
    x = np.random.default_rng(38).standard_normal((BATCH, 3)).astype(np.float32)
    return Fixture(graph_def, {"x": x}, fetches)


def loop_cond() -> Fixture:
    """tf.cond and while loops inside each other: a loop body whose cond reads the loop variable
    (both branches taken over the iterations), a cond nested in that branch, and a cond whose
    taken branch runs a while loop while the untaken one holds another (dead, never run)."""

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        def body(i: tf.Tensor, acc: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            def even() -> tf.Tensor:
                return tf.cond(tf.reduce_sum(acc) > 0.0, lambda: acc * 0.5, lambda: acc + x)

            acc = tf.cond(tf.equal(i % 2, 0), even, lambda: tf.tanh(acc - x))
            return i + 1, acc

        n, acc = tf.while_loop(lambda i, a: i < 5, body, [0, x])

        def loop_branch(k: int) -> Callable[[], tf.Tensor]:
            def branch() -> tf.Tensor:
                _, y = tf.while_loop(lambda j, y: j < k, lambda j, y: (j + 1, y * 1.5 - 0.25), [0, acc])
                return y

            return branch

        picked = tf.cond(tf.reduce_max(x) < 100.0, loop_branch(3), loop_branch(7))
        return [n, acc, picked]

    graph_def, fetches = freeze(run, [tf.TensorSpec([BATCH, 3], tf.float32, name="x")])
    x = np.random.default_rng(39).standard_normal((BATCH, 3)).astype(np.float32)
    return Fixture(graph_def, {"x": x}, fetches)


def list_read_uninitialized() -> Fixture:
    """Reads an element of a TensorArray with no element shape and none written: an error."""

    def run(x: tf.Tensor) -> list[tf.Tensor]:
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0], infer_shape=False, element_shape=None)
        return [ta.read(1) + x[0]]

    graph_def, fetches = freeze(run, [tf.TensorSpec([2], tf.float32, name="x")])
    return Fixture(graph_def, {"x": np.ones(2, np.float32)}, fetches)


FIXTURES: dict[str, Callable[[], Fixture]] = {
    "model_lstm": lstm,
    "model_lstm_sequences": lstm_sequences,
    "model_gru": gru,
    "model_bilstm": bilstm,
    "model_simple_rnn": simple_rnn,
    "model_stacked_rnn": stacked_rnn,
    "loop_tensor_array": tensor_array_loop,
    "loop_nested": nested_loops,
    "loop_cond": loop_cond,
    "error_list_read_uninitialized": list_read_uninitialized,
}


def write_loop_fixture(folder: Path, fixture: Fixture) -> None:
    """gen_models.py's layout; when TensorFlow fails, gen_graphs.py's error manifest instead (its
    code and its kernel's message line)."""
    error: tf.errors.OpError | None = None
    try:
        tf_outputs(fixture)
    except tf.errors.OpError as e:
        error = e
    write_model(folder, fixture if error is None else Fixture(fixture.graph_def, fixture.feeds, []))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["generator"] = f"engine/testdata/gen_loops.py with tensorflow {tf.__version__}"
    if error is not None:
        manifest["fetches"] = [_endpoint(f) for f in fixture.fetches]
        manifest["expected_error"] = {"code": _CODE_NAMES[error.error_code], "message": _core_message(error.message)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in FIXTURES]
    if unknown:
        raise SystemExit(f"unknown fixture(s) {unknown}; known: {sorted(FIXTURES)}")
    for name, make in FIXTURES.items():
        if names and name not in names:
            continue
        write_loop_fixture(OUT / name, make())
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
