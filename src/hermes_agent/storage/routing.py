"""Hermes's gateway routing index: which state.db session each messaging chat continues, shared by both
programs so a chat switched between them keeps one conversation.

Primary copy: state.db table `gateway_routing(scope, session_key, entry_json, updated_at)` with scope the
resolved `HERMES_HOME/sessions` directory; mirror: `HERMES_HOME/sessions/sessions.json` (`{key: entry}` plus
a `_README` sentinel). Keys are Hermes's (`agent:main:telegram:dm:<chat_id>`, groups
`agent:main:<platform>:group:<chat_id>[:<user_id>]`); an entry is Hermes's SessionEntry dict (session_key,
session_id, created_at, updated_at as naive local ISO times, platform, chat_type, display_name, token
counters, flags, origin). Reading: the table first, then the mirror (as Hermes reads). Writing one key:
that row is upserted (other keys and scopes untouched) and the mirror rewritten with the same entry; fields
we do not know in an existing entry are kept."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from hermes_agent.storage.db import BUSY_TIMEOUT_MS, retry_busy

log = logging.getLogger(__name__)
README = ("LEGACY MIRROR of the gateway routing index (the primary copy lives in the gateway_routing table in "
          "~/.hermes/state.db). Maps messaging session keys (agent:main:<platform>:...) to active session IDs. "
          "This is NOT the session list: every session lives in ~/.hermes/state.db.")
_COUNTERS = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0,
             "total_tokens": 0, "last_prompt_tokens": 0, "estimated_cost_usd": 0.0, "cost_status": "unknown",
             "expiry_finalized": False, "suspended": False, "resume_pending": False, "resume_reason": None,
             "last_resume_marked_at": None, "is_fresh_reset": False, "was_auto_reset": False,
             "auto_reset_reason": None, "reset_had_activity": False}


class RoutingIndex:
    """Chat key -> session entry, in Hermes's two places under one home. Safe to share between threads: one
    state.db connection kept open (WAL, synchronous=NORMAL as the session store's), the mirror parsed once and
    read again only when its file changed, and mirror writes made at the same time shared (one write covers
    every change made before it; `set(wait=False)` leaves the write to the index's own thread, `settle()`
    waits for it)."""

    def __init__(self, home: Path) -> None:
        self.db_path = Path(home) / "state.db"
        self.dir = Path(home) / "sessions"
        self.mirror = self.dir / "sessions.json"
        self.scope = str(self.dir.resolve())
        self._lock = threading.Lock()  # the connection and the mirror's data in memory
        self._conn: sqlite3.Connection | None = None
        self._data: dict | None = None  # the mirror as last read or changed here
        self._seen: tuple[int, int, int] | None = None  # (inode, mtime, size) of the file _data was read from/written to
        self._write_lock = threading.Lock()  # one mirror write at a time
        self._changes = self._saved = 0
        self._writer: ThreadPoolExecutor | None = None

    # -- state.db ------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection | None:
        """(under _lock) the open connection; None while state.db does not exist."""
        if self._conn is None:
            if not self.db_path.exists():
                return None
            conn = sqlite3.connect(str(self.db_path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                conn.execute("PRAGMA synchronous=NORMAL")  # as storage/db.py: survives a killed process
            self._conn = conn
        return self._conn

    def _db_get(self, key: str) -> dict | None:
        try:
            with self._lock:
                conn = self._connection()
                if conn is None:
                    return None
                row = conn.execute("SELECT entry_json FROM gateway_routing WHERE scope = ? AND session_key = ?",
                                   (self.scope, key)).fetchone()
            entry = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            log.debug("gateway_routing not readable: %s", exc)
            return None
        return entry if isinstance(entry, dict) else None

    def _db_put(self, key: str, entry: dict | None) -> None:
        try:
            with self._lock:
                conn = self._connection()
                if conn is None:
                    return
                if entry is None:
                    retry_busy(lambda: conn.execute("DELETE FROM gateway_routing WHERE scope = ? AND session_key = ?",
                                                    (self.scope, key)))
                else:
                    retry_busy(lambda: conn.execute(
                        "INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES (?,?,?,?) "
                        "ON CONFLICT(scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, "
                        "updated_at = excluded.updated_at", (self.scope, key, json.dumps(entry), time.time())))
        except sqlite3.Error as exc:  # a read-only or older file: the mirror still carries it
            log.warning("gateway routing not saved in state.db (%s); sessions.json has it", exc)

    def close(self) -> None:
        """Write what the mirror still owes and close the connection (safe to call twice)."""
        self.settle()
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- sessions.json -------------------------------------------------------------------------

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.mirror.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _mirror_data(self) -> dict:
        """(under _lock) the mirror's entries: read again only when the file changed since this index last read
        or wrote it (Hermes wrote it), and never while a change made here waits to be written."""
        seen = self._stat()
        if self._data is None or (seen != self._seen and self._saved >= self._changes):
            try:
                data = json.loads(self.mirror.read_text(encoding="utf-8")) if seen else {}
            except (OSError, ValueError):
                data = {}
            self._data, self._seen = (data if isinstance(data, dict) else {}), seen
        return self._data

    def _mirror_put(self, key: str, entry: dict | None, wait: bool = True) -> None:
        with self._lock:
            data = self._mirror_data()
            data.pop("_README", None)
            if entry is None:
                if key not in data:
                    return
                data.pop(key)
            else:
                data[key] = entry
            self._changes += 1
            upto = self._changes
        if wait:
            self._save(upto)
            return
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="routing-write")
        self._writer.submit(self._save, upto)

    def _save(self, upto: int) -> None:
        """Make the mirror durable at least up to change `upto` (callers waiting meanwhile find theirs saved)."""
        with self._write_lock:
            if self._saved >= upto:
                return
            with self._lock:
                text = json.dumps({"_README": README, **(self._data or {})}, indent=2)
                reached = self._changes
            self.dir.mkdir(parents=True, exist_ok=True)
            import tempfile  # where used: it loads shutil and random

            fd, tmp = tempfile.mkstemp(dir=str(self.dir), prefix=".sessions_", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.mirror)
            except OSError as exc:
                Path(tmp).unlink(missing_ok=True)
                log.warning("gateway routing mirror %s not written: %s", self.mirror, exc)
            with self._lock:
                self._seen = self._stat()
                self._saved = reached

    def settle(self) -> None:
        """Wait until every change made so far is in sessions.json (at once when it already is)."""
        self._save(self._changes)

    # -- public --------------------------------------------------------------------------------

    def entry(self, key: str) -> dict | None:
        """The entry for `key` (table first, then the mirror), or None."""
        found = self._db_get(key)
        if found is None:
            with self._lock:
                value = self._mirror_data().get(key)
            found = value if isinstance(value, dict) else None
        return found if found and found.get("session_id") else None

    def get(self, key: str) -> str | None:
        entry = self.entry(key)
        return str(entry["session_id"]) if entry else None

    def set(self, key: str, session_id: str | None, origin: dict | None = None, *, wait: bool = True) -> None:
        """Point `key` at `session_id` (None: forget the chat's session, e.g. after /new). The table is written
        before this returns; the mirror too, unless `wait` is False (then `settle()` waits for it)."""
        if session_id is None:
            self._db_put(key, None)
            self._mirror_put(key, None, wait)
            return
        old = self.entry(key) or {}
        if old.get("session_id") == session_id:
            return
        now = datetime.now().isoformat()
        entry = {**old, **_COUNTERS}  # another session: Hermes's fields kept, its counters start again
        entry.update(session_key=key, session_id=session_id, created_at=now, updated_at=now)
        if origin:
            entry.setdefault("platform", origin.get("platform"))
            entry.setdefault("chat_type", origin.get("chat_type") or "dm")
            entry.setdefault("display_name", origin.get("user_name") or origin.get("chat_name"))
            entry.setdefault("origin", origin)
        self._db_put(key, entry)
        self._mirror_put(key, entry, wait)
