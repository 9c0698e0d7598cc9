"""ember-benchmark --model times committed .tflite models and rejects corrupt ones cleanly.

The timings themselves are not compared with anything (they depend on the host); the test
checks the report's format, that every figure is a positive finite number, that the JSON form
carries the same fields, and that bad input gives one `error: ...` line and a non-zero exit.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

LITE = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "lite"
MODELS = ["fully_connected_int8.tflite", "conv2d_same.tflite", "small_cnn_int8.tflite"]
NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"


def bench(install: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(install / "bin" / "ember-benchmark"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def assert_one_error_line(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode in (1, 2), (proc.returncode, proc.stdout)  # an exit status, not a signal
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one line: no abort message or backtrace after it
    assert lines[0].startswith("error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], proc.stderr


@pytest.mark.parametrize("name", MODELS)
def test_text_report(ember_install: Path, name: str) -> None:
    proc = bench(ember_install, "--model", str(LITE / name), "--repeat", "7", "--warmup", "2", "--threads", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3, proc.stdout
    header = re.fullmatch(r"model (.+): ([0-9]+) operators, ([0-9]+) inputs, ([0-9]+) outputs \(one thread\)", lines[0])
    assert header, lines[0]
    assert header.group(1) == str(LITE / name)
    assert int(header.group(2)) >= 1 and int(header.group(3)) >= 1 and int(header.group(4)) >= 1
    load = re.fullmatch(rf"load_us {NUMBER} prepare_us {NUMBER}", lines[1])
    assert load, lines[1]
    invoke = re.fullmatch(
        rf"invoke_median_us {NUMBER} invoke_mean_us {NUMBER} invoke_min_us {NUMBER} invoke_max_us {NUMBER} "
        r"\(warmup 2, repeat 7\)",
        lines[2],
    )
    assert invoke, lines[2]
    figures = [float(v) for v in load.groups() + invoke.groups()]
    assert all(math.isfinite(v) and v > 0 for v in figures), figures
    median, mean, low, high = figures[2:]
    assert low <= median <= high and low <= mean <= high


def test_json_report(ember_install: Path) -> None:
    model = LITE / "fully_connected_int8.tflite"
    proc = bench(ember_install, "--model", str(model), "--repeat", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["model"] == str(model)
    assert report["threads"] == 1 and report["repeat"] == 5 and report["warmup"] == 3
    assert report["operators"] >= 1
    for key in ("load_us", "prepare_us", "invoke_median_us", "invoke_mean_us", "invoke_min_us", "invoke_max_us"):
        assert isinstance(report[key], float) and math.isfinite(report[key]) and report[key] > 0, key
    assert report["invoke_min_us"] <= report["invoke_median_us"] <= report["invoke_max_us"]


def test_threads(ember_install: Path) -> None:
    """--threads N is the interpreter's num_threads: reported in the JSON and the text."""
    model = str(LITE / "small_cnn_int8.tflite")
    proc = bench(ember_install, "--model", model, "--repeat", "3", "--threads", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["threads"] == 2
    proc = bench(ember_install, "--model", model, "--repeat", "3", "--threads", "4")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("outputs (4 threads)"), proc.stdout


def test_profile_lists_every_operator_costliest_first(ember_install: Path) -> None:
    """--profile: one line per operator of the model (its index, type and output), mean times
    in descending order, shares that sum to 100%; the JSON form carries the same entries."""
    model = str(LITE / "small_cnn_int8.tflite")
    proc = bench(ember_install, "--model", model, "--repeat", "5", "--profile")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    operators = int(re.search(r": ([0-9]+) operators", lines[0]).group(1))  # type: ignore[union-attr]
    assert lines[3] == "per operator, mean of 5 more invokes (costliest first):", proc.stdout
    rows = [
        re.fullmatch(rf" *{NUMBER} us +{NUMBER}%  operator ([0-9]+) \(([A-Z_0-9]+)\) -> \[.*\] \w+", x)
        for x in lines[4:]
    ]
    assert len(rows) == operators and all(rows), lines[4:]
    means = [float(r.group(1)) for r in rows if r]
    shares = [float(r.group(2)) for r in rows if r]
    assert means == sorted(means, reverse=True) and all(m > 0 for m in means)
    assert sum(shares) == pytest.approx(100.0, abs=0.1 * len(shares))
    assert sorted(int(r.group(3)) for r in rows if r) == list(range(operators))  # each operator once
    proc = bench(ember_install, "--model", model, "--repeat", "5", "--profile", "--json")
    assert proc.returncode == 0, proc.stderr
    profile = json.loads(proc.stdout)["profile"]
    assert len(profile) == operators and all(p["calls"] == 5 and p["mean_us"] > 0 for p in profile)
    assert sum(p["share"] for p in profile) == pytest.approx(1.0, abs=1e-3)
    # A SavedModel is profiled as its graph (test_benchmark_graph.py); no model has nothing to time.
    saved = Path(__file__).resolve().parents[2] / "engine" / "testdata" / "savedmodels" / "keras_small"
    assert_one_error_line(bench(ember_install, "--model", str(saved), "--profile"), "--profile", "as a GraphDef")
    assert_one_error_line(bench(ember_install, "--profile"), "--profile", "--model")


@pytest.mark.parametrize("cut", ["truncated", "garbage", "empty"])
def test_corrupt_model_is_one_clear_error(ember_install: Path, tmp_path: Path, cut: str) -> None:
    data = (LITE / "small_cnn_int8.tflite").read_bytes()
    bad = tmp_path / f"{cut}.tflite"
    if cut == "truncated":
        bad.write_bytes(data[: len(data) // 3])
    elif cut == "garbage":
        bad.write_bytes(bytes((i * 37 + 11) % 256 for i in range(4096)))
    else:
        bad.write_bytes(b"")
    proc = bench(ember_install, "--model", str(bad))
    assert_one_error_line(proc, str(bad))
    assert proc.stdout == ""


def test_missing_file_and_bad_options(ember_install: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.tflite"
    assert_one_error_line(bench(ember_install, "--model", str(missing)), str(missing))
    model = str(LITE / "add.tflite")
    assert_one_error_line(bench(ember_install, "--model", model, "--threads", "300"), "num_threads is 300")
    assert_one_error_line(bench(ember_install, "--model", model, "--repeat", "0"), "--repeat")
    assert_one_error_line(bench(ember_install, "--model", model, "--repeat", "ten"), "--repeat", "'ten'")
