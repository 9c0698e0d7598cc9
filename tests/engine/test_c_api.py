"""The C API (ember/c_api.h) driven through ctypes against the installed libember_framework:
graph loading, sessions, tensors and error statuses."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration

P = ctypes.c_void_p


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len_field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _node(name: str, op: str, inputs: list[str], attrs: dict[str, bytes]) -> bytes:
    body = _len_field(1, name.encode()) + _len_field(2, op.encode())
    body += b"".join(_len_field(3, i.encode()) for i in inputs)
    for key, value in attrs.items():
        body += _len_field(5, _len_field(1, key.encode()) + _len_field(2, value))
    return _len_field(1, body)


FLOAT_T = _varint(6 << 3) + _varint(1)  # AttrValue.type = DT_FLOAT
GRAPH = (
    _node("a", "Placeholder", [], {"dtype": FLOAT_T})
    + _node("b", "Placeholder", [], {"dtype": FLOAT_T})
    + _node("sum", "Add", ["a", "b"], {"T": FLOAT_T})
    + _node("out", "Mul", ["sum", "a:0"], {"T": FLOAT_T})
)


@pytest.fixture(scope="module")
def lib(ember_install: Path) -> ctypes.CDLL:
    path = ember_install / "lib" / "libember_framework.so"
    if not path.exists():
        candidates = sorted((ember_install).glob("lib*/libember_framework.so"))
        if not candidates:
            pytest.fail(f"libember_framework.so not installed under {ember_install}")
        path = candidates[0]
    c = ctypes.CDLL(str(path))
    c.EMBER_NewStatus.restype = P
    c.EMBER_DeleteStatus.argtypes = [P]
    c.EMBER_GetCode.argtypes = [P]
    c.EMBER_GetCode.restype = ctypes.c_int
    c.EMBER_Message.argtypes = [P]
    c.EMBER_Message.restype = ctypes.c_char_p
    c.EMBER_CodeName.argtypes = [ctypes.c_int]
    c.EMBER_CodeName.restype = ctypes.c_char_p
    c.EMBER_LoadGraphFromBuffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t, P]
    c.EMBER_LoadGraphFromBuffer.restype = P
    c.EMBER_LoadGraphFromFile.argtypes = [ctypes.c_char_p, P]
    c.EMBER_LoadGraphFromFile.restype = P
    c.EMBER_GraphNumNodes.argtypes = [P]
    c.EMBER_DeleteGraph.argtypes = [P]
    c.EMBER_NewSessionOptions.restype = P
    c.EMBER_SetInterOpThreads.argtypes = [P, ctypes.c_int]
    c.EMBER_DeleteSessionOptions.argtypes = [P]
    c.EMBER_NewSession.argtypes = [P, P, P]
    c.EMBER_NewSession.restype = P
    c.EMBER_NewTensorFromData.argtypes = [
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int64),
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_size_t,
        P,
    ]
    c.EMBER_NewTensorFromData.restype = P
    c.EMBER_DeleteTensor.argtypes = [P]
    c.EMBER_TensorType.argtypes = [P]
    c.EMBER_NumDims.argtypes = [P]
    c.EMBER_Dim.argtypes = [P, ctypes.c_int]
    c.EMBER_Dim.restype = ctypes.c_int64
    c.EMBER_TensorByteSize.argtypes = [P]
    c.EMBER_TensorByteSize.restype = ctypes.c_size_t
    c.EMBER_TensorData.argtypes = [P]
    c.EMBER_TensorData.restype = ctypes.c_void_p
    c.EMBER_SessionRun.argtypes = [P, P, P, ctypes.c_int, P, P, ctypes.c_int, P, ctypes.c_int, P]
    c.EMBER_CloseSession.argtypes = [P, P]
    c.EMBER_DeleteSession.argtypes = [P]
    return c


def _tensor(lib: ctypes.CDLL, arr: np.ndarray, status: int) -> int:
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    dims = (ctypes.c_int64 * arr.ndim)(*arr.shape)
    t = lib.EMBER_NewTensorFromData(1, dims, arr.ndim, arr.ctypes.data, arr.nbytes, status)
    assert lib.EMBER_GetCode(status) == 0, lib.EMBER_Message(status)
    return int(t)


def _to_numpy(lib: ctypes.CDLL, t: int | None) -> np.ndarray:
    assert t is not None
    assert lib.EMBER_TensorType(t) == 1
    shape = tuple(lib.EMBER_Dim(t, i) for i in range(lib.EMBER_NumDims(t)))
    nbytes = lib.EMBER_TensorByteSize(t)
    raw = ctypes.string_at(lib.EMBER_TensorData(t), nbytes)
    return np.frombuffer(raw, dtype=np.float32).reshape(shape).copy()


def _names(*names: str) -> ctypes.Array[ctypes.c_char_p]:
    return (ctypes.c_char_p * len(names))(*(n.encode() for n in names))


def test_load_run_and_inspect(lib: ctypes.CDLL) -> None:
    status = lib.EMBER_NewStatus()
    graph = lib.EMBER_LoadGraphFromBuffer(GRAPH, len(GRAPH), status)
    assert lib.EMBER_GetCode(status) == 0, lib.EMBER_Message(status)
    assert lib.EMBER_GraphNumNodes(graph) == 4
    opts = lib.EMBER_NewSessionOptions()
    lib.EMBER_SetInterOpThreads(opts, 2)
    session = lib.EMBER_NewSession(graph, opts, status)
    assert lib.EMBER_GetCode(status) == 0, lib.EMBER_Message(status)
    lib.EMBER_DeleteGraph(graph)
    lib.EMBER_DeleteSessionOptions(opts)

    a = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    b = np.array([[0.5, -1.0, 10.0]], dtype=np.float32)
    feeds = (P * 2)(_tensor(lib, a, status), _tensor(lib, b, status))
    outputs = (P * 2)()
    lib.EMBER_SessionRun(session, _names("a", "b:0"), feeds, 2, _names("out", "sum"), outputs, 2, None, 0, status)
    assert lib.EMBER_GetCode(status) == 0, lib.EMBER_Message(status)
    want_out: np.ndarray = (a + b) * a
    want_sum: np.ndarray = a + b
    np.testing.assert_allclose(_to_numpy(lib, outputs[0]), want_out, rtol=1e-6)
    np.testing.assert_allclose(_to_numpy(lib, outputs[1]), want_sum, rtol=1e-6)
    for t in list(outputs) + list(feeds):
        lib.EMBER_DeleteTensor(t)

    # Errors come back as statuses with TensorFlow's codes; outputs stay NULL.
    lib.EMBER_SessionRun(session, None, None, 0, _names("nope"), outputs, 1, None, 0, status)
    assert lib.EMBER_CodeName(lib.EMBER_GetCode(status)) == b"NOT_FOUND"
    assert lib.EMBER_Message(status) == b"FetchOutputs node nope:0: not found"
    assert outputs[0] is None

    lib.EMBER_CloseSession(session, status)
    assert lib.EMBER_GetCode(status) == 0
    lib.EMBER_SessionRun(session, None, None, 0, _names("sum"), outputs, 1, None, 0, status)
    assert lib.EMBER_CodeName(lib.EMBER_GetCode(status)) == b"CANCELLED"
    assert lib.EMBER_Message(status) == b"Session has been closed."
    lib.EMBER_DeleteSession(session)
    lib.EMBER_DeleteStatus(status)


def test_bad_inputs_are_statuses(lib: ctypes.CDLL, tmp_path: Path) -> None:
    status = lib.EMBER_NewStatus()
    assert lib.EMBER_LoadGraphFromBuffer(GRAPH[:-3], len(GRAPH) - 3, status) is None
    assert lib.EMBER_CodeName(lib.EMBER_GetCode(status)) == b"INVALID_ARGUMENT"
    assert b"Corrupt GraphDef" in lib.EMBER_Message(status)
    text = b'{"node": [{"name": "x", "op": "Const", "attr": {"dtype": {"type": "DT_NOPE"}}}]}'
    assert lib.EMBER_LoadGraphFromBuffer(text, len(text), status) is None
    assert b"DT_NOPE" in lib.EMBER_Message(status)
    assert lib.EMBER_LoadGraphFromFile(str(tmp_path / "none.pb").encode(), status) is None
    assert lib.EMBER_CodeName(lib.EMBER_GetCode(status)) == b"NOT_FOUND"
    dims = (ctypes.c_int64 * 1)(3)
    data = np.zeros(2, dtype=np.float32)
    assert lib.EMBER_NewTensorFromData(1, dims, 1, data.ctypes.data, data.nbytes, status) is None
    assert b"needs 12" in lib.EMBER_Message(status)
    assert lib.EMBER_NewTensorFromData(7, dims, 1, None, 0, status) is None
    assert lib.EMBER_CodeName(lib.EMBER_GetCode(status)) == b"INVALID_ARGUMENT"
    wrong = _node("u", "FancyOp", [], {})
    graph = lib.EMBER_LoadGraphFromBuffer(wrong, len(wrong), status)
    assert lib.EMBER_GetCode(status) == 0
    assert lib.EMBER_NewSession(graph, None, status) is None
    assert b"FancyOp" in lib.EMBER_Message(status)
    lib.EMBER_DeleteGraph(graph)
    lib.EMBER_DeleteStatus(status)
