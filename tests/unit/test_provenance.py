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
from forge.commands import rebuild as rebuild_cmd
from forge.config import load_config
from forge.errors import ConfigError
from forge.matrix import Request

REPO = Path(__file__).resolve().parents[2]


def _manifest(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "cell": {"id": "host-py3.11-np2.4-gcc12-cpu", "target": "host", "python": "3.11", "numpy": "2.4",
                 "gcc": "12", "cuda": None, "suite": "bookworm", "cmake": "3.25", "bazel": None},
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


def _recorded(**extra: Any) -> provenance.Recorded:
    return provenance.parse_recorded(_manifest(**extra), "m.json")


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
    request = provenance.rebuild_request(_recorded().cell)
    assert request == Request.make(
        "host",
        {"suite": "bookworm", "python": "3.11", "numpy": "2.4", "gcc": "12", "cuda": "none", "cmake": "3.25"},
        origin="manifest",
    )  # fmt: skip


def test_a_cuda_cells_manifest_reads_back_its_cuda_arch_and_the_rebuild_pins_it() -> None:
    cu13 = {**_manifest()["cell"], "target": "linux-x86_64", "cuda": "13.0"}
    pinned = _recorded(cell={**cu13, "cuda_arch": "sm_90", "id": "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm90"})
    assert pinned.cell.value("cuda_arch") == "sm_90"
    assert provenance.rebuild_request(pinned.cell).pin("cuda_arch") == "sm_90"
    # A manifest of before cuda_arch was an axis (no key): the cell's targets were the default.
    old = _recorded(cell={**cu13, "id": "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"}).cell
    assert old.value("cuda_arch") is None and provenance.rebuild_request(old).pin("cuda_arch") is None
    with pytest.raises(ConfigError, match=r"field cell\.cuda_arch "):  # only its one spelling
        _recorded(cell={**cu13, "cuda_arch": "SM_90", "id": "linux-x86_64-py3.11-np2.4-gcc12-cu13.0-sm90"})
    with pytest.raises(ConfigError, match=r"field cell\.id "):  # an id that does not name the pinned targets
        _recorded(cell={**cu13, "cuda_arch": "sm_90", "id": "linux-x86_64-py3.11-np2.4-gcc12-cu13.0"})


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
    assert provenance.load_for_rebuild(path).backend == "docker"


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
    assert provenance.current_lock_packages(_recorded(), tmp_path) == {"deb gcc-12:amd64": "12.2.0-15"}
    assert provenance.current_lock_packages(_recorded(image=None), tmp_path) is None
    assert provenance.current_lock_packages(_recorded(image={"lock": None}), tmp_path) is None


def test_check_sources_says_which_commit_to_check_out() -> None:
    provenance.check_sources(_recorded(), "ab" * 32)
    with pytest.raises(provenance.SourceMismatchError) as caught:
        provenance.check_sources(_recorded(), "00" * 32)
    assert "c" * 40 in caught.value.fix and "00" * 32 in caught.value.why


def test_rebuild_names_drifted_packages_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from forge import build, locks, manifest

    lock = "toolchains/locks/bookworm-gcc12-py3.11-np2.4.txt"
    committed = dict(locks.parse_lock((REPO / lock).read_text(), "x", lock).packages)
    recorded_lock = {**committed, "deb gcc-12:amd64": "12.2.0-1", "deb zlib-gone:amd64": "1:1.2.13"}
    data = _manifest(
        backend="local",
        source_tree_hash=manifest.source_tree_hash(REPO, build.SOURCE_SUBDIRS),
        source_commit=provenance.git_commit(REPO),
        lock_packages=recorded_lock,
        image={"tag": "t", "id": "sha256:1", "lock": lock, "lock_sha256": "2"},
    )
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    calls: list[str] = []

    def stop(request: Request, *args: object) -> None:
        calls.append(capsys.readouterr().out)
        raise ConfigError("stopped before building")

    monkeypatch.setattr(build, "build_cell", stop)
    with pytest.raises(ConfigError, match="stopped before building"):
        rebuild_cmd.run_rebuild(str(path), {})
    (printed,) = calls
    assert "toolchain lock drift since the manifest (2 packages)" in printed
    now = committed["deb gcc-12:amd64"]
    assert f"~ deb gcc-12:amd64 12.2.0-1 -> {now}" in printed and "- deb zlib-gone:amd64 1:1.2.13" in printed
    assert f"at commit {provenance.git_commit(REPO)}" in printed


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
    recorded = _recorded(source_tree_hash=built_from, source_commit=commit)

    assert provenance.sources_for(recorded, repo, tmp_path / "scratch") == repo  # unchanged tree: itself

    (repo / "engine" / "CMakeLists.txt").write_text("# edited since\n")
    source = provenance.sources_for(recorded, repo, tmp_path / "scratch")
    assert source == tmp_path / "scratch"
    assert manifest.source_tree_hash(source, build.SOURCE_SUBDIRS) == built_from
    assert provenance.git_commit(source) == commit

    with pytest.raises(provenance.SourceMismatchError) as caught:  # a commit that never held these sources
        provenance.sources_for(replace(recorded, source_tree_hash="0" * 64), repo, tmp_path / "scratch")
    assert commit in caught.value.fix


# --- hostile manifests: each is refused before anything touches the filesystem or git ---------


def _plant(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "planted" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _refused(path: Path, monkeypatch: pytest.MonkeyPatch) -> ConfigError:
    """run_rebuild on `path` must fail with a ConfigError before any build, git call or removal."""
    from forge import build

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hostile manifest reached a build, git or the filesystem")

    monkeypatch.setattr(build, "build_cell", never)
    monkeypatch.setattr(provenance, "export_commit", never)
    monkeypatch.setattr(provenance.shutil, "rmtree", never)
    with pytest.raises(ConfigError) as caught:
        rebuild_cmd.run_rebuild(str(path), {})
    return caught.value


@pytest.mark.parametrize("planted_id", ["victim", "../../victim", "host-py3.11-np2.4-gcc12-cpu/../../victim"])
def test_a_cell_id_that_is_a_path_deletes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted_id: str
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    cell = {**_manifest()["cell"], "id": str(victim) if planted_id == "victim" else planted_id}
    error = _refused(_plant(tmp_path, _manifest(cell=cell)), monkeypatch)
    assert "cell.id" in error.what and "manifest.json" in error.what and error.fix
    assert (victim / "keep.txt").read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planted", "victim"]  # no lock file beside it


def test_an_id_that_does_not_match_the_axes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cell = {**_manifest()["cell"], "id": "linux-x86_64-py3.11-np2.4-gcc12-cpu"}
    error = _refused(_plant(tmp_path, _manifest(cell=cell)), monkeypatch)
    assert "the cell's axes give the id host-py3.11-np2.4-gcc12-cpu" in error.why


@pytest.mark.parametrize("commit", ["--output=FILE", "HEAD", "c" * 39, "C" * 40, "main", 7])
def test_a_commit_that_is_not_a_full_object_id_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commit: object
) -> None:
    target = tmp_path / "FILE"
    target.write_text("kept\n")
    monkeypatch.chdir(tmp_path)
    error = _refused(_plant(tmp_path, _manifest(source_commit=commit)), monkeypatch)
    assert "source_commit" in error.what and "hex" in error.why
    assert target.read_text() == "kept\n"


def test_resolve_commit_reads_an_option_like_value_as_a_revision(tmp_path: Path) -> None:
    target = tmp_path / "FILE"
    target.write_text("kept\n")
    assert provenance.resolve_commit(REPO, f"--output={target}") is None
    assert provenance.export_commit(REPO, f"--output={target}", tmp_path / "out") is None
    assert target.read_text() == "kept\n" and not (tmp_path / "out").exists()
    assert provenance.resolve_commit(REPO, "0" * 40) is None  # well-formed, but no such commit
    head = provenance.git_commit(REPO)
    assert head is not None and provenance.resolve_commit(REPO, head) == head


@pytest.mark.parametrize("lock", ["/etc/passwd", "toolchains/locks/../../secret.txt", "secret.txt", "toolchains/x.txt"])
def test_a_lock_outside_toolchains_locks_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lock: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET first line\n")
    image = {"tag": "t", "id": "sha256:1", "lock": lock.replace("/etc/passwd", str(secret)), "lock_sha256": "2"}
    error = _refused(_plant(tmp_path, _manifest(image=image, lock_packages={"deb a:amd64": "1"})), monkeypatch)
    assert "image.lock" in error.what and "toolchains/locks/<image-name>.txt" in error.why
    assert "TOP-SECRET" not in error.render()


def test_a_lock_symlinked_out_of_toolchains_locks_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "toolchains" / "locks").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    (tmp_path / "toolchains" / "locks" / "x.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ConfigError, match="outside") as caught:
        provenance.current_lock_packages(_recorded(), tmp_path)
    assert "TOP-SECRET" not in caught.value.render()


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("cell", "host", "expected an object"),
        ("cell", {k: v for k, v in _manifest()["cell"].items() if k != "target"}, "missing target"),
        ("cell", {**_manifest()["cell"], "target": "../x"}, "expected a name"),
        ("cell", {**_manifest()["cell"], "python": "x;rm -rf /"}, "expected a version"),
        ("cell", {**_manifest()["cell"], "extra": 1}, "unknown extra"),
        ("backend", "ssh://evil", "expected one of local, docker"),
        ("source_tree_hash", "../" * 30, "64 lower-case hex"),
        ("source_date_epoch", -5, "not negative"),
        ("source_date_epoch", True, "not negative"),
        ("source_date_epoch", "1700000000", "not negative"),
        ("files", [], "expected an object"),
        ("files", {"../../../etc/cron.d/x": {"sha256": "1" * 64, "size": 1}}, "without '..'"),
        ("files", {"/etc/passwd": {"sha256": "1" * 64, "size": 1}}, "relative"),
        ("files", {"lib/x": {"sha256": "zz", "size": 1}}, "64 hex"),
        ("package", {"name": "../../x.tar.gz", "sha256": "1" * 64, "size": 1}, "host-py3.11-np2.4-gcc12-cpu.tar.gz"),
        ("lock_packages", {"evil": 1}, "deb <name>"),
        ("image", "x", "expected an object"),
    ],
)
def test_each_malformed_field_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: object, why: str
) -> None:
    error = _refused(_plant(tmp_path, _manifest(**{field: value})), monkeypatch)
    assert f"field {field}" in error.what and str(tmp_path) in error.what
    assert why in error.why and error.fix


def test_lock_packages_may_hold_the_locks_wheel_hashes() -> None:
    wheel = "wheel numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.whl"
    packages = {"deb gcc-12:amd64": "12.2.0-14", "pip numpy": "2.4.6", wheel: "sha256:" + "9" * 64}
    assert _recorded(lock_packages=packages).lock_packages == packages


def test_non_utf8_and_non_object_manifests_are_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(b'{"cell": "\xff\xfe"}')
    with pytest.raises(ConfigError, match="is not JSON"):
        provenance.load_for_rebuild(path)
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="is not a forge manifest"):
        provenance.load_for_rebuild(path)


def _two_commits(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose second commit changes matrix/ only: same engine sources, other cells."""
    repo = tmp_path / "repo"
    for part in provenance.SOURCE_PARTS:
        (repo / part).mkdir(parents=True)
        (repo / part / "CMakeLists.txt").write_text(f"# {part}\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "matrix" / "CMakeLists.txt").write_text("# matrix, changed\n")
    _git(repo, "commit", "-q", "-am", "two")
    return repo, first, _git(repo, "rev-parse", "HEAD")


def test_a_manifest_of_another_commit_builds_that_commit_not_the_tree(tmp_path: Path) -> None:
    from forge import build, manifest

    repo, first, second = _two_commits(tmp_path)
    same_hash = manifest.source_tree_hash(repo, build.SOURCE_SUBDIRS)  # engine/verify unchanged
    recorded = _recorded(source_tree_hash=same_hash, source_commit=first)
    source = provenance.sources_for(recorded, repo, tmp_path / "scratch")
    assert source == tmp_path / "scratch" and provenance.git_commit(source) == first
    assert (source / "matrix" / "CMakeLists.txt").read_text() == "# matrix\n"
    assert provenance.sources_for(replace(recorded, source_commit=second), repo, tmp_path / "s2") == repo


def test_a_manifest_of_an_unknown_commit_is_refused(tmp_path: Path) -> None:
    from forge import build, manifest

    repo, _, _ = _two_commits(tmp_path)
    recorded = _recorded(source_tree_hash=manifest.source_tree_hash(repo, build.SOURCE_SUBDIRS), source_commit="a" * 40)
    with pytest.raises(provenance.SourceMismatchError) as caught:
        provenance.sources_for(recorded, repo, tmp_path / "scratch")
    assert "a" * 40 in caught.value.what and "git fetch" in caught.value.fix
    assert not (tmp_path / "scratch").exists()


def test_paths_from_input_stay_inside_forge_directories(tmp_path: Path) -> None:
    from forge.config import inside

    assert inside(tmp_path, "cell-1", what="cell id") == tmp_path / "cell-1"
    for bad in ("..", "../x", "/etc", "a/b", ""):
        with pytest.raises(ConfigError, match="outside"):
            inside(tmp_path, bad, what="cell id")
    (tmp_path / "link").symlink_to("/")
    with pytest.raises(ConfigError, match="outside"):
        inside(tmp_path, "link", what="cell id")


def test_a_recorded_cell_resolves_again_without_a_bazel_pin() -> None:
    from forge.config import load_data
    from forge.resolve import resolve

    data = load_data(Path(__file__).resolve().parents[2])
    cell = _recorded().cell
    request = provenance.rebuild_request(replace(cell, target="linux-x86_64"))
    assert request.pin("bazel") is None and request.pin("suite") == cell.suite
    assert resolve(request, data.toolchains, data.supported).cell == replace(cell, target="linux-x86_64")


WHEEL = "ember-0.1.0-cp311-cp311-manylinux_2_31_x86_64.whl"


def test_a_built_wheel_is_a_subject_and_a_rebuild_artifact() -> None:
    wheel = {"status": "built", "file": WHEEL, "sha256": "3" * 64, "size": 7, "verify": {"status": "passed"}}
    stmt = provenance.statement(_manifest(wheel=wheel))
    assert {"name": f"wheel/{WHEEL}", "digest": {"sha256": "3" * 64}} in stmt["subject"]
    recorded = _recorded(wheel=wheel)
    assert recorded.artifacts[f"wheel/{WHEEL}"] == {"sha256": "3" * 64, "size": 7}
    assert not any(k.startswith("wheel") for k in _recorded(wheel={"status": "not built"}).artifacts)


@pytest.mark.parametrize("file", ["../x.whl", "a/b.whl", "", 3])
def test_a_wheel_record_with_a_bad_file_name_is_refused(file: object) -> None:
    with pytest.raises(ConfigError) as err:
        _recorded(wheel={"status": "built", "file": file, "sha256": "3" * 64, "size": 7})
    assert "field wheel" in str(err.value)


def test_a_bazel_cell_rebuild_exports_the_workspace_files_of_its_commit(tmp_path: Path) -> None:
    cmake_cell = _recorded().cell
    bazel_cell = replace(cmake_cell, bazel="6.5.0")
    assert provenance.export_parts(cmake_cell) == provenance.SOURCE_PARTS
    parts = provenance.export_parts(bazel_cell)
    assert {"WORKSPACE", ".bazelrc", "third_party", "forge/bazel_install.py"} <= set(parts)
    commit = provenance.git_commit(REPO)
    if commit is None:
        pytest.skip("SKIPPED LOUDLY: this checkout has no commit to export")
    out = provenance.export_commit(REPO, commit, tmp_path / "src", parts)
    assert out is not None and (out / "WORKSPACE").is_file() and (out / "forge" / "bazel_install.py").is_file()


def test_a_cuda_cell_hashes_toolchains_cuda_too() -> None:
    from forge import bazel

    cell = _recorded().cell
    assert "toolchains/cuda" not in bazel.source_subdirs(cell)
    assert "toolchains/cuda" in bazel.source_subdirs(replace(cell, cuda="13.0"))
