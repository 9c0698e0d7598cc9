"""`invoke report`: dist/ results as Markdown, HTML and JSON."""

from __future__ import annotations

from collections.abc import Mapping

from forge import cli as forge_cli
from forge import provenance, report


def run_report(cli: Mapping[str, object]) -> None:
    cfg, _ = forge_cli.setup(cli)
    md, page, result = report.write_report(cfg.dist, provenance.git_commit(cfg.repo))
    out = forge_cli.console()
    out.print(report.render_markdown(result), markup=False, soft_wrap=True)  # table rows stay one line each
    out.print(f"wrote {md}, {page} and {page.with_suffix('.json')}")
