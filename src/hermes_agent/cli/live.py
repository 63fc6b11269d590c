"""Turn rendering for the REPL: agent events in, finished blocks out (markdown answers, one line per tool
call) plus the live region drawn above the input (spinner, streaming tail, running tools)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from hermes_agent.cli.screen import Screen
from hermes_agent.events import (
    Event,
    MessageAdded,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from hermes_agent.messages import safe_loads
from hermes_agent.termsafe import visible

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PROGRESS_MODES = ("off", "new", "all", "verbose")
_TAIL_CHARS = 4000

Fragments = list[tuple[str, str]]


@dataclass(slots=True)
class Running:
    event: ToolStarted
    started: float


def wrap(text: str, width: int) -> list[str]:
    """Hard-wrap `text` into rows of at most `width` characters (newlines kept)."""
    rows: list[str] = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width)
            cut = cut if cut > width // 2 else width
            rows.append(line[:cut])
            line = line[cut:].lstrip(" ")
        rows.append(line)
    return rows


class LiveView:
    """Receives events from the agent's threads; prints finished blocks through `screen` and keeps
    the state the prompt draws each frame (see `fragments`)."""

    def __init__(self, screen: Screen, invalidate: Callable[[], None], *, show_reasoning: bool = False,
                 progress: str = "all", stream: bool = True) -> None:
        self.screen = screen
        self.stream = stream  # False: only the spinner until the answer is complete
        self.invalidate = invalidate
        self.show_reasoning = show_reasoning
        self.progress = progress if progress in PROGRESS_MODES else "all"
        self._lock = threading.RLock()
        self.label = ""  # non-empty while busy
        self.started = 0.0
        self.queued: list[str] = []
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._tools: dict[str, Running] = {}
        self._last_tool = ""
        self._ticker: threading.Thread | None = None
        self._pending: list[Callable[[], None]] = []

    # -- busy state (runner thread) -------------------------------------------------------------

    def begin(self, label: str = "thinking") -> None:
        with self._lock:
            self.label, self.started = label, time.monotonic()
            self._text, self._reasoning, self._tools = [], [], {}
            if self._ticker is None or not self._ticker.is_alive():
                self._ticker = threading.Thread(target=self._tick, name="hermes-spinner", daemon=True)
                self._ticker.start()
        self.invalidate()

    def _tick(self) -> None:
        """Redraw ten times a second while busy, so the spinner and the elapsed time move."""
        while self.label:
            self.invalidate()
            time.sleep(0.1)

    def end(self) -> None:
        with self._lock:
            self.label = ""
            self._tools = {}
        self.invalidate()

    @property
    def busy(self) -> bool:
        return bool(self.label)

    # -- events (any thread) --------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        with self._lock:
            self._handle(event)
            pending, self._pending = self._pending, []
        for action in pending:  # printed outside the lock: rendering markdown must not stall the prompt
            action()
        self.invalidate()

    def _later(self, fn: Callable[..., None], *args: object) -> None:
        self._pending.append(lambda: fn(*args))

    def _handle(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, MessageAdded):
            if event.message.role == "assistant":
                self._flush(event.message.content or "", event.message.reasoning or "")
        elif isinstance(event, ToolStarted):
            self._tools[event.call_id] = Running(event, time.monotonic())
        elif isinstance(event, ToolFinished):
            self._finished(event)
        elif isinstance(event, Notice):
            style = "yellow" if event.level in ("warning", "error") else "dim"
            self._later(self.screen.line, f"· {event.text}", style)
        elif isinstance(event, TurnFinished):
            self._turn_finished(event)

    def _flush(self, content: str, reasoning: str) -> None:
        """An assistant message is complete: print its reasoning (if shown) and its answer."""
        thought = "".join(self._reasoning) or reasoning
        if self.show_reasoning and thought.strip():
            self._later(self.screen.lines, wrap(thought.strip(), self.screen.width() - 2), "dim")
        text = "".join(self._text) or content
        self._text, self._reasoning = [], []
        if text.strip():
            self._later(self.screen.markdown, text)

    def _finished(self, event: ToolFinished) -> None:
        run = self._tools.pop(event.call_id, None)
        start = run.event if run else None
        name_changed = event.name != self._last_tool
        self._last_tool = event.name
        if self.progress == "off" or (self.progress == "new" and not name_changed):
            return
        emoji = (start.emoji if start else "") or "🔧"
        label = start.shown() if start else event.name
        mark = "" if event.ok else self.screen.style(f"  ✗ {event.error}".rstrip(), "red")
        rows = [f"{emoji} {label} {self.screen.style(f'({event.duration_s:.1f}s)', 'dim')}{mark}"]
        if self.progress == "verbose":
            rows += [self.screen.style(f"   {r}", "dim") for r in _result_preview(event.result)]
        self._later(self.screen.lines, rows)

    def _turn_finished(self, event: TurnFinished) -> None:
        if event.reason == "interrupted":
            leftover = "".join(self._text)
            self._text = []
            if leftover.strip():
                self._later(self.screen.markdown, leftover)
            self._later(self.screen.line, "⏹  interrupted — the conversation keeps what happened so far", "yellow")

    # -- drawing (prompt thread) ----------------------------------------------------------------

    def fragments(self, width: int, max_rows: int) -> Fragments:
        """The live region: streaming tail, reasoning tail, running tools and the spinner line."""
        with self._lock:
            if not self.label:
                return self._queued_line()
            width = max(20, width - 1)
            out: Fragments = []
            text = "".join(self._text)[-_TAIL_CHARS:]
            thought = "".join(self._reasoning)[-_TAIL_CHARS:]
            if text and self.stream:
                out += [("", row + "\n") for row in wrap(text, width)[-max_rows:]]
            elif thought and self.show_reasoning:
                out += [("class:reasoning", row + "\n") for row in wrap(thought, width)[-max_rows:]]
            out += self._status_line(width)
            return out + self._queued_line()

    def _status_line(self, width: int) -> Fragments:
        now = time.monotonic()
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        if self._tools:
            run = min(self._tools.values(), key=lambda r: r.started)
            more = f" +{len(self._tools) - 1}" if len(self._tools) > 1 else ""
            what = visible(f"{run.event.emoji or '🔧'} {run.event.shown()}")[: width - 24] + more
            elapsed = now - run.started
        else:
            what = "streaming" if self._text else ("reasoning" if self._reasoning else self.label)
            elapsed = now - self.started
        return [("class:spinner", f"{frame} "), ("class:status", what),
                ("class:hint", f"  {elapsed:.1f}s · Ctrl-C to stop\n")]

    def _queued_line(self) -> Fragments:
        if not self.queued:
            return []
        first = visible(self.queued[0]).replace("\n", " ")
        first = first if len(first) <= 40 else first[:39] + "…"
        return [("class:hint", f"  {len(self.queued)} queued: {first}\n")]


def _result_preview(result: str, rows: int = 3) -> list[str]:
    """First lines of a tool result for verbose mode (the `output` field when it is JSON)."""
    try:
        data = safe_loads(result)
        if isinstance(data, dict):
            result = str(data.get("output") or data.get("error") or data.get("content") or result)
    except ValueError:
        pass
    lines = [visible(ln)[:160] for ln in result.strip().splitlines()[:rows]]
    return lines or ["(no output)"]
