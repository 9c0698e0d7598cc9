"""What this machine can do: each capability found (with its version) or how to get it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass

from forge import proc
from forge.host import first_version


@dataclass(frozen=True)
class Finding:
    name: str
    found: bool
    detail: str
    fix: str


def _tool(name: str, argv: list[str], fix: str) -> Finding:
    if shutil.which(argv[0]) is None:
        return Finding(name, False, "not found", fix)
    out = proc.capture(argv) or ""
    lines = out.strip().splitlines()
    version = first_version(out) or (lines[0] if lines else "version unknown")
    return Finding(name, True, f"{shutil.which(argv[0])} {version}", "")


def docker_daemon() -> Finding:
    fix = "apt-get install docker.io, then start it: dockerd --iptables=false --bridge=none &"
    try:
        import docker

        client = docker.from_env(timeout=3)
        version = client.version().get("Version", "?")
        client.close()
    except Exception as exc:  # docker raises many types; all mean "not reachable"
        return Finding("docker daemon", False, f"not reachable ({type(exc).__name__})", fix)
    return Finding("docker daemon", True, f"reachable, engine {version}", "")


def zig() -> Finding:
    out = proc.capture(["python3", "-m", "ziglang", "version"])
    if out:
        return Finding("zig (macOS targets)", True, f"python3 -m ziglang {out.strip()}", "")
    return _tool("zig (macOS targets)", ["zig", "version"], "pip install ziglang==0.15.1")


def gpu() -> Finding:
    out = proc.capture(["nvidia-smi", "-L"])
    if out and out.strip():
        return Finding("GPU", True, out.strip().splitlines()[0], "")
    return Finding(
        "GPU",
        False,
        "none (CUDA kernels compile; GPU checks do not run)",
        "run on a machine with an NVIDIA GPU and driver",
    )


CHECKS: tuple[Callable[[], Finding], ...] = (
    docker_daemon,
    lambda: _tool("cmake", ["cmake", "--version"], "apt-get install cmake"),
    lambda: _tool("ninja", ["ninja", "--version"], "apt-get install ninja-build"),
    lambda: _tool("c++ (host)", ["c++", "--version"], "apt-get install g++"),
    lambda: _tool("clang", ["clang", "--version"], "apt-get install clang"),
    lambda: _tool("ccache", ["ccache", "--version"], "apt-get install ccache"),
    lambda: _tool("aarch64 cross g++", ["aarch64-linux-gnu-g++", "--version"], "apt-get install g++-aarch64-linux-gnu"),
    lambda: _tool(
        "armv7 cross g++", ["arm-linux-gnueabihf-g++", "--version"], "apt-get install g++-arm-linux-gnueabihf"
    ),
    lambda: _tool("qemu-aarch64", ["qemu-aarch64", "--version"], "apt-get install qemu-user"),
    lambda: _tool("qemu-arm", ["qemu-arm", "--version"], "apt-get install qemu-user"),
    zig,
    lambda: _tool(
        "nvcc", ["nvcc", "--version"], "pip install nvidia-cuda-nvcc==13.0.* (or Debian non-free nvidia-cuda-toolkit)"
    ),
    gpu,
    lambda: _tool("debootstrap (images)", ["debootstrap", "--version"], "apt-get install debootstrap"),
)


def diagnose() -> list[Finding]:
    return [check() for check in CHECKS]
