"""Facts about the host machine, and installing the host tools a local build needs.

Probing happens here, at the edge; everything else receives the results as values.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from forge import proc
from forge.errors import ToolMissingError
from forge.resolve import HostFacts


@dataclass(frozen=True)
class HostTool:
    """A tool a local build needs, how to tell it is there, and the Debian package with it."""

    name: str
    package: str
    present: Callable[[], bool]


def _which(name: str) -> Callable[[], bool]:
    return lambda: shutil.which(name) is not None


HOST_TOOLS: tuple[HostTool, ...] = (
    HostTool("cmake", "cmake", _which("cmake")),
    HostTool("ninja", "ninja-build", _which("ninja")),
    HostTool("c++", "g++", _which("c++")),
    HostTool("eigen3 headers", "libeigen3-dev", lambda: Path("/usr/include/eigen3/Eigen/Core").exists()),
)


def first_version(text: str | None) -> str | None:
    """The first dotted version number in a tool's --version output."""
    if not text:
        return None
    match = re.search(r"\d+\.\d+(\.\d+)?", text)
    return match.group(0) if match else None


def os_codename(os_release: Path = Path("/etc/os-release")) -> str:
    """VERSION_CODENAME from os-release ("unknown" when absent)."""
    try:
        text = os_release.read_text()
    except OSError:
        return "unknown"
    match = re.search(r"^VERSION_CODENAME=\"?([^\"\n]+)", text, re.MULTILINE)
    return match.group(1) if match else "unknown"


def probe_host_facts() -> HostFacts:
    """The host toolchain as a cell would describe it (gcc major, python minor, cmake minor)."""
    gcc = (proc.capture(["c++", "-dumpversion"]) or "0").strip().split(".")[0]
    cmake = first_version(proc.capture(["cmake", "--version"])) or "0"
    python = f"{sys.version_info.major}.{sys.version_info.minor}"  # the interpreter running forge
    return HostFacts(
        suite=os_codename(),
        gcc=gcc,
        python=python,
        cmake=".".join(cmake.split(".")[:2]),
        arch=platform.machine(),
    )


FAKETIME_TOOL = HostTool("faketime", "faketime", _which("faketime"))
"""What a local `invoke repro` needs for the second build's shifted clock."""

TEST_TOOLS: tuple[HostTool, ...] = (
    *HOST_TOOLS,
    HostTool("clang-format", "clang-format", _which("clang-format")),
    FAKETIME_TOOL,  # the unit tests of the shifted clock need it and must not install it themselves
)
"""What `invoke test` needs on top of a local build: the C++ format check, faketime."""


def missing_host_tools(tools: tuple[HostTool, ...] = HOST_TOOLS) -> list[HostTool]:
    return [tool for tool in tools if not tool.present()]


def install_command(packages: list[str]) -> list[str]:
    return ["apt-get", "install", "-y", "--no-install-recommends", *packages]


def ensure_host_tools(
    env: Mapping[str, str], log_path: Path, install: bool = True, tools: tuple[HostTool, ...] = HOST_TOOLS
) -> list[str]:
    """Install missing host build tools with apt-get (as root); returns the packages installed.

    Raises ToolMissingError naming each tool and the command when it cannot install them.
    """
    missing = missing_host_tools(tools)
    if not missing:
        return []
    packages = sorted({tool.package for tool in missing})
    command = install_command(packages)
    can_install = install and os.geteuid() == 0 and shutil.which("apt-get") is not None
    if not can_install:
        names = ", ".join(tool.name for tool in missing)
        raise ToolMissingError(f"missing host tools: {names}", "a local build needs them", f"sudo {' '.join(command)}")
    apt_env = {**env, "DEBIAN_FRONTEND": "noninteractive"}
    proc.run_logged(["apt-get", "update"], cwd=Path("/"), env=apt_env, log_path=log_path)
    proc.run_logged(command, cwd=Path("/"), env=apt_env, log_path=log_path)
    return packages
