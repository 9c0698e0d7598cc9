"""The `local` backend: run every step on the host with the host's toolchain."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from forge import proc
from forge.backends.base import Backend, Workspace
from forge.matrix import Cell


class LocalBackend(Backend):
    """Host paths are backend paths; the environment is the host's plus the step's."""

    name = "local"

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self._base_env = dict(os.environ if base_env is None else base_env)

    def prepare(self, cell: Cell, host: Workspace) -> Workspace:
        for path in (host.build, host.prefix, host.verify_build, host.ccache):
            if path is not None:
                Path(path).mkdir(parents=True, exist_ok=True)
        return host

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: PurePosixPath,
        env: Mapping[str, str],
        log_path: Path,
    ) -> None:
        proc.run_logged(argv, cwd=Path(cwd), env={**self._base_env, **env}, log_path=log_path)

    def output(self, argv: Sequence[str]) -> str | None:
        return proc.capture(argv)

    def copy_out(self, src: PurePosixPath, dest: Path) -> None:
        shutil.copytree(Path(src), dest, symlinks=True, dirs_exist_ok=True)
