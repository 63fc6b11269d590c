"""The schema of state.db as an ordered list of named migrations; the only place DDL lives.

Never edit a released migration: append a new (version, name, sql) row instead.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from hermes_agent.errors import StorageError
from hermes_agent.storage.db import retry_busy, run_in_transaction, split_statements


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: applied once, in version order, inside the upgrade transaction."""

    version: int
    name: str
    sql: str


_SESSIONS_AND_MESSAGES = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL DEFAULT 'cli',
    model TEXT,
    title TEXT,
    parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    started_at REAL NOT NULL,
    last_active_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    api_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL,
    cwd TEXT,
    system_prompt TEXT,
    session_key TEXT,
    user_id TEXT
);
CREATE INDEX idx_sessions_active ON sessions(last_active_at);
CREATE INDEX idx_sessions_source ON sessions(source, last_active_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_key ON sessions(session_key);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    tool_name TEXT,
    reasoning TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    usage TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, id);
"""

# External-content index: the text lives once, in `messages`; triggers keep the index in step.
_FTS_WORDS = """
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, tool_name, tool_calls,
    content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
END;
CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, tool_name, tool_calls ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END;
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
"""

# Trigram index for scripts without spaces (Chinese, Japanese...). Only rows holding non-ASCII
# text are indexed (byte length != char length): pure-ASCII rows can never match such a query,
# and skipping them keeps this index, the largest one, small for English-only users.
_NON_ASCII_NEW = "length(new.content) != length(CAST(new.content AS BLOB))"
_NON_ASCII_OLD = "length(old.content) != length(CAST(old.content AS BLOB))"
_FTS_TRIGRAM = f"""
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(
    content, content='messages', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER messages_fts_trigram_ai AFTER INSERT ON messages WHEN {_NON_ASCII_NEW} BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_trigram_ad AFTER DELETE ON messages WHEN {_NON_ASCII_OLD} BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_trigram_aud AFTER UPDATE OF content ON messages WHEN {_NON_ASCII_OLD} BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_trigram_aui AFTER UPDATE OF content ON messages WHEN {_NON_ASCII_NEW} BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts_trigram(rowid, content)
    SELECT id, content FROM messages WHERE length(content) != length(CAST(content AS BLOB));
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "create_sessions_and_messages", _SESSIONS_AND_MESSAGES),
    Migration(2, "fts5_unicode61_index", _FTS_WORDS),
    Migration(3, "fts5_trigram_index_for_cjk", _FTS_TRIGRAM),
)

LATEST_VERSION = MIGRATIONS[-1].version

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"""


def current_version(conn: sqlite3.Connection) -> int:
    """Highest applied migration (0 for a new file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
    if not exists:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    """Apply pending migrations in one transaction; returns the names applied (empty when current)."""
    latest = migrations[-1].version
    version = retry_busy(lambda: current_version(conn))
    if version > latest:
        raise StorageError(f"state.db has schema v{version}, newer than this hermes knows (v{latest}); "
                           "upgrade hermes-agent")
    if version == latest:
        return []

    def apply(c: sqlite3.Connection) -> list[str]:
        c.execute(_VERSION_TABLE)
        done = current_version(c)  # re-read under the write lock: another process may have migrated
        applied = []
        for m in migrations:
            if m.version <= done:
                continue
            for stmt in split_statements(m.sql):
                c.execute(stmt)
            c.execute("INSERT INTO schema_version(version, name, applied_at) VALUES (?, ?, ?)",
                      (m.version, m.name, time.time()))
            applied.append(m.name)
        return applied

    try:
        return run_in_transaction(conn, apply)
    except sqlite3.Error as exc:
        raise StorageError(f"state.db migration failed: {exc}") from exc
