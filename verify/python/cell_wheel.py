#!/usr/bin/env python3
"""The cell side of forge's wheel steps (forge/plan.py `wheel_steps`), run by the cell's Python
with the standard library only, offline: every package comes from the staged wheelhouse.

    cell_wheel.py repair --raw DIR --out DIR --tools DIR --requires 'numpy<3,>=1.22'
        auditwheel repair + show; the wheel's Requires-Dist must state exactly that range.
        Writes OUT/wheel/<repaired wheel> and OUT/wheel.json.
    cell_wheel.py verify --out DIR --wheelhouse DIR --work DIR --numpy 2.4 --pytest PIN... [--oracle PIN...]
        a fresh venv with the wheel, that NumPy series and pytest (and LiteRT, the live oracle,
        where pip can install it beside that NumPy); verify/python against it.
        Writes OUT/verify.json (and OUT/verify.xml, OUT/verify.log).
    cell_wheel.py grid --out DIR --wheelhouse DIR --work DIR --built-with 2.4 --numpy 1.23 ... --pytest PIN...
        for each NumPy series: does pip accept it with the wheel (the claim), and does the wheel
        import and run with it (the fact, forced in with --no-deps where pip refuses)?
        Writes OUT/grid.json.

    cell_wheel.py target --dest DIR --python 3.11 --triple aarch64-linux-gnu --cc CC --emulator ARGV
                         --ext-suffix SUFFIX --wheelhouse DIR --numpy 2.4
        cross cells: the target's Python headers, NumPy headers and a launcher of its libpython.
        verify and grid then take --target-python DIR/bin/python3.11 --emulator ARGV.

Results go to JSON and the exit status is 0 once they are written; a broken step (no wheel, a
wheelhouse without the NumPy asked for, a wrong claim in the metadata) exits 1 with the reason.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shlex
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
    # auditwheel unpacks the wheel, then zips it again with the directory entries' modes as the
    # umask made them (repro's second build, umask 077, gave drwx------ entries: a different
    # wheel). A fixed umask for the repair makes the wheel the same under any caller's umask.
    os.umask(0o022)
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


class Fresh:
    """A fresh Python environment the wheel is installed into and tested in.

    Native cells: a venv of the cell's Python. Cross cells (--target-python): a folder on the
    PYTHONPATH of the target's Python, which runs under the emulator; it installs with the build
    machine's pip (pure Python, run by the target's Python), so pip judges the wheel and NumPy by
    the target's own platform tags. The emulator runs no child of a target program (there is no
    binfmt_misc), and a venv's ensurepip is such a child, hence no venv there.
    """

    def __init__(self, where: Path, house: Path, args: argparse.Namespace) -> None:
        shutil.rmtree(where, ignore_errors=True)
        self.house = house
        self.site: Path | None = None
        if args.target_python is None:
            done = run([sys.executable, "-m", "venv", str(where)], clean_env())
            if done.returncode != 0:
                fail(f"python -m venv {where} failed: {last_line(done.stdout + done.stderr)}")
            self.python = [str(where / "bin" / "python")]
            return
        self.site = where / "site"
        self.site.mkdir(parents=True)
        self.pip_home = where / "pip-home"  # the build machine's pip alone, not the rest of its venv
        self.pip_home.mkdir()
        (self.pip_home / "pip").symlink_to(pip_package(), target_is_directory=True)
        self.python = [*shlex.split(args.emulator), str(args.target_python)]

    def env(self, pip: bool = False) -> dict[str, str]:
        env = clean_env()  # not the wheel tools' PYTHONPATH
        if self.site is not None:
            env["PYTHONPATH"] = str(self.pip_home if pip else self.site)
        return env

    def install(self, things: list[str], deps: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [*self.python, "-m", "pip", "install", "--no-index", "--find-links", str(self.house)]
        argv += ["--disable-pip-version-check"]
        if self.site is not None:
            argv += ["--target", str(self.site), "--no-compile"]
        return run(argv + ([] if deps else ["--no-deps"]) + things, self.env(pip=True))


def pip_package() -> Path:
    spec = importlib.util.find_spec("pip")
    if spec is None or spec.origin is None:
        fail(f"{sys.executable} has no pip to install with")
    return Path(str(spec.origin)).parent


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def verify(args: argparse.Namespace) -> None:
    wheel = only_wheel(args.out / "wheel")
    numpy = numpy_wheel(args.wheelhouse, args.numpy)
    start = time.monotonic()
    fresh = Fresh(args.work / "verify-venv", args.wheelhouse, args)
    result: dict[str, object] = {"numpy": numpy.name.split("-")[1], "wheel": wheel.name}
    done = fresh.install([str(wheel), str(numpy), *args.pytest])
    if done.returncode != 0:
        result.update(status="failed", reason=f"pip refused the wheel with its own NumPy: {last_line(done.stderr)}")
        write(args.out / "verify.json", result)
        return
    if args.oracle:  # the live oracle beside the cell's NumPy (never upgrading it), where pip can
        oracle = fresh.install([str(numpy), *args.oracle])
        result["oracle"] = (
            " ".join(args.oracle)
            if oracle.returncode == 0
            else f"not installed ({last_line(oracle.stderr)}): its checks are skipped, the stored-output ones run"
        )
    xml = args.out / "verify.xml"
    suite = suite_copy(args.work / "suite")
    argv = [*fresh.python, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "-rs", f"--junitxml={xml}"]
    tests = subprocess.run(argv, capture_output=True, text=True, env=fresh.env(), cwd=args.work)
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
        fresh = Fresh(args.work / "grid-venv", args.wheelhouse, args)
        pip = fresh.install([str(wheel), str(numpy)])
        accepted = pip.returncode == 0
        if not accepted:  # force it in, to see what the claim protects users from
            forced = fresh.install([str(wheel), str(numpy)], deps=False)
            if forced.returncode != 0:
                fail(f"pip install --no-deps of {wheel.name} and {numpy.name} failed: {last_line(forced.stderr)}")
        check = subprocess.run(
            [*fresh.python, str(CHECK)], capture_output=True, text=True, env=fresh.env(), cwd=args.work
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


LAUNCHER = """/* The target's python: its libpython's main (Debian's python3.X cannot be co-installed). */
#include <Python.h>
int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }
"""
PROBE = "import json, sys, sysconfig; print(json.dumps({'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX'), \
'platform': sysconfig.get_platform(), 'version': '%d.%d' % sys.version_info[:2], 'prefix': sys.prefix}))"


def target(args: argparse.Namespace) -> None:
    """The target's Python for a cross wheel, under --dest: include/pythonX.Y (the shared headers with
    the target's multiarch pyconfig.h), numpy-include/ (from the target's NumPy wheel) and
    bin/pythonX.Y (a launcher of the target's libpython), checked by starting it under the emulator."""
    dest, version = args.dest, args.python
    shared = Path("/usr/include") / f"python{version}"
    pyconfig = Path("/usr/include") / args.triple / f"python{version}" / "pyconfig.h"
    libpython = Path("/usr/lib") / args.triple / f"libpython{version}.so.1.0"
    for need in (shared, pyconfig, libpython):
        if not need.exists():
            fail(f"{need} is missing: the image needs the target's libpython{version}-dev (Debian multiarch)")
    shutil.rmtree(dest, ignore_errors=True)
    include = dest / "include" / f"python{version}"
    shutil.copytree(shared, include, symlinks=True)
    (include / "pyconfig.h").unlink()  # Debian's dispatches on the compiler's macros to <triple>/pythonX.Y/
    shutil.copyfile(pyconfig, include / "pyconfig.h")
    numpy = numpy_wheel(args.wheelhouse, args.numpy)
    with zipfile.ZipFile(numpy) as archive:
        headers = [n for n in archive.namelist() if re.match(r"numpy/(_core|core)/include/numpy/.+\.h$", n)]
        if not headers:
            fail(f"{numpy.name} holds no C headers under numpy/_core/include or numpy/core/include")
        for name in headers:
            out = dest / "numpy-include" / name.split("/include/", 1)[1]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(archive.read(name))
    source = dest / "launcher.c"
    source.write_text(LAUNCHER)
    python = dest / "bin" / f"python{version}"
    python.parent.mkdir()
    done = run([args.cc, "-O2", "-I", str(include), str(source), "-o", str(python), str(libpython)])
    if done.returncode != 0:
        fail(f"{args.cc} could not build the target's python launcher: {last_line(done.stdout + done.stderr)}")
    probe = run([*shlex.split(args.emulator), str(python), "-c", PROBE], clean_env())
    if probe.returncode != 0:
        fail(f"the target's Python does not start under {args.emulator}: {last_line(probe.stdout + probe.stderr)}")
    facts = json.loads(probe.stdout.strip().splitlines()[-1])
    if facts["ext_suffix"] != args.ext_suffix or facts["version"] != version:
        fail(f"the target's Python is {facts}; forge planned Python {version} with suffix {args.ext_suffix}")
    write(dest / "target.json", {**facts, "numpy_headers": numpy.name})


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
        p.add_argument("--target-python", type=Path, help="cross cells: the target's Python (wheel-target's launcher)")
        p.add_argument("--emulator", default="", help="cross cells: the argv prefix that runs a target program")
    tgt = sub.add_parser("target")
    for flag in ("--python", "--triple", "--cc", "--emulator", "--ext-suffix", "--numpy"):
        tgt.add_argument(flag, required=True)
    tgt.add_argument("--wheelhouse", type=Path, required=True)
    tgt.add_argument("--dest", type=Path, required=True)
    sub.choices["verify"].add_argument("--numpy", required=True)
    sub.choices["verify"].add_argument("--oracle", nargs="+", default=[], help="verify/python's live oracle (LiteRT)")
    sub.choices["grid"].add_argument("--built-with", required=True)
    sub.choices["grid"].add_argument("--numpy", nargs="+", required=True)
    for name in ("repair", "verify", "grid"):
        sub.choices[name].add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    {"repair": repair, "verify": verify, "grid": grid, "target": target}[args.command](args)


if __name__ == "__main__":
    main()
