"""forge.provenance without building: epochs, the in-toto statement, rebuild inputs and lock drift."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge import provenance
from forge.config import load_config
from forge.errors import ConfigError
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]


def _manifest(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "cell": {"id": "host-py3.11-np2.4-gcc12-cpu", "target": "host", "python": "3.11", "numpy": "2.4",
                 "gcc": "12", "cuda": None, "suite": "bookworm", "cmake": "3.25", "bazel": "4.2.3"},
        "backend": "docker",
        "source_tree_hash": "ab" * 32,
        "source_commit": "c" * 40,
        "source_date_epoch": 1700000000,
        "input_hash": "d" * 64,
        "commands": [{"name": "build", "argv": ["cmake", "--build", "/build"]}],
        "files": {
            "lib/libember_cc.so.0.1.0": {"sha256": "1" * 64, "size": 3},
            "lib/libember_cc.so": {"link": "libember_cc.so.0"},
            "bin/ember-run": {"sha256": "2" * 64, "size": 4},
        },
        "image": {"tag": "forge/toolchain:bookworm-x", "id": "sha256:" + "e" * 64, "lock": "toolchains/locks/x.txt",
                  "lock_sha256": "f" * 64},
    }  # fmt: skip
    data.update(extra)
    return data


def test_tree_epoch_is_stable_and_plausible() -> None:
    epoch = provenance.tree_epoch("0123456789abcdef" * 4)
    assert epoch == provenance.tree_epoch("0123456789abcdef" * 4)
    assert provenance.EPOCH_FLOOR <= epoch < provenance.EPOCH_FLOOR + provenance.EPOCH_SPAN
    assert epoch != provenance.tree_epoch("f" * 64)


def test_settle_epoch_only_replaces_a_missing_epoch() -> None:
    cfg = load_config(REPO, {"SOURCE_DATE_EPOCH": "0"}, {})
    assert provenance.settle_epoch(cfg, "a" * 64, None).source_date_epoch == provenance.tree_epoch("a" * 64)
    assert provenance.settle_epoch(cfg, "a" * 64, "c" * 40).source_date_epoch == 0
    pinned = replace(cfg, source_date_epoch=123)
    assert provenance.settle_epoch(pinned, "a" * 64, None).source_date_epoch == 123


def test_git_commit_of_this_checkout_and_of_no_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *argv], env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    assert provenance.git_commit(repo) == head.stdout.strip() and len(head.stdout.strip()) == 40
    assert provenance.git_commit(tmp_path / "none") is None
    (tmp_path / "none").mkdir()
    assert provenance.git_commit(tmp_path / "none") is None


def test_statement_is_in_toto_with_slsa_predicate() -> None:
    stmt = provenance.statement(_manifest(), started=1700000000.0)
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["predicateType"] == "https://slsa.dev/provenance/v1"
    # every regular file is a subject with its sha256, symlinks are not, names sorted
    assert stmt["subject"] == [
        {"name": "install/bin/ember-run", "digest": {"sha256": "2" * 64}},
        {"name": "install/lib/libember_cc.so.0.1.0", "digest": {"sha256": "1" * 64}},
    ]
    build = stmt["predicate"]["buildDefinition"]
    assert build["externalParameters"]["cell"]["id"] == "host-py3.11-np2.4-gcc12-cpu"
    assert build["internalParameters"]["source_date_epoch"] == 1700000000
    assert build["internalParameters"]["commands"][0]["argv"][0] == "cmake"
    deps = build["resolvedDependencies"]
    assert deps[0]["digest"] == {"sha256": "ab" * 32, "gitCommit": "c" * 40}
    assert deps[1]["digest"] == {"sha256": "e" * 64}
    assert deps[2]["digest"] == {"sha256": "f" * 64}
    run = stmt["predicate"]["runDetails"]
    assert run["builder"]["id"].startswith("forge/") and run["metadata"]["startedOn"] == "2023-11-14T22:13:20Z"
    assert run["metadata"]["invocationId"] == "d" * 64


def test_write_provenance_next_to_manifest(tmp_path: Path) -> None:
    path = provenance.write_provenance(tmp_path, _manifest(image=None, source_commit=None))
    assert path == tmp_path / provenance.PROVENANCE
    data = json.loads(path.read_text())
    assert len(data["predicate"]["buildDefinition"]["resolvedDependencies"]) == 1
    assert "gitCommit" not in data["predicate"]["buildDefinition"]["resolvedDependencies"][0]["digest"]


def test_rebuild_request_pins_every_axis() -> None:
    request = provenance.rebuild_request(_manifest()["cell"])
    assert request == Request.make(
        "host",
        {"suite": "bookworm", "python": "3.11", "numpy": "2.4", "gcc": "12", "cuda": "none", "cmake": "3.25",
         "bazel": "4.2.3"},
        origin="manifest",
    )  # fmt: skip


def test_load_for_rebuild_names_missing_fields(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"cell": {}, "files": {}}))
    with pytest.raises(ConfigError) as caught:
        provenance.load_for_rebuild(path)
    assert "backend, source_tree_hash, source_date_epoch" in caught.value.what
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="is not JSON"):
        provenance.load_for_rebuild(path)
    with pytest.raises(ConfigError, match="cannot read"):
        provenance.load_for_rebuild(tmp_path / "missing.json")
    path.write_text(json.dumps(_manifest()))
    assert provenance.load_for_rebuild(path)["backend"] == "docker"


def test_lock_drift_names_each_changed_package() -> None:
    recorded = {"deb gcc-12:amd64": "12.2.0-14", "pip numpy": "2.4.0", "deb gone:amd64": "1"}
    current = {"deb gcc-12:amd64": "12.2.0-14+deb12u1", "pip numpy": "2.4.0", "deb new:amd64": "2"}
    assert provenance.lock_drift(recorded, current) == [
        "~ deb gcc-12:amd64 12.2.0-14 -> 12.2.0-14+deb12u1",
        "- deb gone:amd64 1",
        "+ deb new:amd64 2",
    ]
    assert provenance.lock_drift(recorded, recorded) == []


def test_current_lock_packages_reads_the_lock_the_manifest_names(tmp_path: Path) -> None:
    (tmp_path / "toolchains" / "locks").mkdir(parents=True)
    (tmp_path / "toolchains" / "locks" / "x.txt").write_text("# lock\ndeb gcc-12:amd64 12.2.0-15\n")
    assert provenance.current_lock_packages(_manifest(), tmp_path) == {"deb gcc-12:amd64": "12.2.0-15"}
    assert provenance.current_lock_packages(_manifest(image=None), tmp_path) is None


def test_check_sources_says_which_commit_to_check_out() -> None:
    provenance.check_sources(_manifest(), "ab" * 32)
    with pytest.raises(provenance.SourceMismatchError) as caught:
        provenance.check_sources(_manifest(), "00" * 32)
    assert "c" * 40 in caught.value.fix and "00" * 32 in caught.value.why


def test_rebuild_names_drifted_packages_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from forge import build, manifest

    lock = tmp_path / "bookworm-x.txt"
    lock.write_text("# lock\ndeb gcc-12:amd64 12.2.0-15\npip numpy 2.4.0\n")
    data = _manifest(
        backend="local",
        source_tree_hash=manifest.source_tree_hash(REPO, build.SOURCE_SUBDIRS),
        lock_packages={"deb gcc-12:amd64": "12.2.0-14", "pip numpy": "2.4.0", "deb zlib1g:amd64": "1:1.2.13"},
        image={"tag": "t", "id": "sha256:1", "lock": str(lock), "lock_sha256": "2"},
    )
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    calls: list[str] = []

    def stop(request: Request, *args: object) -> None:
        calls.append(capsys.readouterr().out)
        raise ConfigError("stopped before building")

    monkeypatch.setattr(build, "build_cell", stop)
    with pytest.raises(ConfigError, match="stopped before building"):
        provenance.run_rebuild(str(path), {})
    (printed,) = calls
    assert "toolchain lock drift since the manifest (2 packages)" in printed
    assert "~ deb gcc-12:amd64 12.2.0-14 -> 12.2.0-15" in printed and "- deb zlib1g:amd64 1:1.2.13" in printed


def _git(repo: Path, *args: str) -> str:
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)
    return proc.stdout.strip()


def test_rebuild_sources_come_from_the_recorded_commit_when_the_tree_moved_on(tmp_path: Path) -> None:
    from forge import build, manifest

    repo = tmp_path / "repo"
    for part in provenance.SOURCE_PARTS:
        (repo / part).mkdir(parents=True)
        (repo / part / "CMakeLists.txt").write_text(f"# {part}\n")
    (repo / "toolchains" / "cmake").mkdir()
    (repo / "toolchains" / "cmake" / "x.cmake").write_text("set(X 1)\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    commit = _git(repo, "rev-parse", "HEAD")
    built_from = manifest.source_tree_hash(repo, build.SOURCE_SUBDIRS)
    recorded = {"source_tree_hash": built_from, "source_commit": commit}

    assert provenance.sources_for(recorded, repo, tmp_path / "scratch") == repo  # unchanged tree: itself

    (repo / "engine" / "CMakeLists.txt").write_text("# edited since\n")
    source = provenance.sources_for(recorded, repo, tmp_path / "scratch")
    assert source == tmp_path / "scratch"
    assert manifest.source_tree_hash(source, build.SOURCE_SUBDIRS) == built_from
    assert provenance.git_commit(source) == commit

    with pytest.raises(provenance.SourceMismatchError) as caught:  # a commit that never held these sources
        provenance.sources_for({**recorded, "source_tree_hash": "0" * 64}, repo, tmp_path / "scratch")
    assert commit in caught.value.fix
