"""invoke compare's findings on planted pairs of builds (forge/compare.py); no compiler, no daemon."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

from packaging.version import Version

from forge import compare, manifest
from forge.commands import compare as compare_cmd
from forge.compare import Severity


def plant(dist: Path, name: str, suites: dict[str, str], files: dict[str, int] | None = None) -> Path:
    cell = dist / name
    (cell / "install" / "include" / "ember").mkdir(parents=True)
    (cell / "install" / "include" / "ember" / "session.h").write_text("// api\n")
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "cell": {"id": name},
        "result": "passed",
        "verify": {"suites": [{"name": n, "status": s, "seconds": 0.5} for n, s in suites.items()]},
        "files": {p: {"sha256": "0", "size": size} for p, size in (files or {}).items()},
    }
    manifest.write_json(cell / manifest.MANIFEST, data)
    return cell


def _messages(result: compare.Comparison, severity: Severity) -> list[str]:
    return [f"{f.section}: {f.message}" for f in result.findings if f.severity is severity]


def test_a_suite_that_starts_failing_is_a_regression(tmp_path: Path) -> None:
    base = plant(tmp_path, "base", {"session": "passed", "lite": "passed", "gone": "passed"})
    cand = plant(tmp_path, "cand", {"session": "failed", "lite": "passed", "new": "passed"})
    result = compare.Comparison(compare.load_side(base), compare.load_side(cand))
    compare.compare_verify(result)
    assert _messages(result, Severity.REGRESSION) == [
        "verify: gone no longer runs",
        "verify: session failed (passed in the baseline)",
    ]
    assert _messages(result, Severity.CHANGE) == ["verify: new is new (passed)"]


def test_headers_and_sizes(tmp_path: Path) -> None:
    base = plant(tmp_path, "base", {}, {"lib/libember_cc.so.0": 100_000, "bin/ember-run": 50_000})
    cand = plant(tmp_path, "cand", {}, {"lib/libember_cc.so.0": 150_000, "bin/ember-run": 50_100})
    (cand / "install/include/ember/session.h").write_text("// api, changed\n")
    (cand / "install/include/ember/extra.h").write_text("\n")
    result = compare.Comparison(compare.load_side(base), compare.load_side(cand))
    compare.compare_headers(result)
    compare.compare_sizes(result)
    assert _messages(result, Severity.CHANGE) == [
        "headers: ember/extra.h added",
        "headers: ember/session.h differs",
        "size: installed size 150000 -> 200100 bytes (+33.4%)",
        "size: lib/libember_cc.so.0: 100000 -> 150000 bytes",
    ]
    (cand / "install/include/ember/session.h").unlink()
    again = compare.Comparison(compare.load_side(base), compare.load_side(cand))
    compare.compare_headers(again)
    assert _messages(again, Severity.REGRESSION) == ["headers: ember/session.h removed"]


def test_required_symbol_versions_take_the_highest_per_namespace() -> None:
    found = compare._max_versions(
        ["GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "GLIBC_2.34", "GLIBC_2.4", "CXXABI_1.3.13", "Qt_5", "libfoo"]
    )
    assert {k: str(v) for k, v in found.items()} == {"GLIBCXX": "3.4.30", "GLIBC": "2.34", "CXXABI": "1.3.13"}


def test_abidiff_exit_bits() -> None:
    result = compare.Comparison(compare.Side("a", Path("a"), {}), compare.Side("b", Path("b"), {}))
    compare.report_abidiff(result, "libember_cc", 0, "")
    compare.report_abidiff(result, "libember_cc", 4, "Functions changes summary: 0 Removed, 1 Added")
    compare.report_abidiff(result, "libember_lite", 12, "type size changed from 64 to 96 (in bits)")
    compare.report_abidiff(result, "libember_framework", 1, "error: cannot read")
    assert [(f.severity, f.message.split(":")[0]) for f in result.findings] == [
        (Severity.CHANGE, "libember_cc"),
        (Severity.REGRESSION, "libember_lite"),
        (Severity.NOT_RUN, "libember_framework"),
    ]


def test_slowdown_beyond_spread_and_threshold() -> None:
    assert compare.slower([1.0, 1.01, 0.99], [2.0, 2.02, 1.98], 0.10)[0]  # 2x slower: a regression
    assert not compare.slower([1.0, 1.01, 0.99], [1.05, 1.04, 1.06], 0.10)[0]  # within the threshold
    noisy, ratio, allowed = compare.slower([1.0, 1.6, 0.7], [1.3, 1.2, 1.4], 0.10)
    assert not noisy and ratio > 1.1 and allowed > ratio  # slower, but within the measured spread


def test_benchmarks_run_interleaved_and_a_2x_slowdown_fails(tmp_path: Path) -> None:
    order = tmp_path / "order.txt"
    sides = []
    for name, seconds in (("base", 0.001), ("cand", 0.002)):
        cell = plant(tmp_path, name, {})
        bin_dir = cell / "install" / "bin"
        bin_dir.mkdir()
        shutil.copy(shutil.which("true") or "/bin/true", bin_dir / "ember-run")  # an ELF program of this host
        script = bin_dir / "ember-benchmark"
        figures = json.dumps({"figures": [{"name": "MatMul 512", "seconds": seconds, "gflops": 1}]})
        script.write_text(f"#!/bin/sh\necho {name} >> {order}\necho '{figures}'\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
        sides.append(compare.load_side(cell))
    result = compare.Comparison(*sides)
    compare.compare_performance(result, rounds=3, threshold=0.10)
    assert order.read_text().split() == ["base", "cand"] * 3
    assert _messages(result, Severity.REGRESSION) == [
        "performance: MatMul 512: 2.00x the baseline's time (allowed 1.10x)"
    ]
    md = compare.render_markdown(result)
    assert md.startswith("# base -> cand\n\n1 regressions.") and "| MatMul 512 | 0.001 | 0.002 | 2.00 | 1.10 |" in md


def test_a_side_that_is_not_a_build_says_how_to_get_one(tmp_path: Path) -> None:
    import pytest

    from forge.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        compare.load_side(tmp_path / "linux-x86_64-py3.11-np2.4-gcc14-cpu")
    assert info.value.fix == "build it first: invoke build --cell linux-x86_64-py3.11-np2.4-gcc14-cpu"


def test_upgrade_pairs_the_baseline_with_the_candidate() -> None:
    import pytest

    from forge import cli
    from forge.build import resolve_for
    from forge.errors import ConfigError

    base, cand = compare_cmd.upgrade_requests("linux-x86_64", {"gcc": "12"}, {"gcc": "14"})
    assert (base.pin("gcc"), cand.pin("gcc")) == ("12", "14")
    cfg, data = cli.setup({"backend": "docker"}, {})
    ids = [resolve_for(r, data, cfg).cell.id for r in (base, cand)]
    assert ids == ["linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.13-np2.4-gcc14-cpu"]
    with pytest.raises(ConfigError, match="needs what to upgrade to"):
        compare_cmd.upgrade_requests("linux-x86_64", {"gcc": "12"}, {"gcc": None})


def test_a_build_needing_a_newer_glibc_than_the_host_is_not_run(tmp_path: Path) -> None:
    # A real program of this host as the side's ember-run: it needs some GLIBC_2.x.
    side_dir = tmp_path / "cell"
    (side_dir / "install" / "bin").mkdir(parents=True)
    shutil.copyfile("/bin/ls", side_dir / "install" / "bin" / "ember-run")
    side = compare.Side("trixie-cell", side_dir, {})
    needed = compare.requirements(side_dir / "install" / "bin" / "ember-run")["GLIBC"]
    why = compare.glibc_too_old(side, Version("2.0"))
    assert why == f"trixie-cell requires GLIBC_{needed}; this host has glibc 2.0"
    assert compare.glibc_too_old(side, Version("99.0")) is None
    assert compare.glibc_too_old(side, None) is None
