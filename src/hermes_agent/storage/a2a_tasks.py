"""The A2A server's tasks and push-notification configs, kept in a file of ours
($HERMES_HOME/api_server/a2a_tasks.db; Hermes never opens it, state.db is untouched). Rows hold the serialized
task (bytes the api layer encodes and decodes) beside the columns it is listed and paged by; who owns a task
("" without team mode) scopes every read. No protocol knowledge here."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from hermes_agent.storage import db

T = TypeVar("T")
SCHEMA = """
CREATE TABLE IF NOT EXISTS a2a_tasks (
    owner TEXT NOT NULL, id TEXT NOT NULL, context_id TEXT NOT NULL, state INTEGER NOT NULL,
    ts_ns INTEGER, runner TEXT NOT NULL DEFAULT '', body BLOB NOT NULL, PRIMARY KEY (owner, id));
CREATE INDEX IF NOT EXISTS a2a_tasks_order ON a2a_tasks (owner, ts_ns, id);
CREATE TABLE IF NOT EXISTS a2a_push (
    owner TEXT NOT NULL, task_id TEXT NOT NULL, id TEXT NOT NULL, dialect TEXT NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (task_id, owner, id));
"""
# the list order: tasks with a status time first, newest first, then by id (descending); a page cursor is the
# sort key of the last row served
_KEY = "(ts_ns IS NOT NULL), COALESCE(ts_ns, 0), id"
_ORDER = "(ts_ns IS NOT NULL) DESC, COALESCE(ts_ns, 0) DESC, id DESC"


# Tasks deleted per write transaction, at most _CHUNK_BYTES of them (freeing 2 MB of pages takes ~20-40 ms; 200
# tasks of 50 KB held the lock 80-160 ms): the server's own writes get the lock between chunks.
_CHUNK = 200
_CHUNK_BYTES = 2_000_000
_PAUSE_S = 0.02


@dataclass(frozen=True, slots=True)
class Pruned:
    tasks: int
    bytes: int
    pages_freed: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Page:
    bodies: list[bytes]
    total: int
    last_key: tuple[bool, int, str] | None  # the sort key of the last row, when more rows follow


@dataclass(frozen=True, slots=True)
class Filter:
    context_id: str = ""
    state: int = 0  # 0: any
    after_ns: int | None = None  # status time at or after


class A2aTaskFile:
    """One connection to the file, shared by the server's event loop (short statements, autocommit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = db.connect(path)
        self._lock = threading.Lock()
        self._run(lambda c: [c.execute(s) for s in db.split_statements(SCHEMA)])

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return db.retry_busy(lambda: fn(self._conn))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- tasks

    def save(self, owner: str, task_id: str, context_id: str, state: int, ts_ns: int | None, runner: str,
             body: bytes) -> None:
        self._run(lambda c: c.execute(
            "INSERT INTO a2a_tasks (owner, id, context_id, state, ts_ns, runner, body) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (owner, id) DO UPDATE SET context_id = excluded.context_id, state = excluded.state,"
            " ts_ns = excluded.ts_ns, runner = excluded.runner, body = excluded.body",
            (owner, task_id, context_id, state, ts_ns, runner, body)))

    def get(self, owner: str, task_id: str) -> bytes | None:
        row = self._run(lambda c: c.execute("SELECT body FROM a2a_tasks WHERE owner = ? AND id = ?",
                                            (owner, task_id)).fetchone())
        return bytes(row[0]) if row else None

    def delete(self, owner: str, task_id: str) -> None:
        self._run(lambda c: c.execute("DELETE FROM a2a_tasks WHERE owner = ? AND id = ?", (owner, task_id)))

    def page(self, owner: str, where: Filter, after: tuple[bool, int, str] | None, limit: int) -> Page:
        """One page of `owner`'s tasks matching `where`, after the row whose sort key is `after`."""
        sql, args = "owner = ?", [owner]
        if where.context_id:
            sql, args = sql + " AND context_id = ?", [*args, where.context_id]
        if where.state:
            sql, args = sql + " AND state = ?", [*args, where.state]
        if where.after_ns is not None:
            sql, args = sql + " AND ts_ns >= ?", [*args, where.after_ns]

        def read(c: sqlite3.Connection) -> Page:
            total = int(c.execute(f"SELECT count(*) FROM a2a_tasks WHERE {sql}", args).fetchone()[0])
            cond, more = (sql, list(args)) if after is None else (f"{sql} AND ({_KEY}) < (?, ?, ?)",
                                                                  [*args, int(after[0]), after[1], after[2]])
            # sorted by key alone, the bodies read for the page's rows only: sorting whole bodies made a page of 20
            # take ~300 ms with 100 MB of tasks
            rows = c.execute(f"SELECT rowid, {_KEY} FROM a2a_tasks WHERE {cond} ORDER BY {_ORDER} LIMIT ?",
                             [*more, limit + 1]).fetchall()
            ids = [r[0] for r in rows[:limit]]
            bodies = dict(c.execute(f"SELECT rowid, body FROM a2a_tasks WHERE rowid IN ({','.join('?' * len(ids))})",
                                    ids).fetchall()) if ids else {}
            last = rows[limit - 1] if len(rows) > limit else None
            return Page([bytes(bodies[i]) for i in ids if i in bodies], total,
                        (bool(last[1]), int(last[2]), str(last[3])) if last else None)

        return self._run(read)

    def unfinished(self, states: tuple[int, ...], alive: Callable[[str], bool]) -> list[tuple[str, bytes]]:
        """(owner, body) of the tasks in `states` whose runner (the process that ran them) is gone."""
        marks = ", ".join("?" * len(states))
        rows = self._run(lambda c: c.execute(
            f"SELECT owner, runner, body FROM a2a_tasks WHERE state IN ({marks})", states).fetchall())
        return [(str(r[0]), bytes(r[2])) for r in rows if not alive(str(r[1]))]

    # -- push notification configs

    def push_set(self, owner: str, task_id: str, config_id: str, dialect: str, body: bytes) -> None:
        self._run(lambda c: c.execute(
            "INSERT INTO a2a_push (owner, task_id, id, dialect, body) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (task_id, owner, id) DO UPDATE SET dialect = excluded.dialect, body = excluded.body",
            (owner, task_id, config_id, dialect, body)))

    def push_of(self, task_id: str, owner: str | None) -> list[tuple[str, str, bytes]]:
        """(owner, dialect, body) of the configs of a task: `owner`'s, or everyone's (None: for delivery)."""
        sql, args = "task_id = ?", [task_id]
        if owner is not None:
            sql, args = sql + " AND owner = ?", [task_id, owner]
        rows = self._run(lambda c: c.execute(f"SELECT owner, dialect, body FROM a2a_push WHERE {sql}"
                                             " ORDER BY rowid", args).fetchall())
        return [(str(r[0]), str(r[1]), bytes(r[2])) for r in rows]

    def push_delete(self, owner: str, task_id: str, config_id: str) -> None:
        self._run(lambda c: c.execute("DELETE FROM a2a_push WHERE owner = ? AND task_id = ? AND id = ?",
                                      (owner, task_id, config_id)))


@dataclass(frozen=True, slots=True)
class Keep:
    """How long and how much of one caller's finished tasks are kept: a status time cutoff (ns; None: any age)
    and a cap on their bodies' bytes (None: no cap)."""

    older_than_ns: int | None = None
    max_bytes: int | None = None


def prune(path: Path, finished: tuple[int, ...], older_than_ns: int | None, max_bytes: int | None,
          stop: threading.Event | None = None, *, owner_max_bytes: int | None = None,
          owners: dict[str, Keep] | None = None) -> Pruned:
    """Delete tasks in a `finished` state whose status time is before `older_than_ns`, then the oldest finished
    ones while the finished tasks' bodies (their history and artifacts) total more than `max_bytes`; their push
    configs go with them. Per caller (owner): `owners` gives some callers their own age and cap (in place of
    `older_than_ns` and `owner_max_bytes`); `owner_max_bytes` caps each other caller's finished tasks, so one busy
    caller cannot push everyone else's tasks out. Order: ages, then each caller's cap (oldest first), then the
    cap on all of them. Tasks still running (or waiting for input) and tasks without a status time stay. Runs on
    its own connection, _CHUNK tasks per transaction, then gives the freed pages back to the OS (the file and its
    WAL shrink)."""
    from hermes_agent.storage import retention

    began, owners = time.monotonic(), owners or {}
    if not path.exists():
        return Pruned(0, 0, 0, 0.0)
    conn = db.connect(path)
    done = _Tally(conn, finished, stop)
    try:
        conn.executescript(SCHEMA)
        for owner, keep in owners.items():
            if keep.older_than_ns is not None:
                done.by_age("owner = ?", [owner], keep.older_than_ns)
        if older_than_ns is not None:
            done.by_age(f"owner NOT IN ({', '.join('?' * len(owners))})", list(owners), older_than_ns)
        for owner, total in done.owner_totals():
            cap = owners[owner].max_bytes if owner in owners else owner_max_bytes
            if cap is not None and total > cap:
                done.over_cap("owner = ?", [owner], total, cap)
        if max_bytes is not None:
            done.over_cap("1", [], None, max_bytes)
        freed = retention.free_pages(conn, step=100) if done.tasks else 0  # 500 pages held the lock 250 ms at load
        if freed:  # in WAL mode the file is cut at a checkpoint; TRUNCATE also empties the WAL (a few ms)
            db.retry_busy(lambda: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
    finally:
        conn.close()
    return Pruned(done.tasks, done.bytes, freed, time.monotonic() - began)


class _Tally:
    """The deletions of one prune, chunk by chunk, with what they removed."""

    def __init__(self, conn: sqlite3.Connection, finished: tuple[int, ...], stop: threading.Event | None) -> None:
        self.conn, self.finished, self.stop = conn, finished, stop
        self.done = f"state IN ({', '.join('?' * len(finished))}) AND ts_ns IS NOT NULL"
        self.tasks = self.bytes = 0

    def _stopped(self) -> bool:
        return bool(self.stop and self.stop.is_set())

    def by_age(self, who: str, args: list, older_than_ns: int) -> None:
        """Delete `who`'s finished tasks with a status time before the cutoff."""
        while not self._stopped():
            rows = self.conn.execute(f"SELECT owner, id, length(body) FROM a2a_tasks WHERE {who} AND {self.done} "
                                     "AND ts_ns < ? LIMIT ?", [*args, *self.finished, older_than_ns, _CHUNK]).fetchall()
            rows = _enough(rows, _CHUNK_BYTES, within=True)
            if not rows:
                return
            self.tasks, self.bytes = self.tasks + len(rows), self.bytes + _delete(self.conn, rows)

    def owner_totals(self) -> list[tuple[str, int]]:
        return [(str(r[0]), int(r[1])) for r in self.conn.execute(
            f"SELECT owner, COALESCE(SUM(length(body)), 0) FROM a2a_tasks WHERE {self.done} GROUP BY owner",
            self.finished)]

    def over_cap(self, who: str, args: list, total: int | None, cap: int) -> None:
        """Delete `who`'s oldest finished tasks while their bodies total more than `cap` bytes."""
        if total is None:
            total = int(self.conn.execute(f"SELECT COALESCE(SUM(length(body)), 0) FROM a2a_tasks WHERE {who} AND "
                                          f"{self.done}", [*args, *self.finished]).fetchone()[0])
        while total > cap and not self._stopped():
            rows = self.conn.execute(f"SELECT owner, id, length(body) FROM a2a_tasks WHERE {who} AND {self.done} "
                                     "ORDER BY ts_ns, id LIMIT ?", [*args, *self.finished, _CHUNK]).fetchall()
            rows = _enough(_enough(rows, total - cap), _CHUNK_BYTES, within=True)
            if not rows:
                return
            gone = _delete(self.conn, rows)
            self.tasks, self.bytes, total = self.tasks + len(rows), self.bytes + gone, total - gone


def bytes_by_owner(path: Path) -> dict[str, int]:
    """Each caller's tasks' bytes (bodies), read-only and best effort (empty when the file cannot be read): for
    `hermes doctor`, which names the biggest caller."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return {}
    try:
        return {str(r[0]): int(r[1]) for r in conn.execute(
            "SELECT owner, COALESCE(SUM(length(body)), 0) FROM a2a_tasks GROUP BY owner")}
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


def _enough(rows: list, size: int, within: bool = False) -> list:
    """The first of `rows` whose bodies add up to at least `size` bytes; within: to at most `size` (but one)."""
    out, total = [], 0
    for row in rows:
        n = int(row[2] or 0)
        if total >= size or (within and out and total + n > size):
            break
        out.append(row)
        total += n
    return out


def _delete(conn: sqlite3.Connection, rows: list) -> int:
    """Delete these (owner, id, size) tasks and their push configs in one short transaction; their bytes."""
    keys = [(str(r[0]), str(r[1])) for r in rows]
    db.run_in_transaction(conn, lambda c: (c.executemany("DELETE FROM a2a_tasks WHERE owner = ? AND id = ?", keys),
                                           c.executemany("DELETE FROM a2a_push WHERE owner = ? AND task_id = ?", keys)))
    # checkpointed here, a chunk at a time, so a request's commit never inherits a WAL of many MB to copy back
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    time.sleep(_PAUSE_S)
    return sum(int(r[2] or 0) for r in rows)
