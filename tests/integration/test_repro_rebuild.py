"""`invoke rebuild` end to end on a tiny engine/ + verify/ repository (seconds, real cmake/ninja/c++):
a manifest alone rebuilds the same bytes, from the recorded commit when the tree moved on, and a
planted timestamp makes the rebuild fail naming the file."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
import tinyrepo
from rich.console import Console
from tinyrepo import git as _git

from forge import provenance, repro
from forge.build import build_cell
from forge.commands import rebuild as rebuild_cmd
from forge.config import load_config, load_data
from forge.log import Progress
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

ENGINE = (
    """cmake_minimum_required(VERSION 3.18)
project(ember CXX)
option(PLANT_TIMESTAMP "embed the build time in libember_framework" OFF)
set(STAMP "fixed")
if(PLANT_TIMESTAMP OR EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/plant-timestamp")
  # the clock as a build script reads it (CMake's own string(TIMESTAMP) honours SOURCE_DATE_EPOCH)
  execute_process(COMMAND date +%s%N OUTPUT_VARIABLE STAMP OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
add_library(ember_framework SHARED framework.cc)
target_compile_definitions(ember_framework PRIVATE "STAMP=\\"${STAMP}\\"")
install(TARGETS ember_framework EXPORT emberTargets LIBRARY DESTINATION lib)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION lib/cmake/ember FILE ember-config.cmake)
"""
    + tinyrepo.ENGINE_TESTS
)


@pytest.fixture
def tiny_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if missing := [t for t in ("cmake", "ninja", "c++", "git") if shutil.which(t) is None]:
        pytest.fail(f"missing {missing}: apt-get install cmake ninja-build g++ git")
    repo = tinyrepo.make(
        tmp_path / "repo",
        ENGINE,
        "const char* ember_stamp() { return STAMP; }\nint ember_answer() { return 42; }\n",
        commit=True,
    )
    monkeypatch.setenv("FORGE_ROOT", str(repo))  # run_rebuild's configuration reads this repository
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    return repo


def _build(repo: Path) -> Path:
    cfg = load_config(repo, {}, {"backend": "local", "ccache": False})
    result = build_cell(Request.make("host"), load_data(repo), cfg, Progress(Console(file=io.StringIO())))
    assert result.dist is not None and result.result == "passed"
    return result.dist / "manifest.json"


def test_rebuild_from_manifest_matches_and_records_provenance(tiny_repo: Path) -> None:
    manifest_path = _build(tiny_repo)
    data = json.loads(manifest_path.read_text())
    assert data["source_commit"] == _git(tiny_repo, "rev-parse", "HEAD").strip()
    assert data["package"]["name"].endswith(".tar.gz") and (manifest_path.parent / data["package"]["name"]).is_file()
    assert (manifest_path.parent / provenance.PROVENANCE).is_file()

    rebuild_cmd.run_rebuild(str(manifest_path), {})
    report = json.loads((manifest_path.parent / "rebuild" / repro.REPORT_JSON).read_text())
    assert report["reproducible"] is True and report["identical"] == report["compared"] == len(data["files"]) + 1

    # the tree moves on: the rebuild takes the recorded commit's sources instead
    (tiny_repo / "engine" / "framework.cc").write_text("int ember_answer() { return 7; }\n")
    rebuild_cmd.run_rebuild(str(manifest_path), {})
    assert provenance.git_commit(tiny_repo / ".cache" / "forge" / "rebuild" / "src") == data["source_commit"]


def test_rebuild_catches_a_planted_timestamp_and_names_the_file(tiny_repo: Path) -> None:
    (tiny_repo / "engine" / "plant-timestamp").write_text("")
    _git(tiny_repo, "add", ".")
    _git(tiny_repo, "commit", "-q", "-m", "plant")
    manifest_path = _build(tiny_repo)
    with pytest.raises(repro.ReproDifferentError) as caught:
        rebuild_cmd.run_rebuild(str(manifest_path), {})
    assert "install/lib/libember_framework.so" in caught.value.why
    text = (manifest_path.parent / "rebuild" / repro.REPORT_TXT).read_text()
    assert "different  install/lib/libember_framework.so" in text


def test_rebuild_of_another_commit_builds_that_commit(tiny_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest_path = _build(tiny_repo)
    built_at = json.loads(manifest_path.read_text())["source_commit"]
    # a later commit changes what resolves cells but not one engine/ or verify/ byte: the source
    # tree hash stays the same, so only the commit tells the two apart
    with (tiny_repo / "matrix" / "ci.yaml").open("a") as handle:
        handle.write("# moved on\n")
    _git(tiny_repo, "commit", "-q", "-am", "matrix moved on")
    capsys.readouterr()
    rebuild_cmd.run_rebuild(str(manifest_path), {})
    out = capsys.readouterr().out
    assert f"commit {built_at} exported" in out and f"from commit {built_at}:" in out
    exported = tiny_repo / ".cache" / "forge" / "rebuild" / "src"
    assert provenance.git_commit(exported) == built_at
    assert "# moved on" not in (exported / "matrix" / "ci.yaml").read_text()
