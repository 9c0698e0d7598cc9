"""`invoke doctor [--fix]` and the engine start, on faked machines (nothing is installed or started)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from test_host import FakeMachine

from forge import daemon, doctor, host
from forge.commands import doctor as doctor_cmd
from forge.errors import BackendError, ToolMissingError


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeMachine:
    fake = FakeMachine(tmp_path, present={t.name for t in host.TOOLS})
    monkeypatch.setattr(host.proc, "run_logged", fake.run_logged)
    monkeypatch.setattr(host.proc, "capture", lambda argv, **kw: "")
    monkeypatch.setattr(host, "_apt_updated", False)
    monkeypatch.setattr(host, "INSTALL_LOCK", tmp_path / "install.lock")
    return fake


def test_doctor_prints_one_row_per_table_entry_with_source_and_tasks(machine: FakeMachine) -> None:
    machine.present -= {"debootstrap", "zig"}
    findings = doctor.diagnose({}, present=machine.has, engine=False)
    assert [f.name for f in findings] == [t.name for t in host.TOOLS]
    by_name = {f.name: f for f in findings}
    assert not by_name["debootstrap"].found and "on PATH: debootstrap" in by_name["debootstrap"].detail
    assert by_name["debootstrap"].source == "apt: debootstrap"
    assert "images" in by_name["debootstrap"].needed_by and "--backend docker" in by_name["debootstrap"].needed_by
    assert by_name["zig"].source == "pip: ziglang==0.15.1"
    assert by_name["cmake"].found
    console = Console(width=200, record=True)
    console.print(doctor.render(findings))
    text = console.export_text()
    assert "diffoscope-minimal" in text and "clang-format" in text


def test_doctor_fix_installs_everything_missing_that_forge_can(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine.present -= {"debootstrap", "faketime", "zig", "nvidia-smi"}
    monkeypatch.setattr(
        host, "detected", lambda d: next(t.name for t in host.TOOLS if t.detect == d) in machine.present
    )
    installed = doctor.fix({}, installer=machine.installer())
    assert installed == ["debootstrap", "faketime", "ziglang==0.15.1"]
    assert "nvidia-smi" not in machine.present  # forge cannot install a GPU driver: left to the hint


def test_doctor_fix_without_root_names_the_commands(machine: FakeMachine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "detected", lambda d: d.what[0] != "debootstrap")
    with pytest.raises(ToolMissingError) as info:
        doctor.fix({}, installer=machine.installer(can_apt=False))
    assert info.value.fix == "sudo apt-get install -y --no-install-recommends debootstrap"


def test_docker_install_without_root_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "detected", lambda d: d.what[0] != "dockerd")
    monkeypatch.setattr(host.os, "geteuid", lambda: 1000)
    with pytest.raises(ToolMissingError) as info:
        daemon.install_docker({})
    assert "sudo apt-get install -y --no-install-recommends docker.io" in info.value.fix


class Alive:
    """A started dockerd that never answers."""

    returncode = None

    def __init__(self) -> None:
        self.terminated = False

    def poll(self) -> int | None:
        return 0 if self.terminated else None

    def terminate(self) -> None:
        self.terminated = True

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def kill(self) -> None:
        self.terminated = True


def test_a_dockerd_that_never_answers_is_stopped_not_left_half_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started = Alive()
    monkeypatch.setattr(daemon, "connect", lambda env, timeout_s=5.0: None)
    monkeypatch.setattr("forge.daemon.shutil.which", lambda name: "/usr/sbin/dockerd")
    monkeypatch.setattr(daemon, "start_dockerd", lambda log_path: started)
    monkeypatch.setattr(daemon.time, "sleep", lambda s: None)
    with pytest.raises(BackendError, match="did not answer"):
        daemon.ensure_daemon({}, log_path=tmp_path / "dockerd.log", timeout_s=0.01)
    assert started.terminated


def test_ctrl_c_while_dockerd_starts_stops_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started = Alive()

    def interrupted(env: object, timeout_s: float = 5.0) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(daemon, "connect", lambda env, timeout_s=5.0: None)
    monkeypatch.setattr("forge.daemon.shutil.which", lambda name: "/usr/sbin/dockerd")
    monkeypatch.setattr(daemon, "start_dockerd", lambda log_path: started)
    monkeypatch.setattr(daemon, "_wait_for_engine", lambda *args: interrupted({}))
    with pytest.raises(KeyboardInterrupt):
        daemon.ensure_daemon({}, log_path=tmp_path / "dockerd.log")
    assert started.terminated


def test_doctor_json_lists_every_finding(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    original = doctor.diagnose
    monkeypatch.setattr(doctor, "diagnose", lambda env: original(env, present=machine.has, engine=False))
    machine.present -= {"debootstrap"}
    doctor_cmd.run_doctor({}, False, as_json=True)
    data = json.loads(capsys.readouterr().out)
    assert data["installed"] == [] and [f["name"] for f in data["findings"]] == [t.name for t in host.TOOLS]
    assert {f["name"]: f["found"] for f in data["findings"]}["debootstrap"] is False


def test_target_tool_rows_follow_the_family_not_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from forge.toolchains import Checker, load_toolchains

    def names(target: str) -> set[str]:
        return {t.name for t in host.tools_for("build", backend="local", target=target)}

    for target in load_toolchains(host.TARGETS_DIR).targets.values():
        wanted = names(target.name)
        assert ("qemu-user" in wanted) == (target.checker is Checker.QEMU), target.name
        assert ("zig" in wanted) == (target.checker is Checker.MACHO), target.name
        assert ("c++filt" in wanted) == (target.checker is not Checker.RUN), target.name
    # a Linux architecture added as data only (toolchains/targets.yaml, checker: qemu) gets its rows
    real = host.family_of
    monkeypatch.setattr(host, "family_of", lambda t: Checker.QEMU if t == "linux-riscv64" else real(t))
    assert {"qemu-user", "c++filt"} <= names("linux-riscv64")
