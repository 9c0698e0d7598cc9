"""Generate the .tflite test models of ember lite and their LiteRT reference outputs.

Run with the oracle environment (tensorflow-cpu 2.21 + ai-edge-litert 2.3):

    /opt/oracle/bin/python engine/testdata/lite/generate.py
    /opt/oracle/bin/python engine/testdata/lite/generate.py graphs convert_grouped  # some GraphDefs

For every model NAME it writes NAME.tflite (TensorFlow's own TFLiteConverter; `_int8`
variants use full-integer post-training quantization with a representative dataset),
NAME.input_<i>.npy and NAME.expected_<i>.npy: the outputs of LiteRT's reference kernels
(OpResolverType.BUILTIN_REF). ember must reproduce the int8 ones exactly and the float ones
within rtol 1e-5.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

OUT = Path(__file__).resolve().parent
RNG = np.random.default_rng(20261129)


def const(shape: tuple[int, ...], scale: float = 0.5) -> tf.Tensor:
    return tf.constant(RNG.normal(0.0, scale, size=shape).astype(np.float32))


def models() -> dict[str, tuple[Callable[..., tf.Tensor], list[tuple[int, ...]]]]:
    w_fc = const((32, 16))
    b_fc = const((16,))
    w_conv = const((3, 3, 3, 8))
    b_conv = const((8,))
    w_conv2 = const((3, 3, 4, 6))
    w_dw = const((3, 3, 4, 2))
    b_dw = const((8,))
    c_bcast = const((1, 1, 6))
    w_net1 = const((3, 3, 3, 8), 0.3)
    w_net2 = const((3, 3, 8, 1), 0.3)
    w_net3 = const((128, 10), 0.2)

    return {
        "fully_connected": (lambda x: tf.nn.relu(tf.matmul(x, w_fc) + b_fc), [(2, 32)]),
        "conv2d_same": (lambda x: tf.nn.relu6(tf.nn.conv2d(x, w_conv, 1, "SAME") + b_conv), [(1, 9, 9, 3)]),
        "conv2d_valid_s2": (lambda x: tf.nn.conv2d(x, w_conv2, 2, "VALID"), [(1, 11, 10, 4)]),
        "depthwise_conv2d": (
            lambda x: tf.nn.relu(tf.nn.depthwise_conv2d(x, w_dw, [1, 1, 1, 1], "SAME") + b_dw),
            [(1, 7, 8, 4)],
        ),
        "add": (lambda a, b: a + b, [(1, 4, 5, 6), (1, 4, 5, 6)]),
        "add_broadcast_relu": (lambda a: tf.nn.relu(a + c_bcast), [(2, 3, 6)]),
        "mul": (lambda a, b: a * b, [(1, 4, 5, 6), (1, 4, 5, 6)]),
        "mul_broadcast": (lambda a: a * c_bcast, [(2, 3, 6)]),
        "relu": (lambda x: tf.nn.relu(x), [(3, 17)]),
        "relu6": (lambda x: tf.nn.relu6(x * 4.0), [(3, 17)]),
        "softmax": (lambda x: tf.nn.softmax(x * 3.0), [(4, 10)]),
        "reshape": (lambda x: tf.nn.relu(tf.reshape(x, (4, 15))), [(1, 6, 10)]),
        "average_pool": (lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), [(1, 9, 9, 5)]),
        "max_pool": (lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), [(1, 8, 9, 5)]),
        "concatenation": (lambda a, b: tf.concat([a, b], axis=-1), [(1, 3, 4, 2), (1, 3, 4, 5)]),
        "mean_spatial": (lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True), [(1, 6, 7, 5)]),
        "mean_last": (lambda x: tf.reduce_mean(x, axis=[-1]), [(3, 4, 9)]),
        "small_cnn": (
            lambda x: tf.nn.softmax(
                tf.matmul(
                    tf.reshape(
                        tf.nn.max_pool2d(
                            tf.nn.relu(
                                tf.nn.depthwise_conv2d(
                                    tf.nn.relu(tf.nn.conv2d(x, w_net1, 1, "SAME")),
                                    tf.tile(w_net2, [1, 1, 1, 1]),
                                    [1, 1, 1, 1],
                                    "SAME",
                                )
                            ),
                            2,
                            2,
                            "VALID",
                        ),
                        (1, 128),
                    ),
                    w_net3,
                )
            ),
            [(1, 8, 8, 3)],
        ),
    }


def convert(fn: Callable[..., tf.Tensor], shapes: list[tuple[int, ...]], int8: bool, int8_io: bool = True) -> bytes:
    specs = [tf.TensorSpec(s, tf.float32, name=f"in{i}") for i, s in enumerate(shapes)]
    concrete = tf.function(fn).get_concrete_function(*specs)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    if int8:

        def rep() -> object:
            for _ in range(16):
                yield [RNG.normal(0.0, 1.0, size=s).astype(np.float32) for s in shapes]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if int8_io:
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
    return bytes(conv.convert())


def reference_outputs(model: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interp = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs, strict=True):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def quantize_input(model: bytes, i: int, x: np.ndarray) -> np.ndarray:
    interp = Interpreter(model_content=model)
    d = interp.get_input_details()[i]
    if d["dtype"] == np.float32:
        return x
    scale, zp = d["quantization"]
    q: np.ndarray = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    return q


def graph_models() -> dict[str, tuple[Callable[..., tf.Tensor], tuple[int, ...]]]:
    """Frozen GraphDefs for ember-convert (one input named `x`, output node `out`)."""
    w1 = const((3, 3, 3, 8), 0.3)
    b1 = const((8,), 0.1)
    w2 = const((3, 3, 8, 1), 0.3)
    b2 = const((8,), 0.1)
    w3 = const((32, 10), 0.2)
    b3 = const((10,), 0.1)
    c = const((1, 1, 1, 8), 0.5)

    def cnn(x: tf.Tensor) -> tf.Tensor:
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1))
        y = tf.nn.relu6(tf.nn.depthwise_conv2d(y, w2, [1, 2, 2, 1], "SAME") + b2)
        y = tf.nn.avg_pool2d(y, 2, 2, "VALID")
        y = tf.reshape(y, (1, 32))
        return tf.nn.softmax(tf.matmul(y, w3) + b3)

    def branches(x: tf.Tensor) -> tf.Tensor:
        a = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
        b = tf.nn.max_pool2d(a, 2, 1, "SAME") * c
        y = tf.concat([a, b + a], axis=3)
        return tf.reduce_mean(y, axis=[1, 2], keepdims=True)

    w4 = const((3, 3, 2, 8), 0.3)  # groups of 2 input channels: 4 groups on 8 channels
    w5 = const((5, 5, 1, 8), 0.3)  # one filter per channel, as ConvNeXt's 7x7 conv

    def grouped(x: tf.Tensor) -> tf.Tensor:
        y = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
        y = tf.nn.relu(tf.nn.conv2d(y, w4, 2, "SAME") + b2)
        y = tf.nn.conv2d(y, w5, 1, "VALID")
        return tf.reduce_mean(y, axis=[1, 2], keepdims=True)

    return {
        "convert_cnn": (cnn, (1, 8, 8, 3)),
        "convert_branches": (branches, (1, 6, 6, 3)),
        "convert_grouped": (grouped, (1, 14, 14, 3)),
    }


def write_graphs(only: set[str] | None = None) -> None:
    """Writes every graph of graph_models(), or those named in `only` (the others are kept)."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    gdir = OUT / "graphs"
    gdir.mkdir(exist_ok=True)
    for name, (fn, shape) in graph_models().items():
        if only is not None and name not in only:
            continue
        for old in [*gdir.glob(f"{name}.*.npy"), *gdir.glob(f"{name}_calibration/*.npy")]:
            old.unlink()

        def named(x: tf.Tensor, fn: Callable[..., tf.Tensor] = fn) -> tf.Tensor:
            return tf.identity(fn(x), name="out")

        concrete = tf.function(named).get_concrete_function(tf.TensorSpec(shape, tf.float32, name="x"))
        frozen = convert_variables_to_constants_v2(concrete)
        (gdir / f"{name}.pb").write_bytes(frozen.graph.as_graph_def().SerializeToString())
        calib = gdir / f"{name}_calibration"
        calib.mkdir(exist_ok=True)
        for k in range(8):
            np.save(calib / f"sample_{k}.npy", RNG.normal(0.0, 1.0, size=shape).astype(np.float32))
        x = RNG.normal(0.0, 1.0, size=shape).astype(np.float32)
        np.save(gdir / f"{name}.input.npy", x)
        np.save(gdir / f"{name}.tf_output.npy", frozen(tf.constant(x))[0].numpy())
        print(f"{name}.pb: {len(frozen.graph.as_graph_def().node)} nodes")


def main() -> None:
    for old in OUT.glob("*.npy"):
        old.unlink()
    for old in OUT.glob("*.tflite"):
        old.unlink()
    # (tag suffix, int8 quantization, int8 inputs/outputs); float I/O adds QUANTIZE/DEQUANTIZE.
    variants = [("", False, False), ("_int8", True, True)]
    float_io = {"fully_connected", "conv2d_same", "small_cnn", "add"}
    for name, (fn, shapes) in models().items():
        for suffix, int8, int8_io in variants + ([("_int8_fio", True, False)] if name in float_io else []):
            tag = name + suffix
            model = convert(fn, shapes, int8, int8_io)
            (OUT / f"{tag}.tflite").write_bytes(model)
            raw = [RNG.normal(0.0, 1.0, size=s).astype(np.float32) for s in shapes]
            inputs = [quantize_input(model, i, x) for i, x in enumerate(raw)]
            for i, x in enumerate(inputs):
                np.save(OUT / f"{tag}.input_{i}.npy", x)
            for i, y in enumerate(reference_outputs(model, inputs)):
                np.save(OUT / f"{tag}.expected_{i}.npy", y)
            print(f"{tag}: {len(model)} bytes")
    write_graphs()


if __name__ == "__main__":
    import sys

    # `generate.py graphs NAME...` rewrites only those GraphDefs of graph_models().
    if sys.argv[1:2] == ["graphs"]:
        write_graphs(set(sys.argv[2:]) or None)
    else:
        main()
