"""ember-benchmark --model also times GraphDefs (.pb), fed like ember-run (--feed NAME=FILE.npy).

Runs the committed real-model fixtures of engine/testdata/gen_models.py; checks the report's
fields (positive, finite, ordered), that unfed Placeholders with known shapes are synthesized,
that --profile times every node it runs, and that a missing --fetch or an unknown feed is one
clean `error: ...` line.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

GRAPHS = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "graphs"
NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"


def bench(install: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(install / "bin" / "ember-benchmark"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def feed_args(name: str) -> list[str]:
    manifest = json.loads((GRAPHS / name / "manifest.json").read_text())
    args: list[str] = []
    for feed in manifest["feeds"]:
        args += ["--feed", f"{feed['name']}={GRAPHS / name / feed['file']}"]
    for fetch in manifest["fetches"]:
        args += ["--fetch", fetch]
    return args


@pytest.mark.parametrize("name", ["model_bert_keras_hub", "model_mobilenet_v2"])
def test_graphdef_json_report(ember_install: Path, name: str) -> None:
    model = str(GRAPHS / name / "model.pb")
    proc = bench(ember_install, "--model", model, *feed_args(name), "--repeat", "3", "--warmup", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["model"] == model and report["format"] == "graphdef"
    assert report["nodes"] > 100 and report["synthesized_feeds"] == 0
    assert report["repeat"] == 3 and report["warmup"] == 1
    keys = ["load_us", "first_run_us", "run_median_us", "run_mean_us", "run_min_us", "run_max_us"]
    assert all(math.isfinite(report[k]) and report[k] > 0 for k in keys), report
    assert report["run_min_us"] <= report["run_median_us"] <= report["run_max_us"]


def test_graphdef_no_optimize_and_peak_rss(ember_install: Path) -> None:
    """--no-optimize runs the graph as written (SessionOptions::optimize_graph off); both runs
    report which they were and their peak RSS (engine_speed.py prints it beside TensorFlow's)."""
    name = "model_mobilenet_v2"
    model = str(GRAPHS / name / "model.pb")
    reports = []
    for extra in ([], ["--no-optimize"]):
        argv = ["--model", model, *feed_args(name), "--repeat", "2", "--warmup", "0", "--json", *extra]
        proc = bench(ember_install, *argv)
        assert proc.returncode == 0, proc.stderr
        reports.append(json.loads(proc.stdout))
    assert reports[0]["optimize"] is True and reports[1]["optimize"] is False
    # The weights alone are ~1.8 MB: a peak below that would be a misread.
    assert all(r["peak_rss_kib"] > 2048 for r in reports), reports


def test_unfed_placeholders_are_synthesized(ember_install: Path) -> None:
    proc = bench(
        ember_install,
        "--model",
        str(GRAPHS / "model_mobilenet_v1" / "model.pb"),
        "--fetch",
        "Identity",
        "--repeat",
        "2",
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 feeds (1 synthesized)" in proc.stdout.splitlines()[0]
    assert proc.stdout.splitlines()[2].startswith("run_median_us ")


def test_graphdef_errors_are_one_line(ember_install: Path) -> None:
    model = str(GRAPHS / "model_bert_tf1" / "model.pb")
    no_fetch = bench(ember_install, "--model", model)
    assert no_fetch.returncode != 0 and no_fetch.stderr.startswith("error: ")
    assert "--fetch" in no_fetch.stderr and len(no_fetch.stderr.strip().splitlines()) == 1
    bad_feed = bench(ember_install, "--model", model, "--feed", "nope.npy", "--fetch", "pooled_output")
    assert bad_feed.returncode != 0 and "NAME=FILE.npy" in bad_feed.stderr
    tflite_with_feed = bench(ember_install, "--model", "x.tflite", "--fetch", "y")
    assert tflite_with_feed.returncode != 0 and "GraphDef" in tflite_with_feed.stderr


@pytest.mark.parametrize("threads", ["1", "2"])
def test_graphdef_profile_times_every_node_it_runs(ember_install: Path, threads: str) -> None:
    """--profile on a GraphDef: --repeat more runs traced (RunOptions::trace_level); every node
    they ran listed once as "name (Op)", and each op's nodes summed, both costliest first, with
    shares of the same total per run; the text form prints both tables."""
    name = "model_mobilenet_v2"
    argv = ["--model", str(GRAPHS / name / "model.pb"), *feed_args(name), "--repeat", "3", "--warmup", "1"]
    proc = bench(ember_install, *argv, "--threads", threads, "--profile", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    nodes, ops = report["profile"], report["profile_ops"]
    assert report["profile_runs"] == 3
    assert len(nodes) > 20, nodes  # the optimized graph's convolutions, at least
    assert len({n["name"] for n in nodes}) == len(nodes)  # each node once
    assert all(n["label"] == f"{n['name']} ({n['op']})" for n in nodes), nodes
    assert {o["op"] for o in ops} == {n["op"] for n in nodes}
    assert sum(o["nodes"] for o in ops) == len(nodes)
    for table in (nodes, ops):
        means = [row["mean_us"] for row in table]
        assert means == sorted(means, reverse=True) and all(m >= 0 for m in means) and means[0] > 0
        assert sum(row["share"] for row in table) == pytest.approx(1.0, abs=1e-3)
    total = sum(n["mean_us"] for n in nodes)
    assert sum(o["mean_us"] for o in ops) == pytest.approx(total, rel=1e-3, abs=0.01 * len(ops))
    # The traced nodes ran inside the traced runs: their sum per run is no more than the slowest
    # traced run's time times the threads that run nodes (the pool's and the caller's).
    busy = int(threads) + (1 if int(threads) > 1 else 0)
    assert 0 < total <= busy * report["profile_run_max_us"], (total, report["profile_run_max_us"])

    proc = bench(ember_install, *argv, "--threads", threads, "--profile")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    ops_header = "per op, its nodes' time per run, traced over 3 more runs (costliest first):"
    nodes_header = "per node, mean of those runs (costliest first):"
    assert lines[3] == ops_header and nodes_header in lines, proc.stdout
    split = lines.index(nodes_header)
    op_rows = [re.fullmatch(rf" *{NUMBER} us +{NUMBER}%  (\S+) \(([0-9]+) nodes\)", x) for x in lines[4:split]]
    node_rows = [re.fullmatch(rf" *{NUMBER} us +{NUMBER}%  (\S+) \((\w+)\)", x) for x in lines[split + 1 :]]
    assert all(op_rows) and all(node_rows), proc.stdout
    assert len(node_rows) > 20 and {r.group(3) for r in op_rows if r} == {r.group(4) for r in node_rows if r}
    for rows in (op_rows, node_rows):
        means = [float(r.group(1)) for r in rows if r]
        assert means == sorted(means, reverse=True)
        assert sum(float(r.group(2)) for r in rows if r) == pytest.approx(100.0, abs=0.1 * len(rows))
