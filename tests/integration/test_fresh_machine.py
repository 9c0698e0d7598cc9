"""A fresh machine: the README's first command works with nothing preinstalled.

A warm CI machine cannot fool this test: it starts a container from forge's plain bookworm base
image (the minbase debootstrap `forge.images.ensure_base_image` makes and caches: no cmake, no
compiler, no forge tool), gives it what a new Debian machine of this project's kind has (python3
with pip and venv, this machine's apt sources, extra CA certificates and pip configuration, so
the registries are reachable the same way), copies in a `git archive` of the checkout, and runs
the README's first command there with the local backend. It must exit 0 and record a cell whose
manifest says every verify suite passed. The timings (tool installs, engine build, verify) are
printed and written to .cache/forge/fresh-machine.json. A second fresh container kills dpkg in
the middle of forge's install; the next run must repair dpkg and finish the install.
"""

from __future__ import annotations

import configparser
import io
import json
import os
import re
import subprocess
import tarfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from forge import daemon, images
from forge.errors import ForgeError

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
SUITE = "bookworm"
WORKDIR = "/src"
VENV = "/opt/venv"
DEADLINE_S = 3 * 3600  # a cold build on a busy 2-core machine; the test fails (with the log) past it
PREREQUISITES = ("python3", "python3-pip", "python3-venv", "ca-certificates")
"""What a new Debian machine of this project's kind has before its user types anything."""
ABSENT_BEFORE = ("cmake", "ninja", "c++", "git", "ccache")
"""Tools forge must install itself: the container must not have them when the command starts."""


def readme_first_command(readme: Path = REPO / "README.md") -> str:
    """The README's first command (the `invoke build` line of its first sh block), without its comment."""
    match = re.search(r"```sh\n(.*?)```", readme.read_text(), re.DOTALL)
    assert match, "README.md has no ```sh block"
    line = next(line for line in match.group(1).splitlines() if "invoke build" in line)
    return line.split("#", 1)[0].strip()


def apt_sources(etc_apt: Path = Path("/etc/apt")) -> dict[str, bytes]:
    """This machine's apt sources (the files apt reads), by their path."""
    files = [etc_apt / "sources.list", *sorted((etc_apt / "sources.list.d").glob("*"))]
    return {str(p): p.read_bytes() for p in files if p.is_file() and p.suffix in (".list", ".sources")}


def pip_configs(env: Mapping[str, str]) -> dict[str, bytes]:
    """pip's configuration files on this machine (site-wide, user), by their path."""
    home = Path(env.get("HOME", "/root"))
    candidates = [Path("/etc/pip.conf"), home / ".config" / "pip" / "pip.conf", home / ".pip" / "pip.conf"]
    if env.get("PIP_CONFIG_FILE"):
        candidates.append(Path(env["PIP_CONFIG_FILE"]))
    return {str(p): p.read_bytes() for p in candidates if p.is_file()}


def pip_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PIP_")}


def local_package_dirs(configs: Mapping[str, bytes], env: Mapping[str, str]) -> list[str]:
    """Directories pip's configuration points at (find-links, file:// indexes) that exist here.

    They are part of how this machine reaches packages; the container sees them read-only. A
    local index is mounted with its parent: a PEP 503 index links to its files relatively
    (`../../files/...`), so the repository around `simple/` must be there too.
    """
    links: list[str] = []
    indexes: list[str] = []
    for text in configs.values():
        parser = configparser.ConfigParser()
        parser.read_string(text.decode())
        for section in parser.sections():
            links += parser.get(section, "find-links", fallback="").split()
            for key in ("index-url", "extra-index-url"):
                indexes += parser.get(section, key, fallback="").split()
    links += env.get("PIP_FIND_LINKS", "").split()
    indexes += (env.get("PIP_INDEX_URL", "") + " " + env.get("PIP_EXTRA_INDEX_URL", "")).split()

    def local(value: str) -> Path | None:
        return Path(value.removeprefix("file://")) if value.startswith(("file://", "/")) else None

    dirs = {p for p in map(local, links) if p} | {p.parent for p in map(local, indexes) if p}
    return sorted(str(d) for d in dirs if d.is_dir())


def extra_ca_certificates(ca_dir: Path = images.HOST_CA_DIR) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(ca_dir.glob("*.crt"))}


def tar_of(files: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def checkout_archive() -> bytes:
    """`git archive` of the checkout as it is (tracked files, uncommitted edits included), under src/."""
    stash = subprocess.run(["git", "stash", "create"], cwd=REPO, capture_output=True, text=True, check=True)
    commit = stash.stdout.strip() or "HEAD"
    return subprocess.run(
        ["git", "archive", "--format=tar", f"--prefix={WORKDIR.lstrip('/')}/", commit],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def client() -> Any:
    try:
        return daemon.ensure_daemon(os.environ)
    except ForgeError as exc:
        pytest.fail(f"the fresh-machine test needs a container engine:\n{exc.render()}")


@pytest.fixture(scope="module")
def base(client: Any) -> images.ImageRef:
    """forge's plain bookworm base image (built once by debootstrap, then reused by its content key)."""
    try:
        return images.ensure_base_image(client, SUITE, images.debian_mirror(os.environ))
    except ForgeError as exc:
        pytest.fail(f"could not make the {SUITE} base image:\n{exc.render()}")


@pytest.fixture
def machine(client: Any, base: images.ImageRef) -> Iterator[Any]:
    """A running container of the base image with the host network, like a new machine on this one's network."""
    configs = pip_configs(os.environ)
    volumes = {d: {"bind": d, "mode": "ro"} for d in local_package_dirs(configs, os.environ)}
    container = client.containers.run(
        base.tag,
        ["sleep", "infinity"],
        detach=True,
        network_mode="host",
        environment={**pip_env(os.environ), "DEBIAN_FRONTEND": "noninteractive"},
        volumes=volumes,
        labels={images.MANAGED_LABEL: "fresh-machine-test"},
        init=True,
    )
    try:
        sources = apt_sources()
        if sources:  # this machine's sources replace debootstrap's one line
            container.exec_run(["rm", "-f", "/etc/apt/sources.list"])
        container.put_archive("/", tar_of({**sources, **configs, **extra_ca_certificates()}))
        container.put_archive("/", checkout_archive())
        yield container
    finally:
        container.remove(force=True)


def sh(container: Any, script: str) -> tuple[int, str]:
    code, out = container.exec_run(["bash", "-c", script], workdir=WORKDIR)
    return code, out.decode(errors="replace")


def run_detached(container: Any, script: str, deadline_s: float) -> tuple[int, str]:
    """Run a long script in the container without holding one API request open; (exit code, output)."""
    container.exec_run(
        ["bash", "-c", f"({script}) >/tmp/run.log 2>&1; echo $? >/tmp/run.rc"], workdir=WORKDIR, detach=True
    )
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        code, out = sh(container, "cat /tmp/run.rc")
        if code == 0 and out.strip():
            return int(out.strip()), sh(container, "cat /tmp/run.log")[1]
        time.sleep(10)
    _, log = sh(container, "tail -n 80 /tmp/run.log")
    pytest.fail(f"the README command did not finish within {deadline_s:.0f} s; last output:\n{log}")


def mtime(container: Any, path: str) -> float | None:
    code, out = sh(container, f"date -r {path} +%s.%N")
    return float(out.strip()) if code == 0 and out.strip() else None


def test_readme_first_command_on_a_fresh_bookworm_machine(machine: Any, base: images.ImageRef) -> None:
    command = readme_first_command()
    assert command == "pip install -e . && invoke build", f"the README's first command changed: {command!r}"

    start = time.time()
    code, out = sh(
        machine,
        "apt-get update -q && apt-get install -y -q --no-install-recommends "
        + " ".join(PREREQUISITES)
        + f" && update-ca-certificates && python3 -m venv {VENV}",
    )
    assert code == 0, f"preparing the new machine (python3, pip, venv) failed:\n{out[-3000:]}"
    prerequisites_s = time.time() - start
    for tool in ABSENT_BEFORE:
        found, where = sh(machine, f"command -v {tool}")
        assert found != 0, f"the fresh machine already has {tool} ({where.strip()}): the test would prove nothing"

    begin = time.time()
    code, log = run_detached(machine, f". {VENV}/bin/activate && {command} --backend local", DEADLINE_S)
    total_s = time.time() - begin
    assert code == 0, f"`{command} --backend local` exited {code} on a fresh machine:\n{log[-6000:]}"

    code, listing = sh(machine, "ls dist/*/manifest.json")
    assert code == 0, f"no dist/<cell>/manifest.json after a successful build:\n{listing}"
    manifests = listing.split()
    assert len(manifests) == 1, f"one cell expected, found {manifests}"
    data = json.loads(sh(machine, f"cat {manifests[0]}")[1])
    assert data["backend"] == "local" and data["cell"]["target"] == "host"
    assert data["result"] == "passed", f"manifest result {data['result']!r}: {data['verify']}"
    assert data["verify"]["failed"] == 0 and data["verify"]["passed"] > 0, data["verify"]

    steps = {s["name"]: float(s["seconds"]) for s in data["steps"]}
    pip_done = mtime(machine, f"{VENV}/bin/invoke")
    tools_done = mtime(machine, ".cache/forge/host-tools.log")
    assert tools_done is not None, "forge installed no host tool on a machine that had none"
    timings = {
        "base image (debootstrap + import; 0 when cached)": base.seconds,
        "new machine: python3, pip, venv": prerequisites_s,
        "pip install -e .": (pip_done or begin) - begin,
        "forge tool installs (apt)": tools_done - (pip_done or begin),
        "engine build (configure, build, install)": sum(steps.get(n, 0.0) for n in ("configure", "build", "install")),
        "verify (configure, build, run)": sum(
            steps.get(n, 0.0) for n in ("verify-configure", "verify-build", "verify-run")
        ),
        "README command, total": total_s,
    }
    report = "\n".join(f"  {name:<52} {seconds:8.1f} s" for name, seconds in timings.items())
    print(f"\nfresh {SUITE} machine, `{command} --backend local`, cold:\n{report}")
    out_file = REPO / ".cache" / "forge" / "fresh-machine.json"
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(json.dumps({"cell": data["cell"]["id"], "seconds": timings}, indent=2) + "\n")


DPKG_PIDS = (
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = dpkg ] && '
    'tr "\\0" " " <$p/cmdline | grep -q -- "--status-fd" && echo "${p#/proc/}"; done'
)
"""dpkg runs that change packages (apt starts them with --status-fd), not its quick queries; bash only (no procps here)."""
ENSURE_BUILD_TOOLS = (
    f'. {VENV}/bin/activate && python -c "import os, pathlib; from forge import host; '
    "host.ensure_tools('build', env=os.environ, log_path=pathlib.Path('/tmp/tools.log'), scopes=(('local', 'host'),))\""
)
"""What `invoke build --backend local` runs first (the install step alone, without the engine build)."""


def test_an_install_killed_midway_is_finished_by_the_next_run(machine: Any) -> None:
    """dpkg killed while unpacking (a crash, an OOM kill): the next forge run repairs dpkg and installs."""
    code, out = sh(
        machine,
        "apt-get update -q && apt-get install -y -q --no-install-recommends "
        + " ".join(PREREQUISITES)
        + f" && update-ca-certificates && python3 -m venv {VENV} && . {VENV}/bin/activate && pip install -q -e .",
    )
    assert code == 0, f"preparing the new machine failed:\n{out[-3000:]}"
    machine.exec_run(
        ["bash", "-c", f"({ENSURE_BUILD_TOOLS}) >/tmp/first.log 2>&1; echo $? >/tmp/first.rc"],
        workdir=WORKDIR,
        detach=True,
    )
    killed = False
    deadline = time.monotonic() + 900
    while not killed and time.monotonic() < deadline and sh(machine, "test -s /tmp/first.rc")[0] != 0:
        for pid in sh(machine, DPKG_PIDS)[1].split():
            killed = killed or sh(machine, f"kill -KILL {pid}")[0] == 0
        time.sleep(0.2)
    assert killed, "dpkg was never seen running, so nothing was interrupted: " + sh(machine, "cat /tmp/first.log")[1]
    while sh(machine, "test -s /tmp/first.rc")[0] != 0 and time.monotonic() < deadline:
        time.sleep(1)
    first = sh(machine, "cat /tmp/first.rc; tail -n 5 /tmp/first.log")[1]
    assert not first.startswith("0\n"), f"the install whose dpkg was killed reported success:\n{first}"

    code, out = sh(machine, f"{ENSURE_BUILD_TOOLS} 2>&1")
    assert code == 0, f"the next run did not finish the interrupted install:\n{out[-3000:]}"
    assert "dpkg --configure -a" in out, f"the next run did not repair dpkg first:\n{out[-3000:]}"
    code, audit = sh(machine, "dpkg --audit")
    assert code == 0 and not audit.strip(), f"dpkg still has unfinished packages:\n{audit}"
    for tool in ("cmake", "ninja", "c++"):
        assert sh(machine, f"command -v {tool}")[0] == 0, f"{tool} is missing after the repaired install"
