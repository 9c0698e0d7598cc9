#!/usr/bin/env python3
"""List the SASS and PTX that a CUDA cell's installed libraries embed; fail when one is missing.

    python3 toolchains/cuda/check_embedded.py --prefix /stage --arch sm_80,sm_90,compute_90 \
        --cuobjdump /opt/cuda/bin/cuobjdump --nvcc /opt/cuda/bin/nvcc

forge plans this as the `cuda-arches` step of a CUDA cell, right after `install`, inside the
cell's container: the image's Python (standard library only) and its cuobjdump. Parsing and
the verdict are forge/gpu_code.py's (the checkout is importable from here), so what forge's unit
tests check is what runs. Every ELF shared library and static archive under <prefix>/lib is
listed, one line each, in the step's log (dist/<cell-id>/logs/cuda-arches.log), ending with one
`forge-cuda-embedded: {json}` line that forge reads into the manifest (forge/cuda.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from forge import gpu_code  # the checkout, put on the path above
from forge.errors import ForgeError


def libraries(prefix: Path) -> list[Path]:
    """Regular files under <prefix>/lib that are ELF shared objects or ar archives (symlinks skipped)."""
    found = []
    for path in sorted((prefix / "lib").rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as f:
            magic = f.read(8)
        if magic.startswith(b"\x7fELF") or magic == b"!<arch>\n":
            found.append(path)
    return found


def listing(cuobjdump: str, flag: str, path: Path) -> str:
    proc = subprocess.run([cuobjdump, flag, str(path)], capture_output=True, text=True, check=False)
    return gpu_code.cuobjdump_listing(proc.returncode, proc.stdout, proc.stderr, path=str(path))


def nvcc_release(nvcc: str) -> str:
    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise OSError(f"{nvcc} --version exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return gpu_code.nvcc_release(proc.stdout)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, required=True)
    parser.add_argument("--arch", required=True, help="the cell's targets, e.g. sm_80,sm_90,compute_90")
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--nvcc", required=True, help="the image's nvcc, whose release is recorded")
    args = parser.parse_args(argv)
    try:
        asked = gpu_code.parse_cuda_arch(args.arch)
        nvcc = nvcc_release(args.nvcc)
        listings = {
            str(p.relative_to(args.prefix)): (
                listing(args.cuobjdump, "--list-elf", p),
                listing(args.cuobjdump, "--list-ptx", p),
            )
            for p in libraries(args.prefix)
        }
        embedded = {path: str(gpu_code.embedded_arches(elf, ptx)) for path, (elf, ptx) in listings.items()}
        problems = gpu_code.embedded_problems(asked, listings)
    except (ForgeError, OSError) as exc:
        print(f"cuda-arches: {exc}", file=sys.stderr)
        return 2
    print(f"nvcc {nvcc}")
    for path, found in embedded.items():
        print(f"{path}: {found or 'no device code'}")
    for problem in problems:
        print(f"MISSING: {problem}", file=sys.stderr)
    print(f"asked for {asked}: {'missing in ' + str(len(problems)) + ' place(s)' if problems else 'all embedded'}")
    record = {"nvcc": nvcc, "asked": str(asked), "embedded": embedded, "problems": problems}
    print(gpu_code.RECORD_PREFIX + json.dumps(record, sort_keys=True), flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
