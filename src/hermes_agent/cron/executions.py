"""The run ledger Hermes's `hermes cron runs` reads: <cron>/executions.db, table `executions`
(id, job_id, source, process_id, pid, process_started_at, status claimed|running|completed|failed|unknown,
claimed_at, started_at, finished_at, error). Upstream adds columns (handoff_pending, delivery_outcome,
scheduled_instant, progress_at); we write only the ones 0.19.0 knows and leave the rest to their defaults.
Terminal rows are capped at 1000, as Hermes prunes them."""

from __future__ import annotations

import os
import sqlite3
import uuid
from datetime import datetime
from pathlib import Path

MAX_TERMINAL = 1000
_PROCESS_ID = uuid.uuid4().hex
_SCHEMA = """CREATE TABLE IF NOT EXISTS executions (
  id TEXT PRIMARY KEY, job_id TEXT NOT NULL, source TEXT NOT NULL, process_id TEXT NOT NULL,
  pid INTEGER NOT NULL, process_started_at INTEGER,
  status TEXT NOT NULL CHECK(status IN ('claimed','running','completed','failed','unknown')),
  claimed_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, error TEXT);
CREATE INDEX IF NOT EXISTS idx_executions_job_claimed ON executions(job_id, claimed_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS idx_executions_status_claimed ON executions(status, claimed_at DESC, id DESC);"""


def _local_now() -> str:
    return datetime.now().astimezone().isoformat()


class ExecutionLog:
    """Append-only attempts of cron runs in Hermes's executions.db (shared with Hermes's scheduler)."""

    def __init__(self, cron_dir: Path) -> None:
        self.path = Path(cron_dir) / "executions.db"

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        return conn

    def start(self, job_id: str, source: str = "builtin") -> str:
        """Record an attempt as running now; returns its id."""
        now, exec_id = _local_now(), uuid.uuid4().hex
        conn = self._connect()
        try:
            conn.execute("INSERT INTO executions (id, job_id, source, process_id, pid, process_started_at, status, "
                         "claimed_at, started_at) VALUES (?, ?, ?, ?, ?, NULL, 'running', ?, ?)",
                         (exec_id, str(job_id), source, _PROCESS_ID, os.getpid(), now, now))
        finally:
            conn.close()
        return exec_id

    def finish(self, exec_id: str, ok: bool, error: str | None = None) -> None:
        """Write the attempt's terminal state once (completed / failed with its error)."""
        conn = self._connect()
        try:
            conn.execute("UPDATE executions SET status=?, finished_at=?, error=? "
                         "WHERE id=? AND status IN ('claimed','running')",
                         ("completed" if ok else "failed", _local_now(),
                          None if ok else (error or "unknown failure"), exec_id))
            conn.execute("DELETE FROM executions WHERE id IN (SELECT id FROM executions WHERE status IN "
                         "('completed','failed','unknown') ORDER BY claimed_at DESC, id DESC LIMIT -1 OFFSET ?)",
                         (MAX_TERMINAL,))
        finally:
            conn.close()

    def list(self, job_id: str | None = None, limit: int = 20) -> list[dict]:
        """Attempts, newest first."""
        if not self.path.exists():
            return []
        conn = self._connect()
        try:
            where, args = ("WHERE job_id=?", [job_id]) if job_id else ("", [])
            rows = conn.execute(f"SELECT * FROM executions {where} ORDER BY claimed_at DESC, id DESC LIMIT ?",
                                [*args, max(1, min(int(limit), 500))]).fetchall()
        finally:
            conn.close()
        return [dict(r) for r in rows]
