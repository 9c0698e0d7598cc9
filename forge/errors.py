"""The one ForgeError family.

Every user-facing failure says what failed, why, and what to do about it. Only the CLI entry
(`forge.cli.run_cli`) turns these into exit codes; library code raises and never exits.
"""

from __future__ import annotations


class ForgeError(Exception):
    """Base of every error forge reports to a user."""

    exit_code = 1

    def __init__(self, what: str, why: str = "", fix: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.why = why
        self.fix = fix

    def render(self) -> str:
        """One clear message: what, then why, then what to do."""
        lines = [f"error: {self.what}"]
        if self.why:
            lines.extend(
                f"  why: {line}" if i == 0 else f"       {line}" for i, line in enumerate(self.why.splitlines())
            )
        if self.fix:
            lines.extend(
                f"  fix: {line}" if i == 0 else f"       {line}" for i, line in enumerate(self.fix.splitlines())
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class ConfigError(ForgeError):
    """Matrix/toolchain data is malformed, or a request names an unknown axis/value/target."""

    exit_code = 2


class InfeasibleError(ForgeError):
    """A request cannot be satisfied by any cell; `why` lists every reason."""

    exit_code = 3


class ToolMissingError(ForgeError):
    """A host tool is missing; `fix` holds the command that installs it."""

    exit_code = 4


class StepFailedError(ForgeError):
    """A build step exited non-zero; `why` holds the tail of its output."""

    exit_code = 5


class BackendError(ForgeError):
    """The backend (docker daemon, host) could not do what was asked."""

    exit_code = 6


class VerifyFailedError(ForgeError):
    """The build succeeded but verification suites failed."""

    exit_code = 7


class DistError(ForgeError):
    """dist/ cannot take a result (not a directory, not writable, too little space); checked before
    a build starts, and a publish that fails anyway leaves the previous result in place."""

    exit_code = 11


class RegressionFoundError(ForgeError):
    """`invoke compare`/`upgrade` found a regression between two builds; the findings come first."""

    exit_code = 12


class ReleaseError(ForgeError):
    """A cell cannot go into a release (failed, damaged or incomplete); nothing was published."""

    exit_code = 13


class BuildInterrupted(ForgeError):
    """The user pressed Ctrl-C; children were ended and dist/ left untouched."""

    exit_code = 130
