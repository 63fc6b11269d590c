"""What a newer Hermes (its state.db schema v23..v31 and later) added that we keep right when we write.

A file upstream Hermes created or upgraded holds more than the v22 layout we declare. We read and
write the columns we know and leave the rest to their owner; where a newer column changes the meaning
of one we write, we follow it (all detected per file, none assumed from the version number):
- `system_prompts(hash, prompt)`: a session's prompt is stored once by SHA-256 and referenced by
  `sessions.system_prompt_hash`; `sessions.system_prompt` is only a read fallback (v25).
- `sessions.last_activity_at`: the activity clock upstream's listings and idle logic read.
- `sessions.created_source`, `profile_name`: stamped at creation as upstream does.
- `sessions.hidden`: sessions upstream keeps out of every listing stay out of ours.
Upstream's own triggers mint `message_uid`, `display_order` and keep its search index (external
content over views) when we insert, so nothing here touches messages or FTS. No SQL runs at import.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Shape:
    """The newer-Hermes columns and tables this file has (all False for a v22 file)."""

    hermes_version: int = 0
    prompt_table: bool = False  # system_prompts + sessions.system_prompt_hash
    activity: bool = False  # sessions.last_activity_at
    created_source: bool = False
    tool_names: bool = False  # sessions.tool_names (its hash also references system_prompts)
    hidden: bool = False  # sessions.hidden: internal sessions (bot chats) upstream never lists

    @property
    def newer(self) -> bool:
        return self.prompt_table or self.activity or self.created_source


def read_shape(c: sqlite3.Connection, hermes_version: int) -> Shape:
    cols = {r[1] for r in c.execute("PRAGMA table_info(sessions)")}
    prompts = c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'system_prompts'").fetchone()
    return Shape(hermes_version, bool(prompts) and "system_prompt_hash" in cols, "last_activity_at" in cols,
                 "created_source" in cols, "tool_names" in cols, "hidden" in cols)


def profile_of(db_path: Path) -> str:
    """The profile a state.db belongs to, as upstream stamps it: `profiles/<name>/state.db` else default."""
    return db_path.parent.name if db_path.parent.parent.name == "profiles" else "default"


def store_prompt(c: sqlite3.Connection, prompt: str | None) -> str | None:
    """Put `prompt` into system_prompts (once per content) and return its hash (None for no prompt)."""
    if prompt is None:
        return None
    import hashlib

    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    c.execute("INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)", (digest, prompt))
    return digest


def drop_unreferenced_prompts(c: sqlite3.Connection, shape: Shape) -> None:
    """Delete prompts no session points at any more (upstream keeps tools[] pins in the same table)."""
    if not shape.prompt_table:
        return
    pins = " AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.tool_names = system_prompts.hash)" \
        if shape.tool_names else ""
    c.execute("DELETE FROM system_prompts WHERE NOT EXISTS (SELECT 1 FROM sessions s "
              f"WHERE s.system_prompt_hash = system_prompts.hash){pins}")


def session_extras(c: sqlite3.Connection, shape: Shape, source: str, prompt: str | None,
                   db_path: Path) -> dict[str, object]:
    """Columns to set on a new session beyond ours: the prompt by hash, creation source, owning profile."""
    extra: dict[str, object] = {}
    if shape.prompt_table and prompt is not None:
        extra.update(system_prompt=None, system_prompt_hash=store_prompt(c, prompt))
    if shape.created_source:
        extra["created_source"] = source
    if shape.newer:
        extra["profile_name"] = profile_of(db_path)
    return extra


def set_prompt(c: sqlite3.Connection, shape: Shape, session_id: str, prompt: str | None) -> int:
    """Record a session's new system prompt in the file's own layout; returns the rows changed."""
    if not shape.prompt_table:
        return c.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (prompt, session_id)).rowcount
    n = c.execute("UPDATE sessions SET system_prompt_hash = ?, system_prompt = NULL WHERE id = ?",
                  (store_prompt(c, prompt), session_id)).rowcount
    drop_unreferenced_prompts(c, shape)
    return n


def prompt_of(c: sqlite3.Connection, shape: Shape, session_id: str) -> str | None:
    """The session's prompt from system_prompts (None when the file has no table or the row no hash)."""
    if not shape.prompt_table:
        return None
    row = c.execute("SELECT p.prompt FROM sessions s JOIN system_prompts p ON p.hash = s.system_prompt_hash "
                    "WHERE s.id = ?", (session_id,)).fetchone()
    return row[0] if row else None


def touch_activity(c: sqlite3.Connection, shape: Shape, session_id: str, when: float) -> None:
    """Move upstream's activity clock forward (never back), as its own writers do."""
    if shape.activity:
        c.execute("UPDATE sessions SET last_activity_at = ? WHERE id = ? AND "
                  "(last_activity_at IS NULL OR last_activity_at < ?)", (when, session_id, when))
