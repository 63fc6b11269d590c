"""The state.db layout shared with the released Hermes (its schema v22), declared as data.

Hermes and hermes-agent read and write the same file, so the tables, columns, indexes, FTS tables
and trigger names below follow Hermes's format exactly. What is ours alone lives apart and Hermes
ignores it: the `hermes_agent_schema` ledger, sessions.last_active_at, messages.usage and the
`hermes_agent_*` trigger/index. No SQL runs here; migrations.py applies these declarations.
"""

from __future__ import annotations

HERMES_SCHEMA_VERSION = 22

# (table, ((column, declaration), ...), table constraints). Column order is Hermes's.
_SESSIONS = (
    ("id", "TEXT PRIMARY KEY"), ("source", "TEXT NOT NULL"), ("user_id", "TEXT"), ("session_key", "TEXT"),
    ("chat_id", "TEXT"), ("chat_type", "TEXT"), ("thread_id", "TEXT"), ("display_name", "TEXT"),
    ("origin_json", "TEXT"), ("expiry_finalized", "INTEGER DEFAULT 0"), ("model", "TEXT"),
    ("model_config", "TEXT"), ("system_prompt", "TEXT"), ("parent_session_id", "TEXT"),
    ("started_at", "REAL NOT NULL"), ("ended_at", "REAL"), ("end_reason", "TEXT"),
    ("message_count", "INTEGER DEFAULT 0"), ("tool_call_count", "INTEGER DEFAULT 0"),
    ("input_tokens", "INTEGER DEFAULT 0"), ("output_tokens", "INTEGER DEFAULT 0"),
    ("cache_read_tokens", "INTEGER DEFAULT 0"), ("cache_write_tokens", "INTEGER DEFAULT 0"),
    ("reasoning_tokens", "INTEGER DEFAULT 0"), ("cwd", "TEXT"), ("git_branch", "TEXT"), ("git_repo_root", "TEXT"),
    ("billing_provider", "TEXT"), ("billing_base_url", "TEXT"), ("billing_mode", "TEXT"),
    ("estimated_cost_usd", "REAL"), ("actual_cost_usd", "REAL"), ("cost_status", "TEXT"), ("cost_source", "TEXT"),
    ("pricing_version", "TEXT"), ("title", "TEXT"), ("api_call_count", "INTEGER DEFAULT 0"),
    ("handoff_state", "TEXT"), ("handoff_platform", "TEXT"), ("handoff_error", "TEXT"),
    ("compression_failure_cooldown_until", "REAL"), ("compression_failure_error", "TEXT"),
    ("compression_fallback_streak", "INTEGER NOT NULL DEFAULT 0"), ("profile_name", "TEXT"),
    ("rewind_count", "INTEGER NOT NULL DEFAULT 0"), ("archived", "INTEGER NOT NULL DEFAULT 0"),
)
_MESSAGES = (
    ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"), ("session_id", "TEXT NOT NULL REFERENCES sessions(id)"),
    ("role", "TEXT NOT NULL"), ("content", "TEXT"), ("tool_call_id", "TEXT"), ("tool_calls", "TEXT"),
    ("tool_name", "TEXT"), ("effect_disposition", "TEXT"), ("timestamp", "REAL NOT NULL"),
    ("token_count", "INTEGER"), ("finish_reason", "TEXT"), ("reasoning", "TEXT"), ("reasoning_content", "TEXT"),
    ("reasoning_details", "TEXT"), ("codex_reasoning_items", "TEXT"), ("codex_message_items", "TEXT"),
    ("platform_message_id", "TEXT"), ("observed", "INTEGER DEFAULT 0"), ("active", "INTEGER NOT NULL DEFAULT 1"),
    ("compacted", "INTEGER NOT NULL DEFAULT 0"), ("api_content", "TEXT"),
)
_USAGE_COUNTERS = tuple((c, "INTEGER NOT NULL DEFAULT 0") for c in (
    "api_call_count", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
    "reasoning_tokens"))
_MODEL_USAGE = (
    ("session_id", "TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE"), ("model", "TEXT NOT NULL"),
    ("billing_provider", "TEXT NOT NULL DEFAULT ''"), ("billing_base_url", "TEXT NOT NULL DEFAULT ''"),
    ("billing_mode", "TEXT NOT NULL DEFAULT ''"), ("task", "TEXT NOT NULL DEFAULT ''"), *_USAGE_COUNTERS,
    ("estimated_cost_usd", "REAL NOT NULL DEFAULT 0"), ("actual_cost_usd", "REAL NOT NULL DEFAULT 0"),
    ("cost_status", "TEXT"), ("cost_source", "TEXT"), ("first_seen", "REAL"), ("last_seen", "REAL"),
)
MODEL_USAGE_KEY = "session_id, model, billing_provider, billing_base_url, billing_mode, task"
_ASYNC_DELEGATIONS = (
    ("delegation_id", "TEXT PRIMARY KEY"), ("origin_session", "TEXT NOT NULL"),
    ("origin_ui_session_id", "TEXT NOT NULL DEFAULT ''"), ("parent_session_id", "TEXT"), ("state", "TEXT NOT NULL"),
    ("dispatched_at", "REAL NOT NULL"), ("completed_at", "REAL"), ("updated_at", "REAL NOT NULL"),
    ("event_json", "TEXT"), ("result_json", "TEXT"), ("delivery_state", "TEXT NOT NULL DEFAULT 'pending'"),
    ("delivery_attempts", "INTEGER NOT NULL DEFAULT 0"), ("delivered_at", "REAL"), ("owner_pid", "INTEGER"),
    ("owner_started_at", "INTEGER"), ("task_json", "TEXT"), ("delivery_claim", "TEXT"),
    ("delivery_claimed_at", "REAL"),
)

TABLES: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    ("schema_version", (("version", "INTEGER NOT NULL"),), ""),
    ("sessions", _SESSIONS, "FOREIGN KEY (parent_session_id) REFERENCES sessions(id)"),
    ("messages", _MESSAGES, ""),
    ("session_model_usage", _MODEL_USAGE, f"PRIMARY KEY ({MODEL_USAGE_KEY})"),
    ("state_meta", (("key", "TEXT PRIMARY KEY"), ("value", "TEXT")), ""),
    ("gateway_routing", (("scope", "TEXT NOT NULL DEFAULT ''"), ("session_key", "TEXT NOT NULL"),
                         ("entry_json", "TEXT NOT NULL"), ("updated_at", "REAL NOT NULL")),
     "PRIMARY KEY (scope, session_key)"),
    ("compression_locks", (("session_id", "TEXT PRIMARY KEY"), ("holder", "TEXT NOT NULL"),
                           ("acquired_at", "REAL NOT NULL"), ("expires_at", "REAL NOT NULL")), ""),
    ("async_delegations", _ASYNC_DELEGATIONS, ""),
)

INDEXES = (
    ("idx_sessions_source", "sessions(source)"),
    ("idx_sessions_source_id", "sessions(source, id)"),
    ("idx_sessions_parent", "sessions(parent_session_id)"),
    ("idx_sessions_started", "sessions(started_at DESC)"),
    ("idx_messages_session", "messages(session_id, timestamp)"),
    ("idx_compression_locks_expires", "compression_locks(expires_at)"),
    ("idx_session_model_usage_session", "session_model_usage(session_id)"),
    ("idx_session_model_usage_model", "session_model_usage(model)"),
    ("idx_async_delegations_delivery", "async_delegations(delivery_state, completed_at)"),
    ("idx_messages_platform_msg_id",
     "messages(session_id, platform_message_id) WHERE platform_message_id IS NOT NULL"),
    ("idx_messages_session_active", "messages(session_id, active, timestamp)"),
    ("idx_messages_active_null", "messages(active) WHERE active IS NULL"),
    ("idx_sessions_session_key", "sessions(session_key, started_at DESC)"),
    ("idx_sessions_gateway_peer", "sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC)"),
    ("idx_sessions_handoff_state", "sessions(handoff_state, started_at)"),
)
UNIQUE_TITLE_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique "
                      "ON sessions(title) WHERE title IS NOT NULL")

# Both FTS tables hold one column: content, tool name and tool-call JSON joined by spaces (inline,
# not external-content), kept in step by triggers with Hermes's names.
FTS_TEXT = "COALESCE({r}.content, '') || ' ' || COALESCE({r}.tool_name, '') || ' ' || COALESCE({r}.tool_calls, '')"
WORDS, TRIGRAM = "messages_fts", "messages_fts_trigram"
FTS_TRIGGERS = tuple(f"{t}_{op}" for t in (WORDS, TRIGRAM) for op in ("insert", "delete", "update"))


def non_ascii(row: str) -> str:
    """SQL: the row's FTS text holds a non-ASCII character (only those rows can match a CJK query)."""
    text = FTS_TEXT.format(r=row)
    return f"length({text}) != length(CAST({text} AS BLOB))"


def fts_sql(table: str) -> list[str]:
    """DDL for one FTS table and its three triggers (the update one only for the indexed columns, so another
    program's AFTER INSERT trigger stamping its own column cannot index a row twice).

    The trigram table only indexes rows with non-ASCII text: Hermes asks it only for queries with
    three or more CJK characters, which no pure-ASCII row can match, and it is the largest index.
    """
    tokenize = ", tokenize='trigram'" if table == TRIGRAM else ""
    new = FTS_TEXT.format(r="new")
    when_new = f" WHEN {non_ascii('new')}" if table == TRIGRAM else ""
    add = f"INSERT INTO {table}(rowid, content) VALUES (new.id, {new});"
    drop = f"DELETE FROM {table} WHERE rowid = old.id;"
    update = (f"CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE OF content, tool_name, tool_calls ON messages "
              f"BEGIN {drop} "
              + (f"INSERT INTO {table}(rowid, content) SELECT new.id, {new} WHERE {non_ascii('new')}; END"
                 if table == TRIGRAM else f"{add} END"))
    return [f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content{tokenize})",
            f"CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON messages{when_new} BEGIN {add} END",
            f"CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON messages BEGIN {drop} END",
            update]


def fts_fill(table: str) -> str:
    """SQL that indexes every stored message into `table` (after it was emptied or created)."""
    where = f" WHERE {non_ascii('messages')}" if table == TRIGRAM else ""
    return f"INSERT INTO {table}(rowid, content) SELECT id, {FTS_TEXT.format(r='messages')} FROM messages{where}"


def create_table(name: str, columns: tuple[tuple[str, str], ...], constraint: str, *, as_name: str = "") -> str:
    body = ", ".join(f"{c} {d}" for c, d in columns) + (f", {constraint}" if constraint else "")
    return f"CREATE TABLE IF NOT EXISTS {as_name or name} ({body})"


def table(name: str) -> tuple[tuple[str, str], ...]:
    return next(cols for t, cols, _ in TABLES if t == name)


def addable(declaration: str) -> str:
    """The part of a column declaration ALTER TABLE ADD COLUMN accepts (no keys, no references)."""
    decl = declaration.replace("PRIMARY KEY AUTOINCREMENT", "").replace("PRIMARY KEY", "")
    return decl.split(" REFERENCES ")[0].strip()


# Ours: a ledger of our named migrations, the last-activity time Hermes computes on every listing
# (its latest message's timestamp, else started_at; kept by triggers so Hermes's writes move it too),
# and the exact token usage of each assistant message. Hermes never reads these.
LEDGER = "hermes_agent_schema"
LEDGER_SQL = f"CREATE TABLE IF NOT EXISTS {LEDGER} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
OURS_COLUMNS = (("sessions", "last_active_at", "REAL"), ("messages", "usage", "TEXT"))
TOUCH_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS hermes_agent_touch_session AFTER INSERT ON messages BEGIN "
    "UPDATE sessions SET last_active_at = (SELECT MAX(timestamp) FROM messages WHERE session_id = new.session_id) "
    "WHERE id = new.session_id; END")
SESSION_START_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS hermes_agent_session_started AFTER INSERT ON sessions "
    "WHEN new.last_active_at IS NULL BEGIN "
    "UPDATE sessions SET last_active_at = new.started_at WHERE id = new.id; END")
LAST_ACTIVE_INDEX = "CREATE INDEX IF NOT EXISTS hermes_agent_idx_sessions_last_active ON sessions(last_active_at)"
# Ours: messages by time, so a date filter on a search is turned into a range of ids (storage/search.py). Made
# by migration 8 on a file of at most TIME_INDEX_INLINE messages, else by the background prune (retention.py).
TIME_INDEX = "hermes_agent_idx_messages_time"
TIME_INDEX_SQL = f"CREATE INDEX IF NOT EXISTS {TIME_INDEX} ON messages(timestamp)"
TIME_INDEX_INLINE = 20_000
LAST_ACTIVE_FROM_ACTIVITY = (  # a later Hermes's own activity clock, where it is fresher than its messages
    "UPDATE sessions SET last_active_at = last_activity_at WHERE last_activity_at IS NOT NULL AND "
    "last_activity_at > COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id), "
    "started_at)")
# Spending caps (budget.*): one row per model call the user's work caused (main, auxiliary, subagent, MoA),
# no foreign key so deleting a session never refunds a day's or month's spend. Hermes ignores it.
SPEND = "hermes_agent_spend"
SPEND_SQL = (f"CREATE TABLE IF NOT EXISTS {SPEND} (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, "
             "session_id TEXT NOT NULL DEFAULT '', who TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', "
             "task TEXT NOT NULL DEFAULT '', input_tokens INTEGER NOT NULL DEFAULT 0, "
             "output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL, priced INTEGER NOT NULL DEFAULT 1)")
SPEND_INDEXES = (f"CREATE INDEX IF NOT EXISTS hermes_agent_idx_spend_session ON {SPEND}(session_id)",
                 f"CREATE INDEX IF NOT EXISTS hermes_agent_idx_spend_who ON {SPEND}(who, ts)")
LAST_ACTIVE_BACKFILL = (
    "UPDATE sessions SET last_active_at = COALESCE((SELECT MAX(m.timestamp) FROM messages m "
    "WHERE m.session_id = sessions.id), started_at) WHERE last_active_at IS NULL")


# ---- search index, storage layout 3 (migration 7) ---------------------------------------------------
# Upstream's FTS storage layout 3 (`state_meta.fts_storage_version`): both indexes are external-content
# tables reading through views, so no private copy of every message is kept; the word index holds a
# tool row's first 8,192 characters only. The view computes exactly what the triggers index, so FTS5's
# 'delete', 'rebuild' and 'integrity-check' agree with the stored tokens. Ours differs in one point that
# a later Hermes rebuilds away on its v30 step: the trigram index keeps only non-tool rows holding
# non-ASCII text (only those can match a query of three CJK characters). A background rebuild is in
# flight while `fts_rebuild_high_water` H is set: a row is indexed iff id <= `fts_rebuild_progress` P
# or id > H (the triggers test that same predicate, as upstream's do).
FTS_STORAGE_VERSION = 3
FTS_TOOL_PREFIX = 8192
WORDS_SRC, TRIGRAM_SRC = "messages_fts_src", "messages_fts_trigram_src"
HIGH_WATER, PROGRESS, STORAGE_KEY = "fts_rebuild_high_water", "fts_rebuild_progress", "fts_storage_version"


def _meta_int(key: str) -> str:
    return f"COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = '{key}'), -1)"


def _indexed(row: str) -> str:
    """SQL: the row is in the index (no rebuild pending, or the rebuild has reached it, or it came after)."""
    return f"({row}.id > {_meta_int(HIGH_WATER)} OR {row}.id <= {_meta_int(PROGRESS)})"


def _words_text(row: str) -> str:
    return (f"CASE WHEN {row}.role = 'tool' THEN substr(COALESCE({row}.content, ''), 1, {FTS_TOOL_PREFIX}) "
            f"ELSE {row}.content END")


def _trigram_row(row: str) -> str:
    return f"{row}.role <> 'tool' AND length({row}.content) != length(CAST({row}.content AS BLOB))"


def external_fts_sql() -> list[str]:
    """Views, FTS tables and the six triggers (Hermes's names) of layout 3."""
    w_cols, t_cols = "content, tool_name, tool_calls", "content, tool_name"
    w_new = f"new.id, {_words_text('new')}, new.tool_name, new.tool_calls"
    w_old = f"'delete', old.id, {_words_text('old')}, old.tool_name, old.tool_calls"
    t_new, t_old = "new.id, new.content, new.tool_name", "'delete', old.id, old.content, old.tool_name"
    w_changed = ("(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name OR "
                 "old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role)")
    t_changed = "(old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name OR old.role IS NOT new.role)"
    return [
        f"CREATE VIEW IF NOT EXISTS {WORDS_SRC} AS SELECT id, {_words_text('messages')} AS content, tool_name, "
        "tool_calls FROM messages",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {WORDS} USING fts5({w_cols}, content='{WORDS_SRC}', content_rowid='id')",
        f"CREATE TRIGGER IF NOT EXISTS {WORDS}_insert AFTER INSERT ON messages WHEN {_indexed('new')} BEGIN "
        f"INSERT INTO {WORDS}(rowid, {w_cols}) VALUES ({w_new}); END",
        f"CREATE TRIGGER IF NOT EXISTS {WORDS}_delete AFTER DELETE ON messages WHEN {_indexed('old')} BEGIN "
        f"INSERT INTO {WORDS}({WORDS}, rowid, {w_cols}) VALUES ({w_old}); END",
        f"CREATE TRIGGER IF NOT EXISTS {WORDS}_update AFTER UPDATE OF content, tool_name, tool_calls, role "
        f"ON messages WHEN {w_changed} AND {_indexed('old')} BEGIN "
        f"INSERT INTO {WORDS}({WORDS}, rowid, {w_cols}) VALUES ({w_old}); "
        f"INSERT INTO {WORDS}(rowid, {w_cols}) VALUES ({w_new}); END",
        f"CREATE VIEW IF NOT EXISTS {TRIGRAM_SRC} AS SELECT id, content, tool_name FROM messages "
        f"WHERE {_trigram_row('messages')}",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TRIGRAM} USING fts5({t_cols}, content='{TRIGRAM_SRC}', "
        "content_rowid='id', tokenize='trigram')",
        f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_insert AFTER INSERT ON messages "
        f"WHEN {_trigram_row('new')} AND {_indexed('new')} BEGIN "
        f"INSERT INTO {TRIGRAM}(rowid, {t_cols}) VALUES ({t_new}); END",
        f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_delete AFTER DELETE ON messages "
        f"WHEN {_trigram_row('old')} AND {_indexed('old')} BEGIN "
        f"INSERT INTO {TRIGRAM}({TRIGRAM}, rowid, {t_cols}) VALUES ({t_old}); END",
        f"CREATE TRIGGER IF NOT EXISTS {TRIGRAM}_update AFTER UPDATE OF content, tool_name, role ON messages "
        f"WHEN {t_changed} AND {_indexed('old')} BEGIN "
        f"INSERT INTO {TRIGRAM}({TRIGRAM}, rowid, {t_cols}) SELECT {t_old} WHERE {_trigram_row('old')}; "
        f"INSERT INTO {TRIGRAM}(rowid, {t_cols}) SELECT {t_new} WHERE {_trigram_row('new')}; END",
    ]


def backfill_sql(table: str) -> str:
    """SQL indexing the rows with ids in (?, ?] from the table's view (one chunk of a rebuild)."""
    if table == WORDS:
        return (f"INSERT INTO {WORDS}(rowid, content, tool_name, tool_calls) SELECT id, content, tool_name, "
                f"tool_calls FROM {WORDS_SRC} WHERE id > ? AND id <= ?")
    return (f"INSERT INTO {TRIGRAM}(rowid, content, tool_name) SELECT id, content, tool_name FROM {TRIGRAM_SRC} "
            "WHERE id > ? AND id <= ?")
