"""The package cache's pure parts (forge/pkgcache.py): names, index, sha256 checks; no daemon, no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge import pkgcache
from forge.errors import BackendError, ConfigError, DistError
from forge.locks import Lock

LOCK = Lock(
    "bookworm-gcc12-py3.11-np2.4",
    {
        "deb gcc-12:amd64": "12.2.0-14+deb12u1",
        "deb adduser:all": "3.134",
        "pip numpy": "2.4.6",
        "wheel numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl": "sha256:" + "a" * 64,
    },
)


def test_apt_specs_and_file_names() -> None:
    assert pkgcache.apt_spec("deb gcc-12:amd64", "12.2.0-14") == "gcc-12:amd64=12.2.0-14"
    assert pkgcache.apt_spec("deb adduser:all", "3.134") == "adduser=3.134"
    assert pkgcache.deb_key("gcc-12_12.2.0-14%2bdeb12u1_amd64.deb") == "deb gcc-12:amd64"
    assert pkgcache.deb_key("adduser_3.134_all.deb") == "deb adduser:all"
    with pytest.raises(BackendError):
        pkgcache.deb_key("odd.deb")


def test_wheel_download_options_follow_the_file_name() -> None:
    name = "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
    options, line = pkgcache.wheel_requirement(name, "sha256:" + "a" * 64)
    assert line == f"numpy==2.4.6 --hash=sha256:{'a' * 64}\n"
    assert options[:2] == ["--implementation", "cp"]
    assert "manylinux_2_27_x86_64" in options and "manylinux_2_28_x86_64" in options
    assert options[-2:] == ["--python-version", "3.11"]
    with pytest.raises(ConfigError):
        pkgcache.wheel_requirement("not-a-wheel.zip", "sha256:0")


def test_missing_checks_every_deb_and_wheel_offline(tmp_path: Path) -> None:
    assert pkgcache.missing(tmp_path, LOCK) == pkgcache.wanted(LOCK)  # "pip numpy" is not a file
    assert "pip numpy" not in pkgcache.wanted(LOCK)
    entries = {}
    for key in pkgcache.wanted(LOCK):
        f = tmp_path / "dl" / key.replace(" ", "_").replace(":", "_")
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(key.encode())
        entries[key] = pkgcache.Entry(key, f.name, pkgcache.store(tmp_path / "c", f))
    pkgcache.write_index(tmp_path / "c", LOCK, entries)
    assert pkgcache.missing(tmp_path / "c", LOCK) == []
    files = pkgcache.offline_files(tmp_path / "c", LOCK)
    assert sorted(files) == sorted(
        f"{'debs' if k.startswith('deb ') else 'wheels'}/{entries[k].file}" for k in pkgcache.wanted(LOCK)
    )
    # Another version of the lock: nothing of the old index counts.
    moved = Lock(LOCK.name, {**LOCK.packages, "deb gcc-12:amd64": "12.2.0-15"})
    assert pkgcache.missing(tmp_path / "c", moved) == pkgcache.wanted(moved)
    with pytest.raises(DistError, match="lacks 3 package"):
        pkgcache.offline_files(tmp_path / "c", moved)


def test_a_download_with_another_sha256_never_enters_the_cache(tmp_path: Path) -> None:
    f = tmp_path / "x.whl"
    f.write_bytes(b"substituted")
    with pytest.raises(DistError, match="the lock records"):
        pkgcache.store(tmp_path / "c", f, expected="0" * 64)
    assert not (tmp_path / "c").exists()


def test_malformed_index_names_the_file(tmp_path: Path) -> None:
    path = pkgcache.index_path(tmp_path, LOCK.name)
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    with pytest.raises(ConfigError) as info:
        pkgcache.read_index(tmp_path, LOCK)
    assert str(path) in info.value.what


def test_the_download_script_adds_a_multiarch_locks_foreign_architecture() -> None:
    specs = ["gcc-12:amd64=12.2.0-14", "ca-certificates=20230311", "libpython3.11-dev:arm64=3.11.2-6+deb12u8"]
    script = pkgcache.download_script(specs)
    assert script.startswith('[ "$(dpkg --print-architecture)" = amd64 ] || dpkg --add-architecture amd64; ')
    assert '[ "$(dpkg --print-architecture)" = arm64 ] || dpkg --add-architecture arm64; apt-get update' in script
    assert 'apt-get download -qq "$p" || echo "missing $p"' in script and "libpython3.11-dev:arm64=" in script
    plain = pkgcache.download_script(["ca-certificates=20230311"])
    assert plain.startswith("apt-get update -qq && cd /out && for p in ca-certificates=20230311; do")


def test_the_download_script_reaches_the_components_a_debian_cuda_image_adds() -> None:
    """A Debian CUDA toolkit's lock holds contrib and non-free packages: the base's one sources.list
    line gains those components, as debian-cuda-apt.Dockerfile's does, before apt-get update."""
    script = pkgcache.download_script(["nvidia-cuda-toolkit=11.8.89~11.8.0-5~deb12u1"], ("contrib", "non-free"))
    assert script.startswith(
        "sed -i -E 's/^(deb [^ ]+ [a-z]+ main)$/\\1 contrib non-free/' /etc/apt/sources.list; apt-get update -qq"
    )
    assert "deb.debian.org" not in script  # the base's own mirror line is kept
