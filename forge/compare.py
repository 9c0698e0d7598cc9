"""Compare two builds of ember (a baseline and a candidate toolchain): what a toolchain upgrade changed.

Each side is a published dist/<cell-id>/ directory. The comparison reads both install trees and
manifests and, where the host can run the binaries, runs both builds on the same inputs:

- ABI of every shared library (libabigail's abidiff, with the headers; not run when abidiff is absent),
- exported symbols, SONAMEs, NEEDED libraries and the symbol versions each library requires
  (a raised GLIBCXX_/GLIBC_ minimum is a regression: users with the older runtime cannot load it),
- public headers, verify suites (and their times), artifact sizes,
- numeric drift on the engine's agreement fixtures (max abs/rel difference per output),
- performance: ember-benchmark --json of both, interleaved, with the spread of each side.

Findings are regressions (the exit code says so), changes, or checks that could not run (with why).
"""

from __future__ import annotations

import enum
import html
import json
import platform
import re
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from forge import debuginfo, manifest
from forge.checks import elf, symbols, tree
from forge.errors import ConfigError
from forge.proc import run_command

HOST_MACHINE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


class Severity(enum.Enum):
    REGRESSION = "regression"
    CHANGE = "change"
    NOT_RUN = "not run"
    SAME = "same"


@dataclass(frozen=True)
class Finding:
    section: str
    severity: Severity
    message: str


@dataclass(frozen=True)
class Side:
    name: str
    path: Path
    data: manifest.Manifest

    @property
    def install(self) -> Path:
        return self.path / "install"


@dataclass
class Comparison:
    base: Side
    candidate: Side
    findings: list[Finding] = field(default_factory=list)
    drift: list[dict[str, Any]] = field(default_factory=list)
    performance: list[dict[str, Any]] = field(default_factory=list)

    @property
    def regressions(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.REGRESSION]

    def add(self, section: str, severity: Severity, message: str) -> None:
        self.findings.append(Finding(section, severity, message))


def load_side(path: Path) -> Side:
    """A dist/<cell-id>/ directory with its manifest and install tree, or a ConfigError saying how to get one."""
    data = manifest.read_manifest(path) if path.is_dir() else None
    if data is None or not (path / "install").is_dir():
        raise ConfigError(
            f"{path} is not a built cell (no manifest.json and install/ there)",
            "invoke compare reads two published builds",
            f"build it first: invoke build --cell {path.name}",
        )
    return Side(path.name, path, data)


# ---- libraries: exports, SONAME, NEEDED, required symbol versions ------------------------------


def _max_versions(names: Iterable[str]) -> dict[str, Version]:
    """GLIBCXX_3.4.30, GLIBC_2.34, ... -> the highest version per namespace."""
    best: dict[str, Version] = {}
    for name in names:
        match = re.fullmatch(r"([A-Z_]+?)_(\d+(?:\.\d+)*)", name)
        if not match:
            continue
        try:
            version = Version(match.group(2))
        except InvalidVersion:
            continue
        if match.group(1) not in best or version > best[match.group(1)]:
            best[match.group(1)] = version
    return best


def requirements(path: Path) -> dict[str, Version]:
    """The highest symbol version this ELF file requires per namespace (GLIBC, GLIBCXX, CXXABI, GCC)."""
    return _max_versions(v for names in elf.version_needs(path).values() for v in names)


def compare_libraries(result: Comparison) -> None:
    base, cand = tree.shared_libraries(result.base.install), tree.shared_libraries(result.candidate.install)
    for name in sorted(base.keys() - cand.keys()):
        result.add("symbols", Severity.REGRESSION, f"lib{name} is gone")
    for name in sorted(cand.keys() - base.keys()):
        result.add("symbols", Severity.CHANGE, f"lib{name} is new")
    for name in sorted(base.keys() & cand.keys()):
        try:
            _compare_library(result, name, base[name], cand[name])
        except (elf.ElfError, ValueError, OSError) as exc:
            result.add("symbols", Severity.REGRESSION, f"lib{name}: cannot be read ({exc})")


def _compare_library(result: Comparison, name: str, base: Path, cand: Path) -> None:
    diff = symbols.compare(symbols.public_symbols(tree.exports(base)), symbols.public_symbols(tree.exports(cand)))
    if diff.missing:
        result.add(
            "symbols",
            Severity.REGRESSION,
            f"lib{name}: {len(diff.missing)} exports removed: " + ", ".join(sorted(diff.missing)[:8]),
        )
    if diff.extra:
        result.add(
            "symbols",
            Severity.CHANGE,
            f"lib{name}: {len(diff.extra)} exports added: " + ", ".join(sorted(diff.extra)[:8]),
        )
    if not elf.is_elf(base) or not elf.is_elf(cand):
        return
    a, b = elf.read_elf(base), elf.read_elf(cand)
    if a.soname != b.soname:
        result.add("symbols", Severity.REGRESSION, f"lib{name}: SONAME {a.soname} -> {b.soname}")
    if set(a.needed) != set(b.needed):
        gone, new = sorted(set(a.needed) - set(b.needed)), sorted(set(b.needed) - set(a.needed))
        result.add(
            "requirements",
            Severity.CHANGE,
            f"lib{name}: NEEDED {'-' + ', -'.join(gone) if gone else ''} {'+' + ', +'.join(new) if new else ''}".rstrip(),
        )
    before, after = requirements(base), requirements(cand)
    for space in sorted(after):
        old = before.get(space)
        if old is None or after[space] > old:
            result.add(
                "requirements",
                Severity.REGRESSION,
                f"lib{name} now requires {space}_{after[space]} (was {f'{space}_{old}' if old else 'none'}): "
                "systems with an older runtime cannot load it",
            )


def compare_abi(result: Comparison, abidiff: str | None, run: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    """abidiff per shared library, with both sides' public headers and their published .debug files
    (found by build-id, so abidiff sees the real types; without them it sees only ELF symbols)."""
    if abidiff is None:
        result.add("abi", Severity.NOT_RUN, "abidiff is not installed (Debian abigail-tools; `invoke doctor --fix`)")
        return
    base, cand = tree.shared_libraries(result.base.install), tree.shared_libraries(result.candidate.install)
    with tempfile.TemporaryDirectory(prefix="forge-abidiff-") as tmp:
        debug_args: list[str] = []
        for i, side in ((1, result.base), (2, result.candidate)):
            found = debuginfo.build_id_tree(side.path, side.data.extra.get("debug"), Path(tmp) / f"d{i}")
            if found:
                debug_args += [f"--debug-info-dir{i}", str(Path(tmp) / f"d{i}")]
            else:
                result.add(
                    "abi",
                    Severity.NOT_RUN,
                    f"{side.name} publishes no .debug files: abidiff compares ELF symbols only, not types "
                    "(rebuild it with FORGE_DEBUG_INFO=1, the default)",
                )
        for name in sorted(base.keys() & cand.keys()):
            argv = [abidiff, "--no-show-locs", *debug_args]
            for i, side in ((1, result.base), (2, result.candidate)):
                argv += [f"--headers-dir{i}", str(side.install / "include")]
            proc = run(
                [*argv, str(base[name]), str(cand[name])], capture_output=True, text=True, timeout=600, check=False
            )
            report_abidiff(result, f"lib{name}", proc.returncode, proc.stdout + proc.stderr)


def report_abidiff(result: Comparison, library: str, code: int, text: str) -> None:
    """abidiff's exit status is a bit field: 1 error, 2 usage, 4 ABI change, 8 incompatible change."""
    summary = " ".join(line.strip() for line in text.splitlines() if line.strip())[:600]
    if code & 3:
        result.add("abi", Severity.NOT_RUN, f"{library}: abidiff failed (exit {code}): {summary}")
    elif code & 8:
        result.add("abi", Severity.REGRESSION, f"{library}: incompatible ABI change: {summary}")
    elif code & 4:
        result.add("abi", Severity.CHANGE, f"{library}: compatible ABI change: {summary}")


# ---- headers, verify, sizes --------------------------------------------------------------------


def compare_headers(result: Comparison) -> None:
    base, cand = tree.header_digests(result.base.install), tree.header_digests(result.candidate.install)
    for path in sorted(base.keys() - cand.keys()):
        result.add("headers", Severity.REGRESSION, f"{path} removed")
    for path in sorted(cand.keys() - base.keys()):
        result.add("headers", Severity.CHANGE, f"{path} added")
    for path in sorted(base.keys() & cand.keys()):
        if base[path] != cand[path]:
            result.add("headers", Severity.CHANGE, f"{path} differs")


def _suites(side: Side) -> dict[str, tuple[str, float]]:
    suites = (side.data.verify or {}).get("suites") or []
    return {
        str(s["name"]): (str(s.get("status")), float(s.get("seconds") or 0.0))
        for s in suites
        if isinstance(s, Mapping) and "name" in s
    }


def compare_verify(result: Comparison) -> None:
    base, cand = _suites(result.base), _suites(result.candidate)
    for name in sorted(base.keys() - cand.keys()):
        result.add("verify", Severity.REGRESSION, f"{name} no longer runs")
    for name in sorted(base.keys() & cand.keys()):
        (was, _), (now, _) = base[name], cand[name]
        if was == "passed" and now != "passed":
            result.add("verify", Severity.REGRESSION, f"{name} {now} (passed in the baseline)")
        elif was != now:
            result.add("verify", Severity.CHANGE, f"{name}: {was} -> {now}")
    for name in sorted(cand.keys() - base.keys()):
        result.add("verify", Severity.CHANGE, f"{name} is new ({cand[name][0]})")


def compare_sizes(result: Comparison, growth: float = 0.10) -> None:
    base = {p: r.get("size", 0) for p, r in (result.base.data.files or {}).items()}
    cand = {p: r.get("size", 0) for p, r in (result.candidate.data.files or {}).items()}
    total_a, total_b = sum(base.values()), sum(cand.values())
    if total_a and abs(total_b - total_a) > growth * total_a:
        result.add(
            "size",
            Severity.CHANGE,
            f"installed size {total_a} -> {total_b} bytes ({(total_b / total_a - 1) * 100:+.1f}%)",
        )
    for path in sorted(base.keys() & cand.keys()):
        if base[path] and abs(cand[path] - base[path]) > growth * base[path] and base[path] > 4096:
            result.add("size", Severity.CHANGE, f"{path}: {base[path]} -> {cand[path]} bytes")


# ---- running both builds: numeric drift and performance ---------------------------------------


def runnable_here(side: Side) -> str | None:
    """None when the host can run this build's programs, else why not."""
    tool = side.install / "bin" / "ember-run"
    if not tool.is_file():
        return f"{side.name} has no bin/ember-run"
    try:
        machine = elf.read_elf(tool).machine
    except (elf.ElfError, OSError, ValueError):
        return f"{side.name}'s ember-run is not an ELF program for this host"
    host = HOST_MACHINE.get(platform.machine(), platform.machine())
    if machine != host:
        return f"{side.name} is built for {machine}; this host is {host}"
    return glibc_too_old(side, host_glibc())


def host_glibc() -> Version | None:
    """The C library version of this host (None when it is not glibc)."""
    name, version = platform.libc_ver()
    try:
        return Version(version) if name == "glibc" and version else None
    except InvalidVersion:
        return None


def glibc_too_old(side: Side, host: Version | None) -> str | None:
    """Why this host's glibc cannot load the side's programs and libraries (a build for a newer
    Debian needs a newer GLIBC_ than the host has: its failures would say nothing about the build)."""
    if host is None:
        return None
    files = [side.install / "bin" / "ember-run", *tree.shared_libraries(side.install).values()]
    try:
        found = [requirements(f).get("GLIBC") for f in files if f.is_file()]
    except (elf.ElfError, OSError, ValueError):
        return None  # a damaged file is the symbols check's finding
    needed = max(found, key=lambda v: v or Version("0"), default=None)
    if needed is not None and needed > host:
        return f"{side.name} requires GLIBC_{needed}; this host has glibc {host}"
    return None


def drift(base: Any, cand: Any) -> tuple[float, float]:
    """Max absolute and max relative difference of two arrays (relative to the baseline's magnitude)."""
    import numpy as np

    a, b = np.asarray(base, dtype=np.float64), np.asarray(cand, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf"), float("inf")
    if a.size == 0:
        return 0.0, 0.0
    diff = np.abs(a - b)
    rel = diff / np.maximum(np.abs(a), 1e-30)
    return float(diff.max()), float(np.where(diff == 0, 0.0, rel).max())


def compare_numerics(result: Comparison, fixtures: Path, rtol: float = 1e-4) -> None:
    import numpy as np

    why = runnable_here(result.base) or runnable_here(result.candidate)
    if why is not None:
        result.add("numerics", Severity.NOT_RUN, why)
        return
    cases = sorted(p for p in fixtures.glob("*/manifest.json") if "expected_error" not in json.loads(p.read_text()))
    with tempfile.TemporaryDirectory(prefix="forge-compare-") as tmp:
        for case in cases:
            spec = json.loads(case.read_text())
            model = next(
                (case.parent / f"model.{ext}" for ext in ("pb", "json") if (case.parent / f"model.{ext}").is_file()),
                None,
            )
            if model is None:
                continue
            outputs = []
            for side in (result.base, result.candidate):
                out = Path(tmp) / side.name / case.parent.name
                out.mkdir(parents=True)
                argv = [str(side.install / "bin" / "ember-run"), str(model)]
                argv += [a for f in spec["feeds"] for a in ("--feed", f"{f['name']}={case.parent / f['file']}")]
                argv += [a for f in spec["fetches"] for a in ("--fetch", f)] + ["--out", str(out)]
                proc = run_command(argv, capture_output=True, text=True, timeout=300, check=False)
                outputs.append((proc, out))
            (pa, oa), (pb, ob) = outputs
            if pa.returncode != 0 or pb.returncode != 0:
                sev = Severity.REGRESSION if pa.returncode == 0 else Severity.CHANGE
                result.add(
                    "numerics", sev, f"{case.parent.name}: ember-run exit {pa.returncode} (baseline) vs {pb.returncode}"
                )
                continue
            for i, fetch in enumerate(spec["fetches"]):
                a, b = np.load(oa / f"{i}.npy"), np.load(ob / f"{i}.npy")
                abs_err, rel_err = drift(a, b)
                exact = not np.issubdtype(a.dtype, np.floating)
                result.drift.append(
                    {"model": case.parent.name, "output": fetch, "max_abs": abs_err, "max_rel": rel_err}
                )
                if (exact and abs_err != 0) or (not exact and rel_err > rtol and abs_err > 1e-6):
                    result.add(
                        "numerics",
                        Severity.REGRESSION,
                        f"{case.parent.name}/{fetch}: max abs {abs_err:.3g}, max rel {rel_err:.3g}",
                    )


def slower(base: Sequence[float], cand: Sequence[float], threshold: float) -> tuple[bool, float, float]:
    """(regressed, ratio cand/base of the medians, allowed ratio): slower beyond both sides' spread and the threshold."""
    mb, mc = statistics.median(base), statistics.median(cand)
    spread = (max(base) - min(base)) / mb + (max(cand) - min(cand)) / mc if mb and mc else 0.0
    allowed = 1.0 + max(threshold, spread)
    ratio = mc / mb if mb else 1.0
    return ratio > allowed, ratio, allowed


def compare_performance(result: Comparison, rounds: int, threshold: float, min_time: float = 0.2) -> None:
    why = runnable_here(result.base) or runnable_here(result.candidate)
    if why is not None:
        result.add("performance", Severity.NOT_RUN, why)
        return
    times: dict[str, dict[str, list[float]]] = {result.base.name: {}, result.candidate.name: {}}
    for _ in range(rounds):  # interleaved, so a change in machine load hits both sides alike
        for side in (result.base, result.candidate):
            tool = side.install / "bin" / "ember-benchmark"
            proc = run_command(
                [str(tool), "--json", "--min-time", str(min_time)],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if proc.returncode != 0:
                result.add(
                    "performance",
                    Severity.NOT_RUN,
                    f"{side.name}: ember-benchmark exited {proc.returncode}: {proc.stderr.strip()[:200]}",
                )
                return
            for fig in json.loads(proc.stdout)["figures"]:
                times[side.name].setdefault(fig["name"], []).append(float(fig["seconds"]))
    base, cand = times[result.base.name], times[result.candidate.name]
    for name in sorted(base.keys() & cand.keys()):
        regressed, ratio, allowed = slower(base[name], cand[name], threshold)
        result.performance.append(
            {
                "figure": name,
                "base_s": statistics.median(base[name]),
                "candidate_s": statistics.median(cand[name]),
                "ratio": ratio,
                "allowed": allowed,
            }
        )
        if regressed:
            result.add(
                "performance", Severity.REGRESSION, f"{name}: {ratio:.2f}x the baseline's time (allowed {allowed:.2f}x)"
            )


# ---- the whole comparison and its renderings ---------------------------------------------------


def compare(
    base: Path,
    candidate: Path,
    fixtures: Path,
    *,
    abidiff: str | None,
    run_programs: bool = True,
    rounds: int = 3,
    threshold: float = 0.10,
) -> Comparison:
    result = Comparison(load_side(base), load_side(candidate))
    compare_libraries(result)
    compare_abi(result, abidiff, run_command)
    compare_headers(result)
    compare_verify(result)
    compare_sizes(result)
    if run_programs:
        compare_numerics(result, fixtures)
        compare_performance(result, rounds, threshold)
    else:
        for section in ("numerics", "performance"):
            result.add(section, Severity.NOT_RUN, "--no-run was given")
    return result


ORDER = {Severity.REGRESSION: 0, Severity.NOT_RUN: 1, Severity.CHANGE: 2, Severity.SAME: 3}


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (ORDER[f.severity], f.section))


def as_json(result: Comparison) -> dict[str, Any]:
    return {
        "base": result.base.name,
        "candidate": result.candidate.name,
        "regressions": len(result.regressions),
        "findings": [
            {"section": f.section, "severity": f.severity.value, "message": f.message} for f in ordered(result.findings)
        ],
        "drift": result.drift,
        "performance": result.performance,
    }


def render_markdown(result: Comparison) -> str:
    lines = [f"# {result.base.name} -> {result.candidate.name}", "", f"{len(result.regressions)} regressions.", ""]
    lines += ["| severity | section | finding |", "|---|---|---|"]
    lines += [f"| {f.severity.value} | {f.section} | {f.message.replace('|', '/')} |" for f in ordered(result.findings)]
    if result.drift:
        lines += ["", "## Numeric drift", "", "| model | output | max abs | max rel |", "|---|---|---|---|"]
        lines += [f"| {d['model']} | {d['output']} | {d['max_abs']:.3g} | {d['max_rel']:.3g} |" for d in result.drift]
    if result.performance:
        lines += [
            "",
            "## Performance (medians, interleaved)",
            "",
            "| figure | baseline s | candidate s | ratio | allowed |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {p['figure']} | {p['base_s']:.4g} | {p['candidate_s']:.4g} | {p['ratio']:.2f} | {p['allowed']:.2f} |"
            for p in result.performance
        ]
    return "\n".join(lines) + "\n"


def render_html(result: Comparison) -> str:
    rows = "".join(
        f'<tr class="{f.severity.name.lower()}"><td>{html.escape(f.severity.value)}</td><td>{html.escape(f.section)}</td><td>{html.escape(f.message)}</td></tr>'
        for f in ordered(result.findings)
    )
    style = "td,th{border:1px solid #bbb;padding:3px 8px}.regression{background:#f8d0d0}.not_run{background:#f5ecc8}"
    title = html.escape(f"{result.base.name} -> {result.candidate.name}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{style}</style></head>'
        f"<body><h1>{title}</h1><p>{len(result.regressions)} regressions.</p>"
        f"<table><thead><tr><th>severity</th><th>section</th><th>finding</th></tr></thead><tbody>{rows}</tbody></table></body></html>\n"
    )


def write_reports(result: Comparison, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{result.base.name}--{result.candidate.name}"
    written = []
    for suffix, text in (
        (".md", render_markdown(result)),
        (".html", render_html(result)),
        (".json", json.dumps(as_json(result), indent=2) + "\n"),
    ):
        path = out_dir / (stem + suffix)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written
