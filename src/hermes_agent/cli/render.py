"""Plain progress rendering for one-shot runs: one stderr line per tool call, notices, reasoning."""

from __future__ import annotations

import sys
from typing import TextIO

from hermes_agent.events import Event, Notice, ToolFinished, ToolStarted


class ProgressPrinter:
    """Prints `💻 ls -la (0.1s)` lines to `stream`; answers go elsewhere (stdout)."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._started: dict[str, ToolStarted] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            self._started[event.call_id] = event
        elif isinstance(event, ToolFinished) and not self.quiet:
            start = self._started.pop(event.call_id, None)
            emoji = (start.emoji if start else "") or "🔧"
            label = start.shown() if start else event.name
            mark = "" if event.ok else f"  ✗ {event.error}".rstrip()
            self._write(f"{emoji} {label} ({event.duration_s:.1f}s){mark}")
        elif isinstance(event, Notice) and not event.ends_turn and not (self.quiet and event.level == "info"):
            # (a notice that ends the turn is the run's answer on stdout: printed once, there)
            self._write(f"· {event.text}")

    def _write(self, line: str) -> None:
        from hermes_agent.termsafe import visible

        try:  # labels, errors and notices carry the model's text: never a terminal control (a51)
            print(visible(line), file=self.stream, flush=True)
        except (BrokenPipeError, ValueError):
            pass
