"""ember.lite: .tflite models, shaped like ``tf.lite`` / ``ai_edge_litert.interpreter``.

``Interpreter`` takes the same arguments and returns the same detail dicts as
``tf.lite.Interpreter``; ``convert`` turns a frozen GraphDef into a .tflite model (float32, or
full-integer int8 with post-training quantization), as the ``ember-convert`` tool does.
"""

from __future__ import annotations

import enum
import os
import struct
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


class _FlatModel:
    """The few .tflite fields ember's C++ reader does not keep (shape_signature, signature_defs),
    read straight from the FlatBuffer (field ids: ../shared/spec/ENGINE.md section 3)."""

    def __init__(self, data: bytes) -> None:
        self._d = data

    def _u32(self, pos: int) -> int:
        return int(struct.unpack_from("<I", self._d, pos)[0])

    def _field(self, table: int, field_id: int) -> int:
        vtable = table - int(struct.unpack_from("<i", self._d, table)[0])
        vsize = int(struct.unpack_from("<H", self._d, vtable)[0])
        if 4 + 2 * field_id >= vsize:
            return 0
        off = int(struct.unpack_from("<H", self._d, vtable + 4 + 2 * field_id)[0])
        return table + off if off else 0

    def _ref(self, table: int, field_id: int) -> int:
        pos = self._field(table, field_id)
        return pos + self._u32(pos) if pos else 0

    def _tables(self, table: int, field_id: int) -> list[int]:
        vec = self._ref(table, field_id)
        if not vec:
            return []
        return [vec + 4 + 4 * i + self._u32(vec + 4 + 4 * i) for i in range(self._u32(vec))]

    def _ints(self, table: int, field_id: int) -> list[int] | None:
        vec = self._ref(table, field_id)
        if not vec:
            return None
        return list(struct.unpack_from(f"<{self._u32(vec)}i", self._d, vec + 4))

    def _str(self, table: int, field_id: int) -> str:
        s = self._ref(table, field_id)
        return self._d[s + 4 : s + 4 + self._u32(s)].decode("utf-8", "replace") if s else ""

    def _uint(self, table: int, field_id: int) -> int:
        pos = self._field(table, field_id)
        return self._u32(pos) if pos else 0

    def shape_signatures(self) -> list[list[int] | None]:
        """Per tensor of subgraph 0: its shape_signature (-1 for unknown dims), or None."""
        root = self._u32(0)
        subgraphs = self._tables(root, 2)
        return [self._ints(t, 7) for t in self._tables(subgraphs[0], 0)] if subgraphs else []

    def signatures(self) -> dict[str, tuple[dict[str, int], dict[str, int], int]]:
        """signature_key -> (input name -> tensor index, output name -> tensor index, subgraph)."""
        result = {}
        for sig in self._tables(self._u32(0), 7):
            maps = [{self._str(m, 0): self._uint(m, 1) for m in self._tables(sig, k)} for k in (0, 1)]
            result[self._str(sig, 2)] = (maps[0], maps[1], self._uint(sig, 4))
        return result


class SignatureRunner:
    """tf.lite's SignatureRunner: ``runner(**inputs)`` returns ``{output name: array}``."""

    def __init__(self, interpreter: Interpreter, key: str, inputs: dict[str, int], outputs: dict[str, int]) -> None:
        self._interp = interpreter
        self._key = key
        self._inputs = inputs
        self._outputs = outputs

    def get_input_details(self) -> dict[str, dict[str, Any]]:
        return {name: self._interp._detail(i) for name, i in sorted(self._inputs.items())}

    def get_output_details(self) -> dict[str, dict[str, Any]]:
        return {name: self._interp._detail(i) for name, i in sorted(self._outputs.items())}

    def __call__(self, **kwargs: Any) -> dict[str, np.ndarray[Any, Any]]:
        missing = sorted(set(self._inputs) - set(kwargs))
        unknown = sorted(set(kwargs) - set(self._inputs))
        if missing or unknown:
            raise ValueError(
                f"Signature {self._key!r} takes inputs {sorted(self._inputs)}; missing {missing}, unknown {unknown}"
            )
        if not self._interp._allocated:
            self._interp.allocate_tensors()
        for name, value in kwargs.items():
            self._interp.set_tensor(self._inputs[name], value)
        self._interp.invoke()
        return {name: self._interp.get_tensor(i) for name, i in self._outputs.items()}


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
        self._path = path
        self._content = content
        self._flat: _FlatModel | None = None
        self._allocated = False

    def _model(self) -> _FlatModel:
        if self._flat is None:
            if self._content is None:
                with open(self._path or "", "rb") as f:  # noqa: PTH123
                    self._content = f.read()
            self._flat = _FlatModel(self._content)
        return self._flat

    def allocate_tensors(self) -> None:
        super().allocate_tensors()
        self._allocated = True

    def _detail(self, index: int) -> dict[str, Any]:
        name, _npy, type_name, shape, scales, zero_points, qdim = self._tensor_info(index)
        dtype = _NUMPY_TYPES.get(type_name, np.void)
        signatures = self._model().shape_signatures()
        signature = signatures[index] if index < len(signatures) else None
        return {
            "name": name,
            "index": index,
            "shape": np.array(shape, dtype=np.int32),
            "shape_signature": np.array(shape if signature is None else signature, dtype=np.int32),
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
        return {
            key: {"inputs": sorted(inputs), "outputs": sorted(outputs)}
            for key, (inputs, outputs, _) in self._model().signatures().items()
        }

    def get_signature_runner(self, signature_key: str | None = None) -> SignatureRunner:
        signatures = self._model().signatures()
        if signature_key is None:
            if len(signatures) != 1:
                raise ValueError(f"SignatureDef signature_key is None and the model has {len(signatures)} signatures")
            signature_key = next(iter(signatures))
        if signature_key not in signatures:
            raise ValueError(f"SignatureDef signature_key is invalid: {signature_key!r} (have {sorted(signatures)})")
        inputs, outputs, subgraph = signatures[signature_key]
        if subgraph != 0:
            raise NotImplementedError(
                f"signature {signature_key!r} runs subgraph {subgraph}; ember runs subgraph 0 only"
            )
        return SignatureRunner(self, signature_key, inputs, outputs)

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


__all__ = ["Interpreter", "OpResolverType", "SignatureRunner", "convert", "experimental"]
