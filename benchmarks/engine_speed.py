"""ember's speed against its references, every figure a ratio measured in the same run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/engine_speed.py \
        [--build DIR] [--threads 1,2] [--min-time S] [--json OUT.json] [--skip-models]

References: LiteRT 2.3 with XNNPACK (and its builtin kernels) for .tflite models and int8
single-operator models, NumPy/OpenBLAS for MatMul, TensorFlow's CPU kernels for Conv2D, and a
TensorFlow Session (grappler on, as users run it) for the GraphDef models: the committed
MobileNetV2 and KerasHub BERT fixtures (engine/testdata/graphs) and ResNet50 at 64x64, generated
into --cache by engine/testdata/gen_models.py.
Ratios are reference time / ember time: >= 1.0x means ember is at least as fast. Models are
generated once (random weights; a representative dataset for int8) into --cache. Each ember and
LiteRT model timing runs in its own child process, so its peak RSS is that figure's memory;
a child of t threads is pinned to the first t CPUs this process may use, the same CPUs for
both sides of a figure (the CPUs of a shared machine need not be equally fast).
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for this command only (see matmul_vs_numpy.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ember-bench"

Row = dict[str, Any]


def best_time(fn: Callable[[], object], min_time: float) -> float:
    """Best wall time of fn over repetitions lasting at least min_time (after a warm-up)."""
    fn()
    best, total, reps = float("inf"), 0.0, 0
    while total < min_time or reps < 5:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, reps = min(best, dt), total + dt, reps + 1
    return best


def cpu_features() -> str:
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        return platform.machine()
    wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8"]
    found = " ".join(f for f in wanted if f in flags) or platform.machine()
    cap = os.environ.get("EMBER_CPU_ISA")
    # ember's int8 conv GEMM takes AMX's tiles where amx_int8 is listed, unless capped.
    return found + (f" (ember capped by EMBER_CPU_ISA={cap})" if cap else "")


# ---- models -------------------------------------------------------------------------------


def _convert(model: Any, int8: bool, shape: tuple[int, ...]) -> bytes:
    import tensorflow as tf  # type: ignore[import-untyped,unused-ignore]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        rng = np.random.default_rng(0)

        def rep() -> Any:
            for _ in range(16):
                yield [rng.uniform(-1, 1, (1, *shape)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    # Keras's export prints each model's signature ("Saved artifact at ...", one "Captures"
    # line per weight: thousands for MobileNetV2) to stdout: kept out of the report, and shown
    # only when the conversion fails.
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            data: bytes = conv.convert()
    except Exception:
        sys.stderr.write(printed.getvalue())
        raise
    return data


def make_models(cache: Path) -> dict[str, Path]:
    """MobileNetV2 (alpha 0.35, 96x96) and single-operator models, float and int8."""
    cache.mkdir(parents=True, exist_ok=True)
    specs: dict[str, tuple[Callable[[], Any], tuple[int, ...]]] = {}

    def mobilenet() -> Any:
        import keras  # type: ignore[import-untyped,unused-ignore]

        return keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=1000)

    def single(layer: Callable[[], Any], shape: tuple[int, ...]) -> Callable[[], Any]:
        def build() -> Any:
            import keras  # type: ignore[import-untyped,unused-ignore]

            keras.utils.set_random_seed(0)
            inp = keras.Input(shape=shape, batch_size=1)
            return keras.Model(inp, layer()(inp))

        return build

    def conv3x3() -> Any:
        import keras  # type: ignore[import-untyped,unused-ignore]

        return keras.layers.Conv2D(64, 3, padding="same", bias_initializer="glorot_uniform")

    def dw3x3() -> Any:
        import keras  # type: ignore[import-untyped,unused-ignore]

        return keras.layers.DepthwiseConv2D(3, padding="same", bias_initializer="glorot_uniform")

    def dw3x3s2() -> Any:
        import keras  # type: ignore[import-untyped,unused-ignore]

        return keras.layers.DepthwiseConv2D(3, strides=2, padding="same", bias_initializer="glorot_uniform")

    def pw() -> Any:
        import keras  # type: ignore[import-untyped,unused-ignore]

        return keras.layers.Conv2D(128, 1, bias_initializer="glorot_uniform")

    specs["mobilenet_v2_035_96"] = (mobilenet, (96, 96, 3))
    specs["conv_56x56x64_3x3"] = (single(conv3x3, (56, 56, 64)), (56, 56, 64))
    specs["dwconv_56x56x96_3x3"] = (single(dw3x3, (56, 56, 96)), (56, 56, 96))
    specs["dwconv_56x56x96_3x3_s2"] = (single(dw3x3s2, (56, 56, 96)), (56, 56, 96))
    specs["pwconv_28x28x64_128"] = (single(pw, (28, 28, 64)), (28, 28, 64))
    out: dict[str, Path] = {}
    for name, (build, shape) in specs.items():
        for kind in ("float", "int8"):
            path = cache / f"{name}_{kind}.tflite"
            if not path.exists():
                path.write_bytes(_convert(build(), kind == "int8", shape))
            out[f"{name}_{kind}"] = path
    return out


# ---- child processes: one model timing each, peak RSS beside it ---------------------------


def child_cpus(threads: int) -> set[int] | None:
    """The first `threads` CPUs this process may run on, for a timed child of that many threads;
    None where the OS has no affinity call.

    Both sides of a figure run on the same CPUs: the CPUs of a shared machine need not be equal
    (measured on this 2-vCPU VM: one ran the int8 depthwise layer 28% slower than the other,
    alone or beside it), and an unpinned single-threaded child lands on either, so a t1 ratio
    could compare two CPUs."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    return set(sorted(os.sched_getaffinity(0))[: max(1, threads)])


def run_pinned(
    argv: list[str], threads: int | None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """subprocess.run with the child on child_cpus(threads) (inherited from this thread's affinity,
    set around the spawn and restored; no preexec_fn in a process that may hold other threads), and
    `env` as its whole environment when given."""
    cpus = child_cpus(threads) if threads is not None else None
    if cpus is None:
        return subprocess.run(argv, capture_output=True, text=True, env=env)
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    finally:
        os.sched_setaffinity(0, saved)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run_child(argv: list[str], threads: int | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs argv (on child_cpus(threads) when given, with `env` when given) and parses the JSON
    object on the last line of its stdout."""
    proc = run_pinned(argv, threads, env)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def peak_rss_kib() -> int:
    """This process's peak RSS (VmHWM): unlike ru_maxrss, not inherited across fork + exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def invoke_times(interp: Any, repeat: int, warmup: int = 5) -> list[float]:
    """Seconds taken by each of `repeat` LiteRT `interp.invoke()` calls, after `warmup` untimed ones."""
    for _ in range(warmup):
        interp.invoke()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t0)
    return times


def litert_worker(model: str, threads: int, resolver: str, repeat: int) -> None:
    """Child mode: times one model under LiteRT and prints JSON (median us per invoke)."""
    from ai_edge_litert import interpreter as litert  # type: ignore[import-untyped,unused-ignore]

    kind = {
        "xnnpack": litert.OpResolverType.AUTO,
        "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    }[resolver]
    interp = litert.Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kind)
    interp.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interp.get_input_details():
        if d["dtype"] == np.float32:
            interp.set_tensor(d["index"], rng.uniform(-1, 1, d["shape"]).astype(np.float32))
        else:
            interp.set_tensor(d["index"], rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))
    times = invoke_times(interp, repeat)
    median = float(np.median(times)) * 1e6
    print(json.dumps({"median_us": median, "min_us": min(times) * 1e6, "peak_rss_kib": peak_rss_kib()}))


def ember_model(tool: Path, model: Path, threads: int, repeat: int) -> tuple[float, float, float]:
    """ember-benchmark --model with --threads (the lite interpreter's num_threads)."""
    argv = [str(tool), "--model", str(model), "--repeat", str(repeat), "--warmup", "5", "--json"]
    r = run_child([*argv, "--threads", str(threads)], threads)
    if r.get("threads") != threads:
        sys.exit(f"{tool} ran {model.name} with {r.get('threads')} threads, not {threads}")
    return float(r["invoke_median_us"]), float(r["invoke_min_us"]), r.get("peak_rss_kib", -1) / 1024


def litert_model(model: Path, threads: int, resolver: str, repeat: int) -> tuple[float, float, float]:
    argv = [sys.executable, __file__, "--litert-worker", str(model), str(threads), resolver, str(repeat)]
    r = run_child(argv, threads)
    return float(r["median_us"]), float(r["min_us"]), r["peak_rss_kib"] / 1024


def tf_graph_worker(folder: str, threads: int, repeat: int) -> None:
    """Child mode: times one GraphDef fixture in a TensorFlow Session and prints JSON."""
    import tensorflow as tf  # type: ignore[import-untyped,unused-ignore]

    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString((Path(folder) / "model.pb").read_bytes())
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        feed = {}
        for f in manifest["feeds"]:
            name = f["name"] if ":" in f["name"] else f["name"] + ":0"
            feed[graph.get_tensor_by_name(name)] = np.load(Path(folder) / f["file"])
        fetches = [graph.get_tensor_by_name(n if ":" in n else n + ":0") for n in manifest["fetches"]]
        for _ in range(5):
            sess.run(fetches, feed_dict=feed)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            sess.run(fetches, feed_dict=feed)
            times.append(time.perf_counter() - t0)
    median = float(np.median(times)) * 1e6
    print(json.dumps({"median_us": median, "min_us": min(times) * 1e6, "peak_rss_kib": peak_rss_kib()}))


def ember_graph(tool: Path, folder: Path, threads: int, repeat: int, optimize: bool = True) -> tuple[float, float]:
    manifest = json.loads((folder / "manifest.json").read_text())
    argv = [str(tool), "--model", str(folder / "model.pb"), "--repeat", str(repeat), "--warmup", "5"]
    for f in manifest["feeds"]:
        argv += ["--feed", f"{f['name']}={folder / f['file']}"]
    for name in manifest["fetches"]:
        argv += ["--fetch", name]
    argv += ["--threads", str(threads), "--json"] + ([] if optimize else ["--no-optimize"])
    r = run_child(argv, threads)
    return float(r["run_median_us"]), r.get("peak_rss_kib", -1) / 1024


def tf_graph(folder: Path, threads: int, repeat: int) -> tuple[float, float]:
    r = run_child([sys.executable, __file__, "--tf-graph-worker", str(folder), str(threads), str(repeat)], threads)
    return float(r["median_us"]), r["peak_rss_kib"] / 1024


def make_graph_models(cache: Path) -> dict[str, Path]:
    """GraphDef fixtures (model.pb, inputs, manifest.json): committed ones and ResNet50."""
    graphs = REPO / "engine" / "testdata" / "graphs"
    out = {
        "graphdef_mobilenet_v2_035_96": graphs / "model_mobilenet_v2",
        "graphdef_bert_keras_hub": graphs / "model_bert_keras_hub",
    }
    resnet = cache / "graphdef_resnet50_64"
    if not (resnet / "manifest.json").exists():
        sys.path.insert(0, str(REPO / "engine" / "testdata"))
        import gen_models  # type: ignore[import-not-found,unused-ignore]

        gen_models.write_model(resnet, gen_models.resnet50())
    out["graphdef_resnet50_64"] = resnet
    return out


def graph_rows(tool: Path, graphs: dict[str, Path], threads: list[int], repeat: int) -> list[Row]:
    rows: list[Row] = []
    for name, folder in graphs.items():
        reps = repeat if "resnet" not in name else max(repeat // 4, 10)
        for t in threads:
            # Alternate ember / TensorFlow twice; keep each side's best median.
            e_best, r_best, e_rss, r_rss = float("inf"), float("inf"), 0.0, 0.0
            for _ in range(2):
                e, e_rss = ember_graph(tool, folder, t, reps)
                r, r_rss = tf_graph(folder, t, reps)
                e_best, r_best = min(e_best, e), min(r_best, r)
            # The graph as written (no folding or fusion): what the optimizer buys.
            plain, _ = ember_graph(tool, folder, t, reps, optimize=False)
            row: Row = {
                "figure": f"{name} t{t}",
                "ember_us": e_best,
                "ref": "TensorFlow Session",
                "ref_us": r_best,
                "ratio": r_best / e_best,
                "ember_rss_mib": e_rss,
                "ref_rss_mib": r_rss,
                "ember_unoptimized_us": plain,
            }
            rows.append(row)
            print_row(row)
    return rows


def model_rows(tool: Path, models: dict[str, Path], threads: list[int], repeat: int, rounds: int = 3) -> list[Row]:
    """ember lite (num_threads t) vs LiteRT+XNNPACK (num_threads t) per model and thread count;
    beside each count above the first, each side's speed-up over its own first count."""
    rows: list[Row] = []
    for name, path in models.items():
        reps = repeat if name.startswith("mobilenet") else max(repeat // 2, 20)
        first: Row | None = None
        for t in threads:
            # Alternate ember / reference `rounds` times; keep each side's best median (a
            # shared machine slows both sides in bursts: each side's best is its quiet figure).
            e_best, x_best, b_best = float("inf"), float("inf"), float("inf")
            e_rss = x_rss = 0.0
            for _ in range(rounds):
                e, _, e_rss = ember_model(tool, path, t, reps)
                x, _, x_rss = litert_model(path, t, "xnnpack", reps)
                e_best, x_best = min(e_best, e), min(x_best, x)
            if name.startswith("mobilenet"):
                b_best, _, _ = litert_model(path, t, "builtin", reps)
            row: Row = {
                "figure": f"{name} t{t}",
                "ember_us": e_best,
                "ref": "LiteRT+XNNPACK",
                "ref_us": x_best,
                "ratio": x_best / e_best,
                "ember_rss_mib": e_rss,
                "ref_rss_mib": x_rss,
            }
            if b_best != float("inf"):
                row["litert_builtin_us"] = b_best
                row["ratio_vs_builtin"] = b_best / e_best
            if first is None:
                first = row
            else:
                row["ember_speedup"] = first["ember_us"] / e_best
                row["ref_speedup"] = first["ref_us"] / x_best
            rows.append(row)
            print_row(row)
    return rows


# ---- kernels ------------------------------------------------------------------------------


def numpy_matmul(n: int, min_time: float) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return best_time(lambda: a @ b, min_time)


def tf_conv(min_time: float, threads: int) -> float:
    import tensorflow as tf  # type: ignore[import-untyped,unused-ignore]

    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((1, 56, 56, 64), dtype=np.float32))
    f = tf.constant(rng.standard_normal((3, 3, 64, 64), dtype=np.float32))
    conv = tf.function(lambda: tf.nn.conv2d(x, f, strides=1, padding="SAME"))
    del threads  # TF's intra-op pool is fixed at first use: set in main before any op runs
    return best_time(lambda: conv().numpy(), min_time)


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return "OpenBLAS (threadpoolctl missing)"
    return ", ".join(
        f"{i['internal_api']} {i.get('version')} {i.get('architecture')} threads={i['num_threads']}"
        for i in threadpool_info()
    )


def keep_best(into: dict[Any, float], key: Any, seconds: float) -> None:
    """into[key] becomes the least of its seconds so far and `seconds`."""
    into[key] = min(into.get(key, float("inf")), seconds)


def ember_kernel_figures(
    tool: Path, min_time: float, env: dict[str, str] | None = None
) -> tuple[dict[str, float], str]:
    """One `ember-benchmark --json` run: seconds per kernel figure, and the GEMM kernel it used."""
    proc = subprocess.run(
        [str(tool), "--json", "--min-time", str(min_time)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        sys.exit(f"{tool} failed:\n{proc.stderr}")
    ember: dict[str, Any] = json.loads(proc.stdout)
    return {f["name"]: float(f["seconds"]) for f in ember["figures"]}, str(ember.get("gemm_kernel", "?"))


def numpy_worker(n: int, min_time: float) -> None:
    """Child mode: NumPy's n^3 MatMul under this process's OPENBLAS_* settings, as JSON."""
    print(json.dumps({"seconds": numpy_matmul(n, min_time), "blas": blas_info()}))


def kernel_rows(tool: Path, min_time: float, rounds: int = 3) -> list[Row]:
    """MatMul against NumPy, Conv2D against TensorFlow, and ember's two-thread scaling. ember's
    figures and the references alternate `rounds` times; each side keeps its best, so a minute
    in which this shared machine ran slow does not land on one side only. On an AVX-512 CPU the
    MatMul figures are measured a second time as on an AVX2 machine: ember with
    EMBER_CPU_ISA=avx2 and NumPy with OPENBLAS_CORETYPE=Haswell (its AVX2 kernels)."""
    figs: dict[str, float] = {}
    ref: dict[str, float] = {}
    kernel = "?"
    for _ in range(rounds):
        got, kernel = ember_kernel_figures(tool, min_time)
        for name, seconds in got.items():
            keep_best(figs, name, seconds)
        for n in (512, 1024):
            keep_best(ref, f"matmul_{n}", numpy_matmul(n, min_time))
        keep_best(ref, "conv", tf_conv(min_time, 1))
    rows: list[Row] = []
    for n in (512, 1024):
        mine = figs[f"matmul_{n}"]
        rows.append(
            {
                "figure": f"MatMul {n}^3 t1",
                "ember_us": mine * 1e6,
                "ref": f"NumPy ({blas_info()})",
                "ref_us": ref[f"matmul_{n}"] * 1e6,
                "ratio": ref[f"matmul_{n}"] / mine,
                "ember_kernel": kernel,
            }
        )
        print_row(rows[-1])
    rows += avx2_matmul_rows(tool, min_time, rounds)
    conv = figs["conv2d_1x56x56x64_3x3x64"]
    rows.append(
        {
            "figure": "Conv2D 1x56x56x64->64 3x3 t1",
            "ember_us": conv * 1e6,
            "ref": "TensorFlow CPU",
            "ref_us": ref["conv"] * 1e6,
            "ratio": ref["conv"] / conv,
            "ember_kernel": kernel,
        }
    )
    print_row(rows[-1])
    for name, fig in figs.items():
        if name.endswith("_t2") and name[:-3] in figs:
            one = figs[name[:-3]]
            rows.append(
                {
                    "figure": f"{name[:-3]} t2 vs t1 (scaling)",
                    "ember_us": fig * 1e6,
                    "ref": "ember one thread",
                    "ref_us": one * 1e6,
                    "ratio": one / fig,
                    "ember_kernel": kernel,
                }
            )
            print_row(rows[-1])
    for name, fig in figs.items():
        if name.startswith("session_run"):
            rows.append({"figure": name, "ember_us": fig * 1e6, "note": "best per-step mean"})
            print_row(rows[-1])
    rows += session_spread(tool, min_time)
    return rows


def avx2_matmul_rows(tool: Path, min_time: float, rounds: int) -> list[Row]:
    """The MatMul figures as on an AVX2 machine (see kernel_rows); none on a CPU without AVX-512,
    whose own figures are already that."""
    if "avx512f" not in cpu_features().split():
        print("MatMul as on an AVX2 machine: not measured separately (this CPU has no AVX-512)")
        return []
    figs: dict[int, float] = {}
    ref: dict[int, float] = {}
    blas, kernel = "?", "?"
    child_env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    child_env.pop("OPENBLAS_L2_SIZE", None)
    for _ in range(rounds):
        got, kernel = ember_kernel_figures(tool, min_time, {"EMBER_CPU_ISA": "avx2"})
        for n in (512, 1024):
            keep_best(figs, n, got[f"matmul_{n}"])
            r = run_child([sys.executable, __file__, "--numpy-worker", str(n), str(min_time)], env=child_env)
            keep_best(ref, n, float(r["seconds"]))
            blas = str(r["blas"])
    if kernel != "avx2-fma":
        sys.exit(f"{tool} with EMBER_CPU_ISA=avx2 ran the {kernel} GEMM, not avx2-fma")
    rows: list[Row] = []
    for n in (512, 1024):
        rows.append(
            {
                "figure": f"MatMul {n}^3 t1, AVX2",
                "ember_us": figs[n] * 1e6,
                "ref": f"NumPy, OPENBLAS_CORETYPE=Haswell ({blas})",
                "ref_us": ref[n] * 1e6,
                "ratio": ref[n] / figs[n],
                "ember_kernel": kernel,
            }
        )
        print_row(rows[-1])
    return rows


def session_spread(tool: Path, min_time: float) -> list[Row]:
    """Run overhead from run to run: the 10-node figures of several ember-benchmark runs."""
    runs: dict[str, list[float]] = {}
    for _ in range(5):
        proc = subprocess.run([str(tool), "--json", "--min-time", str(min_time / 5)], capture_output=True, text=True)
        for f in json.loads(proc.stdout)["figures"]:
            if f["name"].startswith("session_run"):
                runs.setdefault(f["name"], []).append(f["seconds"] * 1e6)
    rows: list[Row] = []
    for name, us in runs.items():
        note = f"median {np.median(us):.2f} us, min {min(us):.2f}, max {max(us):.2f} over {len(us)} runs"
        rows.append({"figure": f"{name} spread", "ember_us": float(np.median(us)), "note": note})
        print_row(rows[-1])
    return rows


def print_row(row: Row) -> None:
    if "ratio" in row:
        extra = ""
        if "ember_rss_mib" in row:
            extra = f"  rss {row['ember_rss_mib']:.0f}/{row['ref_rss_mib']:.0f} MiB"
        if "ratio_vs_builtin" in row:
            extra += f"  (builtin {row['litert_builtin_us']:.0f} us, {row['ratio_vs_builtin']:.2f}x)"
        if "ember_unoptimized_us" in row:
            extra += f"  (ember unoptimized {row['ember_unoptimized_us']:.0f} us)"
        if "ember_speedup" in row:
            extra += f"  (speed-up over the first thread count: ember {row['ember_speedup']:.2f}x, "
            extra += f"reference {row['ref_speedup']:.2f}x)"
        print(
            f"{row['figure']:36} ember {row['ember_us']:10.1f} us  {row['ref']:.16s} "
            f"{row['ref_us']:10.1f} us  {row['ratio']:6.2f}x{extra}",
            flush=True,
        )
    elif "ember_us" in row:
        print(f"{row['figure']:36} ember {row['ember_us']:10.2f} us  {row.get('note', '')}", flush=True)
    else:
        print(f"{row['figure']:36} {row.get('note', '')}", flush=True)


def find_tool(build: Path | None) -> Path:
    candidates = [build] if build else [REPO / "build", REPO / "engine" / "build"]
    for b in candidates:
        p = b / "tools" / "ember_benchmark" / "ember-benchmark"
        if p.is_file():
            return p
    sys.exit("ember-benchmark not found: pass --build DIR (the engine's CMake build dir)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--litert-worker":
        litert_worker(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--numpy-worker":
        numpy_worker(int(sys.argv[2]), float(sys.argv[3]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--tf-graph-worker":
        tf_graph_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=None, help="engine build dir")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="generated models")
    parser.add_argument("--threads", default="1,2", help="thread counts for model figures")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per kernel figure")
    parser.add_argument("--repeat", type=int, default=100, help="invokes per model timing")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="ember / reference alternations per model and kernel figure (each side's best)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--skip-models", action="store_true")
    parser.add_argument("--skip-kernels", action="store_true")
    parser.add_argument("--skip-graphs", action="store_true", help="no GraphDef vs TensorFlow figures")
    parser.add_argument("--only", default="", help="comma-separated substrings: model figures to keep")
    args = parser.parse_args()
    tool = find_tool(args.build)
    load = os.getloadavg()
    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus: {cpu_features()}")
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; ember-benchmark: {tool}")
    print("ratio = reference time / ember time (>= 1.0x: ember at least as fast)")
    rows: list[Row] = []
    if not args.skip_kernels:
        import tensorflow as tf  # type: ignore[import-untyped,unused-ignore]

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        rows += kernel_rows(tool, args.min_time, max(1, args.rounds))
    threads = [int(t) for t in args.threads.split(",")]
    keep = [k for k in args.only.split(",") if k]

    def wanted(name: str) -> bool:
        return not keep or any(k in name for k in keep)

    if not args.skip_graphs:
        graphs = {k: v for k, v in make_graph_models(args.cache).items() if wanted(k)}
        rows += graph_rows(tool, graphs, threads, args.repeat)
    if not args.skip_models:
        models = {k: v for k, v in make_models(args.cache).items() if wanted(k)}
        rows += model_rows(tool, models, threads, args.repeat, max(1, args.rounds))
    end_load = os.getloadavg()
    print(f"load average at the end: {end_load[0]:.2f} {end_load[1]:.2f} {end_load[2]:.2f}")
    if args.json:
        report = {"cpu": cpu_features(), "load": [load, end_load], "figures": rows}
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
