"""Assemble a release from built cells: dist/release/<version>/, all or nothing.

A release holds every cell's archive (and wheel, where the cell built one), `SHA256SUMS`, one
provenance bundle (the in-toto statements of every cell, one JSON object a line), the report
(Markdown and HTML, dated by SOURCE_DATE_EPOCH so that two runs on one commit give the same
bytes) and release notes generated from the manifests. Every cell is checked first: its manifest
must say passed, and every file it lists must still have the sha256 it recorded. One bad cell
fails the whole release, which is then not published; a published one replaces the previous
release of that version atomically. With a signing key (gpg), SHA256SUMS gets a detached,
armored signature.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from forge import __version__, manifest, report
from forge.errors import ConfigError, ReleaseError
from forge.proc import run_command
from forge.provenance import PROVENANCE


@dataclass(frozen=True)
class ReleaseCell:
    cell_id: str
    path: Path
    data: manifest.Manifest
    artifacts: tuple[Path, ...]


def _problems(cell_dir: Path, data: manifest.Manifest) -> list[str]:
    """What keeps a built cell out of a release: its result, and any file that no longer matches its
    manifest (the same check as up-to-date and `invoke verify`: manifest.tree_problems)."""
    problems = []
    if data.result is not manifest.Result.PASSED:
        problems.append(f"result {data.result.value!r}")
    problems += [f"install: {p}" for p in manifest.tree_problems(cell_dir / "install", data.files)]
    problems += manifest.side_problems(cell_dir, data)
    if data.package is None:
        problems.append("no package archive recorded")
    return problems


def gather(cell_dirs: Iterable[Path]) -> list[ReleaseCell]:
    """Every cell, checked; ReleaseError naming each bad cell and why when any is not releasable."""
    cells, bad = [], []
    for cell_dir in sorted(cell_dirs, key=lambda p: p.name):
        try:
            data = manifest.load_manifest(cell_dir)
        except ConfigError as exc:  # missing, corrupt, another schema: its own words say which
            bad.append(f"{cell_dir.name}: {exc.what}")
            continue
        problems = _problems(cell_dir, data)
        if problems:
            bad.append(f"{cell_dir.name}: " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else ""))
            continue
        artifacts = tuple(cell_dir / rel for rel in sorted(manifest.side_artifacts(data)))
        cells.append(ReleaseCell(cell_dir.name, cell_dir, data, artifacts))
    if bad:
        raise ReleaseError(
            f"{len(bad)} of {len(bad) + len(cells)} cells cannot be released; nothing was published",
            "\n".join(bad),
            "rebuild them (invoke build --cell ID --force) and run the release again",
        )
    if not cells:
        raise ReleaseError(
            "no built cells to release", "", "build the matrix first: invoke release --matrix matrix/release.yaml"
        )
    return cells


def cells_in(directory: Path) -> list[Path]:
    """Cell directories under a directory of artifacts (each a dist/<cell-id>/ copy, e.g. one per CI job)."""
    if not directory.is_dir():
        raise ReleaseError(f"{directory} is not a directory", "", "point --from-artifacts at the downloaded artifacts")
    return sorted(p.parent for p in directory.glob("*/manifest.json"))


def release_notes(version: str, commit: str | None, cells: list[ReleaseCell]) -> str:
    lines = [
        f"# ember {version}",
        "",
        f"Built from commit {commit or 'unknown'}; {len(cells)} cells, each verified.",
        "",
    ]
    lines += ["| cell | toolchain | archive | sha256 |", "|---|---|---|---|"]
    for cell in cells:
        tools = "; ".join(f"{k}: {v}" for k, v in report.toolchain_of(cell.data).items()) or "?"
        for artifact in cell.artifacts:
            lines.append(f"| {cell.cell_id} | {tools} | {artifact.name} | {manifest.sha256_file(artifact)} |")
    return "\n".join(lines) + "\n"


def check_names(cells: Iterable[ReleaseCell]) -> None:
    """A release is one flat directory: two cells' artifacts may share a name (cells that differ only
    in gcc build wheels of one name) only when their bytes are the same, else one would be lost."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for cell in cells:
        records = manifest.side_artifacts(cell.data)  # gather() checked each file against its sha256
        for artifact in cell.artifacts:
            record = records[artifact.relative_to(cell.path).as_posix()]
            digest = str(record["sha256"]) if isinstance(record, Mapping) else ""
            first = seen.setdefault(artifact.name, (cell.cell_id, digest))
            if first[1] != digest:
                clashes.append(f"{artifact.name}: {first[0]} and {cell.cell_id} built different files of this name")
    if clashes:
        raise ReleaseError(
            f"{len(clashes)} artifact name(s) clash; nothing was published",
            "\n".join(clashes),
            "build wheels in one cell of each clashing set only (cells that differ only in gcc), then release again",
        )


def sign(sums: Path, key: str) -> Path:
    """A detached armored signature of SHA256SUMS by `key` (gpg). The signature carries the signing time (a
    faked one makes a key created later unusable), so it is the one file of a release that differs run to run."""
    signature = sums.with_name(sums.name + ".asc")
    argv = ["gpg", "--batch", "--yes", "--armor", "--local-user", key]
    proc = run_command(
        [*argv, "--output", str(signature), "--detach-sign", str(sums)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ReleaseError(
            f"gpg could not sign {sums.name} with key {key}",
            proc.stderr.strip()[-800:],
            "check FORGE_SIGNING_KEY and gpg's keyring (GNUPGHOME)",
        )
    return signature


def assemble(
    cell_dirs: Iterable[Path],
    out_root: Path,
    version: str,
    commit: str | None,
    epoch: int,
    signing_key: str | None = None,
) -> Path:
    """dist/release/<version>/ from the cells, written in a staging directory and swapped in whole."""
    cells = gather(cell_dirs)
    check_names(cells)
    out_root.mkdir(parents=True, exist_ok=True)
    stage = out_root / f".tmp-{version}-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        for cell in cells:
            for artifact in cell.artifacts:
                shutil.copyfile(artifact, stage / artifact.name)
        statements = []
        for cell in cells:
            statement = cell.path / PROVENANCE
            if statement.is_file():
                statements.append(json.dumps(json.loads(statement.read_text()), sort_keys=True, separators=(",", ":")))
        (stage / "provenance.intoto.jsonl").write_text("".join(s + "\n" for s in statements))
        when = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
        rendered = report.Report(
            when.isoformat(), __version__, commit, [report.row_from_manifest(c.path, c.data) for c in cells], []
        )
        (stage / "report.md").write_text(report.render_markdown(rendered))
        (stage / "report.html").write_text(report.render_html(rendered))
        (stage / "RELEASE_NOTES.md").write_text(release_notes(version, commit, cells))
        names = sorted(p.name for p in stage.iterdir() if p.is_file())
        (stage / "SHA256SUMS").write_text("".join(f"{manifest.sha256_file(stage / n)}  {n}\n" for n in names))
        if signing_key:
            sign(stage / "SHA256SUMS", signing_key)
        for path in stage.iterdir():
            os.utime(path, (epoch, epoch))
        return manifest.publish(stage, out_root, version)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
