"""Personalities: `SOUL.md` in HERMES_HOME is the default persona; `personalities: {name: prompt}` in
config adds named ones. Switching replaces the persona part of the system prompt for the next conversation."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError

if TYPE_CHECKING:
    from hermes_agent.core.contract import AgentSession

DEFAULT = "default"
NONE = "none"


def named(settings: Settings) -> dict[str, str]:
    """Config personalities: a string, or a mapping with `system_prompt`/`prompt`/`description`."""
    out: dict[str, str] = {}
    for name, value in settings.cfg.personalities.items():
        if isinstance(value, dict):
            value = value.get("system_prompt") or value.get("prompt") or value.get("description") or ""
        if isinstance(value, str) and value.strip():
            out[str(name)] = value.strip()
    return out


def soul(settings: Settings) -> str:
    """The SOUL.md persona (HERMES_HOME, else the working directory), cleaned and capped; "" if none."""
    from hermes_agent.memory.context_files import persona_and_blocks

    return persona_and_blocks(settings, os.getcwd())[0]


def current(agent: AgentSession) -> str:
    """The persona text the agent will use for its next system prompt."""
    return agent.services.prompt_parts.persona


def resolve(settings: Settings, name: str) -> str:
    """The persona text of `name` (default = SOUL.md, none = no persona)."""
    key = name.strip()
    if key.lower() == DEFAULT:
        return soul(settings)
    if key.lower() == NONE:
        return ""
    table = named(settings)
    if key in table:
        return table[key]
    lowered = {k.lower(): v for k, v in table.items()}
    if key.lower() in lowered:
        return lowered[key.lower()]
    choices = ", ".join([DEFAULT, NONE, *sorted(table)])
    raise HermesError(f"unknown personality {name!r}; choose one of: {choices}")


def apply(agent: AgentSession, settings: Settings, name: str) -> str:
    """Set the persona for the next system prompt; returns the text now in use."""
    text = resolve(settings, name)
    services = agent.services
    services.prompt_parts = dataclasses.replace(services.prompt_parts, persona=text)
    return text


def listing(settings: Settings, active: str) -> list[tuple[str, str, bool]]:
    """(name, first line of its prompt, active?) for /personality without arguments."""
    soul_text = soul(settings)
    rows = [(DEFAULT, _first_line(soul_text) or "(no SOUL.md)", active == soul_text),
            (NONE, "no persona", active == "")]
    for name, text in sorted(named(settings).items()):
        rows.append((name, _first_line(text), active == text))
    if not soul_text:  # default and none are the same text then; mark only one
        rows[0] = (DEFAULT, rows[0][1], False)
    return rows


def _first_line(text: str, limit: int = 70) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
