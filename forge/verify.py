"""Verification results: ctest output parsed per suite, and Mach-O structure checks."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

CTEST_LINE = re.compile(
    r"^\s*\d+/\d+\s+Test\s+#\d+:\s+(?P<name>\S+)\s+\.*\s*(?:\*+)?(?P<status>[A-Za-z][A-Za-z ]*?)\s+(?P<secs>[\d.]+)\s+sec"
)

# Mach-O 64-bit magic as stored little-endian, and the CPU types of our two macOS targets.
MACHO_MAGIC_64 = 0xFEEDFACF
FAT_MAGIC = 0xCAFEBABE
CPU_TYPES = {"x86_64": 0x01000007, "arm64": 0x0100000C}


@dataclass(frozen=True)
class SuiteResult:
    name: str
    status: str  # passed | failed | not run | timeout | ...
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "status": self.status, "seconds": self.seconds}


def parse_ctest(text: str) -> list[SuiteResult]:
    """Per-test results from `ctest` output ("  1/3 Test #1: session ....   Passed    0.02 sec")."""
    results = []
    for line in text.splitlines():
        match = CTEST_LINE.match(line)
        if match:
            status = match.group("status").strip().lower()
            results.append(SuiteResult(match.group("name"), status, float(match.group("secs"))))
    return results


def macho_arch(path: Path) -> str | None:
    """'x86_64'/'arm64'/'fat'/'other' for a Mach-O file, None when it is not Mach-O."""
    try:
        with path.open("rb") as handle:
            header = handle.read(8)
    except OSError:
        return None
    if len(header) < 8:
        return None
    magic, cputype = struct.unpack("<II", header)
    if struct.unpack(">I", header[:4])[0] == FAT_MAGIC:
        return "fat"
    if magic != MACHO_MAGIC_64:
        return None
    return next((arch for arch, value in CPU_TYPES.items() if value == cputype), "other")


def check_macho_tree(tree: Path, arch: str) -> list[SuiteResult]:
    """One result per binary under tree (bin/, lib/): passed when it is Mach-O for `arch`."""
    results = []
    for sub in ("bin", "lib"):
        base = tree / sub
        if not base.is_dir():
            continue
        for path in sorted(p for p in base.rglob("*") if p.is_file() and not p.is_symlink()):
            if path.suffix in (".a", ".cmake", ".pc", ".h"):
                continue
            found = macho_arch(path)
            status = "passed" if found in (arch, "fat") else f"not Mach-O {arch} ({found or 'not Mach-O'})"
            results.append(SuiteResult(f"macho:{path.relative_to(tree).as_posix()}", status, 0.0))
    return results
