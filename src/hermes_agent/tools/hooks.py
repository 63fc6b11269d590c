"""The hook bus: named events, handlers run in registration order and never throw into callers.

Events: pre_tool_call(name, args, ctx) may return Block(reason) to stop a call;
post_tool_call(name, args, result, ctx, duration_ms) may return a new result string;
pre_llm_call / post_llm_call / on_session_start / on_session_end are notifications."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hermes_agent.lazylog import get_logger

log = get_logger(__name__)

VALID_HOOKS = frozenset({
    "pre_tool_call", "post_tool_call", "pre_llm_call", "post_llm_call", "on_session_start", "on_session_end",
})


@dataclass(frozen=True, slots=True)
class Block:
    """Returned by a pre_tool_call hook to refuse a call; `reason` is shown to the model."""

    reason: str


class HookBus:
    """Ordered handlers per event; exceptions are logged and swallowed (a hook never breaks a turn)."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Callable[..., object]]] = {}

    def register(self, event: str, fn: Callable[..., object], *, first: bool = False) -> None:
        if event not in VALID_HOOKS:
            raise ValueError(f"unknown hook event {event!r}; valid: {', '.join(sorted(VALID_HOOKS))}")
        handlers = self._handlers.setdefault(event, [])
        handlers.insert(0, fn) if first else handlers.append(fn)

    def fork(self, without: Callable[..., object] | None = None) -> HookBus:
        """A new bus with the same handlers except `without` (subagents keep plugin hooks, not the parent's gate)."""
        bus = HookBus()
        bus._handlers = {event: [fn for fn in fns if fn is not without] for event, fns in self._handlers.items()}
        return bus

    def has(self, event: str) -> bool:
        return bool(self._handlers.get(event))

    def emit(self, event: str, **kw: object) -> list[object]:
        """Call every handler; return their non-None results."""
        out = []
        for fn in list(self._handlers.get(event, ())):
            try:
                value = fn(**kw)
            except Exception:
                log.warning("hook %s raised in %s", getattr(fn, "__name__", fn), event, exc_info=True)
                continue
            if value is not None:
                out.append(value)
        return out

    def pre_tool_call(self, name: str, args: dict, ctx: object) -> Block | None:
        """First Block returned by a handler, else None (a raising handler blocks: fail closed)."""
        for fn in list(self._handlers.get("pre_tool_call", ())):
            try:
                value = fn(name=name, args=args, ctx=ctx)
            except Exception as exc:
                log.warning("pre_tool_call hook failed; blocking %s", name, exc_info=True)
                return Block(f"a safety hook failed ({type(exc).__name__}); the call was not run")
            if isinstance(value, Block):
                return value
        return None

    def post_tool_call(self, name: str, args: dict, result: str, ctx: object, duration_ms: float) -> str:
        """Each handler may replace the result by returning a string."""
        for fn in list(self._handlers.get("post_tool_call", ())):
            try:
                value = fn(name=name, args=args, result=result, ctx=ctx, duration_ms=duration_ms)
            except Exception:
                log.warning("post_tool_call hook raised for %s", name, exc_info=True)
                continue
            if isinstance(value, str):
                result = value
        return result
