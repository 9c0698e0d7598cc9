"""`invoke test`: lint (ruff, mypy, clang-format) and pytest, each check's output streamed."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from forge import cli as forge_cli
from forge import host
from forge.commands.docker import run_start
from forge.config import process_environment
from forge.errors import ForgeError, StepFailedError
from forge.manifest import iter_files
from forge.proc import run_command


def start_test_services(env: Mapping[str, str]) -> None:
    """Hook run by `invoke test` before pytest: start what the tests need.

    The docker backend's owner starts dockerd here (forge.daemon); nothing else needs a service.
    """

    try:
        run_start(env)
    except ForgeError as exc:  # unit tests need no engine; the docker integration tests fail on this, loudly
        forge_cli.console().print(f"[yellow]no container engine: docker integration tests will fail[/]\n{exc.render()}")


def cxx_sources(repo: Path) -> list[str]:
    """engine/ and verify/ C++ files tracked or not, skipping build directories."""

    suffixes = {".h", ".hpp", ".cc", ".cpp", ".cu", ".cuh"}
    return [
        str(p.relative_to(repo)) for sub in ("engine", "verify") for p in iter_files(repo / sub) if p.suffix in suffixes
    ]


def test_commands(repo: Path, unit: bool) -> list[tuple[str, list[str]]]:
    """(name, argv) of every check `invoke test` runs, in order."""
    py = sys.executable
    # -rs: every skip with its reason; --durations: where the run's time went (the CI budget's evidence)
    pytest_args = [py, "-m", "pytest", "-rs", "--durations=30", "tests/unit" if unit else "tests"]
    return [
        ("ruff check", [py, "-m", "ruff", "check", "."]),
        ("ruff format", [py, "-m", "ruff", "format", "--check", "."]),
        ("mypy", [py, "-m", "mypy"]),
        ("clang-format", ["clang-format", "--dry-run", "--Werror", *cxx_sources(repo)]),
        ("pytest", pytest_args),
    ]


def run_tests(unit: bool) -> None:
    """Run every check with its output streamed; fail naming each check that failed."""
    installed = host.ensure_tools(
        "test", env=process_environment(), log_path=forge_cli.REPO / ".cache" / "forge" / "test-tools.log"
    )
    if installed:
        forge_cli.console().print(f"installed {', '.join(installed)}")
    start_test_services(process_environment())
    failed = []
    for name, argv in test_commands(forge_cli.REPO, unit):
        forge_cli.console().rule(name)
        try:
            code = run_command(argv, cwd=forge_cli.REPO, check=False).returncode
        except FileNotFoundError:
            code = 127
            forge_cli.console().print(f"{argv[0]} not found: run `invoke doctor`")
        if code != 0:
            failed.append(f"{name} (exit {code})")
    if failed:
        raise StepFailedError(f"checks failed: {', '.join(failed)}", "see their output above")
