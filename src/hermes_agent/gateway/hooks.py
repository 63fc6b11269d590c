"""Event hooks as Hermes users write them: HERMES_HOME/hooks/<name>/HOOK.yaml (name, description, events)
and handler.py with `async def handle(event_type, context)`. Events: gateway:startup, message:received,
session:start, session:reset, agent:start, agent:step, agent:end, command:<name> (`command:*` matches every
command). Each call runs as its own task with a time limit. A plain `def` handler runs on the hooks' own
daemon threads (never the agent's workers, at most `PER_HOOK` at once per hook); one that overruns its limit
is reported once on the console and skipped until that call returns, so a hung hook costs one thread."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import paths

log = logging.getLogger(__name__)
PER_HOOK = 4  # concurrent calls of one plain-def hook; beyond that an event is dropped (and logged)


@dataclass(frozen=True, slots=True)
class Hook:
    name: str
    events: tuple[str, ...]
    handle: Callable


def hooks_dir() -> Path:
    return paths.hermes_home() / "hooks"


def _console(text: str) -> None:
    """One line on the gateway's console (stderr) as well as in the log."""
    log.warning("%s", text)
    print(f"hermes gateway: {text}", file=sys.stderr, flush=True)


def _load_one(directory: Path) -> Hook | None:
    from hermes_agent.config.loader import read_yaml_file
    from hermes_agent.errors import ConfigError

    try:
        meta = read_yaml_file(directory / "HOOK.yaml") or {}
    except ConfigError as exc:
        _console(f"hook {directory.name} skipped: {' '.join(str(exc).split())}")
        return None
    if not isinstance(meta, dict):
        _console(f"hook {directory.name} skipped: HOOK.yaml is not a mapping (name, description, events)")
        return None
    handler = directory / "handler.py"
    raw = meta.get("events")
    events = tuple(str(e) for e in raw) if isinstance(raw, list) else ()
    if not handler.is_file() or not events:
        _console(f"hook {directory.name} skipped: needs handler.py and an events list in HOOK.yaml")
        return None
    spec = importlib.util.spec_from_file_location(f"hermes_hook_{directory.name}", handler)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # user code: a broken hook is skipped, never fatal
        log.debug("hook %s failed to load", directory.name, exc_info=True)
        _console(f"hook {directory.name} skipped: handler.py failed to load: {type(exc).__name__}: {exc}")
        return None
    handle = getattr(module, "handle", None)
    if not callable(handle):
        _console(f"hook {directory.name} skipped: handler.py has no handle()")
        return None
    return Hook(str(meta.get("name") or directory.name), events, handle)


class HookRunner:
    """The loaded hooks; `emit` schedules matching handlers and returns at once."""

    def __init__(self, hooks: list[Hook], timeout: float = 5.0) -> None:
        self.hooks, self.timeout = hooks, timeout
        self._tasks: set[asyncio.Task] = set()
        self._running: dict[str, int] = {}  # hook name -> plain-def calls on a thread right now
        self.hung: set[str] = set()  # hooks whose overrunning call has not returned yet: skipped
        self._lock = threading.Lock()
        self._order: dict[str, asyncio.Lock] = {}  # one at a time per hook, in the order the events came

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

    def wants(self, event_type: str) -> bool:
        """Some hook listens for `event_type` (callers skip building a context nobody reads)."""
        return any(self._matches(h, event_type) for h in self.hooks)

    def emit(self, event_type: str, context: dict) -> None:
        for hook in self.hooks:
            if self._matches(hook, event_type) and hook.name not in self.hung:
                task = asyncio.ensure_future(self._run(hook, event_type, dict(context)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def emit_threadsafe(self, loop: asyncio.AbstractEventLoop, event_type: str, context: dict) -> None:
        if self.wants(event_type):
            loop.call_soon_threadsafe(self.emit, event_type, context)

    async def _run(self, hook: Hook, event_type: str, context: dict) -> None:
        async with self._order.setdefault(hook.name, asyncio.Lock()):  # session:start before agent:start
            await self._run_now(hook, event_type, context)

    async def _run_now(self, hook: Hook, event_type: str, context: dict) -> None:
        try:
            if asyncio.iscoroutinefunction(hook.handle):
                await asyncio.wait_for(hook.handle(event_type, context), self.timeout)
            else:
                await self._run_plain(hook, event_type, context)
        except TimeoutError:
            log.warning("hook %s took longer than %g s on %s: abandoned", hook.name, self.timeout, event_type)
        except Exception:  # user code: logged, the chat goes on
            log.exception("hook %s failed on %s", hook.name, event_type)

    async def _run_plain(self, hook: Hook, event_type: str, context: dict) -> None:
        """A plain function on a daemon thread of its own (it can neither block the loop nor take a turn's
        worker, nor hold the process at exit). Past the time limit it is left running and the hook is skipped
        until it returns."""
        with self._lock:
            if self._running.get(hook.name, 0) >= PER_HOOK:
                log.warning("hook %s: %d calls still running; %s dropped", hook.name, PER_HOOK, event_type)
                return
            self._running[hook.name] = self._running.get(hook.name, 0) + 1
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def settle(exc: BaseException | None) -> None:
            if not done.done():
                done.set_result(exc)
            if hook.name in self.hung and self._running.get(hook.name, 0) == 0:
                self.hung.discard(hook.name)
                _console(f"hook {hook.name} returned: it runs again")

        def work() -> None:
            error: BaseException | None = None
            try:
                hook.handle(event_type, context)
            except Exception as exc:  # user code: reported through the future
                error = exc
            with self._lock:
                self._running[hook.name] -= 1
            try:
                loop.call_soon_threadsafe(settle, error)
            except RuntimeError:  # the loop is closed: the gateway has stopped
                pass

        threading.Thread(target=work, name=f"hook-{hook.name}", daemon=True).start()
        try:
            error = await asyncio.wait_for(asyncio.shield(done), self.timeout)
        except TimeoutError:
            if hook.name not in self.hung:
                self.hung.add(hook.name)
                _console(f"hook {hook.name} hung on {event_type} (over {self.timeout:g} s): "
                         "skipped until it returns")
            return
        if error is not None:
            raise error
