"""Per-operator times of a .tflite model: ember lite against LiteRT+XNNPACK, layer by layer.

    python3 benchmarks/lite_layers.py --build DIR [--model M.tflite] [--threads 1,2] \
        [--rounds 3] [--repeat 300] [--json OUT.json] [--markdown OUT.md]

Each operator of the model's first subgraph is cut out into its own single-operator .tflite
(same weights, quantization and fused activation as in the model; its activation inputs become
the model's inputs) under --out. Every single-operator model and the whole model are then timed
by ember-benchmark and by LiteRT+XNNPACK (one child process per round and thread count timing
all of them), alternating ember / LiteRT --rounds times and keeping each side's lowest median.
A one-operator model on tiny tensors (ADD of 1x1x1x8) gives each side's per-invoke floor: the
cost of an invoke that does almost nothing, which each single-operator time also carries.
Shares are of ember's whole-model time; the sums of per-operator times against the whole-model
time show the per-operator overhead and inter-layer effects (caches) of each side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from engine_speed import invoke_times, run_pinned  # the whole-model figures' timing loop and CPUs

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = Path.home() / ".cache" / "ember-bench" / "mobilenet_v2_035_96_int8.tflite"

Row = dict[str, Any]


def _schema() -> Any:
    from ai_edge_litert import schema_py_generated  # type: ignore[import-untyped,unused-ignore]

    return schema_py_generated


def _op_name(schema: Any, model: Any, op: Any) -> str:
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    code = model.operatorCodes[op.opcodeIndex]
    return str(names.get(max(code.builtinCode, code.deprecatedBuiltinCode), "CUSTOM"))


def _write_single(schema: Any, model: Any, op: Any, path: Path, shapes: dict[int, list[int]] | None = None) -> None:
    """Writes op alone as a model; constant inputs keep their buffers, the others become inputs."""
    import copy

    import flatbuffers  # type: ignore[import-untyped,unused-ignore]

    graph = model.subgraphs[0]
    new = schema.ModelT()
    new.version = model.version
    new.operatorCodes = model.operatorCodes
    new.buffers = [schema.BufferT()]
    sub = schema.SubGraphT()
    sub.tensors, sub.inputs, sub.outputs = [], [], []
    remap: dict[int, int] = {}

    def add(index: int) -> int:
        if index < 0:
            return index
        if index not in remap:
            t = copy.copy(graph.tensors[index])
            if shapes and index in shapes:
                t.shape = np.array(shapes[index], dtype=np.int32)
            data = model.buffers[t.buffer].data if t.buffer > 0 else None
            if data is not None and len(data) > 0:
                new.buffers.append(model.buffers[t.buffer])
                t.buffer = len(new.buffers) - 1
            else:
                t.buffer = 0
                if index in op.inputs:
                    sub.inputs.append(len(sub.tensors))
            remap[index] = len(sub.tensors)
            sub.tensors.append(t)
        return remap[index]

    one = copy.copy(op)
    one.inputs = np.array([add(int(i)) for i in op.inputs], dtype=np.int32)
    one.outputs = np.array([add(int(i)) for i in op.outputs], dtype=np.int32)
    sub.outputs = [int(i) for i in one.outputs]
    sub.operators = [one]
    new.subgraphs = [sub]
    builder = flatbuffers.Builder(1024)
    builder.Finish(new.Pack(builder), file_identifier=b"TFL3")
    path.write_bytes(bytes(builder.Output()))


def slice_model(model_path: Path, out: Path) -> list[Row]:
    """One .tflite per operator under out, plus floor.tflite; returns each operator's description."""
    schema = _schema()
    model = schema.ModelT.InitFromPackedBuf(model_path.read_bytes(), 0)
    graph = model.subgraphs[0]
    out.mkdir(parents=True, exist_ok=True)
    ops: list[Row] = []
    floor_op: Any = None
    for i, op in enumerate(graph.operators):
        kind = _op_name(schema, model, op)
        shape_in = [int(d) for d in graph.tensors[op.inputs[0]].shape]
        shape_out = [int(d) for d in graph.tensors[op.outputs[0]].shape]
        desc = "x".join(str(d) for d in shape_in[1:]) + " -> " + "x".join(str(d) for d in shape_out[1:])
        label = kind
        if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = graph.tensors[op.inputs[1]].shape
            stride = op.builtinOptions.strideH
            label += f" {int(w[1])}x{int(w[2])} s{stride}"
        if kind == "ADD":
            floor_op = op
        path = out / f"op{i:02d}_{kind.lower()}.tflite"
        _write_single(schema, model, op, path)
        ops.append({"index": i, "op": label, "shape": desc, "path": str(path)})
    if floor_op is not None:
        tiny = {int(t): [1, 1, 1, 8] for t in [*floor_op.inputs, *floor_op.outputs]}
        _write_single(schema, model, floor_op, out / "floor.tflite", tiny)
    return ops


# ---- timing -------------------------------------------------------------------------------


def litert_worker(threads: int, repeat: int, paths: list[str]) -> None:
    """Child mode: times each model under LiteRT (AUTO resolver: XNNPACK) and prints a JSON list."""
    from ai_edge_litert import interpreter as litert  # type: ignore[import-untyped,unused-ignore]

    medians = []
    for path in paths:
        interp = litert.Interpreter(
            model_path=path, num_threads=threads, experimental_op_resolver_type=litert.OpResolverType.AUTO
        )
        interp.allocate_tensors()
        rng = np.random.default_rng(0)
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))
        medians.append(float(np.median(invoke_times(interp, repeat))) * 1e6)
    print(json.dumps(medians))


def litert_times(threads: int, repeat: int, paths: list[str]) -> list[float]:
    argv = [sys.executable, __file__, "--litert-worker", str(threads), str(repeat), *paths]
    proc = run_pinned(argv, threads)
    if proc.returncode != 0:
        sys.exit(f"LiteRT worker failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result: list[float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def ember_time(tool: Path, path: str, threads: int, repeat: int) -> float:
    argv = [str(tool), "--model", path, "--repeat", str(repeat), "--warmup", "5", "--threads", str(threads), "--json"]
    proc = run_pinned(argv, threads)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    if r.get("threads") != threads:
        sys.exit(f"{tool} ran {path} with {r.get('threads')} threads, not {threads}")
    return float(r["invoke_median_us"])


def measure(tool: Path, model: Path, ops: list[Row], floor: Path, threads: int, rounds: int, repeat: int) -> Row:
    paths = [str(model), str(floor), *(o["path"] for o in ops)]
    ember = [float("inf")] * len(paths)
    xnn = [float("inf")] * len(paths)
    for _ in range(rounds):
        ember = [min(a, ember_time(tool, p, threads, repeat)) for a, p in zip(ember, paths, strict=True)]
        xnn = [min(a, b) for a, b in zip(xnn, litert_times(threads, repeat, paths), strict=True)]
    return {"model": (ember[0], xnn[0]), "floor": (ember[1], xnn[1]), "ops": list(zip(ember[2:], xnn[2:], strict=True))}


# ---- report -------------------------------------------------------------------------------


def markdown(ops: list[Row], results: dict[int, Row], loads: dict[int, tuple[float, float]]) -> str:
    """Per-operator and per-kind tables; "net" times are less each side's per-invoke floor."""
    threads = sorted(results)
    head = "| # | layer | shape |"
    rule = "|---|---|---|"
    for t in threads:
        head += f" t{t} share | t{t} ember us | t{t} XNN us | t{t} ratio | t{t} net ratio |"
        rule += "---:|---:|---:|---:|---:|"
    lines = [head, rule]
    for k, o in enumerate(ops):
        line = f"| {o['index']} | {o['op']} | {o['shape']} |"
        for t in threads:
            e, x = results[t]["ops"][k]
            fe, fx = results[t]["floor"]
            share = 100 * e / results[t]["model"][0]
            line += f" {share:.1f}% | {e:.1f} | {x:.1f} | {x / e:.2f} | {(x - fx) / (e - fe):.2f} |"
        lines.append(line)
    lines.append("")
    lines.append(
        "ratio = XNNPACK us / ember us (>= 1: ember at least as fast); net ratio: both less their per-invoke "
        "floor; share = of ember's whole-model time."
    )
    lines.append("")
    kinds = sorted({o["op"] for o in ops})
    cols = "".join(f" t{t} ember net us | t{t} XNN net us | t{t} gap us | t{t} net ratio |" for t in threads)
    lines.append("| op kind | count |" + cols)
    lines.append("|---|---:|" + "---:|---:|---:|---:|" * len(threads))
    for kind in kinds:
        idx = [k for k, o in enumerate(ops) if o["op"] == kind]
        line = f"| {kind} | {len(idx)} |"
        for t in threads:
            fe, fx = results[t]["floor"]
            e = sum(results[t]["ops"][k][0] - fe for k in idx)
            x = sum(results[t]["ops"][k][1] - fx for k in idx)
            line += f" {e:.1f} | {x:.1f} | {e - x:+.1f} | {x / e:.2f} |"
        lines.append(line)
    lines.append("")
    for t in threads:
        r = results[t]
        n = len(ops)
        se = sum(e for e, _ in r["ops"])
        sx = sum(x for _, x in r["ops"])
        fe, fx = r["floor"]
        me, mx = r["model"]
        lines.append(
            f"t{t} (load {loads[t][0]:.2f} -> {loads[t][1]:.2f}): whole model ember {me:.1f} us, XNNPACK {mx:.1f} us "
            f"(ratio {mx / me:.2f}); sum of {n} single-operator times ember {se:.1f} us, XNNPACK {sx:.1f} us; "
            f"per-invoke floor ember {fe:.2f} us, XNNPACK {fx:.2f} us; sum less {n} floors ember {se - n * fe:.1f} us, "
            f"XNNPACK {sx - n * fx:.1f} us; whole model less one floor ember {me - fe:.1f} us, XNNPACK {mx - fx:.1f} us."
        )
    return "\n".join(lines) + "\n"


def find_tool(build: Path) -> Path:
    p = build / "tools" / "ember_benchmark" / "ember-benchmark"
    if not p.is_file():
        sys.exit(f"{p} not found: pass --build DIR (the engine's CMake build dir)")
    return p


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--litert-worker":
        litert_worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="engine build dir")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=Path("/tmp/lite_layers"), help="single-operator models")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3, help="ember / LiteRT alternations; lowest median kept")
    parser.add_argument("--repeat", type=int, default=300, help="invokes per timing")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    tool = find_tool(args.build)
    ops = slice_model(args.model, args.out)
    results: dict[int, Row] = {}
    loads: dict[int, tuple[float, float]] = {}
    for t in (int(s) for s in args.threads.split(",")):
        start = os.getloadavg()[0]
        results[t] = measure(tool, args.model, ops, args.out / "floor.tflite", t, args.rounds, args.repeat)
        loads[t] = (start, os.getloadavg()[0])
    text = markdown(ops, results, loads)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"ops": ops, "results": results, "loads": loads}, indent=1))


if __name__ == "__main__":
    main()
