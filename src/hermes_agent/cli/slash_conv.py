"""Slash commands that change or show the conversation: /new, /clear, /history, /retry, /undo, /compress,
/save, /rollback. The queued ones run on the REPL's runner thread, never during a turn."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.errors import HermesError

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost


def _last_user_index(history: list) -> int | None:
    for i in range(len(history) - 1, -1, -1):
        if history[i].role == "user":
            return i
    return None


def new(repl: ReplHost, arg: str) -> None:
    from hermes_agent.cli.repl_state import Totals

    agent = repl.require_agent()
    agent.reset()  # ends the saved session and reloads SOUL.md/memory for the new prompt
    if repl.personality is not None:
        from hermes_agent.cli.personality import apply

        apply(agent, repl.settings, repl.personality)
    repl.totals = Totals()
    sid = f" (session {agent.session_id})" if agent.session_id else ""
    repl.screen.line(f"New conversation started{sid}.", "green")


def clear(repl: ReplHost, arg: str) -> None:
    repl.screen.control("\x1b[2J\x1b[3J\x1b[H")
    new(repl, arg)


def history(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    s = repl.screen
    rows: list[str] = []
    for m in agent.history:
        if m.role == "system":
            continue
        if m.role == "user":
            rows.append(s.style("you: ", "bold_cyan") + _short(m.content))
        elif m.role == "assistant":
            if m.content:
                rows.append(s.style("hermes: ", "bold") + _short(m.content))
            rows += [s.style(f"  🔧 {c.name} {_short(c.arguments, 100)}", "dim") for c in m.tool_calls]
        elif m.role == "tool":
            rows.append(s.style(f"     → {len(m.content or '')} chars", "dim"))
    s.lines(rows or [s.style("(empty conversation)", "dim")])


def _short(text: str | None, limit: int = 300) -> str:
    text = (text or "").strip().replace("\n", " ⏎ ")
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more chars)"


def retry(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    i = _last_user_index(agent.history)
    if i is None:
        repl.screen.line("Nothing to retry yet.", "yellow")
        return
    text = agent.history[i].content or ""
    agent.rewind(i)
    repl.screen.line(f"Retrying: {_short(text, 80)}", "dim")
    repl.run_message(text)


def undo(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    i = _last_user_index(agent.history)
    if i is None:
        repl.screen.line("Nothing to undo.", "yellow")
        return
    text = agent.history[i].content or ""
    removed = len(agent.history) - i
    agent.rewind(i)
    repl.screen.line(f"Undone: {_short(text, 80)} ({removed} message{'s' if removed != 1 else ''} removed)",
                     "green")


def compress(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    compact = agent.services.compact
    if compact is None:
        repl.screen.line("/compress is unavailable: this agent has no compressor wired.", "yellow")
        return
    before = len(agent.history)
    if before < 4:
        repl.screen.line("Nothing to compress yet.", "yellow")
        return
    replaced = compact(list(agent.history), None, True)
    if replaced is None:
        repl.screen.line("Nothing to compress: the conversation is already as small as it can get.", "yellow")
        return
    agent.history[:] = replaced
    repl.screen.line(f"Compressed: {before} → {len(replaced)} messages.", "green")


def save(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    path = Path(arg).expanduser() if arg else Path(os.getcwd(), time.strftime("hermes-conversation-%Y%m%d-%H%M%S.json"))
    messages = [m.to_openai() for m in list(agent.history)]
    data = {"model": agent.provider.model if hasattr(agent.provider, "model") else repl.settings.model.model,
            "session_id": agent.session_id, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "messages": messages}
    try:
        from hermes_agent.nofollow import write_text_nofollow

        write_text_nofollow(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")  # no link followed
    except OSError as exc:
        raise HermesError(f"cannot write {path}: {exc.strerror or exc}") from None
    repl.screen.line(f"Saved {len(messages)} messages to {path}", "green")


def rollback(repl: ReplHost, arg: str) -> None:
    from hermes_agent.storage.checkpoints import CheckpointStore

    try:
        n = int(arg) if arg else 1
    except ValueError:
        raise HermesError("usage: /rollback [n] (n = how many change sets to undo)") from None
    store = CheckpointStore(max_snapshots=repl.settings.cfg.checkpoints.max_snapshots)
    if not store.list(os.getcwd()):
        repl.screen.line(f"No checkpoints for {os.getcwd()} yet: they are taken before the agent changes files.",
                         "yellow")
        return
    from hermes_agent.memory.ctxledger import restoring

    with restoring(repl.settings.home, os.path.realpath(os.getcwd())):  # restored context files: held unless vouched
        result = store.rollback(os.getcwd(), n)
    s = repl.screen
    s.line(f"Restored checkpoint {result.restored[:10]}.", "green")
    if result.removed:
        s.line(f"Removed files created since: {', '.join(result.removed)}", "dim")
    if result.safety_id:
        s.line(f"The previous state is saved as {result.safety_id[:10]} "
               f"(`hermes checkpoints restore {result.safety_id[:10]}` undoes this).", "dim")
