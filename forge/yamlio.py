"""YAML loading that remembers where every key and item came from.

Mappings load as `LocDict` and sequences as `LocList`; both know their file and the line of each
key/item, so validation errors can say `matrix/release.yaml:12: ...`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from forge.errors import ConfigError


class LocDict(dict[str, Any]):
    """A mapping with `path`, `line` (1-based) and `lines[key]`."""

    path: Path
    line: int
    lines: dict[str, int]

    def where(self, key: str | None = None) -> str:
        line = self.lines.get(key, self.line) if key is not None else self.line
        return f"{self.path}:{line}"


class LocList(list[Any]):
    """A sequence with `path`, `line` and `lines[index]`."""

    path: Path
    line: int
    lines: list[int]

    def where(self, index: int | None = None) -> str:
        line = self.lines[index] if index is not None else self.line
        return f"{self.path}:{line}"


_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parses 10x faster


def _loader_for(path: Path) -> type[yaml.SafeLoader]:
    class Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LocDict:
        result = LocDict()
        result.path, result.line, result.lines = path, node.start_mark.line + 1, {}
        for key_node, value_node in node.value:
            key = str(loader.construct_object(key_node, deep=True))
            if key in result:
                raise ConfigError(
                    f"{path}:{key_node.start_mark.line + 1}: duplicate key `{key}`",
                    f"`{key}` is already set at line {result.lines[key]}",
                    "keep one of them",
                )
            result[key] = loader.construct_object(value_node, deep=True)
            result.lines[key] = key_node.start_mark.line + 1
        return result

    def sequence(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> LocList:
        result = LocList(loader.construct_object(child, deep=True) for child in node.value)
        result.path, result.line = path, node.start_mark.line + 1
        result.lines = [child.start_mark.line + 1 for child in node.value]
        return result

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, sequence)
    return Loader


def load_yaml(path: Path) -> LocDict:
    """Parse a YAML file whose top level must be a mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}", str(exc.strerror), "check the path") from exc
    except UnicodeDecodeError as exc:
        number = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{number}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            "forge reads YAML files as UTF-8",
            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or remove the stray byte",
        ) from None
    try:
        data = yaml.load(text, Loader=_loader_for(path))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"{path}{line}: malformed YAML",
            f"{exc.problem or exc.context}",
            "fix the syntax at that line (indentation, unclosed brackets or quotes)",
        ) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML", str(exc), "fix the syntax") from exc
    if not isinstance(data, LocDict):
        raise ConfigError(f"{path}:1: expected a mapping at the top level", f"found {type(data).__name__}")
    return data


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean `x`?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _natural(word: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts 9 before 10 and 3.9 before 3.11."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in word.replace("-", ".").split("."))


def unknown(kind: str, word: str, choices: Iterable[str], where: str) -> ConfigError:
    """The standard error for an unknown key/value: where, valid ones, did you mean."""
    valid = sorted(choices, key=_natural)
    return ConfigError(
        f"{where}: unknown {kind} `{word}`{did_you_mean(word, valid)}",
        f"valid {kind}s: {', '.join(valid)}",
    )


def check_keys(data: LocDict, allowed: Iterable[str], kind: str = "key") -> None:
    """Raise for the first key of `data` not in `allowed`."""
    allowed = list(allowed)
    for key in data:
        if key not in allowed:
            raise unknown(kind, key, allowed, data.where(key))


def require(data: LocDict, key: str, kind: type | tuple[type, ...]) -> Any:
    """data[key], checked for presence and type, with file:line errors."""
    if key not in data:
        raise ConfigError(f"{data.where()}: missing key `{key}`", "", f"add `{key}:` to this mapping")
    value = data[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{data.where(key)}: `{key}` must be a {names}", f"found {type(value).__name__}: {value!r}")
    return value
