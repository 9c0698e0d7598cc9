"""Hashes, manifest records and the atomic publication of dist/<cell-id>/."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from forge import manifest
from forge.build import INSTALLED_FILES, check_recorded_files
from forge.errors import BackendError, ConfigError
from forge.verify import SuiteStatus


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_source_tree_hash_tracks_content_and_skips_build_dirs(tmp_path: Path) -> None:
    make_tree(tmp_path, {"engine/a.cc": "int a;", "engine/build-x/junk.o": "x", "verify/b.cc": "int b;"})
    first = manifest.source_tree_hash(tmp_path, ["engine", "verify"])
    (tmp_path / "engine/build-x/junk.o").write_text("changed")
    assert manifest.source_tree_hash(tmp_path, ["engine", "verify"]) == first
    (tmp_path / "engine/a.cc").write_text("int a = 1;")
    assert manifest.source_tree_hash(tmp_path, ["engine", "verify"]) != first


def test_a_source_folder_named_build_something_is_hashed(tmp_path: Path) -> None:
    """engine/python/build_support (the wheel's metadata provider) is source, not a build directory:
    an edit there changes the cell's input hash (it used to be skipped with every build* name)."""
    make_tree(
        tmp_path, {"engine/python/build_support/meta.py": "A = 1", "engine/build/x.o": "o", "engine/build.d/y": "y"}
    )
    first = manifest.source_tree_hash(tmp_path, ["engine"])
    for junk in ("engine/build/x.o", "engine/build.d/y"):
        (tmp_path / junk).write_text("changed")
    assert manifest.source_tree_hash(tmp_path, ["engine"]) == first
    (tmp_path / "engine/python/build_support/meta.py").write_text("A = 2")
    assert manifest.source_tree_hash(tmp_path, ["engine"]) != first


def test_file_records_hash_every_file_and_link(tmp_path: Path) -> None:
    make_tree(tmp_path, {"lib/libx.so.1": "ELF", "include/x.h": "#pragma once\n"})
    (tmp_path / "lib/libx.so").symlink_to("libx.so.1")
    records = manifest.file_records(tmp_path)
    assert records["lib/libx.so.1"] == {"sha256": hashlib.sha256(b"ELF").hexdigest(), "size": 3}
    assert records["lib/libx.so"] == {"link": "libx.so.1"}
    assert list(records) == sorted(records)


def publish_result(dist: Path, cell_id: str, marker: str, input_hash: str = "h") -> Path:
    tmp = manifest.staging_dir(dist, cell_id)
    make_tree(tmp / "install", {"lib/lib.so": marker})
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "cell": {"id": cell_id},
        "input_hash": input_hash,
        "result": "passed",
        "files": manifest.file_records(tmp / "install"),
    }
    manifest.write_json(tmp / manifest.MANIFEST, data)
    return manifest.publish(tmp, dist, cell_id)


def test_publish_replaces_and_up_to_date_checks_files(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    final = publish_result(dist, "c1", "one")
    assert manifest.is_up_to_date(final, "h") and not manifest.is_up_to_date(final, "other")
    publish_result(dist, "c1", "two!")
    assert (final / "install/lib/lib.so").read_text() == "two!"
    assert sorted(p.name for p in dist.iterdir()) == ["c1"]  # no temp or old directories left
    (final / "install/lib/lib.so").write_text("x")  # damaged artifact: not up to date
    assert not manifest.is_up_to_date(final, "h")


def test_failure_while_assembling_leaves_previous_result(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    publish_result(dist, "c1", "good")
    tmp = manifest.staging_dir(dist, "c1")
    (tmp / "partial").write_text("half")
    # the builder removes its temp dir on failure; a crash leaves it for recover() to sweep
    tmp.rename(dist / ".tmp-c1-999999999")
    manifest.recover(dist, "c1")
    assert sorted(p.name for p in dist.iterdir()) == ["c1"]
    assert (dist / "c1/install/lib/lib.so").read_text() == "good"


def test_recover_restores_result_cut_between_renames(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    final = publish_result(dist, "c1", "good")
    final.rename(dist / ".old-c1-123")  # crash after the first rename of publish()
    manifest.recover(dist, "c1")
    assert (dist / "c1/install/lib/lib.so").read_text() == "good"


def test_interrupt_during_publish_is_deferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    publish_result(dist, "c1", "old")
    tmp = manifest.staging_dir(dist, "c1")
    make_tree(tmp / "install", {"lib/lib.so": "new"})
    real_rename = Path.rename

    def rename_and_signal(self: Path, target: Path) -> Path:
        os.kill(os.getpid(), 2)  # SIGINT arrives between the two renames: blocked until both are done
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename_and_signal)
    with pytest.raises(KeyboardInterrupt):
        manifest.publish(tmp, dist, "c1")
    monkeypatch.undo()
    assert (dist / "c1/install/lib/lib.so").read_text() == "new"
    assert not list(dist.glob(".tmp-*"))


def test_up_to_date_hashes_every_file_so_a_same_size_change_is_found(tmp_path: Path) -> None:
    final = publish_result(tmp_path / "dist", "c1", "0123456789")
    assert manifest.stale_reason(final, "h") is None
    (final / "install/lib/lib.so").write_text("01234XXXX9")  # bytes overwritten in place, size unchanged
    reason = manifest.stale_reason(final, "h")
    assert reason is not None and "lib/lib.so: changed (sha256 differs" in reason


def test_tree_problems_name_missing_changed_and_unlisted_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "install", {"bin/ember-run": "run", "lib/pkgconfig/ember_cc.pc": "pc", "a.h": "h"})
    (root / "lib/libx.so").symlink_to("libx.so.1")
    records = manifest.file_records(root)
    assert manifest.tree_problems(root, records) == []
    (root / "bin/ember-run").unlink()
    (root / "lib/pkgconfig/ember_cc.pc").unlink()
    (root / "a.h").write_text("H")
    (root / "lib/libx.so").unlink()
    (root / "lib/libx.so").symlink_to("other")
    (root / "extra.txt").write_text("?")
    assert manifest.tree_problems(root, records) == [
        "a.h: changed (sha256 differs from the manifest)",
        "bin/ember-run: missing",
        "lib/libx.so: changed (links to other, libx.so.1 was recorded)",
        "lib/pkgconfig/ember_cc.pc: missing",
        "extra.txt: not in the manifest",
    ]


@pytest.mark.parametrize("rel", ["../outside", "/etc/passwd", "a/../../b", "", "a//b"])
def test_tree_problems_refuse_paths_outside_the_tree(tmp_path: Path, rel: str) -> None:
    (tmp_path / "install").mkdir()
    problems = manifest.tree_problems(tmp_path / "install", {rel: {"sha256": "0" * 64, "size": 1}})
    assert problems == [f"{rel!r}: not a valid manifest entry"]


@pytest.mark.parametrize("records", [None, {}, [], {"a": "not a record"}, {"a": {"size": 1}}])
def test_tree_problems_of_a_malformed_files_record(tmp_path: Path, records: object) -> None:
    make_tree(tmp_path / "install", {"a": "x"})
    assert manifest.tree_problems(tmp_path / "install", records) != []


def test_verify_first_checks_the_installed_tree(tmp_path: Path) -> None:
    final = publish_result(tmp_path / "dist", "c1", "lib")
    assert check_recorded_files(final).passed
    (final / "install/lib/lib.so").unlink()
    result = check_recorded_files(final)
    assert (result.name, result.status, result.detail) == (INSTALLED_FILES, SuiteStatus.FAILED, "lib/lib.so: missing")
    (final / "install/lib/lib.so").write_text("lib")
    data = json.loads((final / manifest.MANIFEST).read_text())  # the raw JSON, to damage
    assert check_recorded_files(final).passed
    data["wheel"] = {"status": "built", "file": "ember.whl", "sha256": "0" * 64, "size": 1}
    manifest.write_json(final / manifest.MANIFEST, data)
    result = check_recorded_files(final)
    assert (result.status, result.detail) == (SuiteStatus.FAILED, "wheel/ember.whl: missing")
    (final / manifest.MANIFEST).write_text("{")
    with pytest.raises(BackendError, match="missing or unreadable"):
        check_recorded_files(final)


# ---- the typed Manifest (read and written in forge/manifest.py only) ---------------------------


def _written(tmp_path: Path) -> dict[str, Any]:
    """A manifest as build.manifest_data + record write it, with provenance's and a backend's extras."""
    return {
        "schema": 1,
        "forge": "0.1.0",
        "cell": {"target": "host", "id": "host-py3.11-np2.4-gcc12-cpu"},
        "backend": "docker",
        "input_hash": "a" * 64,
        "source_tree_hash": "b" * 64,
        "source_date_epoch": 1700000000,
        "toolchain": {"c++": "g++ 12"},
        "steps": [{"name": "configure", "seconds": 1.0, "status": "ok"}],
        "verify": {"suites": [], "passed": 0, "failed": 0, "mode": "native", "reference": None},
        "result": "verify-failed",
        "files": {"lib/libx.so": {"sha256": "c" * 64, "size": 3}},
        "package": {"name": "x.tar.gz", "sha256": "d" * 64},
        "source_commit": None,
        "commands": [{"name": "configure", "argv": ["cmake"]}],
        "container_versions": {"cmake": "3.25"},
    }


def test_manifest_round_trips_the_json_on_disk(tmp_path: Path) -> None:
    data = _written(tmp_path)
    record = manifest.Manifest.from_json(data, "m.json")
    assert record.result is manifest.Result.VERIFY_FAILED and record.backend is manifest.BackendName.DOCKER
    assert record.schema_version == manifest.SCHEMA and record.cell_id == "host-py3.11-np2.4-gcc12-cpu"
    assert record.extra["commands"] == data["commands"] and record.extra["source_commit"] is None
    assert record.to_json() == data, "readers (report, compare, release, rebuild) see the same keys and values"
    cell = tmp_path / "host-py3.11-np2.4-gcc12-cpu"
    cell.mkdir()
    manifest.write_manifest(cell, record)
    assert manifest.read_manifest(cell) == record == manifest.load_manifest(cell)
    (cell / manifest.MANIFEST).write_text("{")  # the lenient reader: None where load_manifest says why
    assert manifest.read_manifest(cell) is None
    with pytest.raises(ConfigError, match="is not JSON"):
        manifest.load_manifest(cell)


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("{not json", "is not JSON"),
        ('{"schema": 0, "forge": "0.0.1"}', "manifest schema 0 is not the one this forge reads (1)"),
        ("[1, 2]", "is not a forge manifest"),
        ('{"schema": 1, "forge": "0.1.0", "cell": {}, "result": "great"}', "'great' is not a valid Result"),
        ('{"schema": 1, "forge": "0.1.0", "result": "passed"}', "field `cell` is missing"),
        ('{"schema": 1, "forge": "0.1.0", "cell": {}, "result": "passed", "files": []}', "field `files` is not a dict"),
    ],
)
def test_an_old_or_corrupt_manifest_names_the_file_and_the_fix(tmp_path: Path, text: str, expect: str) -> None:
    cell = tmp_path / "linux-x86_64-py3.11-np2.4-gcc12-cpu"
    cell.mkdir()
    (cell / manifest.MANIFEST).write_text(text)
    with pytest.raises(ConfigError) as info:
        manifest.load_manifest(cell)
    assert expect in info.value.what
    assert str(cell / manifest.MANIFEST) in info.value.what or str(cell) in info.value.what
    assert f"invoke build --cell {cell.name} --force" in info.value.fix


def test_a_missing_manifest_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        manifest.load_manifest(tmp_path / "host-py3.11-np2.4-gcc12-cpu")
    assert "cannot read" in info.value.what and "invoke build --cell host-py3.11-np2.4-gcc12-cpu" in info.value.fix


def test_target_os_and_compiler_provider_are_closed_sets(tmp_path: Path) -> None:
    """toolchains/targets.yaml's `os` and `compiler.provider` read into enums; a typo names the file, line and choices."""
    import shutil

    from forge.toolchains import OS, CompilerProvider, load_toolchains

    repo = Path(__file__).resolve().parents[2]
    root = tmp_path / "toolchains"
    shutil.copytree(repo / "toolchains", root, ignore=shutil.ignore_patterns("locks", "cmake", "bazel"))
    data = load_toolchains(root)
    assert data.targets["macos-arm64"].os is OS.MACOS and f"{data.targets['macos-arm64'].os}" == "macos"
    assert data.targets["linux-aarch64"].compiler_provider is CompilerProvider.DEBIAN
    text = (root / "targets.yaml").read_text()
    (root / "targets.yaml").write_text(text.replace("provider: pypi", "provider: pipy", 1))
    with pytest.raises(ConfigError) as info:
        load_toolchains(root)
    assert "pipy" in info.value.what and "targets.yaml" in info.value.what and "pypi" in info.value.render()


def test_up_to_date_checks_the_recorded_wheel_too(tmp_path: Path) -> None:
    final = publish_result(tmp_path / "dist", "c1", "0123456789")
    name = "ember-0.1.0-cp311-cp311-manylinux_2_31_x86_64.whl"
    (final / "wheel").mkdir()
    (final / "wheel" / name).write_bytes(b"wheel")
    data = json.loads((final / manifest.MANIFEST).read_text())  # the raw JSON, to damage
    data["wheel"] = {"status": "built", "file": name, "sha256": manifest.sha256_file(final / "wheel" / name), "size": 5}
    manifest.write_json(final / manifest.MANIFEST, data)
    assert manifest.stale_reason(final, "h") is None
    (final / "wheel" / name).write_bytes(b"WHEEL")
    reason = manifest.stale_reason(final, "h")
    assert reason is not None and f"wheel/{name}: changed" in reason
    (final / "wheel" / name).unlink()
    reason = manifest.stale_reason(final, "h")
    assert reason is not None and f"wheel/{name}: missing" in reason
    data["wheel"] = {"status": "not built", "reason": "wheels are opt-in"}
    manifest.write_json(final / manifest.MANIFEST, data)
    assert manifest.stale_reason(final, "h") is None  # a wheel not built is no artifact
