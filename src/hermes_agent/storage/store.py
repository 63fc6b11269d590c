"""SessionStore: every session and message in $HERMES_HOME/state.db, one committed transaction per write.

Safe across threads (one connection behind a lock) and processes (WAL, busy timeout, BEGIN
IMMEDIATE, retry). sqlite3 errors leave this class only as StorageError.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from hermes_agent import paths
from hermes_agent.errors import StorageError
from hermes_agent.messages import Message, Usage
from hermes_agent.storage import lineage as _lineage
from hermes_agent.storage import newer as _newer
from hermes_agent.storage import retention as _retention
from hermes_agent.storage.db import (  # DiskFull: re-exported for the session (bootstrap/session.py)
    DiskFull,
    connect,
    ensure_reserve,
    is_full,
    release_reserve,
    retry_busy,
    run_in_transaction,
)
from hermes_agent.storage.migrations import inspect, migrate
from hermes_agent.storage.pricing import estimate_cost
from hermes_agent.storage.records import (
    SESSION_COLUMNS,
    AmbiguousSessionId,
    SessionInfo,
    SessionNotFound,
    StoredMessage,
    content_text,
    message_from_row,
    stored_content,
    tool_calls_json,
    usage_json,
)

if TYPE_CHECKING:  # search, insights, export and stats load when first used (issue 24: start-up)
    from hermes_agent.storage import insights as _insights
    from hermes_agent.storage import usage as _usage
    from hermes_agent.storage.spend import SpendRow, Spent
    from hermes_agent.storage.summaries import SearchHit, Stats

T = TypeVar("T")
TITLE_MAX = 60
CLI_FAMILY = ("cli", "oneshot")  # today's Hermes labels `chat -q`/`-z` runs "oneshot"; `-c` continues either
_MESSAGE_COLUMNS = ("id, session_id, role, content, api_content, tool_calls, tool_call_id, tool_name, reasoning, "
                    "reasoning_content, timestamp, finish_reason, usage")
_ACTIVE = "active = 1"  # Hermes keeps rewound messages with active = 0; they are not part of the conversation


def new_session_id(now: float | None = None) -> str:
    """Sortable id: local start time plus 6 random hex digits (20250305_091523_a1b2c3)."""
    stamp = datetime.fromtimestamp(now if now is not None else time.time()).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{os.urandom(3).hex()}"


def title_from(text: str | None) -> str | None:
    """Default title: the first non-empty line of the first user message, shortened."""
    for line in (text or "").splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1].rstrip() + "…"
    return None


def _free_title(c: sqlite3.Connection, title: str) -> str | None:
    """`title`, or `title #2`, `#3`... when another session has it (titles are unique in Hermes's layout)."""
    for n in range(1, 100):
        candidate = title if n == 1 else f"{title} #{n}"
        if c.execute("SELECT 1 FROM sessions WHERE title = ?", (candidate,)).fetchone() is None:
            return candidate
    return None


class SessionStore:
    """The session database. Open once per process; close() when done."""

    def __init__(self, path: Path | None = None, *, auto_title: bool = True) -> None:
        self.path = Path(path) if path is not None else paths.state_db_path()
        self.auto_title = auto_title
        self.retention: _retention.Retention | None = _retention.Retention()  # callers set it from `sessions:`
        self._lock = threading.RLock()
        self._conn = connect(self.path)
        try:
            self.read_only: str | None = migrate(self._conn, str(self.path)).read_only
            if self.read_only:
                self._conn.execute("PRAGMA query_only=ON")
            # What a later Hermes added to this file that our writes must follow (prompt table, activity clock).
            self._shape = retry_busy(lambda: _newer.read_shape(self._conn, inspect(self._conn).hermes_version))
            if not self.read_only:
                ensure_reserve(self.path)
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self.read_only:
            raise StorageError(self.read_only)
        with self._lock:
            try:
                try:
                    return run_in_transaction(self._conn, fn)
                except sqlite3.OperationalError as exc:  # a full disk: free the spare room, once, and retry
                    if not is_full(exc) or not release_reserve(self.path):
                        raise
                    return run_in_transaction(self._conn, fn)
            except sqlite3.IntegrityError as exc:
                raise StorageError(f"session store rejected the write: {exc}") from exc
            except sqlite3.Error as exc:
                raise (DiskFull if is_full(exc) else StorageError)(f"session store error: {exc}") from exc

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return retry_busy(lambda: fn(self._conn))
            except sqlite3.Error as exc:
                raise StorageError(f"session store error: {exc}") from exc

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, source: str = "cli", model: str | None = None, *, session_id: str | None = None,
                       title: str | None = None, parent_session_id: str | None = None,
                       cwd: str | None = None, system_prompt: str | None = None,
                       session_key: str | None = None, user_id: str | None = None) -> SessionInfo:
        """Insert a new session (a fresh id unless one is given) and return it."""
        now = time.time()
        row = {"source": source, "model": model, "title": title, "parent_session_id": parent_session_id,
               "started_at": now, "last_active_at": now, "cwd": cwd, "system_prompt": system_prompt,
               "session_key": session_key, "user_id": user_id}

        def insert(c: sqlite3.Connection, sid: str) -> None:
            full = {"id": sid, **row, **_newer.session_extras(c, self._shape, source, system_prompt, self.path)}
            c.execute(f"INSERT INTO sessions ({', '.join(full)}) VALUES ({','.join('?' * len(full))})",
                      list(full.values()))

        for _ in range(5):
            sid = session_id or new_session_id(now)
            try:
                self._write(lambda c, sid=sid: insert(c, sid))
                return self.require_session(sid)
            except StorageError as exc:
                if session_id or "UNIQUE" not in str(exc):
                    raise
        raise StorageError("could not allocate a unique session id")

    def get_session(self, id_or_prefix: str) -> SessionInfo | None:
        """The session with this id, or with this unique id prefix (or hex suffix); None when absent."""
        key = id_or_prefix.strip()
        if not key:
            return None

        def find(c: sqlite3.Connection) -> list[sqlite3.Row]:
            rows = c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (key,)).fetchall()
            if not rows:
                rows = c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id >= ? AND id < ? LIMIT 6",
                                 (key, key + "\U0010ffff")).fetchall()
            if not rows and len(key) >= 4:
                from hermes_agent.storage import search as _search

                rows = c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 6",
                                 ("%" + _search.like_pattern(key)[1:-1],)).fetchall()
            return rows

        rows = self._read(find)
        if len(rows) > 1:
            ids = ", ".join(r["id"] for r in rows[:5])
            raise AmbiguousSessionId(f"session id '{key}' is ambiguous: matches {ids}")
        return self._with_prompt(SessionInfo.from_row(rows[0])) if rows else None

    def _with_prompt(self, info: SessionInfo) -> SessionInfo:
        """A later Hermes keeps the prompt in system_prompts (sessions.system_prompt is only a fallback)."""
        if info.system_prompt is not None or not self._shape.prompt_table:
            return info
        prompt = self._read(lambda c: _newer.prompt_of(c, self._shape, info.id))
        return replace(info, system_prompt=prompt) if prompt is not None else info

    def require_session(self, id_or_prefix: str) -> SessionInfo:
        """Like get_session, but a missing session raises SessionNotFound."""
        info = self.get_session(id_or_prefix)
        if info is None:
            raise SessionNotFound(f"no session matches '{id_or_prefix}'")
        return info

    def session_by_title(self, title: str) -> SessionInfo | None:
        """As Hermes resolves a name: the newest `title #N` continuation, else the session titled `title`."""
        escaped = title.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

        def find(c: sqlite3.Connection) -> sqlite3.Row | None:
            row = c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE title LIKE ? ESCAPE '\\' "
                            "ORDER BY started_at DESC LIMIT 1", (f"{escaped} #%",)).fetchone()
            return row or c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE title = ?", (title,)).fetchone()

        row = self._read(find)
        return self._with_prompt(SessionInfo.from_row(row)) if row else None

    def list_sessions(self, limit: int = 20, source: str | Sequence[str] | None = None, exclude: Iterable[str] = (),
                      offset: int = 0, include_archived: bool = False) -> list[SessionInfo]:
        """Most recently active sessions first (skipping the first `offset`), from `source` (one label or
        several) when given; archived ones (Hermes's `sessions archive`, its idle sweep) only with
        `include_archived`, as Hermes lists them."""
        where, params = ["COALESCE(hidden, 0) = 0" if self._shape.hidden else "1"], []
        if not include_archived:
            where.append("COALESCE(archived, 0) = 0")
        if source and (names := [source] if isinstance(source, str) else list(source)):
            where.append(f"source IN ({','.join('?' * len(names))})")
            params.extend(names)
        excluded = [e for e in exclude if e]
        if excluded:
            where.append(f"id NOT IN ({','.join('?' * len(excluded))})")
            params.extend(excluded)
        sql = (f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)} "
               "ORDER BY last_active_at DESC, id DESC LIMIT ? OFFSET ?")
        rows = self._read(lambda c: c.execute(sql, [*params, max(0, limit), max(0, offset)]).fetchall())
        return [SessionInfo.from_row(r) for r in rows]

    def previews(self, session_ids: Iterable[str], width: int = 60) -> dict[str, str]:
        """The first user message of each session, shortened (what Hermes lists for an untitled session)."""
        ids = list(session_ids)
        if not ids:
            return {}
        sql = (f"SELECT session_id, content FROM messages WHERE id IN (SELECT MIN(id) FROM messages WHERE "
               f"role = 'user' AND {_ACTIVE} AND session_id IN ({','.join('?' * len(ids))}) GROUP BY session_id)")
        rows = self._read(lambda c: c.execute(sql, ids).fetchall())
        return {r[0]: title_from(content_text(r[1], markers=False)) or "" for r in rows}

    def count_sessions(self, source: str | None = None) -> int:
        """How many sessions there are (from `source` only when given)."""
        return self._read(lambda c: c.execute("SELECT COUNT(*) FROM sessions WHERE ? IS NULL OR source = ?",
                                              (source, source)).fetchone()[0])

    def latest_session(self, source: str | None = None, workspace: str | None = None) -> SessionInfo | None:
        """The latest session (-c; "cli" with Hermes's "oneshot" runs), in `workspace` first, as today's Hermes."""
        names = CLI_FAMILY if source == "cli" else source
        return ((self._read(lambda c: _lineage.latest_in(c, names, workspace)) if workspace else None)
                or next(iter(self.list_sessions(1, names)), None))

    def _update(self, session_id: str, sql: str, params: list[object]) -> None:
        cur = self._write(lambda c: c.execute(f"UPDATE sessions SET {sql} WHERE id = ?", [*params, session_id]))
        if cur.rowcount == 0:
            raise SessionNotFound(f"no session '{session_id}'")

    def set_title(self, session_id: str, title: str | None) -> None:
        """Rename a session (None clears the title). Titles are unique, as Hermes requires."""
        try:
            self._update(session_id, "title = ?", [title])
        except StorageError as exc:
            if "UNIQUE" not in str(exc):
                raise
            raise StorageError(f"another session is already titled '{title}'") from exc

    def set_system_prompt(self, session_id: str, prompt: str | None) -> None:
        """Record the system prompt the session now runs with (e.g. rebuilt after compression)."""
        if self._write(lambda c: _newer.set_prompt(c, self._shape, session_id, prompt)) == 0:
            raise SessionNotFound(f"no session '{session_id}'")

    def lineage(self, session_id: str) -> list[SessionInfo]:
        """The session and its ancestors through parent_session_id (compression, branching), root first."""
        sql = (f"WITH RECURSIVE chain(id, depth) AS (SELECT ?, 0 UNION ALL "
               f"SELECT s.parent_session_id, chain.depth + 1 FROM sessions s JOIN chain ON s.id = chain.id "
               f"WHERE s.parent_session_id IS NOT NULL AND chain.depth < 1000) "
               f"SELECT {', '.join('s.' + c for c in SessionInfo.__slots__)} FROM chain "
               f"JOIN sessions s ON s.id = chain.id ORDER BY chain.depth DESC")
        return [SessionInfo.from_row(r) for r in self._read(lambda c: c.execute(sql, (session_id,)).fetchall())]

    def end_session(self, session_id: str, reason: str = "ended") -> None:
        """Mark a session finished (reason e.g. user_exit, compression, error)."""
        self._update(session_id, "ended_at = ?, end_reason = ?", [time.time(), reason])

    def reopen_session(self, session_id: str) -> None:
        """Clear the end mark of a resumed session."""
        self._update(session_id, "ended_at = NULL, end_reason = NULL", [])

    def add_usage(self, session_id: str, usage: Usage, cost: float | None = None,
                  model: str | None = None) -> float | None:
        """Add one API call's tokens; cost defaults to the pricing table's estimate. Returns the cost added."""

        from hermes_agent.storage.usage import book  # loaded with the first model call's usage (start-up)

        def tx(c: sqlite3.Connection) -> float | None:
            row = c.execute("SELECT model FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session '{session_id}'")
            name = model or row["model"]
            priced = cost if cost is not None else estimate_cost(name or "", usage)
            book(c, session_id, usage, priced, name)
            return priced

        return self._write(tx)

    def add_spend(self, row: SpendRow) -> None:
        """Record one model call in the spend ledger (spending caps)."""
        from hermes_agent.storage import spend as _spend  # only runs with caps load it

        self._write(lambda c: _spend.add(c, row))

    def spent(self, session_id: str | None, who: str, day_start: float, month_start: float) -> tuple[Spent, ...]:
        """(session, day, month) spend: the session's, and `who`'s since each start time."""
        from hermes_agent.storage import spend as _spend

        def q(c: sqlite3.Connection) -> tuple[Spent, ...]:
            session = _spend.session_spent(c, session_id) if session_id else _spend.Spent()
            return session, _spend.spent_since(c, who, day_start), _spend.spent_since(c, who, month_start)

        return self._read(q)

    def continuation_tip(self, session_id: str) -> str:
        """Where the conversation `session_id` went on (compression): what resuming it continues."""
        return self._read(lambda c: _lineage.continuation_tip(c, session_id))

    def take_back(self, session_id: str, kept: list[Message]) -> bool:
        """Take back the session's messages after `kept` (its live messages start with them), as Hermes does."""
        live = self.get_records(session_id)
        if [r.message for r in live[:len(kept)]] != kept:
            return False
        if len(live) > len(kept):
            self._write(lambda c: _lineage.take_back(c, session_id, live[len(kept)].id))
        return True

    def conversation_root(self, session_id: str) -> str:
        """The session a conversation began in: up through parents it continued from (compression, /undo)."""
        def walk(c: sqlite3.Connection) -> str:
            sid, seen = session_id, {session_id}
            while True:
                row = c.execute("SELECT p.id FROM sessions s JOIN sessions p ON p.id = s.parent_session_id "
                                "WHERE s.id = ? AND p.end_reason IN ('compression', 'rewound')", (sid,)).fetchone()
                if row is None or row[0] in seen:
                    return sid
                sid = row[0]
                seen.add(sid)

        return self._read(walk)

    def spenders(self, since: float) -> list[tuple[str, str | None]]:
        """(who, the session they spent in last) for everyone with spend since a time."""
        from hermes_agent.storage import spend as _spend

        return self._read(lambda c: [(w, _spend.latest_session(c, w)) for w in _spend.spenders(c, since)])

    def delete_session(self, session_id: str) -> int:
        """Delete a session and its messages; returns the number of messages removed."""

        def tx(c: sqlite3.Connection) -> int:
            n = c.execute("DELETE FROM messages WHERE session_id = ?", (session_id,)).rowcount
            c.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (session_id,))
            if c.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 0:
                raise SessionNotFound(f"no session '{session_id}'")
            _newer.drop_unreferenced_prompts(c, self._shape)
            return n

        return self._write(tx)

    def prune(self, older_than_seconds: float, source: str | None = None) -> tuple[int, int]:
        """Delete sessions idle for longer than the given age; returns (sessions, messages) removed."""
        cutoff = time.time() - older_than_seconds
        cond, params = "last_active_at < ?", [cutoff]
        if source:
            cond, params = cond + " AND source = ?", [cutoff, source]

        def tx(c: sqlite3.Connection) -> tuple[int, int]:
            sub = f"SELECT id FROM sessions WHERE {cond}"
            n_msgs = c.execute(f"DELETE FROM messages WHERE session_id IN ({sub})", params).rowcount
            c.execute(f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({sub})", params)
            n_sessions = c.execute(f"DELETE FROM sessions WHERE {cond}", params).rowcount
            _newer.drop_unreferenced_prompts(c, self._shape)
            return n_sessions, n_msgs

        removed = self._write(tx)
        if removed[0]:
            with self._lock:
                _retention.free_pages(self._conn)
            self.checkpoint()
        return removed

    def checkpoint(self) -> None:
        """Fold the WAL back into state.db and truncate it (best effort while others read)."""
        self._read(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def count_prunable(self, older_than_seconds: float) -> tuple[int, int]:
        """(sessions, messages) that prune() with this age would remove."""
        cutoff = time.time() - older_than_seconds
        row = self._read(lambda c: c.execute(
            "SELECT COUNT(*), COALESCE(SUM(message_count), 0) FROM sessions WHERE last_active_at < ?",
            (cutoff,)).fetchone())
        return int(row[0]), int(row[1])

    # -- messages ---------------------------------------------------------------------------

    def append_message(self, session_id: str, message: Message, timestamp: float | None = None) -> int:
        """Persist one message in its own committed transaction; returns its id."""
        return self.append_messages(session_id, [message], timestamp)[0]

    def append_messages(self, session_id: str, messages: Iterable[Message], timestamp: float | None = None, *,
                        bookings: Sequence[_usage.Booking] = ()) -> list[int]:
        """Persist several messages atomically (all or none), with the model calls that produced them booked
        in the same transaction (`bookings`: a reply and its usage land together); returns their ids."""
        batch = list(messages)
        now = timestamp if timestamp is not None else time.time()
        title = next((title_from(m.content) for m in batch if m.role == "user"), None) if self.auto_title else None
        calls = sum(len(m.tool_calls) for m in batch)
        if bookings:
            from hermes_agent.storage.usage import book  # with the first reply: not at start-up

        def tx(c: sqlite3.Connection) -> list[int]:
            ids = []
            for m in batch:
                tokens = m.usage.completion_tokens if m.usage is not None and m.role == "assistant" else None
                cur = c.execute(
                    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, "
                    "reasoning, timestamp, token_count, finish_reason, usage) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (session_id, m.role, self._content(m), tool_calls_json(m.tool_calls), m.tool_call_id, m.name,
                     m.reasoning, now, tokens, m.finish_reason, usage_json(m.usage)))
                ids.append(int(cur.lastrowid))
            # last_active_at follows from a trigger, so messages Hermes appends move it too. The default title
            # is given with a session's first messages only: an untitled session Hermes wrote stays untitled.
            c.execute("UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?, "
                      "tool_call_count = COALESCE(tool_call_count, 0) + ?, title = CASE WHEN title IS NULL AND "
                      "COALESCE(message_count, 0) = 0 THEN ? ELSE title END WHERE id = ?",
                      (len(batch), calls, title and _free_title(c, title), session_id))
            _newer.touch_activity(c, self._shape, session_id, now)
            for booking in bookings:
                book(c, session_id, *booking)
            return ids

        if not batch:
            return []
        try:
            return self._write(tx)
        except StorageError as exc:
            if "FOREIGN KEY" in str(exc):
                raise SessionNotFound(f"no session '{session_id}'") from exc
            raise

    def _content(self, m: Message) -> str | None:
        """The stored content: a tool output capped by the retention policy (storage/retention.py)."""
        content = stored_content(m)
        return self.retention.cap(content) if self.retention is not None and m.role == "tool" else content

    def prune_by_policy(self, policy: _retention.Retention, now: float | None = None) -> _retention.PruneReport:
        """Retention by age and by total size in short transactions, then incremental vacuum."""
        if self.read_only:
            raise StorageError(self.read_only)
        with self._lock:
            try:
                report = _retention.prune(self._conn, policy, self.path, now)
                if report.sessions:
                    run_in_transaction(self._conn, lambda c: _newer.drop_unreferenced_prompts(c, self._shape))
                return report
            except sqlite3.Error as exc:
                raise StorageError(f"session store error: {exc}") from exc

    def rebuild_search_index(self, stop: threading.Event | None = None, budget_s: float | None = None) -> bool:
        """Work through a pending search-index rebuild (migration 7) in short chunks; True when none is left."""
        from hermes_agent.storage import fts_rebuild

        if self.read_only:
            return True
        with self._lock:
            try:
                return fts_rebuild.run(self._conn, stop, budget_s)
            except sqlite3.Error as exc:
                raise StorageError(f"search index rebuild failed: {exc}") from exc

    def vacuum(self, full: bool = False) -> None:
        """Merge the search index in bounded steps and give free pages back (incremental vacuum); `full` also
        rewrites the file compactly (VACUUM: other writers wait for it, so only on the user's request)."""
        if self.read_only:
            raise StorageError(self.read_only)
        with self._lock:
            try:
                _retention.vacuum(self._conn)
                if full:
                    # An older file (or one Hermes created) becomes auto_vacuum=INCREMENTAL as VACUUM rewrites it,
                    # so later prunes give pages back online; Hermes's own VACUUM keeps the mode.
                    if int(self._conn.execute("PRAGMA auto_vacuum").fetchone()[0]) == 0:
                        self._conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
                    self._conn.execute("VACUUM")
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"session store error: {exc}") from exc

    def search_index_pending(self) -> tuple[int, int] | None:
        """(messages indexed so far, messages to index) while a rebuild is pending; None otherwise."""
        from hermes_agent.storage import fts_rebuild

        def read(c: sqlite3.Connection) -> tuple[int, int] | None:
            if not fts_rebuild.pending(c):
                return None
            p = fts_rebuild.progress(c)
            if p is None:  # indexed; only the retired index is left to drop
                return (1, 1)
            return tuple(c.execute("SELECT (SELECT COUNT(*) FROM messages WHERE id <= ?), "
                                   "(SELECT COUNT(*) FROM messages WHERE id <= ?)", p).fetchone())
        return self._read(read)

    def search_unscanned(self) -> int:
        """Messages a search can miss right now: older ones the background index rebuild has not reached and a
        search does not scan instead (0 once the index is complete)."""
        from hermes_agent.storage import search as _search

        return self._read(_search.unscanned)

    def size_by_kind(self) -> dict[str, int]:
        """Bytes of state.db by kind of content (`hermes sessions stats`)."""
        return self._read(_retention.size_by_kind)

    def get_records(self, session_id: str, around_id: int | None = None, window: int = 0) -> list[StoredMessage]:
        """Stored messages in order; with around_id, only `window` messages either side of it."""
        if around_id is None:
            sql = f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND {_ACTIVE} ORDER BY id"
            rows = self._read(lambda c: c.execute(sql, (session_id,)).fetchall())
        else:
            before = (f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id < ? AND {_ACTIVE} "
                      "ORDER BY id DESC LIMIT ?")
            after = (f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id >= ? AND {_ACTIVE} "
                     "ORDER BY id LIMIT ?")
            rows = self._read(lambda c: list(reversed(c.execute(before, (session_id, around_id, window)).fetchall()))
                              + c.execute(after, (session_id, around_id, window + 1)).fetchall())
        return [message_from_row(r) for r in rows]

    def get_messages(self, session_id: str) -> list[Message]:
        """The conversation exactly as appended (for --resume)."""
        return [r.message for r in self.get_records(session_id)]

    # -- search, stats, export ----------------------------------------------------------------

    def search(self, query: str, source: str | None = None, since: float | None = None,
               until: float | None = None, limit: int = 10, exclude_session: str | None = None,
               exclude_sources: tuple[str, ...] = ()) -> list[SearchHit]:
        """Sessions matching `query` best-first (bm25), each with snippets around the hits."""
        from hermes_agent.storage import search as _search

        filters = _search.Filters(source, since, until, exclude_session, tuple(exclude_sources))
        return self._read(lambda c: _search.search(c, query, filters, limit))

    def stats(self) -> Stats:
        """Totals over every session, by source and by model, plus the database size on disk."""
        from hermes_agent.storage import stats as _stats

        stats = self._read(_stats.collect)
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return replace(stats, db_bytes=size)

    def insights(self, days: int = 30, source: str | None = None) -> _insights.Insights:
        """`hermes insights`: usage over the sessions started in the last `days` days."""
        from hermes_agent.storage import insights as _insights

        return self._read(lambda c: _insights.collect(c, days, source))

    def export_rows(self, session_id: str) -> dict:
        """Hermes's export record of one session: every column of its row (the prompt resolved from
        system_prompts where the file keeps it there) and every message row, tool_calls parsed."""
        from hermes_agent.storage import export as _export

        info = self.require_session(session_id)

        def read(c: sqlite3.Connection) -> dict:
            row = dict(c.execute("SELECT * FROM sessions WHERE id = ?", (info.id,)).fetchone())
            row["system_prompt"] = info.system_prompt
            msgs = [dict(r) for r in c.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (info.id,))]
            return {**row, "messages": msgs}

        return _export.hermes_record(self._read(read))

    def export(self, session_id: str, fmt: Literal["jsonl", "md", "hermes-md"] = "jsonl") -> str:
        """The session as JSON Lines (a session line, then one line per message) or Markdown (hermes-md: with
        the front matter of Hermes's Markdown export)."""
        from hermes_agent.storage import export as _export

        info = self.require_session(session_id)
        records = self.get_records(info.id)
        if fmt == "jsonl":
            return _export.to_jsonl(info, records)
        if fmt == "md":
            return _export.to_markdown(info, records)
        if fmt == "hermes-md":
            return _export.hermes_markdown(info, records)
        raise StorageError(f"unknown export format '{fmt}' (use jsonl or md)")
