"""Tiny GraphDefs written as protobuf bytes by hand (no TensorFlow needed to build them)."""

from __future__ import annotations

import numpy as np

# TensorFlow's DataType numbers.
DT = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def type_attr(dtype: np.dtype) -> bytes:
    return _varint(6 << 3) + _varint(DT[np.dtype(dtype)])


def shape_attr(dims: list[int] | None) -> bytes:
    if dims is None:
        return _field(7, _varint(3 << 3) + _varint(1))  # unknown_rank
    shape = b"".join(_field(2, _varint(1 << 3) + _varint(d)) for d in dims)
    return _field(7, shape)


def tensor_attr(value: np.ndarray) -> bytes:
    value = np.ascontiguousarray(value)
    shape = b"".join(_field(2, _varint(1 << 3) + _varint(d)) for d in value.shape)
    proto = _varint(1 << 3) + _varint(DT[value.dtype]) + _field(2, shape) + _field(4, value.tobytes())
    return _field(8, proto)


def node(name: str, op: str, inputs: list[str], attrs: dict[str, bytes]) -> bytes:
    body = _field(1, name.encode()) + _field(2, op.encode())
    body += b"".join(_field(3, i.encode()) for i in inputs)
    for key, value in attrs.items():
        body += _field(5, _field(1, key.encode()) + _field(2, value))
    return _field(1, body)


def placeholder(name: str, dtype: np.dtype, dims: list[int] | None = None) -> bytes:
    return node(name, "Placeholder", [], {"dtype": type_attr(dtype), "shape": shape_attr(dims)})


def const(name: str, value: np.ndarray) -> bytes:
    return node(name, "Const", [], {"dtype": type_attr(value.dtype), "value": tensor_attr(value)})


def identity_graph(dtype: np.dtype, dims: list[int] | None = None) -> bytes:
    """x (Placeholder) -> y = Identity(x)."""
    return placeholder("x", dtype, dims) + node("y", "Identity", ["x"], {"T": type_attr(dtype)})


def add_graph() -> bytes:
    """x: float [4]; y = x + c; z = y * x; plus a NoOp target 'init' and a Const 'c'."""
    c = np.array([1, 2, 3, 4], np.float32)
    f = type_attr(np.dtype(np.float32))
    return (
        placeholder("x", np.dtype(np.float32), [4])
        + const("c", c)
        + node("y", "AddV2", ["x", "c"], {"T": f})
        + node("z", "Mul", ["y", "x"], {"T": f})
        + node("init", "NoOp", [], {})
    )


def chain10_graph() -> bytes:
    """ember-benchmark's 10-node elementwise chain on a float [4] (x and a Const c)."""
    f = type_attr(np.dtype(np.float32))
    out = placeholder("x", np.dtype(np.float32), [4]) + const("c", np.array([0.5, 0.25, 2, 1], np.float32))
    ops = ["AddV2", "Mul", "Neg", "Square", "AddV2", "Relu", "Mul", "Sub", "Neg", "AddV2"]
    prev = "x"
    for i, op in enumerate(ops):
        unary = op in ("Neg", "Square", "Relu")
        out += node(f"n{i}", op, [prev] if unary else [prev, "c"], {"T": f})
        prev = f"n{i}"
    return out
