"""`invoke clean`: remove dist/ and forge's build directories."""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from forge import cli as forge_cli


def run_clean(all_: bool, cli: Mapping[str, object]) -> None:
    """Remove dist/ and forge's build directories (and the compiler cache with --all).

    The instance id stays: it names the owner of this checkout's containers (forge.backends.docker).
    """
    cfg, _ = forge_cli.setup(cli)
    targets = (
        [cfg.dist, *(p for p in cfg.cache.glob("*") if (all_ or p.name != "ccache") and p.name != "instance-id")]
        if cfg.cache.exists()
        else [cfg.dist]
    )
    for path in targets:
        shutil.rmtree(path, ignore_errors=True)
        forge_cli.console().print(f"removed {path}")
