"""Cross build time of each target against the native linux-x86_64 build, measured in one run.

    python benchmarks/cross_build_time.py [--fresh-zig-cache] [TARGET ...]   (default: all five)

Every target builds a fresh snapshot of engine/ with the local backend, the compiler cache off
(FORGE_NO_CCACHE=1), so each build compiles every file. zig keeps its own object cache; the
snapshot path differs on every run and is part of each compile command, so engine objects miss
it. zig's libc++ (built once per machine, target and flavour) is warmed first and timed on its own: the
issue reports it separately from the engine build. The figure per target is configure + build +
install of the engine, read from the cell's manifest; the ratio is against linux-x86_64 from the
same run. The machine is noisy, so the reference is built first and again last, and both are shown.
--fresh-zig-cache starts zig from an empty cache, so the warm-up times zig's first libc++ build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from forge.repro import snapshot_sources

REPO = Path(__file__).resolve().parents[1]
TARGETS = ("linux-x86_64", "linux-aarch64", "linux-armv7", "macos-arm64", "macos-x86_64")
ZIG_TRIPLES = {"macos-arm64": "aarch64-macos", "macos-x86_64": "x86_64-macos"}
ENGINE_STEPS = ("configure", "build", "install")


WARM_PROJECT = """cmake_minimum_required(VERSION 3.18)
project(warm CXX)
add_library(warm SHARED warm.cc)
add_executable(warm_main main.cc)
target_link_libraries(warm_main warm)
"""


def warm_zig_runtime(target: str, env: dict[str, str], work: Path) -> float:
    """Configure and build a two-file CMake project for `target` with its toolchain file: zig
    builds (or finds) every runtime flavour an engine build links (CMake's compiler checks link
    without -O, Release with -O3), so the engine figure that follows is compiling alone."""
    src, build_dir = work / f"warm-{target}", work / f"warm-{target}-build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(WARM_PROJECT)
    (src / "warm.cc").write_text("#include <string>\nstd::string warm(int x) { return std::to_string(x); }\n")
    (src / "main.cc").write_text(
        "#include <string>\nstd::string warm(int);\nint main() { return warm(1).size() - 1; }\n"
    )
    toolchain = REPO / "toolchains" / "cmake" / f"{ZIG_TRIPLES[target].split('-')[0]}-macos-zig.cmake"
    start = time.monotonic()
    for cmd in (
        ["cmake", "-S", str(src), "-B", str(build_dir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"],
        ["cmake", "--build", str(build_dir)],
    ):  # fmt: skip
        subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.monotonic() - start


def build(target: str, root: Path, env: dict[str, str]) -> tuple[float, float]:
    """(engine configure+build+install seconds, whole `invoke build` wall seconds)."""
    run_env = {**env, "FORGE_ROOT": str(root)}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--target", target, "--backend", "local", "--force"],
        cwd=REPO, env=run_env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{target}: invoke build failed ({done.returncode})\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    manifests = [p for p in (root / "dist").glob(f"{target}-*/manifest.json")]
    data = json.loads(max(manifests, key=lambda p: p.stat().st_mtime).read_text())
    steps = {s["name"]: float(s["seconds"]) for s in data["steps"]}
    return sum(steps.get(k, 0.0) for k in ENGINE_STEPS), wall


def main(argv: list[str]) -> int:
    fresh = "--fresh-zig-cache" in argv
    argv = [a for a in argv if a != "--fresh-zig-cache"]
    targets = [t for t in (argv or TARGETS) if t != "linux-x86_64"]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        sys.exit(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="cross-bench-") as tmp:
        work = Path(tmp)
        zig_cache = work / "zig-cache" if fresh else REPO / ".cache" / "forge" / "ccache" / "zig"
        env = {**os.environ, "FORGE_NO_CCACHE": "1", "ZIG_GLOBAL_CACHE_DIR": str(zig_cache)}
        env.pop("FORGE_JOBS", None)
        for target in targets:
            if target in ZIG_TRIPLES:
                seconds = warm_zig_runtime(target, env, work)
                print(f"zig runtime (libc++) for {target}: {seconds:.1f} s (about 1 s when already built)", flush=True)
        order = ["linux-x86_64", *targets, "linux-x86_64"]
        native: list[float] = []
        for i, target in enumerate(order):
            root = work / f"root-{i}"
            snapshot_sources(REPO, root)
            engine, wall = build(target, root, env)
            print(f"{target}: engine {engine:.1f} s (invoke build {wall:.1f} s)", flush=True)
            if target == "linux-x86_64":
                native.append(engine)
            else:
                results[target] = engine
            shutil.rmtree(root, ignore_errors=True)
    reference = sum(native) / len(native)
    print(f"\nnative linux-x86_64: {native[0]:.1f} s first, {native[1]:.1f} s last, mean {reference:.1f} s")
    print(f"{'target':<16} {'engine s':>9} {'vs native':>10}")
    for target, seconds in results.items():
        print(f"{target:<16} {seconds:>9.1f} {seconds / reference:>9.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
