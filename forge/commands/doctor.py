"""`invoke doctor`: forge's host-tool table; --fix installs what is missing."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import asdict

from rich.console import Console

from forge import doctor, host


def run_doctor(env: Mapping[str, str], do_fix: bool, out: Console | None = None, as_json: bool = False) -> None:
    """`invoke doctor [--fix] [--json]`: print the table (or JSON); with --fix install what is missing first."""
    if as_json:
        installed = doctor.fix(env) if do_fix else []
        rows = [asdict(f) for f in doctor.diagnose(env)]
        sys.stdout.write(json.dumps({"installed": installed, "findings": rows}, indent=2) + "\n")
        return
    console = out or Console(highlight=False)
    if out is None and not console.is_terminal:
        console = Console(highlight=False, width=160)  # CI logs and pipes: wide, so the table does not fold
    if do_fix:
        installed = doctor.fix(env)
        console.print(f"installed: {', '.join(installed)}" if installed else "nothing to install", markup=False)
    console.print(doctor.render(doctor.diagnose(env)))
    missing = [t.name for t in host.TOOLS if (t.apt or t.pip) and not host.detected(t.detect)]
    if missing and not do_fix:
        console.print(
            f"{len(missing)} missing: `invoke doctor --fix` installs them ({', '.join(missing)})", markup=False
        )
