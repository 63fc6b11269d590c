"""The slash-command table (one row per command: name, aliases, argument hint, help, handler) and its
lookup, completion, `/help` and did-you-mean. Immediate commands may run while a turn is in progress;
the others queue behind it."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost
    from hermes_agent.config.settings import Settings

Handler = Callable[["ReplHost", str], None]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    handler: Handler
    help: str
    aliases: tuple[str, ...] = ()
    args: str = ""
    immediate: bool = False


def _help(repl: ReplHost, arg: str) -> None:
    rows = []
    for c in table():
        head = f"/{c.name}" + (f" {c.args}" if c.args else "")
        alias = f"  (also {', '.join('/' + a for a in c.aliases)})" if c.aliases else ""
        rows.append(f"  {repl.screen.style(head.ljust(22), 'cyan')} {c.help}{repl.screen.style(alias, 'dim')}")
    rows.append(repl.screen.style("  /<skill-name> [task] runs an installed skill (see /skills)", "dim"))
    rows.append(repl.screen.style("  Alt-Enter inserts a newline · Ctrl-C stops a turn · Ctrl-D quits", "dim"))
    repl.screen.lines(rows)


def _quit(repl: ReplHost, arg: str) -> None:
    repl.request_exit(0)


_TABLE: list[Command] = []


def table() -> list[Command]:
    """Every command, in /help order (handler modules are imported on first use)."""
    if _TABLE:
        return _TABLE
    from hermes_agent.cli import slash_conv as c
    from hermes_agent.cli import slash_env as e
    from hermes_agent.cli import slash_session as s

    _TABLE.extend([
        Command("help", _help, "list commands", immediate=True),
        Command("new", c.new, "start a new conversation", ("reset",)),
        Command("clear", c.clear, "clear the screen and start a new conversation"),
        Command("history", c.history, "show this conversation", immediate=True),
        Command("retry", c.retry, "send the last message again (its answer is replaced)"),
        Command("undo", c.undo, "remove the last message and everything after it"),
        Command("compress", c.compress, "summarise the middle of the conversation to free context"),
        Command("save", c.save, "save this conversation as JSON", args="[file]", immediate=True),
        Command("rollback", c.rollback, "restore files from before the last N changes", args="[n]"),
        Command("model", e.model, "show or switch the model for this session", args="[name]"),
        Command("provider", e.provider, "show the provider, endpoint and fallbacks", immediate=True),
        Command("tools", e.tools, "list the tools of this session", immediate=True),
        Command("toolsets", e.toolsets, "list toolsets (● enabled)", immediate=True),
        Command("skills", e.skills, "list installed skills; search, install, update, uninstall from the hub",
                args="[search Q|install REF|update|uninstall NAME|inspect NAME]", immediate=True),
        Command("config", e.config, "show the effective configuration", immediate=True),
        Command("personality", e.personality, "list or switch personalities", args="[name]", immediate=True),
        Command("reasoning", e.reasoning, "show or hide model reasoning", args="[show|hide]", immediate=True),
        Command("verbose", e.verbose, "cycle tool progress: off → new → all → verbose", immediate=True),
        Command("yolo", e.yolo, "toggle running flagged commands without asking", immediate=True),
        Command("stop", e.stop, "kill background processes started by the agent", immediate=True),
        Command("sessions", s.sessions, "recent saved sessions", immediate=True),
        Command("resume", s.resume_command, "continue a saved session", args="ID"),
        Command("title", s.title, "show or set this session's title", args="[text]", immediate=True),
        Command("usage", s.usage, "tokens, calls and cost of this session", immediate=True),
        Command("budget", s.budget, "what is left of each spending cap (budget.*)", immediate=True),
        Command("quit", _quit, "leave Hermes", ("exit", "q"), immediate=True),
    ])
    return _TABLE


def _index() -> dict[str, Command]:
    return {n: c for c in table() for n in (c.name, *c.aliases)}


def is_command(text: str) -> bool:
    """`/name ...` is a command; `/etc/hosts ...` (a path) is an ordinary message."""
    head = text.split(None, 1)[0]
    return len(head) > 1 and head.startswith("/") and "/" not in head[1:]


def lookup(text: str) -> tuple[Command | None, str]:
    """The command named by `/name args` and its argument text."""
    head, _, arg = text.strip().partition(" ")
    return _index().get(head[1:].lower()), arg.strip()


def suggest(name: str) -> str | None:
    """The closest command name, for did-you-mean."""
    names = list(_index())
    prefixed = [n for n in names if n.startswith(name) and name]
    if len(prefixed) == 1:
        return prefixed[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def skill_message(settings: Settings, text: str) -> str | None:
    """`/skill-name task`: the user message that runs an installed skill (None when no skill has that name)."""
    from hermes_agent.skills.invoke import skill_message as message

    return message(settings, text)


def unknown_message(text: str) -> str:
    """`Unknown command /modle. Did you mean /model?`"""
    name = text.split(None, 1)[0][1:].lower()
    guess = suggest(name)
    hint = f" Did you mean /{guess}?" if guess else ""
    return f"Unknown command /{name}.{hint} Type /help for the list."


def completions() -> list[tuple[str, str]]:
    """(name, help) for every name and alias."""
    return [(n, c.help) for c in table() for n in (c.name, *c.aliases)]


def argument_values(repl: ReplHost, name: str) -> list[str]:
    """Completion values for a command's argument."""
    if name == "personality":
        from hermes_agent.cli.personality import named

        return ["default", "none", *sorted(named(repl.settings))]
    if name == "reasoning":
        return ["show", "hide"]
    return []
