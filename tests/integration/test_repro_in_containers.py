"""`invoke repro` in containers, on a tiny engine/ + verify/ repository (a minute, real dockerd).

The tiny engine can install four "leak" files, each recording one thing repro varies inside the
container during its build step: the year of the wall clock, the uid of the build user, the umask
and the hostname. With the leaks planted, exactly those files (and the package holding them)
must differ, and their contents show the second build really ran 397 days ahead, as forge-b, with
umask 077 and another hostname. Without them every artifact must be identical.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tinyrepo

from forge import daemon, repro

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-cpu"
LEAKS = {"year": "date -u +%Y", "uid": "id -u", "umask": "umask", "hostname": "hostname"}

ENGINE_LEAKS = """if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/plant-leaks")
  foreach(leak IN ITEMS @LEAKS@)
    add_custom_command(OUTPUT ${leak}.txt COMMAND sh -c "${${leak}_cmd} > ${leak}.txt" VERBATIM)
    list(APPEND leak_files "${CMAKE_CURRENT_BINARY_DIR}/${leak}.txt")
  endforeach()
  add_custom_target(leaks ALL DEPENDS ${leak_files})
  install(FILES ${leak_files} DESTINATION share/leaks)
endif()
"""


def _engine_cmake() -> str:
    commands = "".join(f'set({name}_cmd "{cmd}")\n' for name, cmd in LEAKS.items())
    return tinyrepo.ENGINE + commands + ENGINE_LEAKS.replace("@LEAKS@", " ".join(LEAKS))


@pytest.fixture
def tiny_repo() -> Iterator[Path]:
    daemon.ensure_daemon(os.environ)  # fails loudly, saying how to start one, when no engine can be had
    top = tinyrepo.readable_dir("repro-docker-")
    repo = tinyrepo.make(top / "repo", _engine_cmake(), commit=True)
    yield repo
    shutil.rmtree(top, ignore_errors=True)


def _repro(repo: Path) -> tuple[int, str, dict[str, object]]:
    env = {**os.environ, "FORGE_ROOT": str(repo), "CI": "1"}
    env.pop("FORGE_JOBS", None)
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "repro", "--target", "linux-x86_64", "--backend", "docker"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    report = repo / "dist" / CELL / repro.REPORT_JSON
    assert report.is_file(), done.stdout[-3000:] + done.stderr[-2000:]
    return done.returncode, done.stdout + done.stderr, json.loads(report.read_text())


def test_clean_tiny_cell_is_identical_across_container_variations(tiny_repo: Path) -> None:
    code, out, report = _repro(tiny_repo)
    assert code == 0, out[-3000:]
    assert report["reproducible"] is True and report["identical"] == report["compared"] >= 4
    described = " ".join(str(v) for v in report["variations"])  # type: ignore[union-attr]
    assert "container user forge-b" in described and "clock shifted +397d" in described
    assert not any("uid" in str(n) for n in report["not_varied"])  # type: ignore[union-attr]
    # b built what is compared and nothing else: a's verify suites cover its identical bytes
    cache = tiny_repo / ".cache" / "forge" / "repro"
    a, b = (
        json.loads((d / "manifest.json").read_text())
        for d in (cache / "a" / "dist" / CELL, cache / "variant-b" / "deeper" / "dist" / CELL)
    )
    steps_a, steps_b = ({s["name"] for s in m["steps"]} for m in (a, b))
    assert {"verify-build", "verify-run"} <= steps_a and a["verify"]["suites"]
    assert not {"verify-configure", "verify-build", "verify-run"} & steps_b and not b["verify"]["suites"]
    assert b["verify"]["mode"].startswith("not verified") and repro.UNCHECKED in described


def test_planted_leaks_show_each_container_variation(tiny_repo: Path) -> None:
    (tiny_repo / "engine" / "plant-leaks").write_text("")
    tinyrepo.git(tiny_repo, "add", ".")
    tinyrepo.git(tiny_repo, "commit", "-q", "-m", "leaks")
    code, out, report = _repro(tiny_repo)
    assert code == repro.ReproDifferentError.exit_code, out[-3000:]
    outcomes = {f["path"]: f["outcome"] for f in report["files"]}  # type: ignore[union-attr]
    differing = {p for p, o in outcomes.items() if o != "identical"}
    assert differing == {f"install/share/leaks/{leak}.txt" for leak in LEAKS} | {f"{CELL}.tar.gz"}, outcomes
    assert outcomes["install/lib/libember_framework.so"] == "identical"

    def values(build: Path) -> dict[str, str]:
        return {leak: (build / "install" / "share" / "leaks" / f"{leak}.txt").read_text().strip() for leak in LEAKS}

    cache = tiny_repo / ".cache" / "forge" / "repro"
    a, b = values(cache / "a" / "dist" / CELL), values(cache / "variant-b" / "deeper" / "dist" / CELL)
    assert int(b["year"]) - int(a["year"]) in (1, 2), (a, b)
    assert (a["uid"], b["uid"]) == ("1000", "1001")
    assert (a["umask"], b["umask"]) == ("0022", "0077")
    assert (a["hostname"], b["hostname"]) == ("forge-a", "forge-b-host")


def test_release_compares_the_published_build_with_one_more_build(tiny_repo: Path) -> None:
    """`invoke release` repro-checks what `invoke build` put in dist/ (building the cell twice, not
    three times): the published build is the first side, and the planted leaks show it really is."""
    (tiny_repo / "engine" / "plant-leaks").write_text("")
    tinyrepo.git(tiny_repo, "add", ".")
    tinyrepo.git(tiny_repo, "commit", "-q", "-m", "leaks")
    one = tiny_repo / "matrix" / "one.yaml"
    one.write_text("axes:\n  target: [linux-x86_64]\n  python: ['3.11']\n")
    env = {**os.environ, "FORGE_ROOT": str(tiny_repo), "CI": "1"}
    env.pop("FORGE_JOBS", None)
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "release", "--matrix", str(one), "--no-wheels", "--backend", "docker"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == repro.ReproDifferentError.exit_code, out[-3000:]  # the leaks: nothing released
    assert f"the first build is the published dist/{CELL}/" in out, out[-3000:]
    assert not (tiny_repo / "dist" / "release").exists() or not any((tiny_repo / "dist" / "release").iterdir())
    cache = tiny_repo / ".cache" / "forge" / "repro"
    assert not (cache / "a" / CELL).exists()  # no build directories of a first repro build: none was made
    report = json.loads((cache / "a" / "dist" / CELL / repro.REPORT_JSON).read_text())
    assert "the published build" in str(report["variations"][0])  # type: ignore[index]
    published = tiny_repo / "dist" / CELL / "install" / "share" / "leaks"
    second = cache / "variant-b" / "deeper" / "dist" / CELL / "install" / "share" / "leaks"
    # the published build ran as an ordinary build: its container's own hostname, -j2; the second one as forge-b
    assert (published / "hostname.txt").read_text().strip() != "forge-a"
    assert (second / "hostname.txt").read_text().strip() == "forge-b-host"
    outcomes = {f["path"]: f["outcome"] for f in report["files"]}  # type: ignore[union-attr]
    assert outcomes["install/lib/libember_framework.so"] == "identical"
    assert outcomes["install/share/leaks/year.txt"] == "different"
