"""`invoke images`: list forge's toolchain images with the matrix cells using them; --build, --prune."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from pathlib import Path

import docker

from forge import cli as forge_cli
from forge import host, image_archive, images, locks, pkgcache
from forge.build import resolve_for
from forge.config import backend_for
from forge.daemon import ensure_daemon
from forge.errors import ConfigError, ForgeError
from forge.matrix import Excluded


def matrix_specs(matrix: str | None, env: Mapping[str, str]) -> dict[str, tuple[images.ToolchainSpec, list[str]]]:
    """Image name -> (spec, cell ids) for every docker cell a matrix (default matrix/ci.yaml) schedules."""

    cfg, data = forge_cli.setup({}, env)
    wanted: dict[str, tuple[images.ToolchainSpec, list[str]]] = {}
    for item in forge_cli.requests_from(None, matrix or str(forge_cli.REPO / "matrix" / "ci.yaml"), {}, data):
        if isinstance(item, Excluded):
            continue
        cell_cfg = backend_for(cfg, item.target)
        try:
            cell = resolve_for(item, data, cell_cfg).cell
        except ForgeError:
            continue  # `invoke plan --matrix` says why a cell is skipped
        target = data.toolchains.targets[cell.target]
        if cell_cfg.backend != "docker" or not images.has_image(cell, target):
            continue
        spec = images.ToolchainSpec.from_cell(cell, target=target)
        wanted.setdefault(spec.name, (spec, []))[1].append(cell.id)
    return wanted


def run_images(
    matrix: str | None, build: bool, prune: bool, env: Mapping[str, str], update_locks: bool = False
) -> None:
    """List forge's images (with the matrix cells using them); build what is missing; prune the rest."""
    host.ensure_tools("images", env=env, scopes=(("docker", None),))
    client = ensure_daemon(env)
    wanted = matrix_specs(matrix, env)
    keep: set[str] = set()
    if build or prune:
        mirror = images.debian_mirror(env)
        for name, (spec, _) in sorted(wanted.items()):
            if build:
                base, image = images.ensure_toolchain_image(client, spec, mirror, update_locks=update_locks)
                lock, status = locks.check_image_lock(client, image.tag, spec.name, image.built, update_locks)
                verb = f"built in {image.seconds:.0f} s" if image.built else "up to date"
                print(f"{name}: {image.tag} {verb}; lock {lock.name} {status}")
                keep |= {base.tag, image.tag}
            else:
                base_tag, tag = images.expected_tags(client, spec, mirror)
                keep |= {t for t in (base_tag, tag) if t}
        if prune and matrix is None:  # without --matrix, keep what any matrix in matrix/ needs, not only ci.yaml's
            keep |= every_matrix_tag(client, env, mirror)
    if prune:
        for tag in images.prune_images(client, keep):
            print(f"removed {tag}")
    by_name = {name: cells for name, (_, cells) in wanted.items()}
    print(f"{'IMAGE':<66} {'SIZE':>8}  CELLS")
    for info in images.list_images(client):
        if info.kind == "dangling":
            cells = "(layer left by a failed build; --prune removes it)"
        else:
            cells = ", ".join(by_name.get(info.name, [])) if info.kind == "toolchain" else f"(base of {info.name})"
        print(f"{info.tag:<66} {info.size_bytes / 1e6:>6.0f}MB  {cells or '-'}")


def every_matrix_tag(client: docker.DockerClient, env: Mapping[str, str], mirror: str) -> set[str]:
    """The base and toolchain tags that the cells of every matrix file in matrix/ use now."""
    tags: set[str] = set()
    for path in sorted((forge_cli.REPO / "matrix").glob("*.yaml")):
        if path.name == "supported.yaml":
            continue
        for spec, _ in matrix_specs(str(path), env).values():
            tags |= {t for t in images.expected_tags(client, spec, mirror) if t}
    return tags


def run_archive(save: str | None, load: str | None, only: Iterable[str], env: Mapping[str, str]) -> None:
    """`invoke images --save DIR` (every forge image, or those matching --only) / `--load DIR`."""
    if save and load:
        raise ConfigError("--save and --load were both given", fix="save to one directory, or load from one")
    host.ensure_tools("images", env=env, scopes=(("docker", None),))
    client = ensure_daemon(env)
    if load:
        image_archive.load_images(client, Path(load), only)
        return
    assert save is not None
    present = [i.tag for i in images.list_images(client) if i.kind in ("base", "toolchain")]
    tags = image_archive.select(present, only)
    if not tags:
        raise ConfigError(
            f"no forge image matches {', '.join(only) or 'anything'}",
            fix="invoke images lists them; build them with invoke images --build",
        )
    image_archive.save_images(client, tags, Path(save))


def run_cache_packages(matrix: str | None, only: Iterable[str], env: Mapping[str, str]) -> None:
    """`invoke images --cache-packages`: keep the debs and wheels of each image's lock in the package cache."""
    host.ensure_tools("images", env=env, scopes=(("docker", None),))
    client = ensure_daemon(env)
    mirror = images.debian_mirror(env)
    patterns = list(only)
    for name, (spec, _) in sorted(matrix_specs(matrix, env).items()):
        if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        lock = locks.read_lock(locks.lock_path(spec.name), spec.name)
        if lock is None:
            print(f"{name}: no lock yet (build the image first: invoke images --build)")
            continue
        base = images.ensure_base_image(client, spec.suite, mirror)
        gone = pkgcache.fill(client, base.tag, lock, components=spec.apt_components)
        print(pkgcache.summary(lock, gone), flush=True)
