"""`invoke rebuild`: rebuild a cell from its manifest alone and check that the bytes match."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from forge import cli as forge_cli
from forge import host, manifest, provenance, repro
from forge.build import rebuild_cell
from forge.config import inside, load_data, process_environment
from forge.log import Progress


def run_rebuild(manifest_arg: str, cli: Mapping[str, object]) -> None:
    """`invoke rebuild dist/<cell>/manifest.json`: drift check, rebuild, byte comparison."""

    path = Path(manifest_arg).resolve()
    recorded = provenance.load_for_rebuild(path)
    env = {**process_environment(), "SOURCE_DATE_EPOCH": str(recorded.source_date_epoch)}
    cfg, tdata = forge_cli.setup({**cli, "backend": recorded.backend}, env)
    out = forge_cli.console()
    scopes = ((recorded.backend, recorded.cell.target),)
    host.ensure_tools("rebuild", env=cfg.environment(), log_path=cfg.cache / "host-tools.log", scopes=scopes)
    root = cfg.cache / "rebuild"
    source = provenance.sources_for(recorded, cfg.repo, root / "src")
    if source != cfg.repo:
        out.print(f"sources: commit {recorded.source_commit} exported (the working tree differs)", markup=False)
        cfg, tdata = replace(cfg, repo=source), load_data(source)
    else:
        out.print(f"sources: the working tree, at commit {recorded.source_commit or '(none recorded)'}", markup=False)
    if recorded.lock_packages is not None:
        drift = provenance.lock_drift(
            recorded.lock_packages, provenance.current_lock_packages(recorded, cfg.repo) or {}
        )
        if drift:
            out.print(f"[yellow]toolchain lock drift since the manifest ({len(drift)} packages):[/]")
            for line in drift:
                out.print(f"  {line}", markup=False)
        else:
            out.print("toolchain lock: same packages as the manifest's")
    # No compiler cache unless asked (then `invoke build`'s): a cached object must not stand in for a compile.
    use_ccache = bool(cli.get("ccache", False))
    if use_ccache and not (root / "ccache").exists():
        root.mkdir(parents=True, exist_ok=True)
        (cfg.cache / "ccache").mkdir(parents=True, exist_ok=True)
        (root / "ccache").symlink_to(cfg.cache / "ccache", target_is_directory=True)
    # The wheel steps run when the manifest records a wheel, whatever FORGE_WHEELS says now.
    wheels = any(rel.startswith("wheel/") for rel in recorded.artifacts)
    rcfg = replace(cfg, cache=root, dist=root / "dist", ccache=use_ccache, wheels=wheels)
    start = time.monotonic()
    # Not `<cell>.lock`: the build inside takes that one (build.cell_lock, same cache root), and
    # flock would then wait on this very process.
    lock = inside(root, f"{recorded.cell.id}.rebuild.lock", what="cell id")
    with repro.exclusive(lock, out.print, "another rebuild of this cell"):
        built = rebuild_cell(recorded, tdata, rcfg, Progress(out, cfg.ci))
    assert built.dist is not None
    rebuilt = provenance.parse_recorded(
        manifest.load_manifest(built.dist).to_json(), str(built.dist / manifest.MANIFEST)
    )
    comparisons = repro.compare_records(recorded.artifacts, rebuilt.artifacts)
    result = repro.ReproResult(f"rebuild of {built.cell_id}", comparisons, (), [time.monotonic() - start])
    trees = (path.parent, built.dist)
    repro.write_report(result, path.parent / "rebuild", trees, cfg.cache / "tools", out.print)
    for comp in result.differing:
        out.print(f"  [red]{comp.outcome.value:>20}[/]  {comp.path}")
    what = f"commit {recorded.source_commit}" if recorded.source_commit else "the working tree"
    out.print(
        f"rebuild of {built.cell_id} from {what}: {result.identical}/{len(comparisons)} files identical ({result.report})"
    )
    repro.raise_for([result])
