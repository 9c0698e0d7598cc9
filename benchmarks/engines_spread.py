"""A matrix spread over two Docker engines (FORGE_DOCKER_HOSTS) against the same cells on one, one run each.

    python benchmarks/engines_spread.py [--cells N]

It starts a second dockerd of its own on this machine (own data root, exec root, pidfile and
socket under a temporary directory), writes a tiny engine/ + verify/ checkout with a matrix of N
linux-x86_64 cells (one per Python version, default 2), then:

1. warm-up (timed on its own, not compared): the matrix on both engines, so the second engine gets
   every image from the first (docker save | docker load) and both compiler caches are filled;
2. one engine: `invoke build --matrix M --jobs N --force` on the usual engine, sources mounted;
3. two engines: the same with FORGE_DOCKER_HOSTS=<usual>,<second> (sources copied to both, so the
   copy path's cost is in the figure).

It prints both wall times and the ratio. Both engines share this machine's cores, so on a 2-core
machine the ratio shows the overhead of spreading (the copy path, a second engine's bookkeeping),
not a speed-up: that needs engines on other machines.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from forge import daemon

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.13", "3.9")
ENGINE = """cmake_minimum_required(VERSION 3.18)
project(ember CXX)
add_library(ember_framework SHARED framework.cc)
install(TARGETS ember_framework EXPORT emberTargets LIBRARY DESTINATION lib)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION lib/cmake/ember FILE ember-config.cmake)
"""
VERIFY = """cmake_minimum_required(VERSION 3.18)
project(ember_verify CXX)
find_package(ember REQUIRED)
enable_testing()
add_executable(smoke smoke.cc)
target_link_libraries(smoke ember::ember_framework)
add_test(NAME smoke COMMAND smoke)
"""


def tiny_checkout(root: Path, cells: int) -> Path:
    for data in ("matrix", "toolchains"):
        shutil.copytree(REPO / data, root / data)
    (root / "engine").mkdir()
    (root / "engine" / "CMakeLists.txt").write_text(ENGINE)
    (root / "engine" / "framework.cc").write_text("int ember_answer() { return 42; }\n")
    (root / "verify").mkdir()
    (root / "verify" / "CMakeLists.txt").write_text(VERIFY)
    (root / "verify" / "smoke.cc").write_text(
        "int ember_answer();\nint main() { return ember_answer() == 42 ? 0 : 1; }\n"
    )
    pythons = ", ".join(f'"{p}"' for p in PYTHONS[:cells])
    (root / "matrix" / "spread.yaml").write_text(f"axes:\n  target: [linux-x86_64]\n  python: [{pythons}]\n")
    root.chmod(0o755)
    return root


def start_engine(top: Path) -> tuple[subprocess.Popen[bytes], str]:
    url = f"unix://{top}/docker.sock"
    argv = [
        "dockerd",
        *daemon.DOCKERD_FLAGS,
        f"--data-root={top}/data",
        f"--exec-root={top}/exec",
        f"--pidfile={top}/docker.pid",
        f"--host={url}",
    ]
    with (top / "dockerd.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while (client := daemon.connect({"DOCKER_HOST": url}, timeout_s=2.0)) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            daemon.stop_dockerd(proc)
            sys.exit(f"the second dockerd did not start; see {top}/dockerd.log")
        time.sleep(0.5)
    client.close()
    return proc, url


def run_matrix(repo: Path, cells: int, env: dict[str, str]) -> float:
    argv = [sys.executable, "-m", "invoke", "build", "--matrix", str(repo / "matrix" / "spread.yaml")]
    start = time.monotonic()
    proc = subprocess.run(
        [*argv, "--jobs", str(cells), "--force", "--backend", "docker", "--quiet"],
        cwd=REPO,
        env={**os.environ, "FORGE_ROOT": str(repo), **env},
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"the matrix build failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2, choices=range(1, len(PYTHONS) + 1))
    args = parser.parse_args()
    if daemon.connect(os.environ) is None:
        sys.exit("no container engine answers: invoke docker.start")
    first = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    top = Path(tempfile.mkdtemp(prefix="forge-spread-"))
    proc, second = start_engine(top)
    try:
        repo = tiny_checkout(top / "repo", args.cells)
        both = {"FORGE_DOCKER_HOSTS": f"{first},{second}"}
        warm = run_matrix(repo, args.cells, both)
        print(f"warm-up on both engines (images moved to the second, caches filled): {warm:.1f} s")
        one = run_matrix(repo, args.cells, {})
        two = run_matrix(repo, args.cells, both)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.cells} cells, one engine (mounted): {one:.1f} s; two engines (copied): {two:.1f} s")
        print(f"two engines / one engine: {two / one:.2f} (load {load} on {os.cpu_count()} cores)")
    finally:
        daemon.stop_dockerd(proc)
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
