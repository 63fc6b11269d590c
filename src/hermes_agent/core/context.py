"""System prompt assembly: base prompt + persona + memory snapshot + skill index + context files.
Built once per session so the prompt stays byte-identical across turns (prompt caching)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

_BASE_CACHE: dict[str, str] = {}


def base_prompt() -> str:
    """The shipped base system prompt (core/prompts/system.md)."""
    if "system" not in _BASE_CACHE:
        # read beside this module: importlib.resources would pull in zipfile & co. at start-up (issue 24)
        _BASE_CACHE["system"] = Path(__file__).with_name("prompts").joinpath("system.md").read_text("utf-8").strip()
    return _BASE_CACHE["system"]


@dataclass(frozen=True, slots=True)
class PromptParts:
    """Everything that goes into the system prompt besides the base text."""

    persona: str = ""
    memory: str = ""
    skills_index: str = ""
    context_files: tuple[str, ...] = ()
    platform_hint: str = ""
    cwd: str = ""
    extra: tuple[str, ...] = field(default_factory=tuple)


def build_system_prompt(parts: PromptParts, *, now: datetime | None = None) -> str:
    """Join the sections in a fixed order; empty sections are left out."""
    sections = [parts.persona.strip() or "", base_prompt()]
    stamp = now.strftime("%Y-%m-%d") if now is not None else time.strftime("%Y-%m-%d")  # no datetime import (~6 M instr.)
    env = f"Today is {stamp}." + (f" Working directory: {parts.cwd}." if parts.cwd else "")
    sections.append(env + (f" {parts.platform_hint}" if parts.platform_hint else ""))
    if parts.memory.strip():
        sections.append(parts.memory.strip())
    if parts.skills_index.strip():
        sections.append(parts.skills_index.strip())
    sections.extend(text.strip() for text in parts.context_files if text.strip())
    sections.extend(text.strip() for text in parts.extra if text.strip())
    return "\n\n".join(s for s in sections if s)
