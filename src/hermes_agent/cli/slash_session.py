"""Slash commands over saved sessions and usage: /sessions, /resume, /title, /usage. Reads go to the
agent's session store when bootstrap shares one, else to state.db directly."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from hermes_agent.errors import HermesError

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost
    from hermes_agent.core.agent import SessionHandle
    from hermes_agent.storage import SessionStore


def _binding(repl: ReplHost) -> SessionHandle | None:
    """The agent's session binding (`services.session`), or None when sessions are not saved."""
    agent = repl.agent
    return agent.services.session if agent is not None else None


@contextlib.contextmanager
def _store(repl: ReplHost) -> Iterator[SessionStore]:
    binding = _binding(repl)
    if binding is not None:
        yield binding.store
        return
    from hermes_agent.storage import SessionStore

    with SessionStore() as store:
        yield store


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def sessions(repl: ReplHost, arg: str) -> None:
    with _store(repl) as store:
        rows = store.list_sessions(15)
    if not rows:
        repl.screen.line("No saved sessions yet.", "dim")
        return
    current = repl.agent.session_id if repl.agent is not None else None
    s = repl.screen
    out = [s.style(f"  {'ID':<22}  {'LAST ACTIVE':<16}  {'SOURCE':<9}  {'MSGS':>4}  TITLE", "dim")]
    for info in rows:
        mark = s.style("●", "green") if info.id == current else " "
        title = " ".join((info.title or "").split())
        out.append(f"{mark} {info.id:<22}  {_when(info.last_active_at):<16}  {info.source:<9}  "
                   f"{info.message_count:>4}  {title[:50]}")
    s.lines(out)
    s.line("  /resume ID continues one (a unique prefix is enough).", "dim")


def resume(repl: ReplHost, target: str) -> None:
    """Switch the agent to a saved session; the current one is ended and stays in the store."""
    agent = repl.require_agent()
    binding = _binding(repl)
    if binding is None:
        raise HermesError("/resume is unavailable: this run is not saving sessions")
    with _store(repl) as store:
        info = store.require_session(target)
    if info.id == agent.session_id:
        repl.screen.line("That is the current session.", "dim")
        return
    binding.end("switched")
    agent.history = binding.resume(info.id)
    recap(repl)


def recap(repl: ReplHost) -> None:
    """`Resumed session … “title”: 12 messages` and the last thing the user said."""
    agent = repl.agent
    if agent is None or not agent.session_id:
        return
    with _store(repl) as store:
        info = store.get_session(agent.session_id)
    count = sum(1 for m in agent.history if m.role != "system")
    title = f" “{info.title}”" if info is not None and info.title else ""
    repl.screen.line(f"Resumed session {agent.session_id}{title}: {count} messages.", "green")
    last_user = next((m for m in reversed(agent.history) if m.role == "user"), None)
    if last_user is not None:
        repl.screen.line(f"  last message: {' '.join((last_user.content or '').split())[:100]}", "dim")


def resume_command(repl: ReplHost, arg: str) -> None:
    if not arg:
        raise HermesError("usage: /resume ID (see /sessions)")
    resume(repl, arg)


def title(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    if _binding(repl) is None:
        raise HermesError("/title is unavailable: this run is not saving sessions")
    if not agent.session_id:
        raise HermesError("no session yet: it starts with your first message")
    with _store(repl) as store:
        if not arg:
            info = store.require_session(agent.session_id)
            repl.screen.line(f"Title: {info.title or '(none yet)'}")
            return
        store.set_title(agent.session_id, arg)
    repl.screen.line(f"Title set: {arg}", "green")


def usage(repl: ReplHost, arg: str) -> None:
    from hermes_agent.bootstrap.provider import own_prices
    from hermes_agent.core.compression import estimate_tokens
    from hermes_agent.storage import estimate_cost

    t = repl.totals
    u = t.usage
    model = repl.agent.provider.model if repl.agent is not None else repl.settings.model.model
    cost = estimate_cost(model, u, own_prices(repl.settings))
    rows = [("turns", f"{t.turns}"), ("model calls", f"{t.api_calls}"),
            ("input tokens", f"{u.prompt_tokens:,}" + (f" ({u.cache_read_tokens:,} from cache)"
                                                       if u.cache_read_tokens else "")),
            ("output tokens", f"{u.completion_tokens:,}"),
            ("cost", "unknown for this model" if cost is None else f"${cost:.4f} (estimate)")]
    if repl.agent is not None:
        window = repl.settings.model.context_length
        used = estimate_tokens(list(repl.agent.history))
        rows.append(("context", f"~{used:,} of {window:,} tokens ({100 * used / max(1, window):.0f}%)"))
    width = max(len(k) for k, _ in rows)
    repl.screen.lines([f"  {repl.screen.style(k.ljust(width), 'cyan')}  {v}" for k, v in rows])


def budget(repl: ReplHost, arg: str) -> None:
    from hermes_agent.bootstrap.budget import report

    agent = repl.agent
    meter = agent.services.meter if agent is not None else None
    with _store(repl) as store:
        text = report(repl.settings, "", meter, store, agent.session_id if agent is not None else None)  # type: ignore[arg-type]
    repl.screen.lines(text.splitlines())
