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
from pathlib import Path
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


def _check_num_threads(num_threads: object) -> int:
    """tf.lite.Interpreter's num_threads check (ValueError), with -1 also meaning the default."""
    if num_threads is None:
        return -1
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise ValueError(f"type of num_threads should be int, got {type(num_threads).__name__}")
    if num_threads < 1 and num_threads != -1:
        raise ValueError(f"num_threads should be >= 1 (or -1 for the default), got {num_threads}")
    return num_threads


class Interpreter(_Interpreter):
    """Runs a .tflite model: tf.lite.Interpreter's methods and detail dicts.

    ``num_threads`` is the number of threads (the calling one included) that CONV_2D,
    DEPTHWISE_CONV_2D and FULLY_CONNECTED split their work over; None or -1 (the default) runs
    one thread, as LiteRT does. Outputs do not depend on it. As in LiteRT, intermediate
    tensors share memory once their values are no longer needed, so after ``invoke`` only
    inputs, outputs and constants are sure to hold their values, unless
    ``experimental_preserve_all_tensors`` is true. The other experimental arguments are
    accepted for compatibility. Each invoke releases the GIL.
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
        threads = _check_num_threads(num_threads)
        path = os.fspath(model_path) if model_path is not None else None
        content = bytes(model_content) if model_content is not None else None
        super().__init__(path, content, threads, bool(experimental_preserve_all_tensors))
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
    input_arrays: Sequence[str] | None = None,
    output_arrays: Sequence[str] | None = None,
    *,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    quantize: str | bool | None = None,
    representative_dataset: Callable[[], Iterable[Any]] | Iterable[Any] | None = None,
    calibration: str | os.PathLike[str] | None = None,
) -> bytes:
    """A frozen GraphDef as .tflite bytes, as ``ember-convert`` writes it.

    ``input_arrays`` / ``output_arrays`` (or ``inputs`` / ``outputs``) name the graph's input
    placeholders and output nodes. ``quantize="int8"`` (or True) gives a full-integer model (int8
    inputs and outputs, per-channel conv weights, int32 biases) calibrated on
    ``representative_dataset`` -- a callable returning an iterable (as TFLiteConverter's) or an
    iterable; each item a list with one array per input (or the array itself for a one-input
    model), each array one sample or a stack of them -- or on ``calibration``, a directory of
    .npy files as ``ember-convert --calibration`` reads it (``DIR/<input>/*.npy`` for several
    inputs).
    """
    from ember import _as_graph, _ember

    if not hasattr(_ember, "_convert"):
        raise NotImplementedError("this build of ember has no converter (built without engine/tools)")
    ins = list(input_arrays if input_arrays is not None else inputs or [])
    outs = list(output_arrays if output_arrays is not None else outputs or [])
    if not ins or not outs:
        raise ValueError("convert needs the graph's input and output names (input_arrays, output_arrays)")
    if quantize is True:
        quantize = "int8"
    samples: list[Any] | None = None
    if quantize:
        if quantize != "int8":
            raise ValueError(f"quantize supports only 'int8', got {quantize!r}")
        if representative_dataset is not None:
            data = representative_dataset() if callable(representative_dataset) else representative_dataset
            samples = list(data)
        elif calibration is not None:
            samples = _calibration_samples(os.fspath(calibration), ins)
        else:
            raise ValueError("int8 quantization needs a representative_dataset (or a calibration directory)")
    elif representative_dataset is not None or calibration is not None:
        raise ValueError("representative_dataset and calibration are used only with quantize='int8'")
    result: bytes = _ember._convert(_as_graph(graph), ins, outs, samples)
    return result


def _calibration_samples(directory: str, inputs: list[str]) -> list[Any]:
    def load(folder: Path) -> list[np.ndarray[Any, Any]]:
        files = sorted(f for f in folder.iterdir() if f.suffix == ".npy")
        if not files:
            raise ValueError(f"no .npy files in '{folder}'")
        return [np.load(f) for f in files]

    if len(inputs) == 1:
        return load(Path(directory))
    per_input = [load(Path(directory) / name) for name in inputs]
    if len({len(p) for p in per_input}) != 1:
        raise ValueError("inputs have different numbers of calibration files")
    return [list(arrays) for arrays in zip(*per_input)]  # lengths checked above


class Optimize(enum.Enum):
    """tf.lite.Optimize."""

    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"


class TFLiteConverter:
    """tf.compat.v1.lite.TFLiteConverter.from_frozen_graph over ``convert``: set
    ``optimizations = [Optimize.DEFAULT]`` and a ``representative_dataset`` for the full-integer
    int8 model (ember's PTQ always makes int8 inputs and outputs), else a float32 model."""

    def __init__(self, graph: GraphDef | str | os.PathLike[str] | bytes, inputs: Sequence[str], outputs: Sequence[str]):
        self._graph = graph
        self._inputs = list(inputs)
        self._outputs = list(outputs)
        self.optimizations: list[Any] = []
        self.representative_dataset: Callable[[], Iterable[Any]] | Iterable[Any] | None = None
        self.inference_input_type: Any = None
        self.inference_output_type: Any = None
        self.target_spec: Any = types.SimpleNamespace(supported_ops=set(), supported_types=[])

    @classmethod
    def from_frozen_graph(
        cls,
        graph_def_file: str | os.PathLike[str],
        input_arrays: Sequence[str],
        output_arrays: Sequence[str],
        input_shapes: Any = None,
    ) -> TFLiteConverter:
        if input_shapes:
            raise NotImplementedError("ember converts with the graph's own input shapes")
        return cls(graph_def_file, input_arrays, output_arrays)

    def convert(self) -> bytes:
        int8 = bool(self.optimizations) and self.representative_dataset is not None
        return convert(
            self._graph,
            self._inputs,
            self._outputs,
            quantize="int8" if int8 else None,
            representative_dataset=self.representative_dataset if int8 else None,
        )


__all__ = ["Interpreter", "OpResolverType", "Optimize", "SignatureRunner", "TFLiteConverter", "convert", "experimental"]
