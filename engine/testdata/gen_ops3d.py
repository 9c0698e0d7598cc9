"""Generate 3-D convolution and pooling GraphDef fixtures (Conv3D, Conv3DBackpropInputV2,
MaxPool3D, AvgPool3D) and TensorFlow's outputs.

Run with a Python that has tensorflow-cpu:

    TF_ENABLE_ONEDNN_OPTS=0 python engine/testdata/gen_ops3d.py              # every fixture
    TF_ENABLE_ONEDNN_OPTS=0 python engine/testdata/gen_ops3d.py ops_3d       # some

TF_ENABLE_ONEDNN_OPTS=0 makes TensorFlow's own CPU kernels the oracle (their messages are the
ones ember's kernels match). `ops_3d` is gen_graphs.py's layout (a v1 graph of raw ops), the
`error_*` ones record TensorFlow's error instead of outputs, and `model_conv3d` is a small Keras
model frozen with gen_models.py's `freeze`, in its layout. All under
engine/testdata/graphs/<name>/, so tests/engine/test_tf_agreement.py runs them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tensorflow as tf
from gen_graphs import Fixture, rand, v1_graph
from gen_models import freeze, generate

v1 = tf.compat.v1


def ops_3d() -> Fixture:
    """Conv3D (SAME/VALID, strides mixing 1 and 2, a 1x1x1), MaxPool3D / AvgPool3D (SAME and VALID
    with strides: a SAME average counts only the voxels inside the volume) and
    Conv3DBackpropInputV2 (stride 2 SAME and VALID, an output size a stride cannot reach, and a
    1x1x1)."""
    rng = np.random.default_rng(41)

    def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
        x = v1.placeholder(tf.float32, [2, 5, 6, 7, 3], name="x")

        def conv(name: str, k: tuple[int, int, int], m: int, strides: list[int], padding: str) -> tf.Tensor:
            w = rand(rng, *k, 3, m, scale=0.3)
            return tf.raw_ops.Conv3D(input=x, filter=w, strides=[1, *strides, 1], padding=padding, name=name)

        def pool(op: str, name: str, k: list[int], strides: list[int], padding: str) -> tf.Tensor:
            fn = tf.raw_ops.MaxPool3D if op == "max" else tf.raw_ops.AvgPool3D
            return fn(input=x, ksize=[1, *k, 1], strides=[1, *strides, 1], padding=padding, name=name)

        convs = [
            conv("conv_k3_same", (3, 3, 3), 4, [1, 1, 1], "SAME"),
            conv("conv_k3_valid", (3, 3, 3), 5, [1, 1, 1], "VALID"),
            conv("conv_s121_same", (3, 2, 3), 4, [1, 2, 1], "SAME"),
            conv("conv_s212_valid", (2, 3, 2), 3, [2, 1, 2], "VALID"),
            conv("conv_s2_same", (3, 3, 3), 6, [2, 2, 2], "SAME"),
            conv("conv_1x1x1", (1, 1, 1), 5, [1, 1, 1], "VALID"),
        ]
        pools = [
            pool("max", "maxpool_s2_valid", [2, 2, 2], [2, 2, 2], "VALID"),
            pool("max", "maxpool_s2_same", [3, 3, 3], [2, 2, 2], "SAME"),
            pool("avg", "avgpool_s2_valid", [2, 3, 2], [2, 1, 2], "VALID"),
            pool("avg", "avgpool_s2_same", [3, 3, 3], [2, 2, 2], "SAME"),
            pool("avg", "avgpool_s1_same", [2, 2, 3], [1, 1, 1], "SAME"),
        ]
        dy = v1.placeholder(tf.float32, [2, 3, 4, 3, 6], name="dy")

        def transpose(name: str, k: tuple[int, int, int], sizes: list[int], padding: str, stride: int = 2) -> tf.Tensor:
            w = rand(rng, *k, sizes[4], 6, scale=0.3)
            return tf.raw_ops.Conv3DBackpropInputV2(
                input_sizes=tf.constant(sizes, tf.int32),
                filter=w,
                out_backprop=dy,
                strides=[1, stride, stride, stride, 1],
                padding=padding,
                name=name,
            )

        transposes = [
            transpose("transpose_s2_same", (3, 3, 3), [2, 6, 8, 6, 4], "SAME"),
            transpose("transpose_s2_same_odd", (3, 2, 3), [2, 5, 7, 6, 2], "SAME"),
            transpose("transpose_s2_valid", (3, 3, 2), [2, 7, 9, 6, 3], "VALID"),
            transpose("transpose_s2_valid_outpad", (2, 2, 2), [2, 7, 9, 7, 3], "VALID"),
            transpose("transpose_1x1x1", (1, 1, 1), [2, 3, 4, 3, 5], "VALID", stride=1),
        ]
        feeds = {"x": rand(rng, 2, 5, 6, 7, 3), "dy": rand(rng, 2, 3, 4, 3, 6)}
        return feeds, [*convs, *pools, *transposes]

    return v1_graph(build)


def conv3d_error(filter_shape: list[int], dilations: tuple[int, int, int] = (1, 1, 1)) -> Callable[[], Fixture]:
    """A Conv3D whose filter's input depth does not match the input's (shapes only known at run
    time), or with dilations TensorFlow's CPU kernel refuses: TensorFlow's error is the oracle."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            w = v1.placeholder(tf.float32, None, name="w")
            out = tf.raw_ops.Conv3D(
                input=x,
                filter=w,
                strides=[1, 1, 1, 1, 1],
                dilations=[1, *dilations, 1],
                padding="SAME",
                name="conv",
            )
            return {"x": np.ones([1, 4, 4, 4, 4], np.float32), "w": np.ones(filter_shape, np.float32)}, [out]

        return v1_graph(build)

    return make


def conv3d_transpose_error(input_sizes: list[int], filter_shape: list[int]) -> Callable[[], Fixture]:
    """A Conv3DBackpropInputV2 whose sizes (known only at run time) TensorFlow refuses."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            dy = v1.placeholder(tf.float32, None, name="dy")
            w = v1.placeholder(tf.float32, None, name="w")
            out = tf.raw_ops.Conv3DBackpropInputV2(
                input_sizes=tf.constant(input_sizes, tf.int32),
                filter=w,
                out_backprop=dy,
                strides=[1, 2, 2, 2, 1],
                padding="SAME",
                name="ct",
            )
            return {"dy": np.ones([1, 4, 4, 4, 5], np.float32), "w": np.ones(filter_shape, np.float32)}, [out]

        return v1_graph(build)

    return make


def pool3d_error(shape: list[int], ksize: list[int]) -> Callable[[], Fixture]:
    """A MaxPool3D fed a tensor of the wrong rank at run time, or pooling over the batch."""

    def make() -> Fixture:
        def build() -> tuple[dict[str, np.ndarray], list[tf.Tensor]]:
            x = v1.placeholder(tf.float32, None, name="x")
            out = tf.raw_ops.MaxPool3D(input=x, ksize=ksize, strides=[1, 2, 2, 2, 1], padding="VALID")
            return {"x": np.ones(shape, np.float32)}, [out]

        return v1_graph(build)

    return make


def model_conv3d() -> Fixture:
    """Keras: Conv3D -> MaxPooling3D -> Conv3DTranspose -> AveragePooling3D ->
    GlobalAveragePooling3D -> Dense, a video-shaped [2, 6, 10, 10, 3] input."""
    import keras

    keras.utils.set_random_seed(42)
    shape = (6, 10, 10, 3)
    inputs = keras.Input(shape, batch_size=2)
    h = keras.layers.Conv3D(8, 3, padding="same", activation="relu")(inputs)
    h = keras.layers.MaxPooling3D((1, 2, 2))(h)
    h = keras.layers.Conv3DTranspose(6, 3, strides=(1, 2, 2), padding="same", activation="relu")(h)
    h = keras.layers.AveragePooling3D(2, padding="same")(h)
    h = keras.layers.GlobalAveragePooling3D()(h)
    out = keras.layers.Dense(4)(h)
    model = keras.Model(inputs, out)
    graph_def, fetches = freeze(lambda x: model(x, training=False), [tf.TensorSpec([2, *shape], tf.float32, name="x")])
    x = np.random.default_rng(43).standard_normal((2, *shape)).astype(np.float32)
    return Fixture(graph_def, {"x": x}, fetches)


FIXTURES: dict[str, Callable[[], Fixture]] = {
    "ops_3d": ops_3d,
    "error_conv3d_depth": conv3d_error([3, 3, 3, 3, 5]),
    "error_conv3d_transpose_size": conv3d_transpose_error([1, 9, 8, 8, 3], [3, 3, 3, 3, 5]),
    "error_conv3d_transpose_channels": conv3d_transpose_error([1, 8, 8, 8, 3], [3, 3, 3, 3, 4]),
    "error_conv3d_dilation": conv3d_error([3, 3, 3, 4, 5], (2, 2, 1)),
    "error_pool3d_rank": pool3d_error([1, 4, 4, 4], [1, 2, 2, 2, 1]),
    "error_pool3d_batch": pool3d_error([2, 4, 4, 4, 1], [2, 2, 2, 2, 1]),
}
MODELS: dict[str, Callable[[], Fixture]] = {"model_conv3d": model_conv3d}


if __name__ == "__main__":
    generate(FIXTURES, MODELS, sys.argv[1:], "engine/testdata/gen_ops3d.py")
