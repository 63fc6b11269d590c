"""Runs the tool calls of one assistant message: concurrently where the tools' traits allow (max 8),
results in call order. Knows tools only through their registry traits, never by name."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_agent.events import Event, ToolFinished, ToolStarted
from hermes_agent.messages import ToolCall, safe_loads
from hermes_agent.tools.registry import ToolEntry
from hermes_agent.tools.results import failure

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MAX_WORKERS = 8
_PREVIEW_KEYS = ("command", "path", "pattern", "query", "name", "url", "action", "goal")
EntryFor = Callable[[str], ToolEntry | None]


def preview(call: ToolCall, limit: int = 80, key: str | None = None) -> str:
    """Short human form of a call's arguments (`ls -la`, `src/app.py`); `key` is tried first."""
    try:
        args = safe_loads(call.arguments or "{}")
    except ValueError:
        return call.arguments[:limit]
    if not isinstance(args, dict):
        return str(args)[:limit]
    keys = [k for k in ((key,) if key else ()) + _PREVIEW_KEYS if isinstance(args.get(k), str)]
    keys = keys or [k for k, v in args.items() if isinstance(v, str)]
    if not keys:
        return ""
    text = " ".join(args[keys[0]].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def started_event(call: ToolCall, entry: ToolEntry | None) -> ToolStarted:
    """ToolStarted with the preview and the label frontends show (`ls -la`, `read_file src/app.py`)."""
    text = preview(call, key=entry.preview_arg if entry else None)
    bare = entry is not None and not entry.show_name
    label = (text if bare else f"{call.name} {text}") if text else call.name
    return ToolStarted(call.id, call.name, text, entry.emoji if entry else "", label)


@dataclass(slots=True)
class ToolExecutor:
    """Executes calls through `run_one(call) -> str`, emitting ToolStarted/ToolFinished events;
    `entry_for(name)` gives each tool's registry traits."""

    run_one: Callable[[ToolCall], str]
    emit: Callable[[Event], None]
    entry_for: EntryFor
    _pool: ThreadPoolExecutor | None = None

    def _timed(self, call: ToolCall) -> str:
        self.emit(started_event(call, self.entry_for(call.name)))
        started = time.perf_counter()
        result = self.run_one(call)
        why = failure(result)
        self.emit(ToolFinished(call.id, call.name, result, time.perf_counter() - started, not why, why))
        return result

    def _parallel_ok(self, calls: tuple[ToolCall, ...]) -> bool:
        """Parallel when every call is parallel_safe, or path-scoped (path_arg) with no path named twice. A call
        whose traits are unknown here (an upstream alias, the `tool_call` bridge, an unknown name) may write
        anything, so it keeps the batch in order."""
        if len(calls) < 2:
            return False
        paths = []
        for c in calls:
            entry = self.entry_for(c.name)
            if entry is None:
                return False
            if entry.parallel_safe:
                continue
            if entry.path_arg is None:
                return False
            try:
                paths.append(safe_loads(c.arguments or "{}").get(entry.path_arg))
            except (ValueError, AttributeError):
                return False
        return len(paths) == len(set(paths))

    def run(self, calls: tuple[ToolCall, ...]) -> list[str]:
        """Results for `calls`, in the same order."""
        if not self._parallel_ok(calls):
            return [self._timed(c) for c in calls]
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="hermes-tool")
        return list(self._pool.map(self._timed, calls))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
