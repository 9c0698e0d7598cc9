"""Which family a target belongs to: its `checker` in toolchains/targets.yaml picks it.

    run   -> forge.targets.native  (the suites run as built)
    qemu  -> forge.targets.qemu    (the suites run under the target's emulator)
    macho -> forge.targets.zig     (macOS: compiled by zig, Mach-O checked, not run)

A target whose data does not fit its family (a qemu target without an emulator, a macOS target
without min_os) is a configuration error naming what is missing.
"""

from __future__ import annotations

from forge.errors import ConfigError
from forge.targets.base import Family
from forge.targets.native import NATIVE
from forge.targets.qemu import QEMU
from forge.targets.zig import ZIG
from forge.toolchains import Checker, Target

FAMILIES: dict[Checker, Family] = {family.checker: family for family in (NATIVE, QEMU, ZIG)}


def family_for(target: Target) -> Family:
    """The strategy that answers for `target` (ConfigError when its data does not fit it)."""
    family = FAMILIES[target.checker]
    problems = family.problems(target)
    if problems:
        raise ConfigError(
            f"toolchains/targets.yaml: target {target.name} (checker {target.checker.value}) is not a valid "
            f"{family.name} target",
            "; ".join(problems),
            "fix its entry (toolchains/README.md describes the keys)",
        )
    return family
