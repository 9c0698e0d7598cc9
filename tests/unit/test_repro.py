"""forge.repro without building anything: variations, comparison, reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from forge import repro


def _variations(tmp_path: Path) -> tuple[repro.Variation, repro.Variation]:
    return repro.default_variations(tmp_path / "a", tmp_path / "b" / "deeper", 2, True)


def test_second_build_varies_everything_it_can(tmp_path: Path) -> None:
    a, b = _variations(tmp_path)
    for name in ("root", "umask", "tz", "lang", "user", "hostname", "jobs", "reverse_env", "container_build"):
        assert getattr(a, name) != getattr(b, name), name
    assert a.ccache and not b.ccache  # the second build never reads the compiler cache
    assert str(a.root) not in str(b.root) and (a.jobs, b.jobs) == (1, 2)


def test_varied_env_sets_locale_zone_user_and_order(tmp_path: Path) -> None:
    a, b = _variations(tmp_path)
    base = {"PATH": "/usr/bin", "HOME": "/root", "LC_TIME": "de_DE.UTF-8", "ZZ": "1"}
    env_a, env_b = repro.varied_env(base, a), repro.varied_env(base, b)
    assert env_b["TZ"] == "Pacific/Kiritimati" and env_b["LANG"] == env_b["LC_ALL"] == "fr_FR.UTF-8"
    assert env_b["USER"] == "reprob" and env_b["FORGE_CONTAINER_HOSTNAME"] == "forge-b-host"
    assert "LC_TIME" not in env_b and env_b["PATH"] == "/usr/bin"
    assert list(env_a) == sorted(env_a) and list(env_b) == sorted(env_b, reverse=True)


def test_applied_sets_and_restores_process_state(tmp_path: Path) -> None:
    _, b = _variations(tmp_path)
    before_env = dict(os.environ)
    before_umask = os.umask(0o022)
    os.umask(before_umask)
    with repro.applied(b):
        assert os.environ["TZ"] == "Pacific/Kiritimati"
        current = os.umask(0)
        os.umask(current)
        assert current == 0o077
    assert dict(os.environ) == before_env
    after = os.umask(0o022)
    os.umask(after)
    assert after == before_umask


def test_compare_records_sorts_and_classifies() -> None:
    first = {
        "b": {"sha256": "1", "size": 1},
        "a": {"sha256": "2", "size": 1},
        "l": {"link": "x"},
        "gone": {"sha256": "3"},
    }
    second = {
        "a": {"sha256": "2", "size": 1},
        "b": {"sha256": "9", "size": 1},
        "l": {"link": "y"},
        "new": {"sha256": "4"},
    }
    result = {c.path: c.outcome for c in repro.compare_records(first, second)}
    assert list(result) == ["a", "b", "gone", "l", "new"]
    assert result == {
        "a": repro.Outcome.IDENTICAL,
        "b": repro.Outcome.DIFFERENT,
        "gone": repro.Outcome.ONLY_FIRST,
        "l": repro.Outcome.DIFFERENT,
        "new": repro.Outcome.ONLY_SECOND,
    }


def _trees(tmp_path: Path, second_text: str) -> tuple[Path, Path]:
    trees = (tmp_path / "one", tmp_path / "two")
    for tree, text in zip(trees, ("same\nline 2\n", second_text), strict=True):
        (tree / "lib").mkdir(parents=True)
        (tree / "lib" / "x.txt").write_text(text)
        (tree / "same.txt").write_text("constant")
    return trees


def test_report_without_differences_has_no_diffs(tmp_path: Path) -> None:
    trees = _trees(tmp_path, "same\nline 2\n")
    result = repro.compare_trees("demo", trees, _variations(tmp_path))
    result.seconds = [10.0, 11.0]
    path = repro.write_report(result, tmp_path / "report", trees, tmp_path / "tools")
    data = json.loads((tmp_path / "report" / repro.REPORT_JSON).read_text())
    assert data["reproducible"] and data["compared"] == 2 and data["identical"] == 2
    assert data["ratio_vs_one_build"] == 2.1
    assert not (tmp_path / "report" / repro.DIFFS_DIR).exists()
    assert "2/2 artifacts identical" in path.read_text() and "not varied: wall clock" in path.read_text()
    repro.raise_for([result])


def test_difference_fails_names_file_and_falls_back_to_a_byte_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_diffoscope(tools: Path, install: bool = True, log: object = None) -> Path:
        raise repro.ToolMissingError("could not install diffoscope from PyPI", "offline")

    monkeypatch.setattr(repro, "diffoscope_path", no_diffoscope)
    trees = _trees(tmp_path, "same\nline 3\n")
    result = repro.compare_trees("demo", trees, _variations(tmp_path))
    messages: list[str] = []
    repro.write_report(result, tmp_path / "report", trees, tmp_path / "tools", messages.append)
    diff = (tmp_path / "report" / repro.DIFFS_DIR / "lib" / "x.txt.txt").read_text()
    assert "first difference at byte 10" in diff and "line 3" in diff
    assert any("diffoscope" in m for m in messages)
    with pytest.raises(repro.ReproDifferentError) as caught:
        repro.raise_for([result])
    assert "demo: lib/x.txt" in caught.value.why and caught.value.exit_code == 9
    assert "different  lib/x.txt" in (tmp_path / "report" / repro.REPORT_TXT).read_text()


def test_snapshot_copies_sources_without_build_dirs_and_keeps_the_commit(tmp_path: Path) -> None:
    from forge import manifest, provenance

    repo = tmp_path / "repo"
    for part in repro.SNAPSHOT_PARTS:
        (repo / part / "build-x").mkdir(parents=True)
        (repo / part / "build-x" / "junk.o").write_text("junk")
        (repo / part / "CMakeLists.txt").write_text(part)
    (repo / "engine" / "tool.sh").write_text("#!/bin/sh\n")
    (repo / "engine" / "tool.sh").chmod(0o755)
    snap = repro.snapshot_sources(repo, tmp_path / "snap")
    assert not list(snap.rglob("junk.o")) and (snap / "verify" / "CMakeLists.txt").read_text() == "verify"
    subdirs = ("engine", "verify", "toolchains")
    assert manifest.source_tree_hash(snap, subdirs) == manifest.source_tree_hash(repo, subdirs)
    assert provenance.git_commit(snap) is None  # repo is no git checkout: no commit to note
