"""Release assembly (forge/release.py): all cells or nothing, checked against their manifests, same bytes twice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from forge import manifest, release
from forge.provenance import PROVENANCE

EPOCH = 1_700_000_000


def plant(root: Path, cell_id: str, result: str = "passed") -> Path:
    cell = root / cell_id
    (cell / "install" / "lib").mkdir(parents=True)
    (cell / "install" / "lib" / "libember_cc.so.0").write_bytes(b"\x7fELF" + cell_id.encode())
    archive = cell / f"{cell_id}.tar.gz"
    archive.write_bytes(b"archive of " + cell_id.encode())
    data = {
        "schema": manifest.SCHEMA,
        "forge": "0",
        "result": result,
        "cell": {"id": cell_id, "target": cell_id.split("-py")[0], "python": "3.11", "numpy": "2.4", "gcc": "12"},
        "container_versions": {"cxx": "g++ (Debian 12.2.0-14) 12.2.0"},
        "files": manifest.file_records(cell / "install"),
        "package": {"name": archive.name, "sha256": manifest.sha256_file(archive), "size": archive.stat().st_size},
    }
    manifest.write_json(cell / manifest.MANIFEST, data)
    manifest.write_json(
        cell / PROVENANCE, {"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": archive.name}]}
    )
    return cell


CELLS = ("linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-aarch64-py3.11-np2.4-gcc12-cpu")


def _digests(tree: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tree.iterdir())}


def test_two_assemblies_give_the_same_bytes(tmp_path: Path) -> None:
    cells = [plant(tmp_path / "dist", c) for c in CELLS]
    out = release.assemble(cells, tmp_path / "rel", "1.0", "c" * 40, EPOCH)
    first = _digests(out)
    assert sorted(first) == sorted(
        [
            *(f"{c}.tar.gz" for c in CELLS),
            "SHA256SUMS",
            "provenance.intoto.jsonl",
            "report.md",
            "report.html",
            "RELEASE_NOTES.md",
        ]
    )
    sums = dict(reversed(line.split("  ")) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert sums == {name: digest for name, digest in first.items() if name != "SHA256SUMS"}
    assert len((out / "provenance.intoto.jsonl").read_text().splitlines()) == 2
    assert "2/2 cells passed" in (out / "report.md").read_text()
    assert "g++ (Debian 12.2.0-14) 12.2.0" in (out / "RELEASE_NOTES.md").read_text()
    again = release.assemble(cells, tmp_path / "rel", "1.0", "c" * 40, EPOCH)
    assert _digests(again) == first


@pytest.mark.parametrize("damage", ["failed", "changed", "missing", "archive"])
def test_a_bad_cell_fails_the_release_and_publishes_nothing(tmp_path: Path, damage: str) -> None:
    cells = [plant(tmp_path / "dist", c) for c in CELLS]
    good = release.assemble(cells, tmp_path / "rel", "1.0", None, EPOCH)
    before = _digests(good)
    bad = cells[1]
    if damage == "failed":
        bad = plant(tmp_path / "dist2", CELLS[1], result="verify-failed")
    elif damage == "changed":
        (bad / "install/lib/libember_cc.so.0").write_bytes(b"corrupted")
    elif damage == "missing":
        (bad / "install/lib/libember_cc.so.0").unlink()
    else:
        (bad / f"{CELLS[1]}.tar.gz").write_bytes(b"other")
    with pytest.raises(release.ReleaseError) as info:
        release.assemble([cells[0], bad], tmp_path / "rel", "1.0", None, EPOCH)
    assert info.value.what == "1 of 2 cells cannot be released; nothing was published"
    assert info.value.why.startswith(CELLS[1])
    assert _digests(tmp_path / "rel" / "1.0") == before  # the previous release is intact
    assert not [p for p in (tmp_path / "rel").iterdir() if p.name.startswith(".tmp-")]


def test_cells_from_a_directory_of_artifacts(tmp_path: Path) -> None:
    for c in CELLS:
        plant(tmp_path / "artifacts", c)
    (tmp_path / "artifacts" / "notes").mkdir()
    assert [p.name for p in release.cells_in(tmp_path / "artifacts")] == sorted(CELLS)
    with pytest.raises(release.ReleaseError, match="is not a directory"):
        release.cells_in(tmp_path / "nope")


def test_an_archive_name_that_leaves_the_cell_is_refused(tmp_path: Path) -> None:
    cell = plant(tmp_path / "dist", CELLS[0])
    data = json.loads((cell / manifest.MANIFEST).read_text())  # the raw JSON, to damage
    (tmp_path / "dist" / "outside.tar.gz").write_bytes(b"not the cell's")
    data["package"] = {**data["package"], "name": "../outside.tar.gz"}
    manifest.write_json(cell / manifest.MANIFEST, data)
    with pytest.raises(release.ReleaseError) as info:
        release.assemble([cell], tmp_path / "rel", "1.0", None, EPOCH)
    assert "'../outside.tar.gz': not an archive next to the manifest" in info.value.why
    assert not (tmp_path / "rel" / "1.0").exists()


def add_wheel(cell: Path, name: str, body: bytes) -> Path:
    """Record a built wheel in a planted cell, as build.record and wheel.collect do."""
    wheel = cell / "wheel" / name
    wheel.parent.mkdir(exist_ok=True)
    wheel.write_bytes(body)
    data = json.loads((cell / manifest.MANIFEST).read_text())  # the raw JSON, to damage
    data["wheel"] = {
        "status": "built",
        "file": name,
        "sha256": manifest.sha256_file(wheel),
        "size": wheel.stat().st_size,
    }
    manifest.write_json(cell / manifest.MANIFEST, data)
    return wheel


WHEEL = "ember-0.1.0-cp311-cp311-manylinux_2_31_x86_64.whl"


def test_a_built_wheel_is_released_and_checked(tmp_path: Path) -> None:
    cells = [plant(tmp_path / "dist", c) for c in CELLS]
    add_wheel(cells[0], WHEEL, b"wheel bytes")
    out = release.assemble(cells, tmp_path / "rel", "1.0", None, EPOCH)
    assert (out / WHEEL).read_bytes() == b"wheel bytes"
    assert f"  {WHEEL}" in (out / "SHA256SUMS").read_text()
    (cells[0] / "wheel" / WHEEL).write_bytes(b"tampered")
    with pytest.raises(release.ReleaseError) as err:
        release.assemble(cells, tmp_path / "rel", "2.0", None, EPOCH)
    assert f"wheel/{WHEEL}: changed" in err.value.why
    assert not (tmp_path / "rel" / "2.0").exists()


def test_wheels_of_one_name_with_different_bytes_refuse_the_release(tmp_path: Path) -> None:
    cells = [
        plant(tmp_path / "dist", c)
        for c in ("linux-x86_64-py3.11-np2.4-gcc12-cpu", "linux-x86_64-py3.11-np2.4-gcc14-cpu")
    ]
    add_wheel(cells[0], WHEEL, b"built by gcc 12")
    add_wheel(cells[1], WHEEL, b"built by gcc 14")
    with pytest.raises(release.ReleaseError) as err:
        release.assemble(cells, tmp_path / "rel", "1.0", None, EPOCH)
    assert WHEEL in err.value.why and "gcc12" in err.value.why and "gcc14" in err.value.why
    assert not (tmp_path / "rel" / "1.0").exists()
    (cells[1] / "wheel" / WHEEL).write_bytes(b"built by gcc 12")  # same bytes: one file, no clash
    add_wheel(cells[1], WHEEL, b"built by gcc 12")
    assert (release.assemble(cells, tmp_path / "rel", "1.0", None, EPOCH) / WHEEL).is_file()


def test_a_wheel_record_that_names_a_path_outside_wheel_dir_is_refused(tmp_path: Path) -> None:
    cell = plant(tmp_path / "dist", CELLS[0])
    add_wheel(cell, WHEEL, b"w")
    data = json.loads((cell / manifest.MANIFEST).read_text())  # the raw JSON, to damage
    data["wheel"]["file"] = "../../etc/passwd"
    manifest.write_json(cell / manifest.MANIFEST, data)
    with pytest.raises(release.ReleaseError) as err:
        release.assemble([cell], tmp_path / "rel", "1.0", None, EPOCH)
    assert "'wheel/../../etc/passwd': not a wheel under wheel/" in err.value.why
