"""The Bazel cell end to end in docker: `invoke build --target linux-x86_64 --bazel 4.2.3`.

ember is built with bookworm's bazel-bootstrap 4.2.3 in the cell's image (no network), installed
as CMake installs it (CMake package config and pkg-config files generated from Bazel's outputs),
and verify/ is built with CMake against that tree and run, as for a CMake cell. Its libraries must
export what the CMake build's export (the `ember_install` fixture's host build). A second build in
a fresh container, with the cell's output base removed, must be served from the disk cache volume,
and its manifest must say so. (The first build starts without an output base too; it compiles, or
takes from the disk cache what an earlier run left there.)

Cost on 2 cores, measured at load average 14-17 (less on an idle machine): the image once (532 s:
bazel-bootstrap pulls a JDK), a clean Bazel build (598 s; 28 s when the disk cache volume is warm),
verify/ (60-70 s per build, two builds): about 22 min cold, 4 min with a warm image and cache. It
is the one Bazel cell CI builds; matrix/ci.yaml has none, so test_matrix_jobs_docker does not
build it a second time.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from forge import bazel_sync, daemon
from forge.backends.docker import bazel_volume, toolchain_spec
from forge.build import BuildResult, build_cell
from forge.config import Config, load_data
from forge.log import Progress
from forge.matrix import request_for_cell_id
from forge.resolve import resolve

pytestmark = [pytest.mark.integration, pytest.mark.docker]
REPO = Path(__file__).resolve().parents[2]
CELL = "linux-x86_64-py3.11-np2.4-gcc12-bz4.2.3-cpu"


@pytest.fixture(scope="module")
def client() -> Any:
    return daemon.ensure_daemon(os.environ)


def _build(tmp: Path, force: bool) -> BuildResult:
    cfg = Config(REPO, tmp / "dist", tmp / "cache", "docker", 2, True, force, 1700000000, False, False, False)
    progress = Progress(Console(file=io.StringIO()))
    return build_cell(request_for_cell_id(CELL), load_data(REPO), cfg, progress)


def _drop_output_base(client: Any) -> None:
    """Remove the cell's output base from the Bazel cache volume (kept by earlier builds), so the
    next build can be served by nothing but the disk cache."""
    data = load_data(REPO)
    spec = toolchain_spec(resolve(request_for_cell_id(CELL), data.toolchains, data.supported).cell)
    found = [i for i in client.images.list(filters={"label": f"org.forge.name={spec.name}"}) if i.tags]
    if not found:
        return  # no image yet: no build has written the volume either
    client.containers.run(
        found[0].tags[0],
        # Bazel leaves its output trees read-only
        ["sh", "-c", 'chmod -R u+w "$1" 2>/dev/null; rm -rf "$1"', "sh", f"/bazel-cache/output-base/{CELL}"],
        user="forge",
        network_mode="none",
        remove=True,
        volumes={bazel_volume(spec.name): {"bind": "/bazel-cache", "mode": "rw"}},
    )


@pytest.fixture(scope="module")
def first(client: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("bazel-cell")
    _drop_output_base(client)
    result = _build(tmp, force=True)
    assert result.result == "passed", [s for s in result.suites if not s.passed]
    assert result.dist is not None and result.dist.name == CELL
    return tmp, json.loads((result.dist / "manifest.json").read_text())


def test_the_bazel_cell_builds_with_its_bazel_and_passes_verify(first: tuple[Path, dict[str, Any]]) -> None:
    tmp, manifest = first
    assert manifest["cell"]["bazel"] == "4.2.3" and manifest["cell"]["id"] == CELL
    assert manifest["toolchain"]["bazel"].startswith("4.2.3 (bazel-bootstrap 4.2.3+"), manifest["toolchain"]
    assert manifest["bazel"]["version"] == manifest["toolchain"]["bazel"]
    counts = manifest["bazel"]
    # every source compiled, by gcc or from the disk cache (earlier builds may have filled it)
    assert counts["executed"] + counts["cache_hits"] > 50 and counts["processes"] > 50, counts
    steps = [s["name"] for s in manifest["steps"]]
    # the engine's own tests run under `bazel test`, after the install, as ctest's in a CMake cell
    assert steps[:5] == ["image", "prepare", "bazel-build", "install", "bazel-test"] and "configure" not in steps
    suites = {s["name"]: s["status"] for s in manifest["verify"]["suites"]}
    assert manifest["verify"]["failed"] == 0 and len(suites) >= 8, suites
    assert {"session_client_session_test", "lite_roundtrip_test", "models_models_test"} <= set(suites)
    install = tmp / "dist" / CELL / "install"
    for rel in ("lib/cmake/ember/emberTargets.cmake", "lib/pkgconfig/ember_cc.pc", "include/ember/status.h"):
        assert (install / rel).is_file() and rel in manifest["files"], rel


def test_the_bazel_cells_libraries_export_what_cmakes_do(
    first: tuple[Path, dict[str, Any]], ember_install: Path
) -> None:
    install = first[0] / "dist" / CELL / "install"
    for lib in bazel_sync.LIBRARIES:
        ours, cmakes = (
            bazel_sync.library_facts(install / "lib" / lib),
            bazel_sync.library_facts(ember_install / "lib" / lib),
        )
        assert ours.soname == cmakes.soname and ours.needed == cmakes.needed, lib
        assert ours.exports == cmakes.exports, f"{lib}: {sorted(ours.exports ^ cmakes.exports)[:10]}"
    for archive in bazel_sync.ARCHIVES:
        facts = bazel_sync.archive_facts(install / "lib" / archive)
        reference = bazel_sync.archive_facts(ember_install / "lib" / archive)
        assert facts.members == reference.members, f"{archive}: {sorted(facts.members ^ reference.members)}"
        assert facts.exports == reference.exports, f"{archive}: {sorted(facts.exports ^ reference.exports)[:10]}"


def test_a_rebuild_in_a_fresh_container_is_served_from_the_disk_cache(
    client: Any, first: tuple[Path, dict[str, Any]]
) -> None:
    tmp, before = first
    _drop_output_base(client)
    result = _build(tmp, force=True)
    assert result.result == "passed" and result.dist is not None
    after = json.loads((result.dist / "manifest.json").read_text())["bazel"]
    # every compile and link of the first build, from the cache
    assert after["cache_hits"] >= before["bazel"]["executed"] + before["bazel"]["cache_hits"] - 2, after
    assert after["executed"] <= 2, after
    files = json.loads((result.dist / "manifest.json").read_text())["files"]
    assert files == before["files"], "a cached rebuild installed other bytes"
