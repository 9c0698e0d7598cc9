"""The default SOURCE_DATE_EPOCH: the last commit that touched what a build reads (forge/config.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from forge.config import _git_epoch


def _commit(repo: Path, path: str, when: int) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(f"{path} at {when}\n")
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", path], check=True, env=env)


def test_a_docs_commit_does_not_move_the_epoch(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "user.email", "t@example.invalid"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "user.name", "t"], check=True)
    _commit(tmp_path, "README.md", 1_600_000_000)
    assert _git_epoch(tmp_path) == 1_600_000_000  # no build input yet: the last commit
    _commit(tmp_path, "engine/src/a.cc", 1_700_000_000)
    _commit(tmp_path, "README.md", 1_750_000_000)
    _commit(tmp_path, "forge/cli.py", 1_760_000_000)
    assert _git_epoch(tmp_path) == 1_700_000_000
    _commit(tmp_path, "toolchains/locks/x.txt", 1_770_000_000)
    assert _git_epoch(tmp_path) == 1_770_000_000


def test_no_git_gives_none(tmp_path: Path) -> None:
    assert _git_epoch(tmp_path / "absent") is None
