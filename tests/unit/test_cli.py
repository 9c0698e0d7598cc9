"""The CLI layer: one message and the right exit code per error; plan output; config precedence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge import cli
from forge.commands import build as build_cmd
from forge.commands import checks as checks_cmd
from forge.commands import clean as clean_cmd
from forge.commands import plan as plan_cmd
from forge.config import backend_for, load_config
from forge.errors import BuildInterrupted, ConfigError, InfeasibleError
from forge.matrix import request_for_cell_id

REPO = Path(__file__).resolve().parents[2]


def test_guard_turns_errors_into_exit_codes() -> None:
    with pytest.raises(cli.CliExit) as info, cli.guard(debug=False):
        raise InfeasibleError("no cell", "because", "do this")
    assert info.value.code == 3 and info.value.message == "error: no cell\n  why: because\n  fix: do this"
    with pytest.raises(cli.CliExit) as info, cli.guard(debug=False):
        raise KeyboardInterrupt
    assert info.value.code == 130 == BuildInterrupted.exit_code


def test_plan_json_for_one_target(capsys: pytest.CaptureFixture[str]) -> None:
    plan_cmd.run_plan("linux-aarch64", None, {"gcc": "14"}, True, {})
    data = json.loads(capsys.readouterr().out)
    (entry,) = data["cells"]
    assert entry["status"] == "scheduled" and entry["id"] == "linux-aarch64-py3.13-np2.4-gcc14-cpu"
    assert entry["backend"] == "docker" and entry["sources"]["gcc"] == "pinned (14)"
    assert [s["name"] for s in entry["steps"]][:4] == ["image", "prepare", "configure", "build"]


def test_plan_json_for_release_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    plan_cmd.run_plan(None, str(REPO / "matrix/release.yaml"), {}, True, {})
    cells = json.loads(capsys.readouterr().out)["cells"]
    skipped = [c for c in cells if c["status"] == "skipped"]
    assert any("numpy 1.21 has wheels for python >=3.7,<3.11 only" in c["reason"] for c in skipped)
    assert any(c["reason"].startswith("excluded by") for c in skipped)
    scheduled = [c["id"] for c in cells if c["status"] == "scheduled"]
    assert len(scheduled) == len(set(scheduled))


def test_plan_of_infeasible_target_is_an_error() -> None:
    with pytest.raises(InfeasibleError):
        plan_cmd.run_plan("linux-x86_64", None, {"python": "3.11", "gcc": "14"}, False, {})


def test_matrix_and_target_are_exclusive() -> None:
    _, data = cli.setup({})
    with pytest.raises(ConfigError, match="cannot be combined"):
        cli.requests_from("host", "matrix/ci.yaml", {}, data)
    with pytest.raises(ConfigError, match="no matrix file"):
        cli.requests_from(None, "matrix/nope.yaml", {}, data)


def test_config_precedence() -> None:
    env = {"FORGE_BACKEND": "docker", "FORGE_JOBS": "4", "SOURCE_DATE_EPOCH": "123"}
    cfg = load_config(REPO, env, {"jobs": 1, "backend": None})
    assert (cfg.backend, cfg.jobs, cfg.source_date_epoch) == ("docker", 1, 123)
    cfg = load_config(REPO, {}, {})
    assert backend_for(cfg, "host").backend == "local" and backend_for(cfg, "linux-armv7").backend == "docker"
    with pytest.raises(ConfigError, match="did you mean `docker`"):
        load_config(REPO, {}, {"backend": "dokcer"})
    with pytest.raises(ConfigError, match="FORGE_JOBS"):
        load_config(REPO, {"FORGE_JOBS": "many"}, {})


def test_test_commands_cover_every_check() -> None:
    names = [name for name, _ in checks_cmd.test_commands(REPO, unit=False)]
    assert names == ["ruff check", "ruff format", "mypy", "clang-format", "pytest"]


def test_clean_keeps_the_compiler_cache_unless_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    for part in ("matrix", "toolchains"):
        shutil.copytree(REPO / part, tmp_path / part)
    for path in ("dist/cell/manifest.json", ".cache/forge/cell/build/x.o", ".cache/forge/ccache/0/a"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    monkeypatch.setenv("FORGE_ROOT", str(tmp_path))
    clean_cmd.run_clean(False, {})
    assert not (tmp_path / "dist").exists() and not (tmp_path / ".cache/forge/cell").exists()
    assert (tmp_path / ".cache/forge/ccache/0/a").exists()
    clean_cmd.run_clean(True, {})
    assert not (tmp_path / ".cache/forge/ccache").exists()


def test_cell_ids_round_trip_through_requests() -> None:
    cfg, data = cli.setup({"backend": "docker"}, {})
    for entry in cli.plan_entries(None, str(REPO / "matrix/release.yaml"), {}, cfg, data):
        if entry["status"] != "scheduled":
            continue
        again = cli.plan_entries(None, None, {}, cfg, data, cli.Selection(cell=entry["id"]))
        assert [e["id"] for e in again] == [entry["id"]]
        assert again[0]["steps"] == entry["steps"]  # the same plan by id as by the matrix


@pytest.mark.parametrize("bad", ["", "linux-aarch64", "linux-aarch64-py3.11-np2.4-gcc12", "x-py3-np2-gcc12-cpu"])
def test_a_cell_id_that_is_not_one_names_the_grammar(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        request_for_cell_id(bad)
    assert "is not a cell id" in info.value.what and "TARGET-pyX.Y-npX.Y" in info.value.why


def test_cell_cannot_be_combined_with_axis_flags() -> None:
    _, data = cli.setup({}, {})
    with pytest.raises(ConfigError, match="--cell cannot be combined"):
        cli.requests_from(None, None, {"gcc": "12"}, data, "linux-x86_64-py3.11-np2.4-gcc12-cpu")


def test_only_and_skip_pick_matrix_cells_by_glob() -> None:
    cfg, data = cli.setup({"backend": "docker"}, {})
    picked = cli.Selection(only=("linux-a*",), skip=("*py3.9*", "*gcc14*"))
    ids = [e["id"] for e in cli.plan_entries(None, None, {}, cfg, data, picked)]
    assert ids == ["linux-aarch64-py3.11-np2.4-gcc12-cpu", "linux-armv7-py3.11-np2.4-gcc12-cpu"]
    with pytest.raises(ConfigError, match=r"no scheduled cell of .* matches --only nothing-\*"):
        cli.plan_entries(None, None, {}, cfg, data, cli.Selection(only=("nothing-*",)))


def test_flags_mean_one_thing_and_unknown_ones_are_forge_errors() -> None:
    import subprocess
    import sys

    tasks = subprocess.run(
        [sys.executable, "-m", "invoke", "--list"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    names = [line.split()[0] for line in tasks.splitlines()[1:] if line.startswith("  ") and line[2] != " "]
    assert {"build", "plan", "verify", "repro"} <= set(names)
    for name in names:
        shown = subprocess.run(
            [sys.executable, "-m", "invoke", "--help", name], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout
        assert not [
            line for line in shown.splitlines() if line.strip().startswith("-") and not line.strip().startswith("--")
        ], shown
    bad = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--no-such-flag"], cwd=REPO, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "error: No idea what '--no-such-flag' is!" in bad.stderr and "fix:" in bad.stderr


def test_keep_container_from_flag_or_environment() -> None:
    assert not load_config(REPO, {}, {}).keep_container
    assert load_config(REPO, {"FORGE_KEEP_CONTAINER": "1"}, {}).keep_container
    assert load_config(REPO, {}, {"keep_container": True}).keep_container


def test_verify_with_the_docker_backend_is_refused_not_run_on_the_host() -> None:
    with pytest.raises(ConfigError, match="invoke verify --backend docker is not supported"):
        build_cmd.run_verify("linux-x86_64", {}, {"backend": "docker"})
