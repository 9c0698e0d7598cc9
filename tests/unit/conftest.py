"""Unit tests never reach a container engine or the network.

Any attempt (apt-get included, which host-tool installs run) fails the test at once, naming what was tried, instead of hanging or passing by
accident on a machine that happens to run dockerd. Integration tests (tests/integration) are
where real daemons and builds belong.
"""

from __future__ import annotations

import socket
from typing import Any

import docker
import pytest

from forge import proc


def _refuse(what: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"unit tests must not use {what}; move the test to tests/integration")

    return refuse


@pytest.fixture(autouse=True)
def no_daemon_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker, "from_env", _refuse("docker.from_env (a real container engine)"))
    monkeypatch.setattr(docker.DockerClient, "__init__", _refuse("docker.DockerClient (a real container engine)"))
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"unit tests must not use the network (connect to {address!r})")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    # apt-get reaches the mirrors from a child process, where the socket guard above cannot see.
    real_run_logged = proc.run_logged

    def run_logged(argv: Any, **kwargs: Any) -> Any:
        if argv and str(argv[0]).rsplit("/", 1)[-1] == "apt-get":
            raise AssertionError(f"unit tests must not run apt-get (the network): {' '.join(map(str, argv))}")
        return real_run_logged(argv, **kwargs)

    monkeypatch.setattr(proc, "run_logged", run_logged)
