"""What `ctx.delegate` runs for delegate_task: composes subagents (own provider connection, task id,
todo list, terminal, auto-deny approval, only tools whose `subagent_ok` trait allows it), runs them in
a thread pool and returns one JSON result per task. Never raises into the loop: a failing child is data."""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from hermes_agent.approval.approvers import AutoDenyApprover
from hermes_agent.config.settings import Settings
from hermes_agent.core.agent import AgentServices, new_task_id
from hermes_agent.core.agent import AIAgent as CoreAgent
from hermes_agent.errors import HermesError
from hermes_agent.events import Event, Notice, ToolStarted
from hermes_agent.memory.todo import TodoStore
from hermes_agent.providers.base import Provider
from hermes_agent.tools.builtin.delegate import normalise_args as normalise_delegate_args
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.dispatch import resolve_tool_names
from hermes_agent.tools.registry import registry

from .budget import Meter
from .provider import build_provider, provider_from_row
from .safety import wire_approval
from .session import bind_session, shared_store
from .stores import (
    finish_context_watch,
    skills_in,
    wire_browser_and_vision,
    wire_checkpoints,
    wire_compression,
    wire_terminal,
)

log = logging.getLogger(__name__)

SUBAGENT_HINT = (
    "You are a subagent: another agent handed you one task and nobody can answer questions. Work with your "
    "tools until the task is done, then reply with a concise report of what you did and found (files changed, "
    "results, anything unresolved). That reply is all the other agent receives.")
_STATUS = {"stop": "completed", "max_iterations": "max_iterations", "interrupted": "interrupted", "loop": "failed"}


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One delegated task as the model asked for it."""

    goal: str
    context: str = ""
    toolsets: tuple[str, ...] | None = None

    def prompt(self) -> str:
        """The child's first (and only) user message."""
        return self.goal if not self.context else f"{self.goal}\n\nContext:\n{self.context}"


def parse_tasks(args: dict) -> list[TaskSpec]:
    """`goal` (+context, toolsets) or `tasks[]` as TaskSpecs; ValueError with a model-readable message."""
    args = normalise_delegate_args(args)
    rows = args.get("tasks")
    if rows is None:
        rows = [args] if args.get("goal") else []
    elif args.get("goal"):
        raise ValueError("give either goal or tasks, not both")
    if not isinstance(rows, list) or not rows:
        raise ValueError("give a goal, or tasks: [{goal, context, toolsets}]")
    out = []
    for i, row in enumerate(rows):
        goal = row.get("goal") if isinstance(row, dict) else None
        if not isinstance(goal, str) or not goal.strip():
            raise ValueError(f"tasks[{i}] needs a non-empty goal")
        toolsets = row.get("toolsets")
        if toolsets is not None and not (isinstance(toolsets, list) and all(isinstance(t, str) for t in toolsets)):
            raise ValueError(f"tasks[{i}].toolsets must be a list of toolset names")
        out.append(TaskSpec(goal.strip(), str(row.get("context") or "").strip(),
                            tuple(toolsets) if toolsets else None))
    return out


class ChildAgent(CoreAgent):
    """A subagent: the core agent limited to `allowed` tool names (tool search defers only among them)."""

    def __init__(self, allowed: frozenset[str], **kw: object) -> None:
        self.allowed = allowed
        super().__init__(**kw)  # type: ignore[arg-type]

    def selected_definitions(self) -> list[dict]:
        return [d for d in super().selected_definitions() if d["function"]["name"] in self.allowed]


def _subagent_ok(name: str) -> bool:
    entry = registry.get(name)
    return entry is None or entry.subagent_ok


def child_tools(spec: TaskSpec, parent_enabled: list[str],
                parent_disabled: list[str] | tuple[str, ...] = ()) -> tuple[list[str], frozenset[str]]:
    """(toolsets, allowed tool names) for a child: requested ∩ the parent's tools (its disabled toolsets, e.g. a
    team role's, stay off), only `subagent_ok` ones."""
    parent_tools = {n for n in resolve_tool_names(parent_enabled, list(parent_disabled)) if _subagent_ok(n)}
    toolsets = list(spec.toolsets) if spec.toolsets else list(parent_enabled)
    allowed = frozenset(resolve_tool_names(toolsets) & parent_tools)
    if not allowed:
        raise ValueError(f"toolsets {toolsets} leave the subagent no tools it may use (you have: "
                         f"{', '.join(sorted(parent_tools)) or 'none'})")
    return toolsets, allowed


def build_child(parent: AgentServices, toolsets: list[str], allowed: frozenset[str], *, persist: bool,
                on_event: Callable[[Event], None] | None = None) -> ChildAgent:
    """A subagent composed like build_services, sharing only settings, plugin hooks and the session store."""
    settings: Settings = parent.settings
    hooks = parent.hooks.fork(without=parent.approval_hook)
    ctx = ToolContext(settings=settings, task_id=new_task_id(), hook_bus=hooks, todo_store=TodoStore(),
                      is_subagent=True, provider_for=parent.ctx.provider_for, media_scope=parent.ctx.media_scope,
                      untrusted=parent.ctx.untrusted)  # its goal was written in a tainted conversation
    services = AgentServices(provider=_child_provider(settings, parent.meter), settings=settings, ctx=ctx, hooks=hooks,
                             meter=parent.meter)  # a subagent spends its parent's budget
    wire_approval(services, settings, AutoDenyApprover(), interactive=False)
    skills = parent.prompt_parts.skills_index if skills_in(allowed) else ""
    services.prompt_parts = dataclasses.replace(parent.prompt_parts, skills_index=skills, platform_hint=SUBAGENT_HINT)
    binding = bind_session(shared_store(), services, "subagent", parent_id=parent.session_id) if persist else None
    wire_compression(services, settings, None, binding.on_compressed if binding else None)
    wire_checkpoints(services, settings)
    wire_terminal(services, settings)
    wire_browser_and_vision(services, settings)
    services.closers.append(lambda: finish_context_watch(ctx))
    max_iter = settings.cfg.delegation.max_iterations
    return ChildAgent(allowed, max_iterations=max_iter, enabled_toolsets=toolsets, services=services,
                      event_callback=on_event)


def _child_provider(settings: Settings, meter: Meter | None) -> Provider:
    """The parent's model, or Hermes's delegation.model/provider/base_url/api_key (a cheaper model for children)."""
    d = settings.cfg.delegation
    row = {k: v for k in ("provider", "model", "base_url", "api_key") if (v := getattr(d, k))}
    if row:
        return provider_from_row(settings, row, meter, "subagent")
    return build_provider(settings, meter=meter, task="subagent")


def cap(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with a marker saying how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n...[{len(text) - limit} more characters cut]"


def _counts(child: CoreAgent) -> tuple[int, int, str]:
    """(assistant messages, tool calls, last non-empty assistant text) of a child's history."""
    replies = [m for m in child.history if m.role == "assistant"]
    last = next((m.content for m in reversed(replies) if (m.content or "").strip()), "")
    return len(replies), sum(len(m.tool_calls or ()) for m in replies), last or ""


def run_child(child: ChildAgent, spec: TaskSpec, cancel: threading.Event, limit: int) -> dict:
    """Run one child turn to a result row; every failure becomes status "failed"."""
    started, row, outcome = time.monotonic(), {"goal": spec.goal}, None
    try:
        if cancel.is_set():
            row.update(status="interrupted", summary="")
        else:
            outcome = child.run_turn(spec.prompt())
            text = outcome.final_text if outcome.reason == "stop" else _counts(child)[2]
            row.update(status=_STATUS.get(outcome.reason, "failed"), summary=cap(text.strip(), limit))
            if outcome.reason == "loop":
                row["error"] = outcome.final_text
    except HermesError as exc:
        row.update(status="failed", summary=cap(_counts(child)[2], limit), error=str(exc))
    except Exception as exc:  # a child is a tool run: its crash must reach the model as data
        log.debug("subagent crashed", exc_info=True)
        row.update(status="failed", summary="", error=f"{type(exc).__name__}: {exc}")
    api_calls, tool_calls, _ = _counts(child)
    row.update(api_calls=outcome.api_calls if outcome else api_calls, tool_calls=tool_calls,
               session_id=child.session_id, duration_s=round(time.monotonic() - started, 2))
    _close(child, row["status"])
    return row


def _close(child: CoreAgent, status: str) -> None:
    binding = child.services.session
    try:
        if binding is not None:
            binding.end(status)
        child.close()
    except Exception as exc:  # the result row is already complete; closing must not lose it
        log.warning("closing a subagent failed: %s", exc)


class Delegator:
    """`ctx.delegate` of one parent agent: runs a delegate_task call."""

    def __init__(self, parent: AgentServices, enabled: list[str], *, persist: bool = True,
                 emit: Callable[[Event], None] | None = None, disabled: tuple[str, ...] = ()) -> None:
        self.parent, self.enabled, self.persist, self.disabled = parent, list(enabled), persist, disabled
        self.emit = emit or (lambda e: None)

    def __call__(self, args: dict) -> str:
        """JSON {"results": [...]} (one row per task); raises ValueError/HermesError for bad arguments."""
        specs = parse_tasks(args)
        plans = [child_tools(spec, self.enabled, self.disabled) for spec in specs]
        settings = self.parent.settings
        limit = settings.cfg.delegation.max_summary_chars
        workers = settings.cfg.delegation.max_concurrent_children
        events: queue.Queue[tuple[int, Event]] = queue.Queue()
        children: list[ChildAgent | None] = []
        rows: list[dict | None] = []
        for i, (toolsets, allowed) in enumerate(plans):
            try:
                children.append(build_child(self.parent, toolsets, allowed, persist=self.persist,
                                            on_event=lambda e, i=i: events.put((i, e)) if isinstance(e, ToolStarted)
                                            else None))
                rows.append(None)
            except HermesError as exc:
                children.append(None)
                rows.append({"goal": specs[i].goal, "status": "failed", "summary": "", "error": str(exc),
                             "api_calls": 0, "tool_calls": 0, "session_id": None})
        self.emit(Notice(f"delegating {len(specs)} task{'s' if len(specs) > 1 else ''} to subagents"))
        self._run_all(specs, children, rows, events, workers, limit)
        return json.dumps({"results": rows}, ensure_ascii=False)

    def _run_all(self, specs: list[TaskSpec], children: list[ChildAgent | None], rows: list[dict | None],
                 events: queue.Queue, workers: int, limit: int) -> None:
        """Run children `workers` at a time; relay progress and the parent's interrupt from this thread; a child
        past delegation.child_timeout_seconds is interrupted, and abandoned if it has not stopped 5 s later."""
        parent_cancel = self.parent.ctx.interrupt
        timeout = float(self.parent.settings.cfg.delegation.child_timeout_seconds or 0)
        started: dict[int, float] = {}

        def timed(i: int, child: ChildAgent) -> dict:
            started[i] = time.monotonic()
            return run_child(child, specs[i], parent_cancel, limit)

        pool = ThreadPoolExecutor(max_workers=min(workers, len(specs)), thread_name_prefix="hermes-subagent")
        futures: dict[Future, int] = {pool.submit(timed, i, child): i
                                      for i, child in enumerate(children) if child is not None}
        pending, late = set(futures), {}
        while pending:
            done, pending = wait(pending, timeout=0.1)
            if parent_cancel.is_set():  # repeated: a child that had not started yet clears its flag on start
                for child in children:
                    if child is not None:
                        child.interrupt()
            for future in list(pending) if timeout else ():
                i = futures[future]
                overdue = time.monotonic() - started.get(i, time.monotonic()) - timeout
                if overdue > 0 and i not in late:
                    late[i] = time.monotonic()
                    children[i].interrupt()  # type: ignore[union-attr]
                elif i in late and time.monotonic() - late[i] > 5:
                    pending.discard(future)  # it ignores the interrupt: give up on it
                    rows[i] = {"goal": specs[i].goal, "status": "timeout", "summary": "", "api_calls": 0,
                               "tool_calls": 0, "session_id": children[i].session_id,  # type: ignore[union-attr]
                               "duration_s": round(time.monotonic() - started[i], 2),
                               "error": f"no result within {timeout:g}s (delegation.child_timeout_seconds); abandoned"}
                    self._finished(i, rows, specs)
            self._relay(events, len(specs))
            for future in done:
                i = futures[future]
                rows[i] = future.result()
                if i in late:
                    rows[i].update(status="timeout", error=f"no result within {timeout:g}s "
                                   "(delegation.child_timeout_seconds); interrupted")
                self._finished(i, rows, specs)
        self._relay(events, len(specs))
        pool.shutdown(wait=False, cancel_futures=True)

    def _finished(self, i: int, rows: list[dict | None], specs: list[TaskSpec]) -> None:
        row = rows[i] or {}
        self.emit(Notice(f"  [{i + 1}] {row.get('status')}: {_short(specs[i].goal)} "
                         f"({_plural(int(row.get('tool_calls') or 0), 'tool call')}, {row.get('duration_s')}s)"
                         + (f" - {row['error']}" if row.get("error") else "")))

    def _relay(self, events: queue.Queue, total: int) -> None:
        while True:
            try:
                i, event = events.get_nowait()
            except queue.Empty:
                return
            if isinstance(event, ToolStarted):
                tag = f"[{i + 1}] " if total > 1 else ""
                self.emit(Notice(f"  ↳ {tag}{event.emoji or '🔧'} {event.name} {event.preview}".rstrip()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
