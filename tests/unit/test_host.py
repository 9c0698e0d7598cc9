"""forge.host: the host-tool table, which tools a task needs, and robust installs (all faked: nothing is installed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from forge import host
from forge.errors import BuildInterrupted, StepFailedError, ToolMissingError
from forge.host import HostTool, Installer, ensure_tools, first_version, os_codename, tools_for


def names(tools: Sequence[HostTool]) -> set[str]:
    return {t.name for t in tools}


class FakeMachine:
    """Stands in for apt/dpkg/pip: records every command, 'installs' the tools their packages bring."""

    def __init__(self, tmp_path: Path, present: set[str], fail: Mapping[str, list[str]] | None = None) -> None:
        self.present = set(present)
        self.commands: list[list[str]] = []
        self.fail = {k: list(v) for k, v in (fail or {}).items()}  # argv word -> log tails of failures to come
        self.dpkg_dir = tmp_path / "dpkg"
        (self.dpkg_dir / "updates").mkdir(parents=True)
        self.log = tmp_path / "install.log"

    def has(self, tool: HostTool) -> bool:
        return tool.name in self.present

    def installer(self, can_apt: bool = True) -> Installer:
        return Installer({"PATH": "/usr/bin"}, self.log, can_apt, "/usr/bin/python3", lambda line: None, self.dpkg_dir)

    def run_logged(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None, log_path: Path) -> None:
        self.commands.append(list(argv))
        word = next((w for w in ("update", "install", "--configure") if w in argv), "")
        if self.fail.get(word):
            raise StepFailedError(f"command exited with 100: {' '.join(argv)}", self.fail[word].pop(0))
        if word == "--configure":
            for journal in (self.dpkg_dir / "updates").iterdir():
                journal.unlink()
        if word == "install":
            self.present |= {t.name for t in host.TOOLS if t.apt in argv or t.pip in argv}


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeMachine:
    fake = FakeMachine(tmp_path, present={t.name for t in host.TOOLS})
    monkeypatch.setattr(host.proc, "run_logged", fake.run_logged)
    monkeypatch.setattr(host.proc, "capture", lambda argv, **kw: "")  # `dpkg --audit`: nothing half-installed
    monkeypatch.setattr(host, "_apt_updated", False)
    monkeypatch.setattr(host, "INSTALL_LOCK", tmp_path / "install.lock")
    monkeypatch.setattr(host.time, "sleep", lambda s: None)
    return fake


def test_table_names_each_tool_once_with_a_way_to_get_it() -> None:
    assert len({t.name for t in host.TOOLS}) == len(host.TOOLS)
    for tool in host.TOOLS:
        assert tool.apt or tool.pip or tool.hint, tool.name
        assert not (tool.apt and tool.pip), tool.name
        assert tool.tasks <= set(host.TASKS), tool.name
        assert tool.backend in (None, "local", "docker"), tool.name


def test_a_local_host_build_needs_the_compiler_but_not_debootstrap() -> None:
    local = names(tools_for("build", backend="local", target="host"))
    assert {"cmake", "ninja", "c++", "eigen3 headers", "ccache", "git"} <= local
    assert not local & {"debootstrap", "dockerd", "qemu-user", "zig", "clang-format", "faketime"}


def test_a_docker_build_needs_the_engine_and_debootstrap_but_no_host_compiler() -> None:
    docker = names(tools_for("build", backend="docker", target="host"))
    assert {"dockerd", "debootstrap", "tar"} <= docker
    assert not docker & {"cmake", "ninja", "c++", "qemu-user"}


def test_cross_targets_add_their_emulator_or_zig_only_for_them() -> None:
    assert "qemu-user" in names(tools_for("build", backend="local", target="linux-aarch64"))
    assert "zig" in names(tools_for("build", backend="local", target="macos-arm64"))
    assert "zig" not in names(tools_for("build", backend="local", target="linux-aarch64"))
    docker_arm = names(tools_for("build", backend="docker", target="linux-aarch64"))
    assert "c++filt" in docker_arm and "qemu-user" not in docker_arm  # parity checks run here; qemu in the image


def test_test_task_needs_every_tool_the_integration_tests_use() -> None:
    wanted = names(tools_for("test"))
    assert {"debootstrap", "dockerd", "faketime", "diffoscope", "clang-format", "qemu-user", "zig", "cmake"} <= wanted
    assert "nvcc" not in wanted  # found where present, never installed


def test_unknown_task_is_a_config_error() -> None:
    with pytest.raises(host.ConfigError, match="unknown task 'bild'"):
        tools_for("bild")


def test_without_root_the_error_names_each_tool_and_the_exact_commands(machine: FakeMachine) -> None:
    machine.present -= {"debootstrap", "zig"}
    with pytest.raises(ToolMissingError) as info:
        ensure_tools(
            "test", env={}, present=machine.has, installer=machine.installer(can_apt=False), scopes=((None, None),)
        )
    err = info.value
    assert err.exit_code == 4
    assert err.what == "missing host tools: zig, debootstrap"
    assert "needs root and apt-get" in err.why
    assert err.fix.splitlines() == [
        "sudo apt-get install -y --no-install-recommends debootstrap",
        "/usr/bin/python3 -m pip install --disable-pip-version-check ziglang==0.15.1",
    ]
    assert machine.commands == []


def test_optional_tools_that_cannot_be_installed_are_a_note_not_an_error(machine: FakeMachine) -> None:
    notes: list[str] = []
    machine.present -= {"ccache", "git"}
    installer = machine.installer(can_apt=False)
    installer = Installer(installer.env, installer.log_path, False, installer.python, notes.append, installer.dpkg_dir)
    assert ensure_tools("build", env={}, scopes=(("local", "host"),), present=machine.has, installer=installer) == []
    assert notes == [
        "forge: going on without ccache, git (installing Debian packages needs root and apt-get); "
        "to add them: sudo apt-get install -y --no-install-recommends ccache git"
    ]
    machine.present.discard("cmake")
    with pytest.raises(ToolMissingError) as info:
        ensure_tools("build", env={}, scopes=(("local", "host"),), present=machine.has, installer=installer)
    assert info.value.what == "missing host tools: cmake"
    assert info.value.fix == "sudo apt-get install -y --no-install-recommends ccache cmake git"


def test_install_false_reports_instead_of_installing(machine: FakeMachine) -> None:
    machine.present.discard("ninja")
    with pytest.raises(ToolMissingError, match="ninja-build") as info:
        ensure_tools("build", env={}, scopes=(("local", "host"),), install=False, present=machine.has)
    assert info.value.what == "missing host tools: ninja"
    assert machine.commands == []


def test_nothing_to_do_when_everything_is_there(machine: FakeMachine) -> None:
    assert ensure_tools("test", env={}, present=machine.has, installer=machine.installer()) == []
    assert machine.commands == []


def test_installs_with_one_apt_update_per_process_and_pip_for_wheels(machine: FakeMachine) -> None:
    machine.present -= {"debootstrap", "faketime", "zig"}
    installed = ensure_tools("test", env={}, present=machine.has, installer=machine.installer())
    assert installed == ["debootstrap", "faketime", "ziglang==0.15.1"]
    assert machine.commands[0][0] == "apt-get" and machine.commands[0][-1] == "update"
    assert machine.commands[1][-2:] == ["debootstrap", "faketime"] and "install" in machine.commands[1]
    assert machine.commands[2] == [
        "/usr/bin/python3",
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "ziglang==0.15.1",
    ]
    machine.present.discard("clang-format")
    ensure_tools("test", env={}, present=machine.has, installer=machine.installer())
    assert sum("update" in c for c in machine.commands) == 1
    assert "clang-format" in machine.commands[-1]


def test_apt_waits_while_another_package_manager_holds_the_lock(machine: FakeMachine) -> None:
    busy = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"
    machine.fail = {"install": [busy, busy]}
    machine.present.discard("debootstrap")
    assert ensure_tools("images", env={}, present=machine.has, installer=machine.installer()) == ["debootstrap"]
    assert sum("install" in c for c in machine.commands) == 3


def test_an_interrupted_dpkg_is_finished_before_installing(machine: FakeMachine) -> None:
    (machine.dpkg_dir / "updates" / "0001").write_text("half a journal")
    machine.present.discard("faketime")
    ensure_tools("repro", env={}, scopes=(("local", "host"),), present=machine.has, installer=machine.installer())
    assert machine.commands[0] == ["dpkg", "--configure", "-a"]
    assert "update" in machine.commands[1] and "faketime" in machine.commands[2]


def test_install_that_reports_an_interrupted_dpkg_is_repaired_and_retried_once(machine: FakeMachine) -> None:
    machine.fail = {"install": ["E: dpkg was interrupted, you must manually run 'dpkg --configure -a'"]}
    machine.present.discard("faketime")
    ensure_tools("repro", env={}, scopes=(("local", "host"),), present=machine.has, installer=machine.installer())
    assert [c[:3] for c in machine.commands if c[0] == "dpkg"] == [["dpkg", "--configure", "-a"]]
    assert sum("install" in c for c in machine.commands) == 2 and "faketime" in machine.present


def test_a_failing_install_says_how_to_finish_it(machine: FakeMachine) -> None:
    machine.fail = {"install": ["E: Unable to locate package faketime"]}
    machine.present.discard("faketime")
    with pytest.raises(StepFailedError) as info:
        ensure_tools("repro", env={}, scopes=(("local", "host"),), present=machine.has, installer=machine.installer())
    assert "Unable to locate package faketime" in info.value.why
    assert "invoke doctor --fix" in info.value.fix


def test_ctrl_c_during_an_install_finishes_dpkg_before_stopping(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def interrupted(argv: Sequence[str], **kwargs: object) -> None:
        calls.append(list(argv))
        if "install" in argv:
            (machine.dpkg_dir / "updates" / "0002").write_text("unpacked, not configured")
            raise BuildInterrupted("interrupted", "while running apt-get install")
        if "--configure" in argv:
            (machine.dpkg_dir / "updates" / "0002").unlink()

    monkeypatch.setattr(host.proc, "run_logged", interrupted)
    machine.present.discard("faketime")
    with pytest.raises(BuildInterrupted):
        ensure_tools("repro", env={}, scopes=(("local", "host"),), present=machine.has, installer=machine.installer())
    assert calls[-1] == ["dpkg", "--configure", "-a"]
    assert not any((machine.dpkg_dir / "updates").iterdir())


def test_a_tool_still_missing_after_its_install_is_an_error(machine: FakeMachine) -> None:
    machine.present.discard("zig")
    with pytest.raises(ToolMissingError, match="still cannot be found"):
        ensure_tools(
            "build",
            env={},
            scopes=(("local", "macos-arm64"),),
            present=lambda t: t.name != "zig" and machine.has(t),
            installer=machine.installer(),
        )


def test_tools_forge_cannot_install_name_their_hint(machine: FakeMachine) -> None:
    nvcc = host.tool("nvcc")
    with pytest.raises(ToolMissingError) as info:
        host.ensure((nvcc,), env={}, why="a CUDA cell", present=lambda t: False, installer=machine.installer())
    assert "nvidia-cuda-nvcc" in info.value.fix


def test_version_and_codename_parsing(tmp_path: Path) -> None:
    assert first_version("cmake version 3.25.1\n\nCMake suite") == "3.25.1"
    assert first_version("ninja 1.11") == "1.11"
    assert first_version(None) is None
    release = tmp_path / "os-release"
    release.write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\n')
    assert os_codename(release) == "bookworm"
    assert os_codename(tmp_path / "missing") == "unknown"
