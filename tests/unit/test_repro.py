"""forge.repro without building anything: variations, comparison, reports."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest

from forge import repro
from forge.backends.local import LocalBackend
from forge.build import make_backend
from forge.config import Config
from forge.errors import ConfigError, StepFailedError, ToolMissingError


def _variations(tmp_path: Path) -> tuple[repro.Variation, repro.Variation]:
    return repro.default_variations(tmp_path / "a", tmp_path / "b" / "deeper", 2, True)


def test_second_build_varies_everything_it_can(tmp_path: Path) -> None:
    a, b = _variations(tmp_path)
    for name in (
        "root", "umask", "tz", "lang", "user", "hostname", "jobs", "reverse_env", "container_build",
        "container_user", "clock",
    ):  # fmt: skip
        assert getattr(a, name) != getattr(b, name), name
    assert a.ccache and not b.ccache  # the second build never reads the compiler cache
    assert a.clock == "" and b.clock == "+397d"  # more than a year: the date and the year both move
    assert str(a.root) not in str(b.root) and (a.jobs, b.jobs) == (2, 3)


def test_varied_env_sets_locale_zone_user_and_order(tmp_path: Path) -> None:
    a, b = _variations(tmp_path)
    base = {"PATH": "/usr/bin", "HOME": "/root", "LC_TIME": "de_DE.UTF-8", "ZZ": "1"}
    env_a, env_b = repro.varied_env(base, a), repro.varied_env(base, b)
    assert env_b["TZ"] == "Pacific/Kiritimati" and env_b["LANG"] == env_b["LC_ALL"] == "fr_FR.UTF-8"
    assert env_b["USER"] == "reprob" and env_b["FORGE_CONTAINER_HOSTNAME"] == "forge-b-host"
    assert "LC_TIME" not in env_b and env_b["PATH"] == "/usr/bin"
    assert env_b["FORGE_CONTAINER_USER"] == "forge-b" and env_a["FORGE_CONTAINER_USER"] == "forge"
    assert (env_a["FORGE_UMASK"], env_b["FORGE_UMASK"]) == ("022", "077")
    assert env_b["FORGE_FAKETIME"] == "+397d" and "FORGE_FAKETIME" not in env_a
    assert "FORGE_FAKETIME" not in repro.varied_env({"FORGE_FAKETIME": "+1d"}, a)  # a runs on the real clock
    assert list(env_a) == sorted(env_a) and list(env_b) == sorted(env_b, reverse=True)


def test_not_varied_says_what_the_backend_could_not_vary(tmp_path: Path) -> None:
    a, b = _variations(tmp_path)
    docker = repro.not_varied((a, b), "docker")
    local = repro.not_varied((a, b), "local")
    assert not any("uid" in item for item in docker) and any("uid" in item for item in local)
    assert any("zig" in item for item in docker)  # libfaketime cannot reach static binaries
    unshifted = repro.not_varied((a, replace(b, clock="")), "local")
    assert any("faketime is not installed" in item for item in unshifted)
    result = repro.ReproResult("cell", [], (a, b), backend="docker")
    assert repro.render_text(result).count("not varied:") == len(docker)
    bazel = repro.ReproResult("cell", [], (a, replace(b, clock="")), backend="docker", clock_why=repro.BAZEL_CLOCK)
    assert "clock shifted" not in repro.render_text(bazel) and "Bazel runs its actions" in repro.render_text(bazel)
    assert not any("faketime is not installed" in item for item in bazel.as_dict()["not_varied"])


def test_varied_command_wraps_in_faketime_and_umask() -> None:
    from forge.backends.base import check_variation_env, varied_command

    assert varied_command(["cc", "-c", "x.c"], {"A": "1"}) == (["cc", "-c", "x.c"], {"A": "1"})
    argv, env = varied_command(["cc", "-c", "x.c"], {"FORGE_FAKETIME": "+397d", "FORGE_UMASK": "077"})
    assert argv[:3] == ["sh", "-c", 'umask 077 && exec "$@"']
    assert argv[4:] == ["faketime", "-f", "+397d", "cc", "-c", "x.c"]
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == env["NO_FAKE_STAT"] == "1"
    for bad in ({"FORGE_UMASK": "u=rwx"}, {"FORGE_UMASK": "0999"}, {"FORGE_FAKETIME": "next year"}):
        with pytest.raises(ConfigError) as caught:
            check_variation_env(bad)
        assert next(iter(bad)) in caught.value.what and "unset it" in caught.value.fix
    check_variation_env({"FORGE_UMASK": "0077", "FORGE_FAKETIME": "-30d"})


def test_shifted_clock_and_umask_reach_a_local_command(tmp_path: Path) -> None:
    if shutil.which("faketime") is None:  # `invoke test` installs it (forge.host.TEST_TOOLS); unit tests never do
        pytest.fail("faketime is not installed: apt-get install faketime (or run the tests with `invoke test`)")
    log = tmp_path / "log.txt"
    env = {"PATH": os.environ["PATH"], "FORGE_FAKETIME": "+397d", "FORGE_UMASK": "077"}
    script = "import os, time; open('f', 'w').close(); print(int(time.time()), oct(os.stat('f').st_mode & 0o777))"
    LocalBackend(env).run(["python3", "-c", script], cwd=PurePosixPath(tmp_path), env={}, log_path=log)
    seen, mode = log.read_text().splitlines()[-1].split()
    assert int(seen) - time.time() > 396 * 86400 and mode == "0o600"


def test_python_sleeps_under_the_shifted_clock_with_the_wheel_steps_env(tmp_path: Path) -> None:
    """libfaketime with a real monotonic clock makes Python's time.sleep fail with EINVAL (pip and
    scikit-build-core sleep in subprocess waits): the wheel steps' PYTHON_SLEEP_ENV lets them run in
    repro's second build, and varied_command keeps what the step says."""
    from forge.backends.base import PYTHON_SLEEP_ENV, varied_command

    if shutil.which("faketime") is None:
        pytest.fail("faketime is not installed: apt-get install faketime (or run the tests with `invoke test`)")
    _, env = varied_command(["python3"], {"FORGE_FAKETIME": "+397d", **dict(PYTHON_SLEEP_ENV)})
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "0" and env["NO_FAKE_STAT"] == "1"
    script = "import time; time.sleep(0.01); print('slept', int(time.time()))"
    variation = {"PATH": os.environ["PATH"], "FORGE_FAKETIME": "+397d"}
    log = tmp_path / "log.txt"
    LocalBackend(variation).run(
        ["python3", "-c", script], cwd=PurePosixPath(tmp_path), env=dict(PYTHON_SLEEP_ENV), log_path=log
    )
    word, seen = log.read_text().splitlines()[-1].split()
    assert word == "slept" and int(seen) - time.time() > 396 * 86400
    with pytest.raises(StepFailedError):  # what the wheel steps met before: OSError 22 from time.sleep
        LocalBackend(variation).run(["python3", "-c", script], cwd=PurePosixPath(tmp_path), env={}, log_path=log)


def test_local_backend_names_missing_faketime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from test_docker_backend import CELL

    from forge.backends.base import Workspace

    monkeypatch.setattr(shutil, "which", lambda name: None)
    ws = Workspace(*(PurePosixPath(tmp_path / n) for n in ("src", "build", "stage", "verify")))
    with pytest.raises(ToolMissingError) as caught:
        LocalBackend({"FORGE_FAKETIME": "+397d"}).prepare(CELL, ws)
    assert "faketime" in caught.value.what and "apt-get install faketime" in caught.value.fix


def test_a_variation_reaches_the_backends_through_config_not_the_process_environment(tmp_path: Path) -> None:
    """repro varies a build by a frozen Config (its env, directories, jobs) and its umask; os.environ is never rewritten."""
    _, b = _variations(tmp_path)
    cfg = Config(
        tmp_path, tmp_path / "dist", tmp_path / "cache", "local", 2, True, False, 1700000000, False, False, False
    )
    cfg = replace(cfg, env={"PATH": "/usr/bin", "LC_TIME": "de_DE.UTF-8", "FORGE_FAKETIME": "+1d"})
    before_env = dict(os.environ)
    vcfg = repro.varied_config(cfg, b)
    assert dict(os.environ) == before_env
    env = vcfg.environment()
    assert env["TZ"] == "Pacific/Kiritimati" and env["FORGE_CONTAINER_USER"] == "forge-b" and "LC_TIME" not in env
    assert env["FORGE_FAKETIME"] == b.clock and env["FORGE_UMASK"] == "077"
    assert list(env) == sorted(env, reverse=True), "the second build sees its environment in reverse order"
    assert (vcfg.cache, vcfg.jobs, vcfg.ccache, vcfg.force) == (b.root, b.jobs, False, True)
    # b builds what is compared and nothing else; a (published afterwards) keeps every check and its .debug files
    assert (cfg.verify, cfg.debug_info) == (True, True) and (vcfg.verify, vcfg.debug_info) == (False, False)
    a = repro.default_variations(tmp_path / "a", tmp_path / "b", 2, True)[0]
    assert (repro.varied_config(cfg, a).verify, repro.varied_config(cfg, a).debug_info) == (True, True)
    assert repro.UNCHECKED in b.describe() and repro.UNCHECKED not in a.describe()
    published_b = repro.published_variations(tmp_path / "a", tmp_path / "b", 2, True)[1]
    assert not published_b.checks and repro.varied_config(cfg, published_b).verify is False
    assert cfg.env == {"PATH": "/usr/bin", "LC_TIME": "de_DE.UTF-8", "FORGE_FAKETIME": "+1d"}, "cfg itself is unchanged"
    backend = make_backend("local", env=env)
    assert isinstance(backend, LocalBackend) and backend._base_env == env
    before_umask = os.umask(0o022)
    os.umask(before_umask)
    with repro.umask(b):
        current = os.umask(0)
        os.umask(current)
        assert current == 0o077
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
        raise ToolMissingError("could not install diffoscope from PyPI", "offline")

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
    (repo / "engine" / "python" / "build_support").mkdir(parents=True)  # source, read by the wheel build
    (repo / "engine" / "python" / "build_support" / "meta.py").write_text("A = 1")
    snap = repro.snapshot_sources(repo, tmp_path / "snap")
    assert not list(snap.rglob("junk.o")) and (snap / "verify" / "CMakeLists.txt").read_text() == "verify"
    assert (snap / "engine" / "python" / "build_support" / "meta.py").read_text() == "A = 1"
    subdirs = ("engine", "verify", "toolchains")
    assert manifest.source_tree_hash(snap, subdirs) == manifest.source_tree_hash(repo, subdirs)
    assert provenance.git_commit(snap) is None  # repo is no git checkout: no commit to note


def _reproduced_cell(tmp_path: Path, cell_id: str) -> Path:
    """dist/<cell-id>/ as repro publishes it: the first build's tree, manifest, package and report."""
    from forge import manifest

    trees = []
    for side in ("a", "b"):
        cell = tmp_path / side / cell_id
        (cell / "install" / "lib").mkdir(parents=True)
        (cell / "install" / "lib" / "libember.so").write_bytes(b"same bytes")
        (cell / f"{cell_id}.tar.gz").write_bytes(b"same archive")
        package = {"name": f"{cell_id}.tar.gz", "sha256": manifest.sha256_file(cell / f"{cell_id}.tar.gz"), "size": 12}
        data = {
            "schema": manifest.SCHEMA,
            "forge": "0",
            "cell": {},
            "result": "passed",
            "files": manifest.file_records(cell / "install"),
            "package": package,
        }
        manifest.write_json(cell / manifest.MANIFEST, data)
        trees.append(cell)
    result = repro.compare_trees(cell_id, (trees[0], trees[1]), _variations(tmp_path), repro.is_cell_artifact)
    repro.write_report(result, trees[0], (trees[0], trees[1]), tmp_path / "tools")
    return trees[0]


def test_a_repro_report_in_the_cell_is_reused_only_while_it_fits(tmp_path: Path) -> None:
    cell = _reproduced_cell(tmp_path, "linux-x86_64-py3.11-np2.4-gcc12-cpu")
    report = repro.reusable_report(cell)
    assert report is not None and report["identical"] == 2
    (cell / "install" / "lib" / "libember.so").write_bytes(b"other bytes")  # the tree moved on
    assert repro.reusable_report(cell) is None
    (cell / "install" / "lib" / "libember.so").write_bytes(b"same bytes")
    data = json.loads((cell / repro.REPORT_JSON).read_text())
    (cell / repro.REPORT_JSON).write_text(json.dumps({**data, "reproducible": False}))
    assert repro.reusable_report(cell) is None
    (cell / repro.REPORT_JSON).write_text(json.dumps({**data, "name": "another-cell"}))
    assert repro.reusable_report(cell) is None
    (cell / repro.REPORT_JSON).write_text(json.dumps({**data, "compared": 1, "identical": 1}))
    assert repro.reusable_report(cell) is None  # compared fewer artifacts than the manifest records
    (cell / repro.REPORT_JSON).write_text("{")
    assert repro.reusable_report(cell) is None
    (cell / repro.REPORT_JSON).write_text(json.dumps(data))
    assert repro.reusable_report(cell) is not None


def test_published_first_build_varies_from_the_second_in_jobs_too(tmp_path: Path) -> None:
    a, b = repro.published_variations(tmp_path / "a", tmp_path / "b" / "deeper", 2, True)
    assert a.published and not b.published and (a.jobs, b.jobs) == (2, 3)
    assert a.ccache and not b.ccache and b.clock == "+397d" and b.container_user == "forge-b"
    assert "the published build" in a.describe() and "clock real" in a.describe()
    assert "the published build" not in b.describe()


def test_a_published_build_is_a_first_build_only_when_it_fits(tmp_path: Path) -> None:
    from forge import manifest

    cell = _reproduced_cell(tmp_path, "linux-x86_64-py3.11-np2.4-gcc12-cpu")
    assert repro.published_problem(cell, wheels=False) is None
    assert repro.published_problem(cell, wheels=True) == "it was built without the wheel steps"
    data = json.loads((cell / manifest.MANIFEST).read_text())
    manifest.write_json(cell / manifest.MANIFEST, {**data, "wheel": {"status": "refused", "reason": "no armv7 NumPy"}})
    assert repro.published_problem(cell, wheels=True) is None  # the second build refuses it as well
    manifest.write_json(cell / manifest.MANIFEST, {**data, "wheel": {"status": "built", "file": "w.whl"}})
    assert "pass --wheels" in str(repro.published_problem(cell, wheels=False))
    manifest.write_json(cell / manifest.MANIFEST, {**data, "result": "verify-failed"})
    assert repro.published_problem(cell, wheels=False) == "its result is 'verify-failed'"
    manifest.write_json(cell / manifest.MANIFEST, data)
    (cell / "install" / "lib" / "libember.so").write_bytes(b"other bytes")
    assert repro.published_problem(cell, wheels=False) == "its files no longer match its manifest"
    assert "no readable manifest" in str(repro.published_problem(tmp_path / "nothing", wheels=False))
