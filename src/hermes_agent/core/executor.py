"""Runs the tool calls of one assistant message: concurrently where safe (max 8), results in call order."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hermes_agent.events import Event, ToolFinished, ToolStarted
from hermes_agent.messages import ToolCall
from hermes_agent.tools.results import is_error

MAX_WORKERS = 8
SEQUENTIAL_TOOLS = frozenset({"clarify", "delegate_task"})
PATH_TOOLS = frozenset({"write_file", "patch"})
_PREVIEW_KEYS = ("command", "path", "pattern", "query", "name", "url", "action", "goal")


def preview(call: ToolCall, limit: int = 80) -> str:
    """Short human form of a call's arguments (`ls -la`, `src/app.py`)."""
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return call.arguments[:limit]
    if not isinstance(args, dict):
        return str(args)[:limit]
    keys = [k for k in _PREVIEW_KEYS if isinstance(args.get(k), str)]
    keys = keys or [k for k, v in args.items() if isinstance(v, str)]
    if not keys:
        return ""
    text = " ".join(args[keys[0]].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class ToolExecutor:
    """Executes calls through `run_one(call) -> str`, emitting ToolStarted/ToolFinished events."""

    run_one: Callable[[ToolCall], str]
    emit: Callable[[Event], None]
    emoji_for: Callable[[str], str]
    _pool: ThreadPoolExecutor | None = None

    def _timed(self, call: ToolCall) -> str:
        self.emit(ToolStarted(call.id, call.name, preview(call), self.emoji_for(call.name)))
        started = time.perf_counter()
        result = self.run_one(call)
        self.emit(ToolFinished(call.id, call.name, result, time.perf_counter() - started, not is_error(result)))
        return result

    @staticmethod
    def _parallel_ok(calls: tuple[ToolCall, ...]) -> bool:
        if len(calls) < 2 or any(c.name in SEQUENTIAL_TOOLS for c in calls):
            return False
        paths = []
        for c in calls:
            if c.name in PATH_TOOLS:
                try:
                    paths.append(json.loads(c.arguments or "{}").get("path"))
                except (ValueError, AttributeError):
                    return False
        return len(paths) == len(set(paths))

    def run(self, calls: tuple[ToolCall, ...]) -> list[str]:
        """Results for `calls`, in the same order."""
        if not self._parallel_ok(calls):
            return [self._timed(c) for c in calls]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="hermes-tool")
        return list(self._pool.map(self._timed, calls))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
