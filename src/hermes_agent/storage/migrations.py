"""Bring any state.db we can read up to the shared layout (layout.py) by named migrations, forward only.

Three kinds of file arrive here: a new one; one the released Hermes wrote (its `schema_version`
holds one row, 1..22); and one an earlier hermes-agent wrote (ledger rows 1..3 in a
`schema_version` with a name column). Each step is recorded by name in our ledger
(`hermes_agent_schema`); Hermes's own `schema_version` row says 22 afterwards, as Hermes writes it.
A file newer than we know (a later Hermes, up to its v31 and beyond, or a ledger step we lack) is
opened read-write as upstream itself does: we add only what is ours (ledger, last_active_at, usage,
`hermes_agent_*` triggers and index) and any v22 column it lacks, and never touch its version row,
search index, triggers or tables. Never edit a released migration: append a new one.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from hermes_agent.errors import StorageError
from hermes_agent.storage import layout as L
from hermes_agent.storage.db import retry_busy, run_in_transaction


@dataclass(frozen=True, slots=True)
class Found:
    """What a file holds before migrating: its kind, Hermes's schema_version, our ledger version."""

    kind: str  # "new", "hermes" or "legacy" (hermes-agent v1..v3)
    hermes_version: int
    ledger_version: int


@dataclass(frozen=True, slots=True)
class Migration:
    """One named step: applied once, in version order, inside the upgrade transaction."""

    version: int
    name: str
    apply: Callable[[sqlite3.Connection, Found], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What opening the store applied, and whether it is read-only."""

    applied: tuple[str, ...]
    read_only: str | None  # why writes are refused (the file itself is not writable), None otherwise


def _has_table(c: sqlite3.Connection, name: str) -> bool:
    return c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _columns(c: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in c.execute(f'PRAGMA table_info("{table}")')]


def inspect(c: sqlite3.Connection) -> Found:
    """Classify the file without changing it."""
    ledger = c.execute(f"SELECT COALESCE(MAX(version), 0) FROM {L.LEDGER}").fetchone()[0] \
        if _has_table(c, L.LEDGER) else 0
    if not _has_table(c, "schema_version"):
        return Found("new" if not _has_table(c, "sessions") else "hermes", 0, ledger)
    if "name" in _columns(c, "schema_version"):
        return Found("legacy", 0, c.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0])
    row = c.execute("SELECT version FROM schema_version LIMIT 1").fetchone()
    return Found("hermes", int(row[0]) if row else 0, ledger)


# -- step 4: the shared layout ------------------------------------------------------------------

def _add_missing(c: sqlite3.Connection) -> None:
    """Every v22 table and column the file lacks (idempotent: IF NOT EXISTS / ADD)."""
    for name, cols, constraint in L.TABLES:
        c.execute(L.create_table(name, cols, constraint))
        have = set(_columns(c, name))
        for col, decl in cols:
            if col not in have:
                c.execute(f'ALTER TABLE "{name}" ADD COLUMN "{col}" {L.addable(decl)}')


def _create_all(c: sqlite3.Connection) -> None:
    """Every Hermes table, missing column and index (idempotent: IF NOT EXISTS / ADD)."""
    _add_missing(c)
    c.execute("UPDATE messages SET active = 1 WHERE active IS NULL")
    for name, target in L.INDEXES:
        c.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {target}")
    c.execute(L.UNIQUE_TITLE_INDEX)


def _ensure_fts(c: sqlite3.Connection, rebuild: bool) -> None:
    """Create both FTS tables; refill them when new, rebuilt, or a trigger had gone missing."""
    have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    if rebuild:
        for trig in L.FTS_TRIGGERS:
            c.execute(f"DROP TRIGGER IF EXISTS {trig}")
        for tbl in (L.WORDS, L.TRIGRAM):
            c.execute(f"DROP TABLE IF EXISTS {tbl}")
    refill = rebuild or not all(t in have for t in L.FTS_TRIGGERS)
    for tbl in (L.WORDS, L.TRIGRAM):
        existed = _has_table(c, tbl)
        for stmt in L.fts_sql(tbl):
            c.execute(stmt)
        if refill or not existed:
            c.execute(f"DELETE FROM {tbl}")
            c.execute(L.fts_fill(tbl))


_HERMES_AGENT_V3_FTS = ("messages_fts_ai", "messages_fts_ad", "messages_fts_au", "messages_fts_trigram_ai",
                        "messages_fts_trigram_ad", "messages_fts_trigram_aud", "messages_fts_trigram_aui")
# Hermes's format for one tool call, built from the {"id", "name", "arguments"} objects v3 stored.
_CALLS_AS_HERMES = (
    "CASE WHEN tool_calls IS NULL THEN NULL ELSE (SELECT json_group_array(json_object("
    "'id', json_extract(value, '$.id'), 'type', 'function', 'function', json_object("
    "'name', json_extract(value, '$.name'), 'arguments', json_extract(value, '$.arguments')))) "
    "FROM json_each(messages.tool_calls)) END")


def _convert_hermes_agent_v3(c: sqlite3.Connection) -> None:
    """Copy sessions and messages of a v1-v3 file into Hermes's tables (same ids), then swap them in."""
    for trig in _HERMES_AGENT_V3_FTS:
        c.execute(f"DROP TRIGGER IF EXISTS {trig}")
    for tbl in (L.WORDS, L.TRIGRAM):
        c.execute(f"DROP TABLE IF EXISTS {tbl}")
    for idx in ("idx_sessions_active", "idx_sessions_source", "idx_sessions_parent", "idx_sessions_key",
                "idx_messages_session"):
        c.execute(f"DROP INDEX IF EXISTS {idx}")
    old_sessions = set(_columns(c, "sessions"))
    sessions = (*L.table("sessions"), ("last_active_at", "REAL"))
    messages = (*L.table("messages"), ("usage", "TEXT"))
    c.execute(L.create_table("sessions", sessions, "FOREIGN KEY (parent_session_id) REFERENCES sessions(id)",
                             as_name="hermes_agent_new_sessions"))
    c.execute(L.create_table("messages", messages, "", as_name="hermes_agent_new_messages"))
    keep = [col for col, _ in sessions if col in old_sessions]
    c.execute(f"INSERT INTO hermes_agent_new_sessions ({', '.join(keep)}) SELECT {', '.join(keep)} FROM sessions")
    moved = "id, session_id, role, content, tool_call_id, tool_name, reasoning, timestamp, token_count, " \
            "finish_reason, usage"
    c.execute(f"INSERT INTO hermes_agent_new_messages ({moved}, tool_calls, active) "
              f"SELECT {moved}, {_CALLS_AS_HERMES}, 1 FROM messages ORDER BY id")
    c.execute("DROP TABLE messages")
    c.execute("DROP TABLE sessions")
    c.execute("ALTER TABLE hermes_agent_new_sessions RENAME TO sessions")
    c.execute("ALTER TABLE hermes_agent_new_messages RENAME TO messages")
    c.execute(L.LEDGER_SQL)
    c.execute(f"INSERT OR IGNORE INTO {L.LEDGER} SELECT version, name, applied_at FROM schema_version")
    c.execute("DROP TABLE schema_version")


_USAGE_SUMS = "api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens"


def _hermes_data_steps(c: sqlite3.Connection, version: int) -> None:
    """The row changes Hermes makes between its versions (columns are added by _create_all)."""
    if version < 16:  # subagent runs tagged with the parent they came from, so pickers hide them
        c.execute("UPDATE sessions SET model_config = json_set(COALESCE(model_config, '{}'), '$._delegate_from', "
                  "parent_session_id) WHERE parent_session_id IS NOT NULL AND json_extract(COALESCE("
                  "model_config, '{}'), '$._delegate_from') IS NULL AND json_extract(COALESCE(model_config, "
                  "'{}'), '$._branched_from') IS NULL AND NOT EXISTS (SELECT 1 FROM sessions p WHERE "
                  "p.id = sessions.parent_session_id AND p.end_reason IN ('compression', 'branched'))")
    if version < 22 and not c.execute("SELECT COUNT(*) FROM pragma_table_info('session_model_usage') "
                                      "WHERE name = 'task' AND pk > 0").fetchone()[0]:
        # v22 put `task` into the primary key: SQLite cannot alter a key, so the table is rebuilt.
        c.execute("ALTER TABLE session_model_usage RENAME TO hermes_agent_old_model_usage")
        c.execute(L.create_table("session_model_usage", L.table("session_model_usage"),
                                 f"PRIMARY KEY ({L.MODEL_USAGE_KEY})"))
        cols = [col for col, _ in L.table("session_model_usage") if col != "task"]
        c.execute(f"INSERT INTO session_model_usage ({', '.join(cols)}, task) "
                  f"SELECT {', '.join(cols)}, '' FROM hermes_agent_old_model_usage")
        c.execute("DROP TABLE hermes_agent_old_model_usage")
        for name, target in L.INDEXES:
            if target.startswith("session_model_usage"):
                c.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {target}")
    if version < 20:  # per-model usage seeded from each session's totals
        c.execute(f"INSERT OR IGNORE INTO session_model_usage (session_id, model, billing_provider, "
                  f"billing_base_url, billing_mode, {_USAGE_SUMS}, estimated_cost_usd, actual_cost_usd, "
                  f"cost_status, cost_source, first_seen, last_seen) SELECT id, COALESCE(model, 'unknown'), "
                  f"COALESCE(billing_provider, ''), COALESCE(billing_base_url, ''), COALESCE(billing_mode, ''), "
                  f"{', '.join(f'COALESCE({x}, 0)' for x in _USAGE_SUMS.split(', '))}, "
                  f"COALESCE(estimated_cost_usd, 0), COALESCE(actual_cost_usd, 0), cost_status, cost_source, "
                  f"started_at, COALESCE(ended_at, started_at) FROM sessions WHERE COALESCE(input_tokens, 0) "
                  f"+ COALESCE(output_tokens, 0) + COALESCE(cache_read_tokens, 0) > 0")


def newer_hermes(found: Found) -> bool:
    """A file a later Hermes wrote: its layout, search index and version row are its own."""
    return found.kind == "hermes" and found.hermes_version > L.HERMES_SCHEMA_VERSION


def _adopt_hermes_layout(c: sqlite3.Connection, found: Found) -> None:
    if newer_hermes(found):  # a superset of v22 already; only a column it may have dropped is added back
        _add_missing(c)
        return
    if found.kind == "legacy":
        _convert_hermes_agent_v3(c)
    _create_all(c)
    hermes = found.kind == "hermes"
    if hermes:
        _hermes_data_steps(c, found.hermes_version)
    # Hermes v11 re-indexed tool names and calls inline; anything older (and our v3) is rebuilt.
    _ensure_fts(c, rebuild=found.kind == "legacy" or (hermes and found.hermes_version < 11))
    if [tuple(r) for r in c.execute("SELECT version FROM schema_version")] != [(L.HERMES_SCHEMA_VERSION,)]:
        c.execute("DELETE FROM schema_version")
        c.execute("INSERT INTO schema_version (version) VALUES (?)", (L.HERMES_SCHEMA_VERSION,))


def _last_active_and_usage(c: sqlite3.Connection, found: Found) -> None:
    for tbl, col, decl in L.OURS_COLUMNS:
        if col not in _columns(c, tbl):
            c.execute(f"ALTER TABLE {tbl} ADD COLUMN {col} {decl}")
    # A later Hermes keeps its own activity clock (last_activity_at, moved by heartbeats too): the fresher wins.
    if "last_activity_at" in _columns(c, "sessions"):
        c.execute(L.LAST_ACTIVE_FROM_ACTIVITY)
    for stmt in (L.LAST_ACTIVE_BACKFILL, L.TOUCH_TRIGGER, L.SESSION_START_TRIGGER, L.LAST_ACTIVE_INDEX):
        c.execute(stmt)


def _spend_ledger(c: sqlite3.Connection, found: Found) -> None:
    for stmt in (L.SPEND_SQL, *L.SPEND_INDEXES):
        c.execute(stmt)


INLINE_REINDEX = 2000  # messages migration 7 re-indexes in its own transaction; more go to the background


def retired(table: str) -> str:
    """Where migration 7 parks an inline index until the background rebuild has dropped it."""
    return f"hermes_agent_retired_{table}"


def _external_search_index(c: sqlite3.Connection, found: Found) -> None:
    """Layout 3 of the search index (layout.py): views and external-content tables in place of the inline
    copies. A small file is re-indexed within the step; on a larger one only names change here (the old
    tables renamed aside, triggers swapped), so the step stays quick, and the indexing is a background
    rebuild in chunks (fts_rebuild.py), resumable,
    marked by `fts_rebuild_high_water`/`fts_rebuild_progress` in state_meta as upstream marks its own."""
    if newer_hermes(found):
        return  # its search index is its own
    row = c.execute(f"SELECT sql FROM sqlite_master WHERE name = '{L.WORDS}'").fetchone()
    if row is not None and L.WORDS_SRC in (row[0] or ""):
        return
    for trig in L.FTS_TRIGGERS:
        c.execute(f"DROP TRIGGER IF EXISTS {trig}")
    top = c.execute("SELECT MAX(id) FROM messages").fetchone()[0]
    small = c.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM messages LIMIT {INLINE_REINDEX + 1})").fetchone()[0] \
        <= INLINE_REINDEX  # a small file is re-indexed right here: no window where search misses rows
    for tbl in (L.WORDS, L.TRIGRAM):
        if not _has_table(c, tbl):
            continue
        if small:
            c.execute(f"DROP TABLE {tbl}")
        else:
            c.execute(f"DROP TABLE IF EXISTS {retired(tbl)}")
            c.execute(f"ALTER TABLE {tbl} RENAME TO {retired(tbl)}")
    for stmt in L.external_fts_sql():
        c.execute(stmt)
    upsert = "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)"
    if small:
        for tbl in (L.WORDS, L.TRIGRAM):
            c.execute(L.backfill_sql(tbl), (-1, top or 0))
        c.execute(upsert, (L.STORAGE_KEY, str(L.FTS_STORAGE_VERSION)))
    else:
        c.execute(upsert, (L.HIGH_WATER, str(top)))
        c.execute(upsert, (L.PROGRESS, "0"))


def _messages_time_index(c: sqlite3.Connection, found: Found) -> None:
    """The index a search's date filter uses: made here on a small file (new ones: at once); a big file's takes
    seconds under the write lock, so the background prune makes it (retention.ensure_time_index), never start-up."""
    if (c.execute("SELECT max(id) FROM messages").fetchone()[0] or 0) <= L.TIME_INDEX_INLINE:  # no scan to count
        c.execute(L.TIME_INDEX_SQL)


# Steps 1-3 were hermes-agent's own first layout (kept in files as ledger rows, converted by step 4).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(4, "adopt_hermes_v22_layout", _adopt_hermes_layout),
    Migration(5, "last_active_at_and_message_usage", _last_active_and_usage),
    Migration(6, "budget_spend_ledger", _spend_ledger),
    Migration(7, "search_index_external_content", _external_search_index),
    Migration(8, "messages_time_index", _messages_time_index),
)
LATEST_VERSION = MIGRATIONS[-1].version


def migrate(conn: sqlite3.Connection, path: str = "state.db",
            migrations: tuple[Migration, ...] = MIGRATIONS) -> Outcome:
    """Apply pending steps in one transaction. A file newer than this code (a later Hermes schema, or a
    later hermes-agent step) stays read-write: we write the columns we know and leave the rest alone."""
    found = retry_busy(lambda: inspect(conn))
    latest = migrations[-1].version
    current = found.kind == "hermes" and found.hermes_version >= L.HERMES_SCHEMA_VERSION \
        and found.ledger_version >= latest
    if current:
        return Outcome((), None)

    def apply(c: sqlite3.Connection) -> tuple[str, ...]:
        now = inspect(c)  # re-read under the write lock: another process may have migrated
        c.execute(L.LEDGER_SQL)
        done = now.ledger_version if now.kind != "legacy" else min(now.ledger_version, 3)
        applied = []
        for m in migrations:
            if m.version <= done:
                continue
            m.apply(c, now)
            now = Found("hermes", max(now.hermes_version, L.HERMES_SCHEMA_VERSION), m.version)
            c.execute(f"INSERT OR REPLACE INTO {L.LEDGER} (version, name, applied_at) VALUES (?, ?, ?)",
                      (m.version, m.name, time.time()))
            applied.append(m.name)
        return tuple(applied)

    conn.execute("PRAGMA foreign_keys=OFF")  # tables are swapped during step 4; no cascade may fire
    try:
        return Outcome(run_in_transaction(conn, apply), None)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise StorageError(f"state.db migration failed: {exc}") from exc
        return Outcome((), f"{path} is not writable ({exc}): sessions can be read but not saved")
    except sqlite3.Error as exc:
        raise StorageError(f"state.db migration failed: {exc}") from exc
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
