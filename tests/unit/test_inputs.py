"""Small inputs that used to pass silently or end in a traceback: each is one clear error now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forge import build, cli, repro
from forge.commands import build as build_cmd
from forge.commands import clean as clean_cmd
from forge.commands import repro as repro_cmd
from forge.config import MAX_EPOCH, load_config, load_data
from forge.errors import ConfigError, DistError, ForgeError, InfeasibleError, StepFailedError, VerifyFailedError
from forge.locks import LockMismatchError
from forge.matrix import expand_matrix
from forge.provenance import SourceMismatchError

REPO = Path(__file__).resolve().parents[2]
TARGETS = ("linux-x86_64", "linux-aarch64")


def _matrix(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


def test_a_non_utf8_matrix_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_bytes(b'axes:\n  target: [linux-x86_64]\n  python: ["3.11\xe9"]\n')
    with pytest.raises(ConfigError) as caught:
        expand_matrix(path, TARGETS)
    assert f"{path}:3: not UTF-8" in caught.value.what and "0xe9" in caught.value.what and caught.value.fix


def test_an_exclude_with_a_list_value_is_an_error(tmp_path: Path) -> None:
    path = _matrix(
        tmp_path,
        'axes:\n  target: [linux-x86_64]\n  python: ["3.11", "3.13"]\n'
        'exclude:\n  - target: linux-x86_64\n    python: ["3.11", "3.13"]\n',
    )
    with pytest.raises(ConfigError, match=re.escape(f"{path}:6: `python` must be one value, not a list")):
        expand_matrix(path, TARGETS)


def test_a_matrix_that_excludes_every_cell_builds_nothing_and_says_so(tmp_path: Path) -> None:
    path = _matrix(
        tmp_path,
        'axes:\n  target: [linux-x86_64]\n  python: ["3.11"]\nexclude:\n  - target: "linux-*"\n    reason: not now\n',
    )
    items = expand_matrix(path, TARGETS)
    with pytest.raises(ConfigError, match="schedules no cell") as caught:
        cli.scheduled(items, str(path))
    assert "not now" in caught.value.why and "exclude" in caught.value.fix
    with pytest.raises(ConfigError, match="schedules no cell"):
        build_cmd.run_build(None, str(path), {}, {"backend": "docker"})
    with pytest.raises(ConfigError, match="schedules no cell"):
        repro_cmd.run_repro(None, str(path), {}, {"backend": "docker"})


def test_an_empty_target_is_not_the_host() -> None:
    data = load_data(REPO)
    assert cli.target_or_host(None, data) == "host"
    assert cli.target_or_host("linux-x86_64", data) == "linux-x86_64"
    for empty in ("", "  "):
        with pytest.raises(ConfigError, match="--target is empty") as caught:
            cli.requests_from(empty, None, {}, data)
        assert "linux-x86_64" in caught.value.fix


@pytest.mark.parametrize(("env", "cli_values"), [({}, {"jobs": 0}), ({"FORGE_JOBS": "0"}, {}), ({}, {"jobs": -3})])
def test_zero_or_negative_jobs_never_reach_cmake(env: dict[str, str], cli_values: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="compile jobs") as caught:
        load_config(REPO, env, cli_values)
    assert "--jobs 1 or more" in caught.value.fix


@pytest.mark.parametrize("epoch", ["-5", "-1", str(MAX_EPOCH + 1)])
def test_out_of_range_source_date_epoch_is_refused(epoch: str) -> None:
    with pytest.raises(ConfigError, match=f"SOURCE_DATE_EPOCH={epoch} is out of range"):
        load_config(REPO, {"SOURCE_DATE_EPOCH": epoch}, {})
    assert load_config(REPO, {"SOURCE_DATE_EPOCH": "0"}, {}).source_date_epoch == 0


def _exit_codes() -> dict[int, str]:
    classes: list[type[ForgeError]] = [
        ForgeError, ConfigError, InfeasibleError, StepFailedError, VerifyFailedError, LockMismatchError,
        repro.ReproDifferentError, SourceMismatchError, DistError,
    ]  # fmt: skip
    from forge import errors

    classes += [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, ForgeError)]
    return {c.exit_code: c.__name__ for c in classes}


def test_the_readme_lists_every_exit_code() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Exit codes") :]
    section = section[: section.index("\n## ", 4)] if "\n## " in section[4:] else section
    listed = {int(code) for code in re.findall(r"^\| `?(\d+)`? \|", section, flags=re.MULTILINE)}
    assert listed == {0, *_exit_codes()}, (listed, _exit_codes())
    assert build.BackendError.exit_code in listed  # 6 also means "no build of the cell in dist/"


def test_clean_keeps_the_instance_id_that_owns_this_checkouts_containers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    for part in ("matrix", "toolchains"):
        shutil.copytree(REPO / part, tmp_path / part)
    cache = tmp_path / ".cache" / "forge"
    for name in ("ccache", "some-cell"):
        (cache / name).mkdir(parents=True)
    (cache / "instance-id").write_text("0" * 32 + "\n")
    monkeypatch.setenv("FORGE_ROOT", str(tmp_path))
    clean_cmd.run_clean(True, {})
    assert sorted(p.name for p in cache.iterdir()) == ["instance-id"]


def test_a_non_utf8_toolchains_file_is_a_config_error_too(tmp_path: Path) -> None:
    from forge.yamlio import load_yaml

    path = tmp_path / "debian.yaml"
    path.write_bytes(b"suites:\n\n  - name: b\xf6okworm\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:3: not UTF-8 text (byte 0xf6")):
        load_yaml(path)
