"""ember's public exported symbols, comparable across targets.

A library's exports (strong, global, defined, visible: see elf.py/macho.py) are demangled with
binutils' `c++filt` and kept when they belong to ember: `ember::...` (and their vtables,
typeinfo, thunks) and the C API (`EMBER_...`). Weak definitions (inline functions, template
instances) are left out: whether a compiler emits them out of line is its own choice.

The same source gives different spellings on different targets, so names are normalized
before comparing: the standard library's inline namespaces (libstdc++ `__cxx11`, libc++ `__1`)
and ABI tags are dropped, and integer types of the same signedness are one type (int64_t is
`long` on Linux LP64 but `long long` on macOS and armv7; size_t is 32-bit on armv7). Two
functions that differ only in integer width therefore compare as one; ember has none.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass

from forge.errors import ToolMissingError
from forge.proc import run_command

PUBLIC_PREFIXES = (
    "ember::",
    "EMBER_",
    "vtable for ember::",
    "typeinfo for ember::",
    "typeinfo name for ember::",
    "VTT for ember::",
    "non-virtual thunk to ember::",
    "virtual thunk to ember::",
    "guard variable for ember::",
)
_INLINE_NS = re.compile(r"std::(__cxx11|__1|__ndk1)::")
_ABI_TAG = re.compile(r"\[abi:[^\]]*\]")
_UNSIGNED = re.compile(r"\bunsigned (long long|long|int)\b")
_SIGNED = re.compile(r"(?<!unsigned )\b(long long|long|int)\b")


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Mangled name -> demangled name, through one `c++filt` process."""
    ordered = sorted(set(names))
    if not ordered:
        return {}
    tool = shutil.which("c++filt")
    if tool is None:
        raise ToolMissingError(
            "c++filt is missing", "the symbol checks demangle C++ names with it", "apt-get install binutils"
        )
    out = run_command([tool], input="\n".join(ordered) + "\n", capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    if len(lines) != len(ordered):
        raise ToolMissingError("c++filt returned a different number of lines than it was given", out[-500:])
    return dict(zip(ordered, lines, strict=True))


def normalize(demangled: str) -> str:
    """One spelling for the same declaration across C++ standard libraries and data models."""
    text = _ABI_TAG.sub("", _INLINE_NS.sub("std::", demangled))
    text = _UNSIGNED.sub("unsigned", text)
    text = _SIGNED.sub("int", text)
    while "> >" in text:
        text = text.replace("> >", ">>")
    return text


def is_public(demangled: str) -> bool:
    return demangled.startswith(PUBLIC_PREFIXES)


def public_symbols(exports: Iterable[str]) -> frozenset[str]:
    """The normalized public ember symbols among a library's exported (mangled) names."""
    return frozenset(normalize(d) for d in demangle(exports).values() if is_public(d))


@dataclass(frozen=True)
class SymbolDiff:
    missing: tuple[str, ...]  # in the reference, not in the candidate
    extra: tuple[str, ...]  # in the candidate, not in the reference (leaked)

    @property
    def same(self) -> bool:
        return not self.missing and not self.extra

    def describe(self, limit: int = 3) -> str:
        parts = []
        for label, names in (("missing", self.missing), ("extra", self.extra)):
            if names:
                shown = "; ".join(names[:limit]) + (f"; ... ({len(names) - limit} more)" if len(names) > limit else "")
                parts.append(f"{len(names)} {label}: {shown}")
        return ", ".join(parts) or "same"


def compare(reference: frozenset[str], candidate: frozenset[str]) -> SymbolDiff:
    return SymbolDiff(tuple(sorted(reference - candidate)), tuple(sorted(candidate - reference)))
