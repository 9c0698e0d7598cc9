"""`invoke doctor`: forge's host-tool table (forge.host.TOOLS) as this machine has it, and `--fix`.

Each row is one tool: found (with where) or missing, how forge installs it, and which tasks need
it. Two rows are not tools: whether a container engine answers, and whether a GPU is present.
`--fix` installs every missing tool that forge can install (Debian packages with apt-get as
root, PyPI packages with pip), the same way each task installs what it needs before it runs.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from forge import host, proc


@dataclass(frozen=True)
class Finding:
    name: str
    found: bool
    detail: str
    source: str
    needed_by: str


def tool_finding(tool: host.HostTool, present: Callable[[host.HostTool], bool]) -> Finding:
    found = present(tool)
    where = ""
    if found and tool.detect.kind is host.DetectKind.EXECUTABLES:
        where = shutil.which(tool.detect.what[0]) or ""
    detail = (where or "found") if found else f"missing ({tool.detect.kind.value}: {tool.detect.describe()})"
    return Finding(tool.name, found, detail, tool.source(), tool.needed_by())


def docker_daemon(env: Mapping[str, str]) -> Finding:
    from forge import daemon  # the docker SDK: only when the doctor runs

    client = daemon.connect(env, timeout_s=3.0)
    if client is None:
        return Finding("docker engine", False, "not answering", "invoke docker.start", "--backend docker")
    version = client.version().get("Version", "?")
    client.close()
    return Finding("docker engine", True, f"answering, engine {version}", "invoke docker.start", "--backend docker")


def gpu() -> Finding:
    out = proc.capture(["nvidia-smi", "-L"])
    found = bool(out and out.strip())
    detail = (out or "").strip().splitlines()[0] if found else "none (GPU checks cannot run here)"
    return Finding("GPU", found, detail, "a machine with an NVIDIA GPU and driver", "GPU kernel checks")


def diagnose(
    env: Mapping[str, str], present: Callable[[host.HostTool], bool] | None = None, engine: bool = True
) -> list[Finding]:
    """One finding per table entry, then the container engine and the GPU."""
    check = present or (lambda t: host.detected(t.detect))
    findings = [tool_finding(t, check) for t in host.TOOLS]
    return [*findings, *([docker_daemon(env), gpu()] if engine else [])]


def render(findings: list[Finding]) -> Table:
    table = Table(title="forge doctor: host tools (forge/host.py)")
    for column in ("tool", "status", "installed by forge with", "needed by"):
        table.add_column(column, overflow="fold")
    for f in findings:
        status = f"[green]{f.detail}[/]" if f.found else f"[red]{f.detail}[/]"
        table.add_row(f.name, status, f.source, f.needed_by)
    return table


def fix(
    env: Mapping[str, str], log_path: Path = host.DEFAULT_LOG, installer: host.Installer | None = None
) -> list[str]:
    """Install every missing tool forge can install; returns the packages installed.

    Tools forge cannot install (no package in the table) are left to the table's hint.
    """
    installable = tuple(t for t in host.TOOLS if t.apt or t.pip)
    return host.ensure(installable, env=env, log_path=log_path, why="`invoke doctor --fix`", installer=installer)
