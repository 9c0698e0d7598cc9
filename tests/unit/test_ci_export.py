"""`invoke ci --github`: the workflow's jobs are exactly the plan's scheduled cells, each planning its own cell."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from forge import cli
from forge.commands import release as release_cmd

REPO = Path(__file__).resolve().parents[2]


def test_workflow_jobs_are_the_scheduled_cells(tmp_path: Path) -> None:
    out = tmp_path / "wf.yml"
    matrix = str(REPO / "matrix" / "release.yaml")
    release_cmd.run_ci(True, matrix, str(out), {})
    flow = yaml.safe_load(out.read_text())
    cfg, data = cli.setup({"backend": "docker", "wheels": True}, {})  # each job passes --wheels
    entries = cli.plan_entries(None, matrix, {}, cfg, data)
    scheduled = {e["id"]: e for e in entries if e["status"] == "scheduled"}
    jobs = {k: v for k, v in flow["jobs"].items() if k != "release"}
    assert sorted(job["name"] for job in jobs.values()) == sorted(scheduled)
    assert sorted(flow["jobs"]["release"]["needs"]) == sorted(jobs)
    for job in jobs.values():
        commands = [step["run"] for step in job["steps"] if "run" in step and step["run"].startswith("invoke ")]
        assert commands == [f"invoke build --cell {job['name']} --wheels"]  # as `invoke release` builds it
        argv = shlex.split(commands[0])
        planned = cli.plan_entries(None, None, {}, cfg, data, cli.Selection(cell=argv[argv.index("--cell") + 1]))
        assert [p["id"] for p in planned] == [job["name"]]
        assert planned[0]["steps"] == scheduled[job["name"]]["steps"]  # the job builds what the plan shows
        upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact"))
        assert upload["with"]["path"] == f"dist/{job['name']}/"
    release_runs = [step.get("run", "") for step in flow["jobs"]["release"]["steps"]]
    assert "invoke release --from-artifacts artifacts/" in release_runs


def test_only_narrows_the_jobs(tmp_path: Path) -> None:
    out = tmp_path / "wf.yml"
    release_cmd.run_ci(True, None, str(out), {"only": ["macos-*"]})
    names = sorted(job["name"] for key, job in yaml.safe_load(out.read_text())["jobs"].items() if key != "release")
    assert names and all(name.startswith("macos-") for name in names)


def test_release_builds_and_repro_checks_the_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`invoke release` passes --wheels to the build and to repro (whose first build is what dist/ then
    holds), unless --no-wheels; a repro without it would replace each cell's wheel with a wheel-less build."""
    calls: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(release_cmd, "run_build", lambda t, m, p, c: calls.append(("build", dict(c))))
    monkeypatch.setattr(release_cmd, "run_repro", lambda t, m, p, c: calls.append(("repro", dict(c))))
    monkeypatch.setattr(release_cmd.release, "assemble", lambda *a, **k: tmp_path / "rel")
    matrix = str(REPO / "matrix" / "ci.yaml")
    release_cmd.run_release(matrix, None, "1.0", {})
    assert [(name, c.get("wheels")) for name, c in calls] == [("build", True), ("repro", True)]
    calls.clear()
    release_cmd.run_release(matrix, None, "1.0", {"no_wheels": True})
    assert [(name, c.get("wheels")) for name, c in calls] == [("build", None), ("repro", None)]
    calls.clear()
    release_cmd.run_release(matrix, None, "1.0", {"no_repro": True})
    assert [name for name, _ in calls] == ["build"]


def test_repro_takes_a_cell_id_and_wheels(monkeypatch: pytest.MonkeyPatch) -> None:
    """`invoke repro --cell ID --wheels`: the cell a CI job or a release names, with its wheel."""
    import invoke

    import tasks
    from forge.commands import repro as repro_cmd

    seen: dict[str, object] = {}
    monkeypatch.setattr(repro_cmd, "run_repro", lambda t, m, p, c: seen.update(c, target=t, pins=p))
    tasks.repro(invoke.Context(), cell="linux-x86_64-py3.11-np2.4-gcc12-cpu", wheels=True)
    assert seen["cell"] == "linux-x86_64-py3.11-np2.4-gcc12-cpu" and seen["wheels"] is True
    pins = seen["pins"]
    assert seen["target"] is None and isinstance(pins, dict) and not any(pins.values())
