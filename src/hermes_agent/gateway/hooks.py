"""Event hooks as Hermes users write them: HERMES_HOME/hooks/<name>/HOOK.yaml (name, description, events)
and handler.py with `async def handle(event_type, context)`. Events: gateway:startup, session:start,
session:reset, agent:start, agent:step, agent:end, command:<name> (`command:*` matches every command).
Each call runs as its own task with a time limit: a failing or slow hook is logged and never stalls a chat."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import paths

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Hook:
    name: str
    events: tuple[str, ...]
    handle: Callable


def hooks_dir() -> Path:
    return paths.hermes_home() / "hooks"


def _load_one(directory: Path) -> Hook | None:
    from hermes_agent.config.loader import read_yaml_file
    from hermes_agent.errors import ConfigError

    try:
        meta = read_yaml_file(directory / "HOOK.yaml") or {}
    except ConfigError as exc:
        log.warning("hook %s skipped: %s", directory.name, exc)
        return None
    handler = directory / "handler.py"
    events = tuple(str(e) for e in meta.get("events") or [])
    if not handler.is_file() or not events:
        log.warning("hook %s skipped: needs handler.py and an events list", directory.name)
        return None
    spec = importlib.util.spec_from_file_location(f"hermes_hook_{directory.name}", handler)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception:  # user code: a broken hook is skipped, never fatal
        log.exception("hook %s failed to load", directory.name)
        return None
    handle = getattr(module, "handle", None)
    if not callable(handle):
        log.warning("hook %s skipped: handler.py has no handle()", directory.name)
        return None
    return Hook(str(meta.get("name") or directory.name), events, handle)


class HookRunner:
    """The loaded hooks; `emit` schedules matching handlers and returns at once."""

    def __init__(self, hooks: list[Hook], timeout: float = 5.0) -> None:
        self.hooks, self.timeout = hooks, timeout
        self._tasks: set[asyncio.Task] = set()

    @classmethod
    def discover(cls, directory: Path | None = None, timeout: float = 5.0) -> HookRunner:
        root = directory or hooks_dir()
        found = [h for d in sorted(root.glob("*/")) if (d / "HOOK.yaml").is_file() for h in [_load_one(d)] if h]
        for hook in found:
            log.info("hook %s loaded for %s", hook.name, ", ".join(hook.events))
        return cls(found, timeout)

    def _matches(self, hook: Hook, event_type: str) -> bool:
        base = event_type.split(":", 1)[0]
        return event_type in hook.events or f"{base}:*" in hook.events

    def emit(self, event_type: str, context: dict) -> None:
        for hook in self.hooks:
            if self._matches(hook, event_type):
                task = asyncio.ensure_future(self._run(hook, event_type, dict(context)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def emit_threadsafe(self, loop: asyncio.AbstractEventLoop, event_type: str, context: dict) -> None:
        if any(self._matches(h, event_type) for h in self.hooks):
            loop.call_soon_threadsafe(self.emit, event_type, context)

    async def _run(self, hook: Hook, event_type: str, context: dict) -> None:
        try:
            if asyncio.iscoroutinefunction(hook.handle):
                await asyncio.wait_for(hook.handle(event_type, context), self.timeout)
            else:  # a plain function runs in a thread so it cannot block the loop
                await asyncio.wait_for(asyncio.to_thread(hook.handle, event_type, context), self.timeout)
        except TimeoutError:
            log.warning("hook %s took longer than %g s on %s: abandoned", hook.name, self.timeout, event_type)
        except Exception:  # user code: logged, the chat goes on
            log.exception("hook %s failed on %s", hook.name, event_type)
