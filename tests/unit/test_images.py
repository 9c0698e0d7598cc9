"""Dockerfile rendering, image-key hashing and mirror discovery (pure; no daemon)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge import images, locks
from forge.commands import images as images_cmd
from forge.errors import ConfigError
from forge.matrix import Cell

TEMPLATE = (images.DOCKERFILES / "debian.Dockerfile").read_text()


def cell(**over: str | None) -> Cell:
    values: dict[str, str | None] = dict(
        target="linux-x86_64",
        suite="bookworm",
        python="3.11",
        numpy="2.1",
        gcc="12",
        cuda=None,
        cmake="3.25",
        bazel=None,
    )
    values.update(over)
    return Cell(**values)  # type: ignore[arg-type]


def test_one_line_sources_skip_options_comments_and_non_deb() -> None:
    text = (
        "# deb http://old.example/debian buster main\n"
        "deb-src http://src.example/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n"
    )
    assert images.parse_apt_sources(text, deb822=False) == [("http://mirror.example/debian", ("bookworm",))]


def test_deb822_sources_give_every_uri_with_its_suites() -> None:
    text = (
        "Types: deb\nURIs: http://a.example/debian http://b.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\nTypes: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\n"
        "Types: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: trixie\n"
    )
    assert images.parse_apt_sources(text, deb822=True) == [
        ("http://a.example/debian", ("bookworm", "bookworm-updates")),
        ("http://b.example/debian", ("bookworm", "bookworm-updates")),
    ]


def test_mirror_is_the_debian_entry_not_security_or_third_party(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb https://packages.example.com/apt cloud-sdk-bookworm main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
    )
    assert images.debian_mirror({}, tmp_path) == "http://mirror.example/debian"
    assert images.debian_mirror({"FORGE_DEBIAN_MIRROR": "http://x/debian"}, tmp_path) == "http://x/debian"


def test_no_debian_mirror_is_a_config_error_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text("deb https://deb.nodesource.com/node_20.x nodistro main\n")
    with pytest.raises(ConfigError) as err:
        images.debian_mirror({}, tmp_path)
    assert "FORGE_DEBIAN_MIRROR" in err.value.fix


def test_rendered_template_has_the_cells_toolchain_and_no_placeholders() -> None:
    spec = images.ToolchainSpec.from_cell(cell(gcc="11"))
    text = images.render_dockerfile(TEMPLATE, images.toolchain_args(spec, "forge/base:bookworm-abc"))
    assert "@" not in text.replace("@{", "")
    assert text.splitlines()[3] == "FROM forge/base:bookworm-abc"
    assert "g++-11" in text and "gcc-11" in text and "CXX=g++-11" in text
    assert "COPY requirements.txt" in text and "--require-hashes" not in text  # no lock: plain requirements
    hashed = images.render_dockerfile(TEMPLATE, images.toolchain_args(spec, "forge/base:bookworm-abc", hashed=True))
    assert hashed.count("--require-hashes") == 2  # pip download and pip install both check the sha256
    assert " cmake " in text  # bookworm's own cmake 3.25, from Debian
    assert "USER forge" in text and "--uid 1000" in text
    assert "--uid 1001 --gid forge forge-b" in text  # repro's second build user, same group
    assert " faketime " in text  # repro's shifted clock


def test_macos_cells_have_the_zig_image_and_its_lock() -> None:
    from forge.toolchains import load_toolchains

    targets = load_toolchains(images.TOOLCHAINS).targets
    macos = cell(target="macos-arm64", gcc=None)
    assert images.has_image(macos, targets["macos-arm64"])
    assert images.cell_lock(macos, targets["macos-arm64"]) is not None
    assert "np2.1-zig" in str(images.cell_lock(macos, targets["macos-arm64"]))
    assert not images.has_image(cell(gcc=None), targets["linux-x86_64"])


def test_render_rejects_missing_and_unused_arguments() -> None:
    with pytest.raises(ConfigError, match="GCC"):
        images.render_dockerfile("FROM @BASE@\nRUN gcc-@GCC@", {"BASE": "x"})
    with pytest.raises(ConfigError, match="EXTRA"):
        images.render_dockerfile("FROM @BASE@", {"BASE": "x", "EXTRA": "y"})


def test_cmake_the_suite_does_not_ship_comes_from_pypi() -> None:
    spec = images.ToolchainSpec.from_cell(cell(cmake="3.30"))
    assert spec.pip_cmake
    assert "cmake==3.30.*" in spec.pip_requirements()
    assert "cmake" not in spec.apt_packages()
    assert spec.name.endswith("-cmake3.30")
    assert not images.ToolchainSpec.from_cell(cell()).pip_cmake


@pytest.mark.parametrize(
    ("over", "message"),
    [({"gcc": "14"}, "gcc 14 is not packaged in Debian bookworm"), ({"python": "3.13"}, "python 3.13")],
)
def test_cells_the_suite_cannot_serve_are_rejected(over: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        images.ToolchainSpec.from_cell(cell(**over))


def test_pin_uses_a_wildcard_for_minor_versions_only() -> None:
    assert images.pin("2.1", "numpy") == "numpy==2.1.*"
    assert images.pin("2.1.3", "numpy") == "numpy==2.1.3"


def _key(**over: object) -> str:
    spec = images.ToolchainSpec.from_cell(cell())
    parts: dict[str, object] = {
        "template": TEMPLATE,
        "args": images.toolchain_args(spec, "forge/base:bookworm-abc"),
        "base_id": "sha256:1111",
        "pins": spec.pip_requirements(),
        "context": {"ca/a.crt": b"PEM"},
    }
    parts.update(over)
    return images.image_key(**parts)  # type: ignore[arg-type]


def test_unchanged_inputs_give_the_same_key() -> None:
    # In another interpreter with another hash seed (set and dict orders may differ there).
    code = "import sys; sys.path.insert(0, sys.argv[1]); import test_images; print(test_images._key())"
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    other = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)], env=env, capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == _key() and len(_key()) >= 12
    spec = images.ToolchainSpec.from_cell(cell())
    reordered = dict(reversed(list(images.toolchain_args(spec, "forge/base:bookworm-abc").items())))
    assert _key(args=reordered) == _key()


@pytest.mark.parametrize(
    "change",
    [
        {"template": TEMPLATE + "\n# edited"},
        {"base_id": "sha256:2222"},
        {"pins": ["numpy==2.2.*"]},
        {"context": {"ca/a.crt": b"OTHER"}},
        {"args": images.toolchain_args(images.ToolchainSpec.from_cell(cell(gcc="11")), "forge/base:bookworm-abc")},
    ],
)
def test_any_changed_input_changes_the_key(change: dict[str, object]) -> None:
    assert _key(**change) != _key()


def test_tag_is_readable_and_carries_the_key() -> None:
    spec = images.ToolchainSpec.from_cell(cell())
    assert images.toolchain_tag(spec, "ab" * 32) == "forge/toolchain:bookworm-gcc12-py3.11-np2.1-abababababab"


def test_base_key_changes_with_suite_and_mirror() -> None:
    key = images.base_key("bookworm", "http://m/debian", "debootstrap 1.0")
    assert key == images.base_key("bookworm", "http://m/debian", "debootstrap 1.0")
    assert key != images.base_key("trixie", "http://m/debian", "debootstrap 1.0")
    assert key != images.base_key("bookworm", "http://other/debian", "debootstrap 1.0")


class FakeImage:
    def __init__(self, tags: list[str], kind: str, name: str) -> None:
        self.tags, self.id, self.short_id = tags, f"sha256:{len(tags)}{name}", name[:12]
        self.labels = {images.MANAGED_LABEL: kind, "org.forge.name": name}
        self.attrs = {"Size": 900_000_000, "Created": "2026-11-29T18:00:00.000Z"}


class FakeImages:
    def __init__(self, listed: list[FakeImage]) -> None:
        self.listed, self.removed = listed, []  # type: list[FakeImage], list[str]

    def list(self, filters: dict[str, str]) -> list[FakeImage]:
        assert filters == {"label": images.MANAGED_LABEL}
        return [i for i in self.listed if not set(i.tags) & set(self.removed) and i.id not in self.removed]

    def remove(self, ref: str) -> None:
        self.removed.append(ref)


def test_prune_removes_every_forge_image_not_kept_including_dangling_layers() -> None:
    fake = FakeImages(
        [
            FakeImage(["forge/toolchain:bookworm-gcc12-aaa"], "toolchain", "bookworm-gcc12"),
            FakeImage(["forge/toolchain:trixie-gcc14-bbb"], "toolchain", "trixie-gcc14"),
            FakeImage(["forge/base:bookworm-ccc"], "base", "bookworm"),
            FakeImage([], "base", "left-over"),
        ]
    )
    client = type("Client", (), {"images": fake})()
    listed = images.list_images(client)
    assert {i.kind for i in listed} == {"toolchain", "base", "dangling"}
    removed = images.prune_images(client, {"forge/toolchain:bookworm-gcc12-aaa", "forge/base:bookworm-ccc"})
    assert sorted(removed) == ["forge/toolchain:trixie-gcc14-bbb", "sha256:0left-over"]


WHEEL = "numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"


def test_pip_requirements_come_from_the_lock_with_hashes_once_it_has_them(tmp_path: Path) -> None:
    spec = images.ToolchainSpec.from_cell(cell(gcc="11"))
    assert images.pip_requirements_file(spec, tmp_path) == ("numpy==2.1.*\n", False)  # first build: no lock
    lock = locks.Lock(spec.name, {"pip numpy": "2.1.3", f"wheel {WHEEL}": "sha256:" + "a" * 64})
    locks.lock_path(spec.name, tmp_path).write_text(locks.format_lock(lock))
    text, hashed = images.pip_requirements_file(spec, tmp_path)
    assert hashed and text == f"numpy==2.1.3 --hash=sha256:{'a' * 64}\n"
    assert images.pip_requirements_file(spec, tmp_path, update=True) == ("numpy==2.1.*\n", False)
    context, hashed = images.image_context(spec, tmp_path, False)
    assert hashed and context["requirements.txt"] == text.encode()


def test_prune_without_a_matrix_keeps_every_matrix_files_images(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def specs(matrix: str, env: object) -> dict[str, tuple[str, list[str]]]:
        seen.append(Path(matrix).name)
        return {f"spec-{Path(matrix).stem}": (f"spec-{Path(matrix).stem}", [])}

    monkeypatch.setattr(images_cmd, "matrix_specs", specs)
    monkeypatch.setattr(
        images, "expected_tags", lambda client, spec, mirror: (f"forge/base:{spec}", f"forge/toolchain:{spec}")
    )
    tags = images_cmd.every_matrix_tag(object(), {}, "mirror")
    assert "ci.yaml" in seen and "release.yaml" in seen and "supported.yaml" not in seen
    assert {"forge/toolchain:spec-release", "forge/toolchain:spec-ci", "forge/base:spec-release"} <= tags


class TaggableImages:
    def __init__(self) -> None:
        self.tagged: list[tuple[str, str, str]] = []

    def get(self, image_id: str) -> Any:
        outer = self

        class Image:
            def tag(self, repository: str, tag: str) -> bool:
                outer.tagged.append((image_id, repository, tag))
                return True

        return Image()


def test_an_image_built_before_its_lock_is_tagged_for_the_locked_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = images.ToolchainSpec.from_cell(cell())
    base = images.ImageRef("forge/base:bookworm-b", "sha256:base", "b" * 64, "bookworm", False, 0.0)
    unpinned = images.plan_image(spec, base.tag, base.id, lock_dir=tmp_path / "no-locks")
    built = images.ImageRef(unpinned.tag, "sha256:" + "1" * 64, unpinned.key, spec.name, True, 60.0)
    client = type("Client", (), {"images": TaggableImages()})()
    # the same inputs: nothing to do
    assert images.adopt_lock(client, spec, base, built, lock_dir=tmp_path / "no-locks") is built
    assert client.images.tagged == []
    # the lock now pins the requirements: another key, the same image under its tag
    locked = replace(unpinned, key="c" * 64, tag="forge/toolchain:" + spec.name + "-cccccccccccc")
    monkeypatch.setattr(images, "plan_image", lambda *a, **k: locked)
    adopted = images.adopt_lock(client, spec, base, built, lock_dir=tmp_path)
    assert (adopted.tag, adopted.key, adopted.id) == (locked.tag, locked.key, built.id)
    assert client.images.tagged == [(built.id, "forge/toolchain", spec.name + "-cccccccccccc")]
