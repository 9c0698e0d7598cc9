#!/usr/bin/env python3
"""The cell side of forge's wheel steps (forge/plan.py `wheel_steps`), run by the cell's Python
with the standard library only, offline: every package comes from the staged wheelhouse.

    cell_wheel.py repair --raw DIR --out DIR --tools DIR --requires 'numpy<3,>=1.22'
        auditwheel repair + show; the wheel's Requires-Dist must state exactly that range.
        Writes OUT/wheel/<repaired wheel> and OUT/wheel.json.
    cell_wheel.py verify --out DIR --wheelhouse DIR --work DIR --numpy 2.4 --pytest PIN...
        a fresh venv with the wheel, that NumPy series and pytest; verify/python against it.
        Writes OUT/verify.json (and OUT/verify.xml, OUT/verify.log).
    cell_wheel.py grid --out DIR --wheelhouse DIR --work DIR --built-with 2.4 --numpy 1.23 ... --pytest PIN...
        for each NumPy series: does pip accept it with the wheel (the claim), and does the wheel
        import and run with it (the fact, forced in with --no-deps where pip refuses)?
        Writes OUT/grid.json.

Results go to JSON and the exit status is 0 once they are written; a broken step (no wheel, a
wheelhouse without the NumPy asked for, a wrong claim in the metadata) exits 1 with the reason.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent
CHECK = HERE / "abi_check.py"


def fail(message: str) -> None:
    print(f"cell_wheel: {message}", file=sys.stderr)
    raise SystemExit(1)


def run(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    print("+ " + " ".join(argv), flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    sys.stdout.write(done.stdout[-4000:])
    sys.stdout.write(done.stderr[-4000:])
    return done


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"Error|error:|ERROR", line)]
    return (errors or lines or ["(no output)"])[-1][:300]


def only_wheel(folder: Path) -> Path:
    wheels = sorted(folder.glob("ember-*.whl"))
    if len(wheels) != 1:
        fail(f"expected one ember wheel in {folder}, found {[w.name for w in wheels]}")
    return wheels[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def requires_numpy(wheel: Path) -> str:
    """The `numpy...` of the wheel's Requires-Dist (without markers)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    found = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    numpy = [r for r in found if re.match(r"numpy\s*[<>=!~]", r) and ";" not in r]
    if len(numpy) != 1:
        fail(f"{wheel.name}: expected one unconditional numpy requirement, found {found}")
    return numpy[0].replace(" ", "")


def same_range(a: str, b: str) -> bool:
    return sorted(a.removeprefix("numpy").split(",")) == sorted(b.removeprefix("numpy").split(","))


def repair(args: argparse.Namespace) -> None:
    raw = only_wheel(args.raw)
    dest = args.out / "wheel"
    shutil.rmtree(dest, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(args.tools), "PATH": f"{args.tools / 'bin'}:{os.environ.get('PATH', '')}"}
    done = run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(dest), str(raw)], env)
    if done.returncode != 0:
        fail(f"auditwheel repair refused {raw.name}: {last_line(done.stdout + done.stderr)}")
    wheel = only_wheel(dest)
    show = run([sys.executable, "-m", "auditwheel", "show", str(wheel)], env)
    if show.returncode != 0:
        fail(f"auditwheel show failed on {wheel.name}: {last_line(show.stdout + show.stderr)}")
    claimed = requires_numpy(wheel)
    if not same_range(claimed, args.requires):
        fail(f"{wheel.name} claims {claimed}, but its NumPy headers allow {args.requires} (forge/wheel.py)")
    platform_tag = wheel.name.removesuffix(".whl").split("-")[-1]
    info = {
        "file": wheel.name,
        "sha256": sha256(wheel),
        "size": wheel.stat().st_size,
        "platform_tag": platform_tag,
        "manylinux": sorted(t for t in platform_tag.split(".") if t.startswith("manylinux")),
        "numpy_requires": claimed,
        "raw_file": raw.name,
        "auditwheel_show": " ".join(show.stdout.split())[:1000],
    }
    write(args.out / "wheel.json", info)


def numpy_wheel(house: Path, series: str) -> Path:
    found = sorted(house.glob(f"numpy-{series}.*.whl"))
    if not found:
        fail(f"the wheelhouse {house} has no NumPy {series} wheel (forge downloads one per series)")
    return found[-1]


def venv(where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    done = run([sys.executable, "-m", "venv", str(where)], clean_env())
    if done.returncode != 0:
        fail(f"python -m venv {where} failed: {last_line(done.stdout + done.stderr)}")
    return where / "bin" / "python"


def pip_install(python: Path, house: Path, things: list[str], deps: bool = True) -> subprocess.CompletedProcess[str]:
    argv = [
        str(python),
        "-m",
        "pip",
        "install",
        "--no-index",
        "--find-links",
        str(house),
        "--disable-pip-version-check",
    ]
    return run(argv + ([] if deps else ["--no-deps"]) + things, clean_env())  # not the wheel tools' PYTHONPATH


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def verify(args: argparse.Namespace) -> None:
    wheel = only_wheel(args.out / "wheel")
    numpy = numpy_wheel(args.wheelhouse, args.numpy)
    start = time.monotonic()
    python = venv(args.work / "verify-venv")
    result: dict[str, object] = {"numpy": numpy.name.split("-")[1], "wheel": wheel.name}
    done = pip_install(python, args.wheelhouse, [str(wheel), str(numpy), *args.pytest])
    if done.returncode != 0:
        result.update(status="failed", reason=f"pip refused the wheel with its own NumPy: {last_line(done.stderr)}")
        write(args.out / "verify.json", result)
        return
    xml = args.out / "verify.xml"
    suite = suite_copy(args.work / "suite")
    argv = [str(python), "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "-rs", f"--junitxml={xml}"]
    tests = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), cwd=args.work)
    (args.out / "verify.log").write_text(tests.stdout + tests.stderr)
    print(tests.stdout[-3000:] + tests.stderr[-2000:])
    counts, skips = junit_counts(xml)
    result.update(
        status="passed" if tests.returncode == 0 else "failed",
        exit_code=tests.returncode,
        counts=counts,
        skipped_because=skips,
        seconds=round(time.monotonic() - start, 1),
    )
    if tests.returncode not in (0, 1):
        result["reason"] = last_line(tests.stdout + tests.stderr)
    write(args.out / "verify.json", result)


def suite_copy(root: Path) -> Path:
    """verify/python copied under `root`, with engine/testdata linked beside it as in the checkout.

    pytest (8 and later) lists every directory from the filesystem root down to the suite and
    stats each entry; one it may not stat (a Bazel convenience link in the checkout pointing
    into an output base this user cannot enter) stops collection with "found no collectors".
    The copy's parents hold only what this script puts there."""
    shutil.rmtree(root, ignore_errors=True)
    suite = root / "verify" / "python"
    shutil.copytree(HERE, suite, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (root / "engine").mkdir()
    (root / "engine" / "testdata").symlink_to(HERE.parents[1] / "engine" / "testdata", target_is_directory=True)
    return suite


def junit_counts(xml: Path) -> tuple[dict[str, int], list[str]]:
    try:
        root = ElementTree.parse(xml).getroot()
    except (OSError, ElementTree.ParseError):
        return {}, []
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return {}, []
    total = int(suite.get("tests", 0))
    counts = {k: int(suite.get(k, 0)) for k in ("failures", "errors", "skipped")}
    counts["passed"] = total - sum(counts.values())
    reasons = sorted({s.get("message", "") for s in suite.iter("skipped")})
    return {
        "passed": counts["passed"],
        "failed": counts["failures"],
        "errors": counts["errors"],
        "skipped": counts["skipped"],
    }, reasons


def grid(args: argparse.Namespace) -> None:
    wheel = only_wheel(args.out / "wheel")
    claim = requires_numpy(wheel)
    rows = []
    for series in args.numpy:
        numpy = numpy_wheel(args.wheelhouse, series)
        version = numpy.name.split("-")[1]
        python = venv(args.work / "grid-venv")
        pip = pip_install(python, args.wheelhouse, [str(wheel), str(numpy)])
        accepted = pip.returncode == 0
        if not accepted:  # force it in, to see what the claim protects users from
            forced = pip_install(python, args.wheelhouse, [str(wheel), str(numpy)], deps=False)
            if forced.returncode != 0:
                fail(f"pip install --no-deps of {wheel.name} and {numpy.name} failed: {last_line(forced.stderr)}")
        check = subprocess.run(
            [str(python), str(CHECK)], capture_output=True, text=True, env=clean_env(), cwd=args.work
        )
        works = check.returncode == 0
        rows.append(
            {
                "numpy": version,
                "series": series,
                "built_with": series == args.built_with,
                "claimed": accepted,
                "pip": "installs" if accepted else f"refuses: {last_line(pip.stdout + pip.stderr)}",
                "run": "works" if works else f"fails: {last_line(check.stdout + check.stderr)}",
                "verdict": verdict(accepted, works),
                # The whole story of a failure (the ImportError's cause is NumPy's own message).
                "output_tail": "" if works else (check.stdout + check.stderr)[-1500:],
            }
        )
        print(f"numpy {version}: {rows[-1]['verdict']} ({rows[-1]['run']})", flush=True)
    shutil.rmtree(args.work / "grid-venv", ignore_errors=True)
    write(args.out / "grid.json", {"claim": claim, "rows": rows})


def verdict(claimed: bool, works: bool) -> str:
    if claimed:
        return "works as claimed" if works else "claim wrong"
    return "excluded, fails as claimed" if not works else "excluded, yet works"


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("repair")
    rep.add_argument("--raw", type=Path, required=True)
    rep.add_argument("--tools", type=Path, required=True)
    rep.add_argument("--requires", required=True)
    for name in ("verify", "grid"):
        p = sub.add_parser(name)
        p.add_argument("--wheelhouse", type=Path, required=True)
        p.add_argument("--work", type=Path, required=True)
        p.add_argument("--pytest", nargs="+", default=[])
    sub.choices["verify"].add_argument("--numpy", required=True)
    sub.choices["grid"].add_argument("--built-with", required=True)
    sub.choices["grid"].add_argument("--numpy", nargs="+", required=True)
    for p in sub.choices.values():
        p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    {"repair": repair, "verify": verify, "grid": grid}[args.command](args)


if __name__ == "__main__":
    main()
