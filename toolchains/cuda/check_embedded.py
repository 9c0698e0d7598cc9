#!/usr/bin/env python3
"""List what a CUDA cell's installed libraries embed, with the image's cuobjdump, for forge to check.

    python3 toolchains/cuda/check_embedded.py --prefix /stage \
        --cuobjdump /opt/cuda/bin/cuobjdump --nvcc /opt/cuda/bin/nvcc

forge plans this as the `cuda-arches` step of a CUDA cell, right after `install`, inside the
cell's container with the image's Python. It only runs the tools: for every ELF shared library
and static archive under <prefix>/lib (symlinks skipped) `cuobjdump --list-elf` and `--list-ptx`,
and `nvcc --version` once, and prints their exit status and output unread, as one
`forge-cuda-listings: {json}` line of the step's log. forge reads that line on the host
(forge/cuda.py manifest_record, parsed by forge/gpu_code.py): what each library embeds goes into
the manifest, and a library lacking an asked-for target fails the cell's `cuda-arches` check.
Standard library only, and nothing from forge/: a repro snapshot or a remote engine's copy of
the sources holds toolchains/ but not forge/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PREFIX = "forge-cuda-listings: "  # forge/gpu_code.py LISTINGS_PREFIX


def libraries(prefix: Path) -> list[Path]:
    """Regular files under <prefix>/lib that are ELF objects or ar archives."""
    found = []
    for path in sorted((prefix / "lib").rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as f:
            magic = f.read(8)
        if magic.startswith(b"\x7fELF") or magic == b"!<arch>\n":
            found.append(path)
    return found


def run(argv: list[str]) -> list[object]:
    """[exit status, stdout, stderr] of argv."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return [proc.returncode, proc.stdout, proc.stderr]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, required=True)
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--nvcc", required=True, help="the image's nvcc, whose release is recorded")
    args = parser.parse_args(argv)
    try:
        listings = {
            str(path.relative_to(args.prefix)): {
                "elf": run([args.cuobjdump, "--list-elf", str(path)]),
                "ptx": run([args.cuobjdump, "--list-ptx", str(path)]),
            }
            for path in libraries(args.prefix)
        }
        nvcc = run([args.nvcc, "--version"])
    except OSError as exc:  # a tool missing from the image
        print(f"cuda-arches: {exc}", file=sys.stderr)
        return 2
    for path, found in listings.items():
        print(f"{path}:\n{found['elf'][1]}{found['ptx'][1]}", end="")
    print(PREFIX + json.dumps({"nvcc": nvcc, "libraries": listings}, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
