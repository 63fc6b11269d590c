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
import tempfile
import time
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
    """Chat key -> session entry, in Hermes's two places under one home."""

    def __init__(self, home: Path) -> None:
        self.db_path = Path(home) / "state.db"
        self.dir = Path(home) / "sessions"
        self.mirror = self.dir / "sessions.json"
        self.scope = str(self.dir.resolve())

    # -- state.db ------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if not self.db_path.exists():
            return None
        conn = sqlite3.connect(str(self.db_path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def _db_get(self, key: str) -> dict | None:
        try:
            conn = self._connect()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT entry_json FROM gateway_routing WHERE scope = ? AND session_key = ?",
                                   (self.scope, key)).fetchone()
            finally:
                conn.close()
            entry = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            log.debug("gateway_routing not readable: %s", exc)
            return None
        return entry if isinstance(entry, dict) else None

    def _db_put(self, key: str, entry: dict | None) -> None:
        try:
            conn = self._connect()
            if conn is None:
                return
            try:
                if entry is None:
                    retry_busy(lambda: conn.execute("DELETE FROM gateway_routing WHERE scope = ? AND session_key = ?",
                                                    (self.scope, key)))
                else:
                    retry_busy(lambda: conn.execute(
                        "INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES (?,?,?,?) "
                        "ON CONFLICT(scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, "
                        "updated_at = excluded.updated_at", (self.scope, key, json.dumps(entry), time.time())))
            finally:
                conn.close()
        except sqlite3.Error as exc:  # a read-only or older file: the mirror still carries it
            log.warning("gateway routing not saved in state.db (%s); sessions.json has it", exc)

    # -- sessions.json -------------------------------------------------------------------------

    def _mirror_data(self) -> dict:
        try:
            data = json.loads(self.mirror.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _mirror_put(self, key: str, entry: dict | None) -> None:
        data = self._mirror_data()
        data.pop("_README", None)
        if entry is None:
            if key not in data:
                return
            data.pop(key)
        else:
            data[key] = entry
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(self.dir), prefix=".sessions_", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"_README": README, **data}, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.mirror)

    # -- public --------------------------------------------------------------------------------

    def entry(self, key: str) -> dict | None:
        """The entry for `key` (table first, then the mirror), or None."""
        found = self._db_get(key)
        if found is None:
            value = self._mirror_data().get(key)
            found = value if isinstance(value, dict) else None
        return found if found and found.get("session_id") else None

    def get(self, key: str) -> str | None:
        entry = self.entry(key)
        return str(entry["session_id"]) if entry else None

    def set(self, key: str, session_id: str | None, origin: dict | None = None) -> None:
        """Point `key` at `session_id` (None: forget the chat's session, e.g. after /new)."""
        if session_id is None:
            self._db_put(key, None)
            self._mirror_put(key, None)
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
        self._mirror_put(key, entry)
