"""Team mode's attribution: which person each tool call ran for, in state.db's `hermes_agent_tool_people`.

A table of ours alone (Hermes, any version, ignores it), created on first use with IF NOT EXISTS, so it
needs no migration step and no schema version. Rows point at `sessions.id` by value only (no foreign key:
Hermes may prune a session; its rows then simply name a session that is gone)."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from hermes_agent.errors import StorageError
from hermes_agent.storage.db import connect, retry_busy

log = logging.getLogger(__name__)

TABLE_SQL = ("CREATE TABLE IF NOT EXISTS hermes_agent_tool_people (id INTEGER PRIMARY KEY, session_id TEXT, "
             "person TEXT NOT NULL, role TEXT NOT NULL, tool_name TEXT NOT NULL, at REAL NOT NULL)")
INDEX_SQL = ("CREATE INDEX IF NOT EXISTS hermes_agent_tool_people_person "
             "ON hermes_agent_tool_people(person, at)")


class Attribution:
    """Appends one row per tool call; opened lazily, one connection per agent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = connect(self.path)
            retry_busy(lambda: conn.execute(TABLE_SQL))
            retry_busy(lambda: conn.execute(INDEX_SQL))
            self._conn = conn
        return self._conn

    def record(self, session_id: str | None, person: str, role: str, tool: str) -> None:
        row = (session_id, person, role, tool, time.time())
        try:
            with self._lock:
                db = self._db()
                retry_busy(lambda: db.execute("INSERT INTO hermes_agent_tool_people "
                                              "(session_id, person, role, tool_name, at) VALUES (?,?,?,?,?)", row))
        except (sqlite3.Error, OSError, StorageError) as exc:  # attribution must never break a tool call
            log.warning("could not record the tool call of %s: %s", person, exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def by_person(path: Path) -> dict[str, dict]:
    """person -> {role, tool_calls, sessions (ids, newest first), last_at}; {} when nothing was recorded."""
    if not path.exists():
        return {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return {}
    try:
        rows = conn.execute("SELECT person, role, session_id, COUNT(*), MAX(at) FROM hermes_agent_tool_people "
                            "GROUP BY person, session_id ORDER BY MAX(at) DESC").fetchall()
    except sqlite3.Error:  # no table yet
        return {}
    finally:
        conn.close()
    out: dict[str, dict] = {}
    for person, role, sid, count, last in rows:
        row = out.setdefault(person, {"role": role, "tool_calls": 0, "sessions": [], "last_at": last})
        row["tool_calls"] += count
        if sid:
            row["sessions"].append(sid)
    return out
