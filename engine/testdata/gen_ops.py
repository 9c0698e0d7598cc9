"""Generate per-op GraphDef fixtures for the ops real models need, with TensorFlow's outputs.

    python engine/testdata/gen_ops.py

Same layout and oracle as gen_graphs.py (which it imports): one folder per group under
engine/testdata/graphs/ops_<group>/, each op on its own with edge cases (broadcasting, negative
axes, masks, batch_dims, dtypes), so tests/engine/test_tf_agreement.py checks every kernel
against TensorFlow, not only through the models of gen_models.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tensorflow as tf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_graphs import OUT, Fixture, rand, v1_graph, write_fixture

v1 = tf.compat.v1
raw = tf.raw_ops
Build = tuple[dict[str, np.ndarray], list[tf.Tensor]]


def ops_math() -> Fixture:
    rng = np.random.default_rng(31)

    def build() -> Build:
        a = v1.placeholder(tf.float32, [2, 3, 4], name="a")
        b = v1.placeholder(tf.float32, [3, 1], name="b")
        pos = v1.placeholder(tf.float32, [4], name="pos")
        i = v1.placeholder(tf.int32, [3, 4], name="i")
        j = v1.placeholder(tf.int32, [4], name="j")
        outs = [
            raw.Rsqrt(x=pos, name="rsqrt"),
            raw.Erf(x=a, name="erf"),
            raw.Erfc(x=a, name="erfc"),
            raw.Log(x=pos, name="log"),
            raw.Log1p(x=pos, name="log1p"),
            raw.Expm1(x=a, name="expm1"),
            raw.Reciprocal(x=pos, name="reciprocal"),
            raw.Softplus(features=a * 10.0, name="softplus"),
            raw.Softsign(features=a, name="softsign"),
            raw.Elu(features=a, name="elu"),
            raw.Selu(features=a, name="selu"),
            raw.LeakyRelu(features=a, alpha=0.3, name="leaky_relu"),
            raw.Sin(x=a, name="sin"),
            raw.Cos(x=a, name="cos"),
            raw.Floor(x=a * 3.0, name="floor"),
            raw.Ceil(x=a * 3.0, name="ceil"),
            raw.Round(x=tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, 2.4]), name="round_half_even"),
            raw.Abs(x=a, name="abs"),
            raw.Abs(x=i, name="abs_int"),
            raw.Sign(x=a, name="sign"),
            raw.Pow(x=pos, y=a, name="pow"),
            raw.Pow(x=i, y=tf.constant(3), name="pow_int"),
            raw.SquaredDifference(x=a, y=b, name="squared_difference"),
            raw.FloorDiv(x=i, y=j, name="floordiv_int"),
            raw.FloorMod(x=i, y=j, name="floormod_int"),
            raw.FloorDiv(x=a, y=pos - 1.0, name="floordiv"),
            raw.FloorMod(x=a, y=pos - 1.0, name="floormod"),
            raw.TruncateDiv(x=i, y=j, name="truncatediv"),
            raw.DivNoNan(x=a, y=tf.constant([1.0, 0.0, 2.0, 0.0]), name="div_no_nan"),
            raw.Less(x=a, y=b, name="less"),
            raw.LessEqual(x=i, y=j, name="less_equal"),
            raw.Greater(x=a, y=b, name="greater"),
            raw.GreaterEqual(x=i, y=j, name="greater_equal"),
            raw.Equal(x=i, y=j, name="equal"),
            raw.NotEqual(x=i, y=j, name="not_equal"),
            raw.LogicalAnd(x=raw.Less(x=a, y=b), y=raw.Greater(x=a, y=-0.5), name="logical_and"),
            raw.LogicalOr(x=raw.Less(x=a, y=b), y=raw.Greater(x=a, y=0.5), name="logical_or"),
            raw.LogicalNot(x=raw.Less(x=a, y=b), name="logical_not"),
            raw.Select(condition=raw.Less(x=i, y=j), x=i, y=-i, name="select"),
            raw.Select(condition=tf.constant([True, False, True]), x=i, y=-i, name="select_rows"),
            raw.SelectV2(condition=raw.Less(x=b, y=0.0), t=a, e=tf.constant(-7.0), name="select_v2"),
            raw.AddN(inputs=[a, a * 2.0, -a], name="add_n"),
            raw.ClipByValue(t=a, clip_value_min=tf.constant(-0.5), clip_value_max=tf.constant(0.7), name="clip"),
            raw.IsNan(x=raw.Log(x=a), name="is_nan"),
        ]
        feeds = {
            "a": rand(rng, 2, 3, 4, scale=1.5),
            "b": rand(rng, 3, 1),
            "pos": np.abs(rand(rng, 4)) + 0.5,
            "i": rng.integers(-20, 20, size=(3, 4)).astype(np.int32),
            "j": np.array([3, -4, 5, -2], np.int32),
        }
        return feeds, outs

    return v1_graph(build)


def ops_array() -> Fixture:
    rng = np.random.default_rng(32)

    def build() -> Build:
        x = v1.placeholder(tf.float32, [2, 3, 4, 5], name="x")
        ids = v1.placeholder(tf.int32, [2, 3], name="ids")
        table = v1.placeholder(tf.float32, [7, 4], name="table")
        outs = [
            raw.StridedSlice(input=x, begin=[0, 1, 0, 0], end=[2, 3, 4, 5], strides=[1, 1, 2, 1], name="ss_basic"),
            x[:, 0],  # shrink_axis
            x[..., 1:4:2],  # ellipsis
            x[:, tf.newaxis, 1:, ::-1],  # new_axis, negative stride
            x[-1, ..., -1],  # shrink with negative indices around an ellipsis
            x[::-2, 2:0:-1, :, 3],
            x[1:100, -100:2],  # out-of-range bounds clamp
            raw.StridedSlice(
                input=x,
                begin=tf.constant([1, 0, 2], tf.int64),
                end=tf.constant([0, 0, 0], tf.int64),
                strides=tf.constant([1, 1, 1], tf.int64),
                begin_mask=2,
                end_mask=6,
                ellipsis_mask=0,
                new_axis_mask=0,
                shrink_axis_mask=1,
                name="ss_masks_i64",
            ),
            tf.slice(x, [1, 0, 1, 2], [1, -1, 2, 3], name="slice"),
            tf.gather(table, ids, name="gather"),
            tf.gather(x, [3, 0, 3], axis=-2, name="gather_axis"),
            tf.gather(x, tf.constant([[2, 0], [1, 1]]), axis=1, batch_dims=1, name="gather_batch_dims"),
            tf.stack([table, table * 2.0], axis=1, name="pack"),
            tf.unstack(x, axis=2, name="unpack")[3],
            tf.split(x, 2, axis=0, name="split")[1],
            tf.split(x, [1, -1, 2], axis=3, name="split_v")[1],
            tf.tile(table, [2, 3], name="tile"),
            tf.reverse(x, [1, -1], name="reverse"),
            tf.fill([2, 3], 4.5, name="fill"),
            tf.range(3, 18, 4, name="range_int"),
            tf.range(0.5, 2.0, 0.25, name="range_float"),
            tf.broadcast_to(table[:, :1], [2, 7, 4], name="broadcast_to"),
            raw.BroadcastArgs(s0=tf.constant([7, 1, 4]), s1=tf.constant([3, 1]), name="broadcast_args"),
            tf.size(x, name="size"),
            tf.rank(x, name="rank"),
            tf.zeros_like(ids, name="zeros_like"),
            tf.ones_like(table, name="ones_like"),
            tf.one_hot(ids, 6, on_value=2.0, off_value=-1.0, axis=1, name="one_hot"),
            tf.pad(table, [[1, 2], [0, 3]], name="pad"),
            tf.pad(table, [[1, 0], [2, 1]], constant_values=9.0, name="pad_v2"),
            tf.pad(table, [[2, 1], [3, 2]], mode="REFLECT", name="mirror_reflect"),
            tf.pad(table, [[2, 1], [3, 2]], mode="SYMMETRIC", name="mirror_symmetric"),
            tf.where(table > 0.5, name="where"),
            tf.cumsum(x, axis=1, name="cumsum"),
            tf.cumsum(x, axis=-1, exclusive=True, reverse=True, name="cumsum_ex_rev"),
            tf.argmax(x, axis=2, name="argmax"),
            tf.argmin(table, axis=0, output_type=tf.int32, name="argmin"),
            tf.expand_dims(tf.identity_n([table, ids], name="identity_n")[1], 0),
        ]
        feeds = {
            "x": rand(rng, 2, 3, 4, 5),
            "ids": rng.integers(0, 7, size=(2, 3)).astype(np.int32),
            "table": rand(rng, 7, 4),
        }
        return feeds, outs

    return v1_graph(build)


def ops_nn() -> Fixture:
    rng = np.random.default_rng(33)

    def build() -> Build:
        x = v1.placeholder(tf.float32, [2, 5, 5, 3], name="x")
        q = v1.placeholder(tf.float32, [2, 6, 4, 8], name="q")
        k = v1.placeholder(tf.float32, [2, 5, 4, 8], name="k")
        scale, offset = rand(rng, 3) + 1.0, rand(rng, 3)
        mean, var = rand(rng, 3), np.abs(rand(rng, 3)) + 0.5
        bn = raw.FusedBatchNormV3(
            x=x, scale=scale, offset=offset, mean=mean, variance=var, epsilon=1e-3, is_training=False, name="bn_v3"
        )
        bn_train = raw.FusedBatchNormV3(
            x=x,
            scale=scale,
            offset=offset,
            mean=np.zeros(0, np.float32),
            variance=np.zeros(0, np.float32),
            epsilon=1e-3,
            is_training=True,
            name="bn_train",
        )
        outs = [
            bn.y,
            bn_train.y,
            bn_train.batch_mean,
            raw.FusedBatchNorm(
                x=x, scale=scale, offset=offset, mean=mean, variance=var, is_training=False, name="bn_v1"
            ).y,
            tf.nn.log_softmax(q, name="log_softmax"),
            tf.reduce_max(x, axis=[1, 2], name="max"),
            tf.reduce_min(x, axis=-1, keepdims=True, name="min"),
            tf.reduce_prod(x[:, :2], axis=1, name="prod"),
            tf.reduce_all(x > -1.0, axis=[0, 3], name="all"),
            tf.reduce_any(x > 1.5, axis=1, keepdims=True, name="any"),
            tf.einsum("aecd,abcd->acbe", k, q, name="einsum_qk"),
            tf.einsum("acbe,aecd->abcd", tf.einsum("aecd,abcd->acbe", k, q), k, name="einsum_av"),
            tf.einsum("abc,cde->abde", q[:, :, 0, :], rand(rng, 8, 2, 3), name="einsum_proj"),
            tf.einsum("abcd,cde->abe", q, rand(rng, 4, 8, 5), name="einsum_out"),
            tf.einsum("...ij,jk->...ik", q, rand(rng, 8, 3), name="einsum_ellipsis"),
            tf.einsum("ij->j", q[0, 0], name="einsum_reduce"),
            tf.einsum("bij,bkj", q[0, :4], k[0, :4], name="einsum_implicit"),
        ]
        feeds = {"x": rand(rng, 2, 5, 5, 3), "q": rand(rng, 2, 6, 4, 8), "k": rand(rng, 2, 5, 4, 8)}
        return feeds, outs

    return v1_graph(build)


FIXTURES: dict[str, Callable[[], Fixture]] = {"ops_math": ops_math, "ops_array": ops_array, "ops_nn": ops_nn}


def main() -> None:
    for name, make in FIXTURES.items():
        write_fixture(name, make())
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
