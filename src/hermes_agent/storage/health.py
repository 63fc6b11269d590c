"""Read-only health checks of state.db for `hermes doctor`: layout version, quick integrity check, and
whether both search indexes hold exactly the messages they should. Never changes the file."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_agent.storage import layout as L
from hermes_agent.storage.migrations import LATEST_VERSION, inspect


@dataclass(frozen=True, slots=True)
class Check:
    level: Literal["ok", "info", "warn", "fail"]
    text: str


def _version(c: sqlite3.Connection, path: Path) -> Check:
    found = inspect(c)
    if found.kind == "legacy":
        return Check("info", f"{path}: hermes-agent layout v{found.ledger_version}; converted to the shared "
                             f"Hermes layout (v{L.HERMES_SCHEMA_VERSION}) the next time hermes opens it")
    if found.hermes_version > L.HERMES_SCHEMA_VERSION or found.ledger_version > LATEST_VERSION:
        return Check("info", f"{path}: schema v{found.hermes_version} (step {found.ledger_version}), newer than "
                             f"this hermes-agent's v{L.HERMES_SCHEMA_VERSION} (step {LATEST_VERSION}): read and "
                             "written in the columns both know; its own search index and triggers left to it")
    if found.hermes_version < L.HERMES_SCHEMA_VERSION:
        return Check("info", f"{path}: schema v{found.hermes_version}; upgraded to v{L.HERMES_SCHEMA_VERSION} "
                             "the next time hermes opens it")
    sessions, messages = c.execute(
        "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM messages)").fetchone()
    pending = "" if found.ledger_version == LATEST_VERSION else "; hermes-agent adds its columns on next use"
    return Check("ok", f"{path}: schema v{found.hermes_version}, shared with Hermes "
                       f"({sessions} sessions, {messages} messages{pending})")


def _integrity(c: sqlite3.Connection) -> Check:
    problems = [r[0] for r in c.execute("PRAGMA quick_check(5)")]
    if problems == ["ok"]:
        return Check("ok", "state.db quick integrity check passed")
    return Check("fail", f"state.db is damaged ({'; '.join(problems)}): restore a backup or "
                         "`sqlite3 state.db .recover`")


def _fts(c: sqlite3.Connection) -> list[Check]:
    have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    missing = [n for n in (L.WORDS, L.TRIGRAM, *L.FTS_TRIGGERS) if n not in have]
    if missing:
        return [Check("fail", f"search index incomplete (missing {', '.join(missing)}): searches miss "
                              "messages until hermes rebuilds it")]
    out = []
    for table, only in ((L.WORDS, "1"), (L.TRIGRAM, L.non_ascii("m"))):
        absent = c.execute(f"SELECT COUNT(*) FROM messages m WHERE {only} AND NOT EXISTS "
                           f"(SELECT 1 FROM {table} f WHERE f.rowid = m.id)").fetchone()[0]
        stale = c.execute(f"SELECT COUNT(*) FROM {table} f WHERE NOT EXISTS "
                          f"(SELECT 1 FROM messages m WHERE m.id = f.rowid)").fetchone()[0]
        if absent or stale:
            out.append(Check("fail", f"search index {table}: {absent} messages missing, {stale} stale entries"))
    return out or [Check("ok", "search indexes match the stored messages")]


def check_database(path: Path) -> list[Check]:
    """Findings about the session database at `path` (opened read-only)."""
    if not path.exists():
        return [Check("info", f"no {path} yet (created by the first conversation)")]
    try:
        c = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return [Check("fail", f"{path} cannot be opened: {exc}")]
    try:
        version = _version(c, path)
        out = [version, _integrity(c)]
        if version.level == "ok":
            out += _fts(c)
        return out
    except sqlite3.Error as exc:
        return [Check("fail", f"{path} is not a usable session database: {exc}")]
    finally:
        c.close()
