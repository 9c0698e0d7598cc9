"""ember-run on TF2 SavedModel directories agrees with TensorFlow (outputs saved by
engine/testdata/savedmodels/gen_savedmodels.py from the reloaded SavedModels), and hostile
directories fail with one clear error line and a non-zero exit, never a crash."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "engine" / "testdata" / "savedmodels"
FIXTURES = [
    "module_two_signatures",
    "keras_small",
    "keras_image_ops",
    "mobilenet_v2",
    "tiny_bert",
    "tf1_variables",
    "keras_rnn",
    "while_loop",
    "cond_module",
]

pytestmark = pytest.mark.integration


def _cases() -> list[tuple[str, str]]:
    cases = []
    for name in FIXTURES:
        manifest = json.loads((DATA / name / "manifest.json").read_text())
        cases += [(name, sig) for sig in sorted(manifest)]
    return cases


def _ember_run(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(prefix / "bin" / "ember-run"), *args], capture_output=True, text=True, timeout=300)


def _run_signature(
    prefix: Path, model: Path, sig: str, entry: dict[str, Any], out: Path
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    args = [str(model), "--signature", sig, "--out", str(out)]
    for key, file in entry["inputs"].items():
        args += ["--feed", f"{key}={DATA / model.name / file}"]
    keys = sorted(entry["outputs"])
    for key in keys:
        args += ["--fetch", key]
    return _ember_run(prefix, *args), keys


def test_fixtures_exist() -> None:
    for name in FIXTURES:
        assert (DATA / name / "saved_model.pb").is_file(), name
        assert (DATA / name / "variables" / "variables.index").is_file(), name


@pytest.mark.parametrize("name,sig", _cases())
def test_matches_tensorflow(ember_install: Path, tmp_path: Path, name: str, sig: str) -> None:
    entry = json.loads((DATA / name / "manifest.json").read_text())[sig]
    proc, keys = _run_signature(ember_install, DATA / name, sig, entry, tmp_path)
    if proc.returncode != 0 and "ember cannot run this model: op '" in proc.stderr:
        # Ops that another change adds (Rsqrt, StridedSlice, Erf, ...): say which, clearly.
        pytest.xfail(f"{name}/{sig} needs ops ember lacks: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    for i, key in enumerate(keys):
        want = np.load(DATA / name / entry["outputs"][key])
        got = np.load(tmp_path / f"{i}.npy")
        assert got.shape == want.shape, (key, got.shape, want.shape)
        # rtol 1e-4; the absolute floor scales with the output (deep nets' logits reach ~5).
        atol = 1e-5 * max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol, err_msg=f"{name}/{sig}/{key}")


def _copy(tmp_path: Path, name: str = "module_two_signatures") -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def _expect_error(prefix: Path, model: Path, *needles: str) -> str:
    x = DATA / "module_two_signatures" / "in_serving_default_x.npy"
    proc = _ember_run(prefix, str(model), "--feed", f"x={x}")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_truncated_saved_model_pb(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    pb = model / "saved_model.pb"
    data = pb.read_bytes()
    for cut in (1, 7, len(data) // 3, len(data) - 5):
        pb.write_bytes(data[:cut])
        _expect_error(ember_install, model, "saved_model.pb")


def test_empty_saved_model_pb(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    (model / "saved_model.pb").write_bytes(b"")
    _expect_error(ember_install, model, "saved_model.pb", "empty")


def test_corrupt_variables_index(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    index = model / "variables" / "variables.index"
    data = bytearray(index.read_bytes())
    data[len(data) // 4] ^= 0x5A  # inside a block: its crc32c no longer matches
    index.write_bytes(bytes(data))
    _expect_error(ember_install, model, "variables.index")
    index.write_bytes(bytes(data[:20]))  # shorter than the footer
    _expect_error(ember_install, model, "variables.index")


def test_missing_data_shard(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    (model / "variables" / "variables.data-00000-of-00001").unlink()
    _expect_error(ember_install, model, "variables.data-00000-of-00001")


def test_corrupt_data_shard(ember_install: Path, tmp_path: Path) -> None:
    model = _copy(tmp_path)
    shard = model / "variables" / "variables.data-00000-of-00001"
    data = bytearray(shard.read_bytes())
    data[5] ^= 0xFF
    shard.write_bytes(bytes(data))
    _expect_error(ember_install, model, "crc32c")


def test_unknown_signature(ember_install: Path) -> None:
    x = DATA / "module_two_signatures" / "in_serving_default_x.npy"
    proc = _ember_run(ember_install, str(DATA / "module_two_signatures"), "--signature", "nope", "--feed", f"x={x}")
    assert proc.returncode == 1
    assert "serving_default" in proc.stderr and "scores" in proc.stderr


def test_empty_graphdef_names_file(ember_install: Path, tmp_path: Path) -> None:
    pb = tmp_path / "empty.pb"
    pb.write_bytes(b"")
    proc = _ember_run(ember_install, str(pb))
    assert proc.returncode == 1
    assert str(pb) in proc.stderr and "empty" in proc.stderr, proc.stderr


def test_c_api_runs_both_signatures(ember_install: Path) -> None:
    import ctypes

    libs = sorted(ember_install.glob("lib*/libember_framework.so"))
    assert libs, "libember_framework.so not installed"
    c = ctypes.CDLL(str(libs[0]))
    vp, cs = ctypes.c_void_p, ctypes.c_char_p
    c.EMBER_NewStatus.restype = vp
    c.EMBER_GetCode.argtypes = [vp]
    c.EMBER_Message.argtypes = [vp]
    c.EMBER_Message.restype = cs
    c.EMBER_LoadSavedModel.argtypes = [cs, vp, ctypes.c_int, vp, vp]
    c.EMBER_LoadSavedModel.restype = vp
    c.EMBER_SavedModelNumSignatures.argtypes = [vp]
    c.EMBER_SavedModelSignatureKey.argtypes = [vp, ctypes.c_int]
    c.EMBER_SavedModelSignatureKey.restype = cs
    c.EMBER_NewTensorFromData.argtypes = [
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int64),
        ctypes.c_int,
        vp,
        ctypes.c_size_t,
        vp,
    ]
    c.EMBER_NewTensorFromData.restype = vp
    c.EMBER_SavedModelRun.argtypes = [
        vp,
        cs,
        ctypes.POINTER(cs),
        ctypes.POINTER(vp),
        ctypes.c_int,
        ctypes.POINTER(cs),
        ctypes.POINTER(vp),
        ctypes.c_int,
        vp,
    ]
    c.EMBER_TensorData.argtypes = [vp]
    c.EMBER_TensorData.restype = vp
    c.EMBER_TensorElementCount.argtypes = [vp]
    c.EMBER_TensorElementCount.restype = ctypes.c_int64
    for f in ("EMBER_DeleteTensor", "EMBER_DeleteSavedModel", "EMBER_DeleteStatus"):
        getattr(c, f).argtypes = [vp]

    status = c.EMBER_NewStatus()
    bad = c.EMBER_LoadSavedModel(b"/nonexistent", None, 0, None, status)
    assert bad is None and c.EMBER_GetCode(status) == 5
    assert b"saved_model.pb" in c.EMBER_Message(status)

    name = DATA / "module_two_signatures"
    model = c.EMBER_LoadSavedModel(str(name).encode(), None, 0, None, status)
    assert c.EMBER_GetCode(status) == 0, c.EMBER_Message(status)
    keys = [c.EMBER_SavedModelSignatureKey(model, i) for i in range(c.EMBER_SavedModelNumSignatures(model))]
    assert keys == [b"scores", b"serving_default"]
    manifest = json.loads((name / "manifest.json").read_text())
    for sig in ("serving_default", "scores"):
        entry = manifest[sig]
        x = np.ascontiguousarray(np.load(name / entry["inputs"]["x"]))
        dims = (ctypes.c_int64 * x.ndim)(*x.shape)
        t = c.EMBER_NewTensorFromData(1, dims, x.ndim, x.ctypes.data, x.nbytes, status)
        out_keys = sorted(entry["outputs"])
        outs = (vp * len(out_keys))()
        c.EMBER_SavedModelRun(
            model,
            sig.encode(),
            (cs * 1)(b"x"),
            (vp * 1)(t),
            1,
            (cs * len(out_keys))(*[k.encode() for k in out_keys]),
            outs,
            len(out_keys),
            status,
        )
        assert c.EMBER_GetCode(status) == 0, c.EMBER_Message(status)
        for i, key in enumerate(out_keys):
            want = np.load(name / entry["outputs"][key])
            n = c.EMBER_TensorElementCount(outs[i])
            got = np.ctypeslib.as_array(ctypes.cast(c.EMBER_TensorData(outs[i]), ctypes.POINTER(ctypes.c_float)), (n,))
            np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-5)
            c.EMBER_DeleteTensor(outs[i])
        c.EMBER_DeleteTensor(t)
    c.EMBER_DeleteSavedModel(model)
    c.EMBER_DeleteStatus(status)


@pytest.mark.parametrize("encoding", ["pb", "json"])
def test_graphdef_with_function_library(ember_install: Path, tmp_path: Path, encoding: str) -> None:
    """A GraphDef whose work sits in a library function (PartitionedCall, body tensors named
    node:arg:index) is inlined by ember-run, from the binary and the JSON form alike."""
    d = DATA / "graph_with_functions"
    proc = _ember_run(
        ember_install,
        str(d / f"model.{encoding}"),
        "--feed",
        f"x={d / 'input_x.npy'}",
        "--fetch",
        "Identity",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "0.npy"), np.load(d / "expected.npy"), rtol=1e-5)


def test_missing_op_names_function_and_node(ember_install: Path, tmp_path: Path) -> None:
    """An op ember lacks inside a function: the error names the op, the function and the node.
    (Renaming Relu to Relx keeps the protobuf valid: same length everywhere.)"""
    model = _copy(tmp_path)
    pb = model / "saved_model.pb"
    pb.write_bytes(pb.read_bytes().replace(b"Relu", b"Relx"))
    err = _expect_error(ember_install, model, "saved_model.pb", "op 'Relx'", "node 'Relx'")
    assert "function '__inference_forward" in err, err
    # The other signature does not use it and still runs.
    x = DATA / "module_two_signatures" / "in_scores_x.npy"
    proc = _ember_run(ember_install, str(model), "--signature", "scores", "--feed", f"x={x}")
    assert proc.returncode == 0, proc.stderr
