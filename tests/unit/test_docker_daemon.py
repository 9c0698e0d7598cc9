"""Engine discovery and the default backend choice, without any daemon."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from forge import cli, daemon
from forge.errors import BackendError


def refuse_start(*args: object, **kwargs: object) -> None:
    raise AssertionError("must not start dockerd")


def test_unreachable_docker_host_is_reported_not_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "connect", lambda env, timeout_s=5.0: None)
    monkeypatch.setattr(daemon, "start_dockerd", refuse_start)
    with pytest.raises(BackendError) as err:
        daemon.ensure_daemon({"DOCKER_HOST": "tcp://builder:2375"})
    assert "tcp://builder:2375" in err.value.why
    assert "invoke docker.start" in err.value.fix and "--backend local" in err.value.fix


def test_no_install_means_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "connect", lambda env, timeout_s=5.0: None)
    monkeypatch.setattr("forge.daemon.shutil.which", lambda name: None)
    monkeypatch.setattr(daemon, "start_dockerd", refuse_start)
    with pytest.raises(BackendError, match="no container engine"):
        daemon.ensure_daemon({}, install=False)


def test_dockerd_that_dies_while_starting_shows_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Dead:
        returncode = 1

        def poll(self) -> int:
            return 1

    log = tmp_path / "dockerd.log"
    log.write_text("failed to start daemon: pid file found\n")
    monkeypatch.setattr(daemon, "connect", lambda env, timeout_s=5.0: None)
    monkeypatch.setattr("forge.daemon.shutil.which", lambda name: "/usr/sbin/dockerd")
    monkeypatch.setattr(daemon, "start_dockerd", lambda log_path: Dead())
    with pytest.raises(BackendError) as err:
        daemon.ensure_daemon({}, log_path=log, timeout_s=5)
    assert "pid file found" in err.value.why


def test_default_backend_prefers_docker_and_falls_back_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, _ = cli.setup({}, env={})
    assert cfg.backend is None
    monkeypatch.setattr(daemon, "ensure_daemon", lambda env: object())
    assert daemon.default_backend(cfg, {}, print).backend == "docker"

    def unreachable(env: object) -> None:
        raise daemon.daemon_unreachable_error({})

    monkeypatch.setattr(daemon, "ensure_daemon", unreachable)
    notices: list[str] = []
    assert daemon.default_backend(cfg, {}, notices.append).backend is None
    assert len(notices) == 1 and "local backend" in notices[0]
    assert daemon.default_backend(replace(cfg, backend="local"), {}, notices.append).backend == "local"
