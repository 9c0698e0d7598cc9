"""`invoke docker.start`: make sure a container engine answers."""

from __future__ import annotations

from collections.abc import Mapping

from forge.daemon import ensure_daemon


def run_start(env: Mapping[str, str]) -> None:
    """`invoke docker.start`: make sure an engine answers, and say which."""
    client = ensure_daemon(env)
    version = client.version()
    where = env.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    print(
        f"container engine ready: {version.get('Platform', {}).get('Name', 'docker')} {version['Version']} at {where}"
    )
