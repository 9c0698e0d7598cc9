"""ember.lite: .tflite models, shaped like ``tf.lite`` / ``ai_edge_litert.interpreter``.

``Interpreter`` takes the same arguments and returns the same detail dicts as
``tf.lite.Interpreter``; ``convert`` turns a frozen GraphDef into a .tflite model (float32, or
full-integer int8 with post-training quantization), as the ``ember-convert`` tool does.
"""

from __future__ import annotations

import enum
import os
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ember._ember import GraphDef, _Interpreter

_NUMPY_TYPES: dict[str, Any] = {
    "FLOAT32": np.float32,
    "FLOAT16": np.float16,
    "INT32": np.int32,
    "UINT8": np.uint8,
    "INT64": np.int64,
    "STRING": np.bytes_,
    "BOOL": np.bool_,
    "INT16": np.int16,
    "INT8": np.int8,
}


class OpResolverType(enum.Enum):
    """tf.lite.experimental.OpResolverType: accepted for compatibility (ember has one kernel set,
    which matches LiteRT's reference kernels)."""

    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


experimental = types.SimpleNamespace(OpResolverType=OpResolverType)


class Interpreter(_Interpreter):
    """Runs a .tflite model: tf.lite.Interpreter's methods and detail dicts.

    ``num_threads`` and the experimental arguments are accepted for compatibility; ember's lite
    interpreter runs each invoke on the calling thread (with the GIL released).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        model_content: bytes | None = None,
        experimental_delegates: Any = None,
        num_threads: int | None = None,
        experimental_op_resolver_type: Any = None,
        experimental_preserve_all_tensors: bool = False,
        **_ignored: Any,
    ) -> None:
        if experimental_delegates:
            raise ValueError("ember.lite.Interpreter does not support delegates")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < -1):
            raise ValueError("num_threads should be >= 1 (or -1 for the default)")
        path = os.fspath(model_path) if model_path is not None else None
        content = bytes(model_content) if model_content is not None else None
        super().__init__(path, content)
        self._num_threads = num_threads

    def _detail(self, index: int) -> dict[str, Any]:
        name, _npy, type_name, shape, scales, zero_points, qdim = self._tensor_info(index)
        dtype = _NUMPY_TYPES.get(type_name, np.void)
        shape_arr = np.array(shape, dtype=np.int32)
        return {
            "name": name,
            "index": index,
            "shape": shape_arr,
            "shape_signature": shape_arr.copy(),
            "dtype": dtype,
            "quantization": (float(scales[0]), int(zero_points[0])) if scales else (0.0, 0),
            "quantization_parameters": {
                "scales": np.array(scales, dtype=np.float32),
                "zero_points": np.array(zero_points, dtype=np.int32),
                "quantized_dimension": int(qdim),
                "block_size": 0,
            },
            "sparsity_parameters": {},
        }

    def get_input_details(self) -> list[dict[str, Any]]:
        return [self._detail(i) for i in self._inputs()]

    def get_output_details(self) -> list[dict[str, Any]]:
        return [self._detail(i) for i in self._outputs()]

    def get_tensor_details(self) -> list[dict[str, Any]]:
        return [self._detail(i) for i in range(self._num_tensors())]

    def tensor(self, tensor_index: int) -> Callable[[], np.ndarray[Any, Any]]:
        """A function returning a NumPy view of the tensor's current memory (no copy)."""
        return lambda: self._view(tensor_index)

    def resize_tensor_input(self, input_index: int, tensor_size: Sequence[int], strict: bool = False) -> None:
        """Accepts the tensor's current shape only: ember's lite tensors have fixed shapes."""
        current = [int(d) for d in self._tensor_info(input_index)[3]]
        if [int(d) for d in tensor_size] != current:
            raise ValueError(
                f"ember.lite cannot resize tensor {input_index} from {current} to {list(tensor_size)}: "
                "models run with the shapes they were converted with"
            )

    def get_signature_list(self) -> dict[str, dict[str, list[str]]]:
        return {}

    def reset_all_variables(self) -> None:
        """No-op: ember's lite models hold no variables."""


def convert(
    graph: GraphDef | str | os.PathLike[str] | bytes,
    input_arrays: Sequence[str],
    output_arrays: Sequence[str],
    *,
    quantize: str | None = None,
    representative_dataset: Callable[[], Iterable[Any]] | Iterable[Any] | None = None,
) -> bytes:
    """A frozen GraphDef as .tflite bytes, as ``ember-convert`` writes it.

    ``quantize="int8"`` gives a full-integer model (int8 inputs and outputs, per-channel conv
    weights) calibrated on ``representative_dataset``: a callable returning an iterable (as
    TFLiteConverter's) or an iterable, each item a list with one array per input (or the array
    itself for a one-input model).
    """
    from ember import _as_graph, _ember

    if not hasattr(_ember, "_convert"):
        raise NotImplementedError("this build of ember has no converter (built without engine/tools)")
    g = _as_graph(graph)
    samples: list[Any] | None = None
    if quantize is not None:
        if quantize != "int8":
            raise ValueError(f"quantize supports only 'int8', got {quantize!r}")
        if representative_dataset is None:
            raise ValueError("int8 quantization needs a representative_dataset")
        data = representative_dataset() if callable(representative_dataset) else representative_dataset
        samples = list(data)
    elif representative_dataset is not None:
        raise ValueError("representative_dataset is used only with quantize='int8'")
    result: bytes = _ember._convert(g, list(input_arrays), list(output_arrays), samples)
    return result


__all__ = ["Interpreter", "OpResolverType", "convert", "experimental"]
