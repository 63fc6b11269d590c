"""What `hermes skills` and its hub actions share: where output goes (`IO`) and how a scan's findings are shown."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_agent.skills.guard import ScanReport


@dataclass(slots=True)
class IO:
    """Where output goes and how to ask a yes/no question (None: not interactive)."""

    out: Callable[[str], None] = print
    err: Callable[[str], None] = field(default=lambda s: print(s, file=sys.stderr))
    ask: Callable[[str], str] | None = None


def print_findings(io: IO, report: ScanReport, limit: int = 20) -> None:
    for f in report.findings[:limit]:
        io.out(f"  [{f.severity}] {f.rule_id} {f.file}:{f.line}  {f.message}\n      {f.excerpt}")
    if len(report.findings) > limit:
        io.out(f"  … {len(report.findings) - limit} more")
