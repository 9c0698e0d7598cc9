"""Generate fixtures for the framework ops that Keras layers and keras.ops emit beyond gen_ops.py's:
Bucketize (Discretization), the segment reductions (keras.ops.segment_*), EnsureShape and
CheckNumerics, the inverse and hyperbolic trigonometry with Lgamma, Xlogy, Xdivy and TruncateMod,
and ResizeBicubic / ResizeArea (Resizing(interpolation="bicubic"/"area")).

    python engine/testdata/gen_ops_extra.py                  # every fixture
    python engine/testdata/gen_ops_extra.py ops_trig         # some

Same layout and oracle as gen_graphs.py (which it imports): each folder under
engine/testdata/graphs/ holds the GraphDef, the values fed and TensorFlow's outputs, or for the
`error_*` ones TensorFlow's error (its code and its kernel's message line), with the values fed
at run time so that TensorFlow's kernel, not its shape inference, raises it.
model_keras_preprocessing is a small Keras model frozen as gen_models.py freezes its models.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tensorflow as tf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_graphs import Fixture, rand, v1_graph
from gen_models import freeze, generate

v1 = tf.compat.v1
raw = tf.raw_ops
Build = tuple[dict[str, np.ndarray], list[tf.Tensor]]

# Edge values of the elementwise ops: signed zeros, +-1, the domain edges, large, infinities, NaN.
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.99, -0.99, 2.0, -2.5, 3.0, 30.0, -30.0, 1e10, -1e10]
EDGES += [np.inf, -np.inf, np.nan]


def ops_bucketize_segments() -> Fixture:
    """Bucketize on values equal to boundaries, between them, outside them and NaN, for every
    input type; the sorted segment reductions with empty segments between ids; the unsorted ones
    with negative (dropped) ids, empty segments (their identities), ids of rank 2 and int64; and
    keras.ops.segment_max / segment_sum as the TensorFlow backend emits them."""
    import keras

    rng = np.random.default_rng(61)

    def build() -> Build:
        x = v1.placeholder(tf.float32, [2, 9], name="x")
        xi = v1.placeholder(tf.int32, [7], name="xi")
        data = v1.placeholder(tf.float32, [6, 3], name="data")
        idata = v1.placeholder(tf.int32, [6, 2], name="idata")
        ids = v1.placeholder(tf.int32, [6], name="ids")
        uids = v1.placeholder(tf.int32, [6], name="uids")
        ids2 = v1.placeholder(tf.int64, [2, 3], name="ids2")
        bounds = [-1.0, 0.0, 0.5, 0.5, 2.0]
        outs = [
            raw.Bucketize(input=x, boundaries=bounds, name="bucketize"),
            raw.Bucketize(input=xi, boundaries=[-2.5, 0.0, 3.0], name="bucketize_int"),
            raw.Bucketize(input=tf.cast(xi, tf.int64), boundaries=[1.0, 1.5], name="bucketize_int64"),
            raw.Bucketize(input=tf.cast(x, tf.float64) + 1e-12, boundaries=bounds, name="bucketize_double"),
            raw.Bucketize(input=x, boundaries=[], name="bucketize_empty"),
        ]
        for op in ("SegmentSum", "SegmentMean", "SegmentProd", "SegmentMax", "SegmentMin"):
            fn = getattr(raw, op)
            outs.append(fn(data=data, segment_ids=ids, name=op.lower()))
            outs.append(fn(data=idata, segment_ids=ids, name=op.lower() + "_int"))
        outs.append(raw.SegmentSum(data=data, segment_ids=tf.cast(ids, tf.int64), name="segmentsum_i64"))
        for op in ("UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax", "UnsortedSegmentMin"):
            fn = getattr(raw, op)
            name = op.lower()
            outs.append(fn(data=data, segment_ids=uids, num_segments=5, name=name))
            outs.append(fn(data=idata, segment_ids=uids, num_segments=tf.constant(4, tf.int64), name=name + "_int"))
            outs.append(fn(data=tf.reshape(data, [2, 3, 3]), segment_ids=ids2, num_segments=3, name=name + "_rank2"))
        outs.append(tf.math.unsorted_segment_sum(data, tf.fill([6], -1), 0, name="unsorted_all_dropped"))
        # What keras.ops emits with TensorFlow's backend.
        outs += [
            keras.ops.segment_max(data, uids),
            keras.ops.segment_sum(data, ids, sorted=True),
            keras.ops.segment_sum(idata, uids, num_segments=5),
        ]
        feeds = {
            "x": np.array(
                [
                    [-1.0, 0.0, 0.5, 2.0, -1.5, 0.25, 3.0, np.nan, -0.0],
                    [np.inf, -np.inf, 0.49999997, 0.50000006, 1.9, -0.9, 100.0, -100.0, 2.0000002],
                ],
                np.float32,
            ),
            "xi": np.array([-3, -2, 0, 1, 2, 3, 4], np.int32),
            "data": rand(rng, 6, 3),
            "idata": rng.integers(-9, 10, (6, 2)).astype(np.int32),
            "ids": np.array([0, 0, 2, 2, 2, 4], np.int32),
            "uids": np.array([3, -1, 0, 3, -4, 1], np.int32),
            "ids2": np.array([[2, 0, -1], [2, 2, 0]], np.int64),
        }
        return feeds, outs

    return v1_graph(build)


def ops_trig() -> Fixture:
    """Tan, the inverse and hyperbolic functions and Lgamma on EDGES (float32 and float64);
    Xlogy and Xdivy with x 0 against every y (NaN and 0 included) and broadcasting; TruncateMod
    of signed ints and floats (the sign follows the dividend)."""

    def build() -> Build:
        x = v1.placeholder(tf.float32, [len(EDGES)], name="x")
        # ember-run feeds and writes no float64: float64 runs between casts.
        d = tf.cast(x, tf.float64, name="d")
        a = v1.placeholder(tf.float32, [4, 1], name="a")
        i = v1.placeholder(tf.int32, [6], name="i")
        j = v1.placeholder(tf.int32, [6], name="j")
        outs = []
        for op in ("Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Lgamma"):
            fn = getattr(raw, op)
            outs.append(fn(x=x, name=op.lower()))
            outs.append(tf.cast(fn(x=d, name=op.lower() + "_f64"), tf.float32))
        outs += [
            raw.Xlogy(x=a, y=x, name="xlogy"),
            raw.Xdivy(x=a, y=x, name="xdivy"),
            tf.cast(raw.Xlogy(x=tf.cast(a, tf.float64), y=d, name="xlogy_f64"), tf.float32),
            tf.cast(raw.Xdivy(x=tf.cast(a, tf.float64), y=d, name="xdivy_f64"), tf.float32),
            raw.TruncateMod(x=i, y=j, name="truncatemod"),
            raw.TruncateMod(x=tf.cast(i, tf.int64), y=tf.cast(j, tf.int64), name="truncatemod_i64"),
            raw.TruncateMod(x=tf.cast(i, tf.float32) * 1.25, y=tf.cast(j, tf.float32), name="truncatemod_f32"),
            raw.TruncateMod(x=x, y=tf.constant(0.75), name="truncatemod_edges"),
        ]
        feeds = {
            "x": np.array(EDGES, np.float32),
            "a": np.array([[0.0], [1.0], [-2.0], [np.nan]], np.float32),
            "i": np.array([7, -7, 7, -7, 0, 13], np.int32),
            "j": np.array([3, 3, -3, -3, 5, 4], np.int32),
        }
        return feeds, outs

    return v1_graph(build)


def ops_resize_extra() -> Fixture:
    """ResizeBicubic in every align_corners / half_pixel_centers combination TensorFlow accepts
    and ResizeArea with and without align_corners, each up, down, to odd sizes and to the same
    size, on float, uint8 and int32 images of 1 and 3 channels."""
    rng = np.random.default_rng(62)

    def build() -> Build:
        x = v1.placeholder(tf.float32, [2, 5, 7, 3], name="x")
        g = v1.placeholder(tf.float32, [1, 9, 6, 1], name="g")
        u = v1.placeholder(tf.uint8, [1, 4, 5, 2], name="u")
        n = v1.placeholder(tf.int32, [1, 3, 3, 1], name="n")
        outs = []
        sizes = {"up": [11, 13], "down": [3, 4], "odd": [7, 2], "same": [5, 7]}
        combos = {"legacy": (False, False), "align": (True, False), "half": (False, True)}
        for cname, (align, half) in combos.items():
            for sname, size in sizes.items():
                outs.append(
                    raw.ResizeBicubic(
                        images=x,
                        size=size,
                        align_corners=align,
                        half_pixel_centers=half,
                        name=f"bicubic_{cname}_{sname}",
                    )
                )
            outs.append(raw.ResizeBicubic(images=g, size=[4, 11], align_corners=align, half_pixel_centers=half))
            outs.append(raw.ResizeBicubic(images=u, size=[7, 3], align_corners=align, half_pixel_centers=half))
            outs.append(raw.ResizeBicubic(images=n, size=[1, 6], align_corners=align, half_pixel_centers=half))
        for align in (False, True):
            for sname, size in sizes.items():
                outs.append(raw.ResizeArea(images=x, size=size, align_corners=align, name=f"area_{align}_{sname}"))
            outs.append(raw.ResizeArea(images=g, size=[4, 11], align_corners=align))
            outs.append(raw.ResizeArea(images=u, size=[3, 8], align_corners=align))
            outs.append(raw.ResizeArea(images=n, size=[2, 1], align_corners=align))
        outs.append(tf.image.resize(x, [8, 9], method="bicubic", name="image_resize_bicubic"))
        outs.append(tf.image.resize(x, [3, 3], method="area", name="image_resize_area"))
        feeds = {
            "x": rand(rng, 2, 5, 7, 3),
            "g": rng.uniform(0, 255, (1, 9, 6, 1)).astype(np.float32),
            "u": rng.integers(0, 256, (1, 4, 5, 2)).astype(np.uint8),
            "n": rng.integers(-1000, 1000, (1, 3, 3, 1)).astype(np.int32),
        }
        return feeds, outs

    return v1_graph(build)


def ops_checks() -> Fixture:
    """EnsureShape against full, partial and unknown-rank shapes, and CheckNumerics (V1 and V2)
    on finite values, all of which pass their input through."""
    rng = np.random.default_rng(63)

    def build() -> Build:
        x = v1.placeholder(tf.float32, None, name="x")
        d = tf.cast(v1.placeholder(tf.float32, [3], name="f"), tf.float64) * tf.constant(1e290, tf.float64)
        y = x * 2.0
        outs = [
            tf.ensure_shape(y, [2, 3, 4], name="ensure_full"),
            tf.ensure_shape(y, [None, 3, None], name="ensure_partial"),
            tf.ensure_shape(y, None, name="ensure_unknown"),
            tf.cast(raw.EnsureShape(input=d, shape=[3], name="ensure_f64") * 1e-290, tf.float32),
            tf.debugging.check_numerics(y, "y is not finite", name="check"),
            tf.cast(raw.CheckNumericsV2(tensor=d, message="d", name="check_v2") * 1e-290, tf.float32),
        ]
        return {"x": rand(rng, 2, 3, 4), "f": np.array([1e10, -0.0, 3.0], np.float32)}, outs

    return v1_graph(build)


def fed_error(build: Callable[[], Build]) -> Callable[[], Fixture]:
    return lambda: v1_graph(build)


def bucketize_unsorted() -> Build:
    x = v1.placeholder(tf.float32, None, name="x")
    return {"x": np.array([1.0, 2.0], np.float32)}, [raw.Bucketize(input=x, boundaries=[0.0, 2.0, 1.0], name="b")]


def ensure_shape_mismatch() -> Build:
    x = v1.placeholder(tf.float32, None, name="x")
    y = tf.multiply(x, 2.0, name="y")
    return {"x": np.ones([2, 5], np.float32)}, [tf.ensure_shape(y, [2, None, 4], name="ensure")]


def check_numerics_nan() -> Build:
    x = v1.placeholder(tf.float32, None, name="x")
    out = tf.debugging.check_numerics(tf.math.log(x), "log of x", name="check")
    return {"x": np.array([1.0, -1.0, 0.0], np.float32)}, [out]


def unsorted_segment_id() -> Build:
    data = v1.placeholder(tf.float32, None, name="data")
    ids = v1.placeholder(tf.int32, None, name="ids")
    out = tf.math.unsorted_segment_max(data, ids, 3, name="segment_max")
    feeds = {"data": np.ones([2, 2, 3], np.float32), "ids": np.array([[0, -1], [3, 1]], np.int32)}
    return feeds, [out]


def truncate_mod_zero() -> Build:
    """TensorFlow 2.21 fails an integer TruncateMod by zero with INTERNAL, not Mod's message."""
    x = v1.placeholder(tf.int32, None, name="x")
    y = v1.placeholder(tf.int32, None, name="y")
    feeds = {"x": np.array([5, -5], np.int32), "y": np.array([3, 0], np.int32)}
    return feeds, [raw.TruncateMod(x=x, y=y, name="mod")]


def keras_preprocessing() -> Fixture:
    """A functional Keras model with a Discretization -> Embedding branch and a
    Discretization -> CategoryEncoding branch on a numeric feature, and a
    Resizing(interpolation="bicubic") -> Conv2D branch on an image, joined by a Dense head."""
    import keras

    keras.utils.set_random_seed(64)
    num = keras.Input((3,), batch_size=2, name="num")
    image = keras.Input((6, 5, 3), batch_size=2, name="image")
    bins = keras.layers.Discretization(bin_boundaries=[-1.0, -0.25, 0.0, 0.5, 1.5])
    embedded = keras.layers.Flatten()(keras.layers.Embedding(6, 4)(bins(num)))
    one_hot = keras.layers.CategoryEncoding(num_tokens=6, output_mode="one_hot")(bins(num[:, :1]))
    pixels = keras.layers.Resizing(9, 8, interpolation="bicubic")(image)
    pixels = keras.layers.Conv2D(4, 3, activation="relu")(pixels)
    pixels = keras.layers.GlobalAveragePooling2D()(pixels)
    joined = keras.layers.Concatenate()([embedded, one_hot, pixels])
    model = keras.Model([num, image], keras.layers.Dense(3)(joined))
    specs = [tf.TensorSpec([2, 3], tf.float32, name="num"), tf.TensorSpec([2, 6, 5, 3], tf.float32, name="image")]
    graph_def, fetches = freeze(lambda n, i: model([n, i], training=False), specs)
    rng = np.random.default_rng(64)
    feeds = {
        "num": np.array([[-2.0, -0.25, 0.1], [0.5, 3.0, -0.5]], np.float32),
        "image": rng.uniform(0, 1, (2, 6, 5, 3)).astype(np.float32),
    }
    return Fixture(graph_def, feeds, fetches)


FIXTURES: dict[str, Callable[[], Fixture]] = {
    "ops_bucketize_segments": ops_bucketize_segments,
    "ops_trig": ops_trig,
    "ops_resize_extra": ops_resize_extra,
    "ops_checks": ops_checks,
    "error_bucketize_unsorted": fed_error(bucketize_unsorted),
    "error_ensure_shape": fed_error(ensure_shape_mismatch),
    "error_check_numerics": fed_error(check_numerics_nan),
    "error_unsorted_segment_id": fed_error(unsorted_segment_id),
    "error_truncate_mod_zero": fed_error(truncate_mod_zero),
}
# Written in gen_models.py's layout (.pb only, rtol 1e-4).
MODELS: dict[str, Callable[[], Fixture]] = {"model_keras_preprocessing": keras_preprocessing}


if __name__ == "__main__":
    generate(FIXTURES, MODELS, sys.argv[1:], "engine/testdata/gen_ops_extra.py")
