"""The `local` backend: run every step on the host with the host's toolchain."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from forge import proc
from forge.backends.base import FAKETIME_ENV, Backend, Workspace, check_variation_env, varied_command
from forge.config import ccache_remote, process_environment
from forge.errors import ToolMissingError
from forge.matrix import Cell


class LocalBackend(Backend):
    """Host paths are backend paths; the environment is the host's plus the step's."""

    name = "local"

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self._base_env = process_environment() if base_env is None else dict(base_env)

    def prepare(self, cell: Cell, host: Workspace) -> Workspace:
        check_variation_env(self._base_env)
        if self._base_env.get(FAKETIME_ENV) and shutil.which("faketime") is None:
            raise ToolMissingError(
                f"{FAKETIME_ENV} asks for a shifted clock, but faketime is not installed",
                fix="apt-get install faketime (invoke repro installs it itself), or unset " + FAKETIME_ENV,
            )
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
        shared = ccache_remote(self._base_env)  # the host reaches TCP and socket servers alike
        remote = {"CCACHE_REMOTE_STORAGE": shared.url, "CCACHE_COMPILERCHECK": "content"} if shared else {}
        command, full = varied_command(argv, {**self._base_env, **remote, **env})
        proc.run_logged(command, cwd=Path(cwd), env=full, log_path=log_path)

    def output(self, argv: Sequence[str]) -> str | None:
        return proc.capture(argv)

    def copy_out(self, src: PurePosixPath, dest: Path) -> None:
        shutil.copytree(Path(src), dest, symlinks=True, dirs_exist_ok=True)

    def copy_in(self, src: Path, dest: PurePosixPath) -> None:
        shutil.rmtree(Path(dest), ignore_errors=True)
        shutil.copytree(src, Path(dest), symlinks=True)
