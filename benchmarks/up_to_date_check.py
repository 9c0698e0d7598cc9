"""How long the up-to-date check of a recorded cell takes, now that it hashes every file.

    python benchmarks/up_to_date_check.py dist/<cell-id> [--repeat N]

`invoke build` on an unchanged cell reads dist/<cell-id>/manifest.json and compares the sha256
of every file it lists with the installed tree (forge.manifest.stale_reason); this times that
comparison alone (best and median of N runs, warm page cache), with the tree's size for scale.
The integration tests only check that a no-op build writes nothing; the time lives here.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from forge import manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cell_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = manifest.read_manifest(args.cell_dir)
    if data is None:
        raise SystemExit(f"error: no readable {manifest.MANIFEST} in {args.cell_dir}")
    files = data.files or {}
    size = sum(r.get("size", 0) for r in files.values())
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        reason = manifest.stale_reason(args.cell_dir, data.input_hash or "")
        times.append(time.perf_counter() - start)
    print(
        f"{len(files)} files, {size / 1e6:.1f} MB: best {min(times) * 1e3:.1f} ms, median {statistics.median(times) * 1e3:.1f} ms"
    )
    print(f"result: {'up to date' if reason is None else reason}")


if __name__ == "__main__":
    main()
