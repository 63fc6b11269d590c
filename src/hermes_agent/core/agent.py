"""AIAgent: the facade every frontend drives (chat, run_conversation, interrupt)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from hermes_agent.config.settings import Settings
from hermes_agent.core.context import PromptParts, build_system_prompt
from hermes_agent.core.loop import AgentLoop, Compactor, TurnOutcome
from hermes_agent.events import Event, Notice, ToolStarted
from hermes_agent.messages import Message, ToolCall, safe_loads, system, user
from hermes_agent.providers.base import Provider
from hermes_agent.tools import dispatch
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import HookBus
from hermes_agent.tools.registry import discover_builtin_tools, registry

if TYPE_CHECKING:
    from hermes_agent.approval.gate import ApprovalGate
    from hermes_agent.storage.store import SessionStore


class SessionHandle(Protocol):
    """The agent's binding to the session store (bootstrap's SessionBinding), as frontends use it."""

    store: SessionStore
    id: str | None
    lineage: str | None  # the session the conversation began in (compression and /undo continue in children)
    keep_open: bool  # the session outlives this process (a gateway chat continues it later)

    def start(self) -> str: ...

    def resume(self, which: str, *, by_title: bool = False) -> list[Message]: ...

    def end(self, reason: str = "ended") -> None: ...


class ProviderMeter(Protocol):
    """Spending caps (bootstrap/budget.py): puts itself in front of a provider's calls."""

    def wrap(self, provider: Provider, task: str = "main") -> Provider: ...


@dataclass(slots=True)
class AgentServices:
    """What the composition root (bootstrap) hands an agent. `gate`/`approval_hook` and `session` are
    for frontends (/yolo, /resume) and subagent composition; tools get their state through `ctx`."""

    provider: Provider
    settings: Settings
    ctx: ToolContext
    hooks: HookBus = field(default_factory=HookBus)
    gate: ApprovalGate | None = None
    approval_hook: Callable[..., object] | None = None
    session: SessionHandle | None = None
    persist: Callable[[Message], None] = lambda m: None
    persist_many: Callable[[list[Message]], None] | None = None  # several in one write (a reply's tool results)
    compact: Compactor | None = None
    prompt_parts: PromptParts = field(default_factory=PromptParts)
    session_id: str | None = None
    trajectories_dir: object = None
    refresh_prompt: Callable[[], PromptParts] | None = None
    on_reset: list[Callable[[], None]] = field(default_factory=list)
    on_rewind: list[Callable[[list[Message]], None]] = field(default_factory=list)
    on_provider_change: list[Callable[[Provider], None]] = field(default_factory=list)
    closers: list[Callable[[], None]] = field(default_factory=list)
    meter: ProviderMeter | None = None  # every provider of this agent (and its subagents) goes through it


class AIAgent:
    """A conversation with tools. Not thread-safe for concurrent turns; `interrupt()` is."""

    def __init__(self, max_iterations: int = 60, enabled_toolsets: list[str] | None = None,
                 disabled_toolsets: list[str] | None = None, quiet_mode: bool = False,
                 tool_progress_callback: Callable[[str, str], None] | None = None,
                 save_trajectories: bool = False, *, services: AgentServices | None = None,
                 event_callback: Callable[[Event], None] | None = None) -> None:
        if services is None:
            raise TypeError("core AIAgent needs services; use hermes_agent.AIAgent (composed by bootstrap)")
        self.services = services
        self.max_iterations = max_iterations
        self.enabled_toolsets, self.disabled_toolsets = enabled_toolsets, disabled_toolsets
        self.quiet_mode, self.save_trajectories = quiet_mode, save_trajectories
        self.tool_progress_callback, self.event_callback = tool_progress_callback, event_callback
        self.history: list[Message] = []
        self._cancel = threading.Event()
        self.services.ctx.interrupt = self._cancel
        self.services.ctx.notice = lambda text: self._emit(Notice(text, "warning"))
        self._defs: tuple[tuple[int, frozenset[str]], list[dict], frozenset[str]] | None = None
        self._called: tuple[list[Message] | None, int, set[str]] = (None, 0, set())
        self._mcp_seen: set[str] | None = None
        self._loop = self._new_loop()
        discover_builtin_tools(toolsets=enabled_toolsets)

    @property
    def provider(self) -> Provider:
        return self.services.provider

    @property
    def session_id(self) -> str | None:
        return self.services.session_id

    def _new_loop(self) -> AgentLoop:
        s = self.services
        warn = s.settings.cfg.agent.tool_loop_warn_after
        hard = s.settings.cfg.agent.tool_loop_hard_limit
        from hermes_agent.core.guards import RepeatGuard

        return AgentLoop(provider=s.provider, tools=self._request_tools, run_tool=self._run_tool, emit=self._emit,
                         persist=s.persist, persist_many=s.persist_many, compact=s.compact, tool_entry=registry.get, max_iterations=self.max_iterations,
                         guard=RepeatGuard(warn, hard), max_tokens=s.settings.model.max_tokens,
                         cache_breakpoints=s.settings.cfg.prompt_caching.enabled, hooks=s.hooks)

    def tool_definitions(self) -> list[dict]:
        """Definitions sent to the model (cached until the registry changes or a call unlocks more tools)."""
        key = (registry.generation, self._unlocked())
        if self._defs is None or self._defs[0] != key:
            from hermes_agent.tools import tool_search

            st = self.services.settings
            selected = [d for d in self.selected_definitions() if _offered_now(d["function"]["name"], key[1])]
            self.services.ctx.offered = frozenset(d["function"]["name"] for d in selected)
            defs = tool_search.assemble(selected, tool_search.core_names(), st.model.context_length,
                                        st.cfg.tools.tool_search.threshold_pct,
                                        st.cfg.tools.tool_search.enabled, ctx=self.services.ctx)
            if st.cfg.tools.schema_style == "upstream":
                from hermes_agent.tools.upstream_calls import with_upstream_names

                defs = with_upstream_names(defs)
            self._defs = (key, defs, frozenset(d["function"]["name"] for d in defs))
            if self._mcp_seen is None:  # what the agent started with: later arrivals are announced
                self._mcp_seen = _mcp_names(defs)
        return self._defs[1]

    def _unlocked(self) -> frozenset[str]:
        """The tools this conversation has called that unlock others (ToolEntry.unlocked_by)."""
        gates = registry.unlockers()
        if not gates:
            return frozenset()
        seen, upto, called = self._called
        if seen is not self.history or upto > len(self.history):
            upto, called = 0, set()
        for message in self.history[upto:]:
            called.update(c.name for c in message.tool_calls)
        self._called = (self.history, len(self.history), called)
        return frozenset(gates & called)

    def selected_definitions(self) -> list[dict]:
        """Every tool this agent may use (before tool search defers any): its toolsets' available tools."""
        return dispatch.get_tool_definitions(self.enabled_toolsets, self.disabled_toolsets, quiet_mode=True)

    def _emit(self, event: Event) -> None:
        if isinstance(event, ToolStarted) and self.tool_progress_callback is not None:
            self.tool_progress_callback(event.name, event.preview)
        if self.event_callback is not None:
            self.event_callback(event)

    def _offered_names(self) -> frozenset[str]:
        self.tool_definitions()  # brings the cache up to date
        return self._defs[2] if self._defs is not None else frozenset()

    def _run_tool(self, call: ToolCall) -> str:
        allowed = self._offered_names()
        ctx = self.services.ctx
        return dispatch.handle_function_call(call.name, call.arguments, ctx.task_id, self._user_task,
                                             ctx=ctx, hook_bus=self.services.hooks, offered=allowed)

    _user_task: str | None = None

    def _ensure_system(self, system_message: str | None) -> None:
        if self.history and self.history[0].role == "system":
            return
        text = system_message or build_system_prompt(self.services.prompt_parts)
        self._loop.add(self.history, system(text))

    def run_conversation(self, user_message: str, conversation_history: list[dict] | None = None,
                         task_id: str | None = None, system_message: str | None = None) -> dict:
        """Run one user turn; returns final_response, messages (OpenAI dicts), completed, api_calls, reason."""
        if conversation_history is not None:
            self.history = [Message.from_openai(m) for m in conversation_history]
        if task_id:
            self.services.ctx.task_id = task_id
        outcome = self.run_turn(user_message, system_message)
        return {"final_response": outcome.final_text, "messages": [m.to_openai() for m in self.history],
                "completed": outcome.reason == "stop", "api_calls": outcome.api_calls, "reason": outcome.reason,
                "usage": outcome.usage, "interrupted": outcome.reason == "interrupted"}

    def run_turn(self, user_message: str, system_message: str | None = None,
                 images: tuple[str, ...] = (), untrusted: str = "", continue_pending: bool = False) -> TurnOutcome:
        """Run one user turn and return its TurnOutcome (frontends use this; run_conversation wraps it);
        `images` are image URLs (data: URLs for local files) sent with the message; `untrusted` names who
        sent it when that is not the owner (an API caller, another gateway user): the conversation is then
        tainted and whatever would persist into future sessions needs the user's approval. `continue_pending`:
        the history already ends inside this message's turn (a restart cut it short): go on from there
        without storing the message again."""
        self._start_turn()
        self.services.ctx.taint(untrusted)
        self._ensure_system(system_message)
        self._user_task = user_message
        if not continue_pending:
            self._loop.add(self.history, user(user_message, images))
        outcome = self._loop.run(self.history, self._cancel)
        if self.save_trajectories:
            self._save_trajectory(outcome)
        return outcome

    def _request_tools(self) -> list[dict]:
        """The tool definitions of the next request; from the first request that carries an untrusted MCP server's
        descriptions the conversation counts as tainted (what persists needs the user's yes)."""
        defs = self.tool_definitions()
        if not self.services.ctx.untrusted:
            from hermes_agent.tools.provenance import described_by_untrusted

            self.services.ctx.taint(described_by_untrusted(sorted(_mcp_names(defs)), registry))
        return defs

    def _start_turn(self) -> None:
        self._cancel.clear()
        self.services.ctx.turn_id = os.urandom(6).hex()
        self._announce_late_tools()

    def _announce_late_tools(self) -> None:
        """MCP tools that registered since the last turn (a server that was slow to start) join this turn's
        definitions by themselves; say so once."""
        mcp = _mcp_names(self.tool_definitions())
        if self._mcp_seen is not None and (new := sorted(mcp - self._mcp_seen)):
            self._emit(Notice(f"MCP tools now available: {', '.join(new)}"))
        self._mcp_seen = mcp

    def chat(self, message: str) -> str:
        """Send a message and return the final answer text."""
        return self.run_conversation(message)["final_response"]

    def interrupt(self) -> None:
        """Stop the running turn as soon as possible (safe from any thread)."""
        self._cancel.set()

    def reset(self) -> None:
        """Start a fresh conversation (the system prompt is rebuilt on the next turn)."""
        self.history = []
        self.services.ctx.untrusted = ""  # a new conversation has taken nothing in yet
        for hook in self.services.on_reset:
            hook()
        if self.services.refresh_prompt is not None:
            self.services.prompt_parts = self.services.refresh_prompt()
        self._loop.guard = type(self._loop.guard)(self._loop.guard.warn_after, self._loop.guard.hard_limit)

    def set_provider(self, provider: Provider) -> None:
        """Switch the model endpoint for the rest of the session (e.g. /model)."""
        old = self.services.provider
        if self.services.meter is not None:  # a switched model is capped like the first one
            provider = self.services.meter.wrap(provider)
        self.services.provider = provider
        self._loop.provider = provider
        for hook in self.services.on_provider_change:
            hook(provider)
        if old is not provider:
            old.close()

    def taint_from_history(self) -> None:
        """A resumed conversation that took in untrusted content earlier is still tainted."""
        for msg in self.history:
            for call in msg.tool_calls:
                entry = self.services.ctx.tool_entry(call.name)
                try:
                    args = safe_loads(call.arguments or "{}")
                except ValueError:
                    args = {}
                if call.name.startswith("mcp__") or (
                        entry is not None and entry.brings_untrusted(args if isinstance(args, dict) else {})):
                    self.services.ctx.taint(f"the result of {call.name} (earlier in this conversation)")
                    return

    def rewind(self, index: int) -> None:
        """Drop history[index:] (/undo, /retry); stores continue from what remains."""
        self.history = self.history[:max(0, index)]
        for hook in self.services.on_rewind:
            hook(list(self.history))
        self._loop.guard = type(self._loop.guard)(self._loop.guard.warn_after, self._loop.guard.hard_limit)

    def _save_trajectory(self, outcome: TurnOutcome) -> None:
        from pathlib import Path

        from hermes_agent.core.trajectory import save_trajectory

        directory = Path(self.services.trajectories_dir or Path.cwd())  # Hermes writes to the working directory
        try:  # the working directory is the sandbox's: a planted symlink, FIFO or hard link is refused
            save_trajectory(directory, self.history, self.tool_definitions(), self.provider.model,
                            outcome.reason == "stop")
        except OSError as exc:
            self._emit(Notice(f"trajectory not saved in {directory}: {exc.strerror or exc} "
                              f"({getattr(exc, 'filename', '') or ''})", "warning"))

    def close(self) -> None:
        """Release the provider, tool workers and anything bootstrap registered."""
        self._loop.close()
        for closer in self.services.closers:
            try:
                closer()
            except Exception:  # closing must never raise into the frontend
                pass
        self.provider.close()


def new_task_id() -> str:
    return os.urandom(6).hex()


def _offered_now(name: str, unlocked: frozenset[str]) -> bool:
    entry = registry.get(name)
    return entry is None or entry.unlocked_by is None or entry.unlocked_by in unlocked


def _mcp_names(defs: list[dict]) -> set[str]:
    names = (d["function"]["name"] for d in defs)
    return {n for n in names if (e := registry.get(n)) is not None and e.toolset.startswith("mcp-")}
