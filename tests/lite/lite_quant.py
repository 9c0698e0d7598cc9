"""Converter settings the lite tests share (imported by the test modules of this folder)."""

from __future__ import annotations

from typing import Any

import numpy as np


def full_integer(
    conv: Any, shape: tuple[int, ...], low: float = -2.0, high: float = 2.0, samples: int = 8, batch: int = 1
) -> None:
    """Full-integer quantization (int8 input and output) of a TFLiteConverter, calibrated on
    inputs drawn uniformly from [low, high) (an asymmetric range gives a nonzero zero point)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)

    def rep() -> Any:
        for _ in range(samples):
            yield [rng.uniform(low, high, (batch, *shape)).astype(np.float32)]

    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = rep
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
