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


def _external(c: sqlite3.Connection) -> bool:
    row = c.execute(f"SELECT sql FROM sqlite_master WHERE name = '{L.WORDS}'").fetchone()
    return row is not None and L.WORDS_SRC in (row[0] or "")


def _fts(c: sqlite3.Connection) -> list[Check]:
    have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    missing = [n for n in (L.WORDS, L.TRIGRAM, *L.FTS_TRIGGERS) if n not in have]
    if missing:
        return [Check("fail", f"search index incomplete (missing {', '.join(missing)}): searches miss "
                              "messages until hermes rebuilds it")]
    if _external(c):  # layout 3: the index's own row list is its docsize table; the view says what belongs
        pairs = ((L.WORDS, f"(SELECT id FROM {L.WORDS_SRC})"), (L.TRIGRAM, f"(SELECT id FROM {L.TRIGRAM_SRC})"))
        indexed, listed = "f.id", "{t}_docsize"
    else:
        pairs = ((L.WORDS, "(SELECT id FROM messages)"),
                 (L.TRIGRAM, f"(SELECT id FROM messages m WHERE {L.non_ascii('m')})"))
        indexed, listed = "f.rowid", "{t}"
    rebuild = _rebuild_state(c)
    gate = "" if rebuild is None else f" AND (s.id <= {rebuild[0]} OR s.id > {rebuild[1]})"
    out = []
    for table, rows in pairs:
        src = listed.format(t=table)
        absent = c.execute(f"SELECT COUNT(*) FROM {rows} s WHERE NOT EXISTS "
                           f"(SELECT 1 FROM {src} f WHERE {indexed} = s.id){gate}").fetchone()[0]
        stale = c.execute(f"SELECT COUNT(*) FROM {src} f WHERE {indexed} NOT IN {rows}").fetchone()[0]
        if absent or stale:
            out.append(Check("fail", f"search index {table}: {absent} messages missing, {stale} stale entries"))
    if rebuild is not None:
        done = c.execute("SELECT COUNT(*) FROM messages WHERE id <= ?", (rebuild[0],)).fetchone()[0]
        total = c.execute("SELECT COUNT(*) FROM messages WHERE id <= ?", (rebuild[1],)).fetchone()[0]
        out.append(Check("info", f"search index being rebuilt in the background: {done} of {total} older "
                                 "messages indexed so far (`hermes sessions optimize-storage` finishes it now)"))
    return out or [Check("ok", "search indexes match the stored messages")]


def _rebuild_state(c: sqlite3.Connection) -> tuple[int, int] | None:
    from hermes_agent.storage.fts_rebuild import progress

    p = progress(c)
    return None if p is None else (p.done, p.high_water)


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
