"""Named, forward-only migrations into the state.db layout shared with Hermes: fresh file, reopen, our
v3 files, older Hermes files, and files newer than this code (read-write in what we know)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_agent import paths
from hermes_agent.errors import StorageError
from hermes_agent.messages import Message, ToolCall, Usage
from hermes_agent.storage import SessionStore
from hermes_agent.storage.db import connect, split_statements
from hermes_agent.storage.layout import FTS_TRIGGERS, HERMES_SCHEMA_VERSION, LEDGER
from hermes_agent.storage.migrations import LATEST_VERSION, MIGRATIONS, Migration, migrate

V3_SQL = Path(__file__).parents[2] / "fixtures" / "state_v3.sql"


def _ledger(path):
    with sqlite3.connect(path) as c:
        return c.execute(f"SELECT version, name FROM {LEDGER} ORDER BY version").fetchall()


def _hermes_version(path):
    with sqlite3.connect(path) as c:
        return c.execute("SELECT version FROM schema_version").fetchall()


def test_fresh_database_has_hermes_single_version_row_and_our_named_steps(hermes_home):
    SessionStore().close()
    SessionStore().close()
    db = paths.state_db_path()
    assert _hermes_version(db) == [(HERMES_SCHEMA_VERSION,)]  # one row, as Hermes reads and UPDATEs it
    assert _ledger(db) == [(m.version, m.name) for m in MIGRATIONS]
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)
    with sqlite3.connect(db) as c:
        triggers = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert set(FTS_TRIGGERS) <= triggers


def test_pragmas_wal_and_busy_timeout(hermes_home):
    conn = connect(paths.state_db_path())
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()


def test_reapplying_returns_nothing(hermes_home):
    conn = connect(paths.state_db_path())
    assert migrate(conn).applied == tuple(m.name for m in MIGRATIONS)
    assert migrate(conn).applied == ()
    conn.close()


def _v3_file(path: Path) -> None:
    with sqlite3.connect(path) as c:
        c.executescript(V3_SQL.read_text(encoding="utf-8"))


def test_v3_file_of_ours_is_converted_with_every_row_intact(hermes_home):
    db = paths.state_db_path()
    _v3_file(db)
    with SessionStore() as store:
        first, child = "20250101_120000_aaaaaa", "20250102_090000_bbbbbb"
        assert [s.id for s in store.list_sessions()] == [child, first]
        info = store.require_session(first)
        assert (info.input_tokens, info.output_tokens, info.end_reason, info.system_prompt) == (
            250, 30, "compression", "You are Hermes.")
        assert store.require_session(child).parent_session_id == first
        assert store.get_messages(first) == [
            Message("user", "deploy the terraform plan"),
            Message("assistant", None, (ToolCall("call_1", "terminal", '{"command": "terraform apply"}'),),
                    reasoning="thinking about it"),
            Message("tool", "Apply complete! Resources: 3 added.", tool_call_id="call_1", name="terminal"),
            Message("assistant", "Done: 3 resources added.")]
        assert store.get_messages(first)[1].usage == Usage(100, 20, 5, 0, 3)
        assert [h.session.id for h in store.search("terraform")] == [first]
        assert [h.session.id for h in store.search("数据库迁移")] == [child]
        new = store.append_message(child, Message("user", "and the backups?"))
        assert new == 7  # ids continue after the converted rows
    assert [v for v, _ in _ledger(db)] == list(range(1, LATEST_VERSION + 1))
    assert _hermes_version(db) == [(HERMES_SCHEMA_VERSION,)]
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("PRAGMA foreign_key_check").fetchall() == []
        calls = c.execute("SELECT tool_calls FROM messages WHERE id = 2").fetchone()[0]
    assert '"type":"function"' in calls and '"function":{"name":"terminal"' in calls


def test_older_hermes_file_is_brought_to_v22(hermes_home):
    """A Hermes v10 file: no `active` column, usage table without `task`, FTS without tool text."""
    db = paths.state_db_path()
    with sqlite3.connect(db) as c:
        c.executescript(
            "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (10);"
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL,"
            " message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,"
            " title TEXT, parent_session_id TEXT);"
            "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT"
            " NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);"
            "CREATE VIRTUAL TABLE messages_fts USING fts5(content);"
            "INSERT INTO sessions VALUES ('s1', 'cli', 'm', 100, 1, 40, 2, 'Old chat', NULL);"
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'kubernetes', 101);")
    with SessionStore() as store:
        assert [h.session.id for h in store.search("kubernetes")] == ["s1"]
        assert store.require_session("s1").last_active_at == 101
        assert store.get_messages("s1") == [Message("user", "kubernetes")]
    assert _hermes_version(db) == [(HERMES_SCHEMA_VERSION,)]
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT session_id, model, task, input_tokens FROM session_model_usage").fetchall() == [
            ("s1", "m", "", 40)]


def test_newer_schema_stays_writable_and_untouched_beyond_what_is_ours(hermes_home):
    """A later Hermes's file (here v99 with a column, table and trigger we do not know) is read and written
    in the columns we know; its version row, its objects and its unknown column's values are left alone."""
    with SessionStore() as store:
        sid = store.create_session().id
        store.append_message(sid, Message("user", "kept from before"))
    db = paths.state_db_path()
    with sqlite3.connect(db) as c:
        c.executescript(
            "UPDATE schema_version SET version = 99;"
            "ALTER TABLE messages ADD COLUMN future_uid TEXT;"
            "CREATE TABLE future_things (k TEXT PRIMARY KEY);"
            "CREATE TRIGGER future_mint AFTER INSERT ON messages WHEN new.future_uid IS NULL BEGIN "
            "UPDATE messages SET future_uid = 'u' || new.id WHERE id = new.id; END;")
    with SessionStore() as store:
        assert store.read_only is None
        assert [h.session.id for h in store.search("kept")] == [sid]
        store.append_message(sid, Message("assistant", "written into v99"))
        other = store.create_session().id
        store.append_message(other, Message("user", "a new session in v99"))
        assert [s.id for s in store.list_sessions()] == [other, sid]
        assert [h.session.id for h in store.search("v99")] == [other, sid] or \
            {h.session.id for h in store.search("v99")} == {other, sid}
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT version FROM schema_version").fetchall() == [(99,)]
        assert c.execute("SELECT COUNT(*) FROM messages WHERE future_uid IS NULL").fetchone()[0] == 1  # the old row
        assert c.execute("SELECT name FROM sqlite_master WHERE name LIKE 'future%' ORDER BY 1").fetchall() == [
            ("future_mint",), ("future_things",)]
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_newer_ledger_step_of_ours_stays_writable_too(hermes_home):
    SessionStore().close()
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute(f"INSERT INTO {LEDGER} VALUES (?, 'from_the_future', 0)", (LATEST_VERSION + 1,))
    with SessionStore() as store:
        assert store.read_only is None
        store.append_message(store.create_session().id, Message("user", "still saved"))
    assert _ledger(paths.state_db_path())[-1] == (LATEST_VERSION + 1, "from_the_future")


def test_a_file_we_may_not_write_opens_read_only_with_one_clear_line(hermes_home):
    db = paths.state_db_path()
    with sqlite3.connect(db) as c:  # an older Hermes file: opening it needs a migration write
        c.executescript("CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version "
                        "VALUES (10); CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, "
                        "started_at REAL NOT NULL); INSERT INTO sessions VALUES ('s1', 'cli', 100);")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    outcome = migrate(conn, str(db))
    conn.close()
    assert outcome.read_only and "is not writable" in outcome.read_only and "\n" not in outcome.read_only


def test_garbage_file_is_a_storage_error(hermes_home):
    paths.state_db_path().write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match="not a usable session database"):
        SessionStore()


def test_failed_migration_rolls_back_entirely(hermes_home):
    def broken(c, found):
        c.execute("CREATE TABLE ok_table (x)")
        c.execute("CREATE TABLE sessions (y)")

    conn = connect(paths.state_db_path())
    with pytest.raises(StorageError, match="migration failed"):
        migrate(conn, migrations=(*MIGRATIONS[:1], Migration(5, "broken", broken)))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "ok_table" not in tables and "sessions" not in tables
    conn.close()


def test_split_statements_keeps_trigger_bodies_whole():
    sql = "CREATE TABLE a (x); CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; SELECT ';'; END;\n"
    assert list(split_statements(sql)) == [
        "CREATE TABLE a (x);", "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; SELECT ';'; END;"]


def test_index_triggers_follow_in_place_updates(hermes_home):
    with SessionStore() as store:
        sid = store.create_session().id
        mid = store.append_message(sid, Message("user", "原来的数据库内容"))
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("UPDATE messages SET content = 'plain ascii replacement' WHERE id = ?", (mid,))
    with SessionStore() as store:
        assert store.search("数据库") == [] and store.search("原来的") == []
        assert [h.session.id for h in store.search("replacement")] == [sid]
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("UPDATE messages SET content = '新的服务器配置' WHERE id = ?", (mid,))
        c.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
    with SessionStore() as store:
        assert store.search("replacement") == []
        assert [h.session.id for h in store.search("服务器配置")] == [sid]


def test_a_later_hermes_prompt_table_activity_clock_and_hidden_sessions_are_followed(hermes_home):
    """The v25+ layout a later Hermes adds (system_prompts by SHA-256, last_activity_at, hidden): our writes
    go where it reads, and what it hides stays hidden."""
    SessionStore().close()
    db = paths.state_db_path()
    with sqlite3.connect(db) as c:
        c.executescript(
            "UPDATE schema_version SET version = 31;"
            "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);"
            "ALTER TABLE sessions ADD COLUMN system_prompt_hash TEXT REFERENCES system_prompts(hash);"
            "ALTER TABLE sessions ADD COLUMN last_activity_at REAL;"
            "ALTER TABLE sessions ADD COLUMN created_source TEXT;"
            "ALTER TABLE sessions ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;"
            "INSERT INTO sessions (id, source, started_at, hidden) VALUES ('bot', 'api', 1, 1);")
    with SessionStore() as store:
        sid = store.create_session(system_prompt="You are helpful.").id
        other = store.create_session(system_prompt="You are helpful.").id
        store.append_message(sid, Message("user", "hello"), timestamp=5000.0)
        assert store.require_session(sid).system_prompt == "You are helpful."
        assert {s.id for s in store.list_sessions()} == {sid, other}
        store.set_system_prompt(other, "Another prompt.")
        store.delete_session(other)
    with sqlite3.connect(db) as c:
        row = c.execute("SELECT system_prompt, system_prompt_hash, last_activity_at, created_source, profile_name "
                        "FROM sessions WHERE id = ?", (sid,)).fetchone()
        prompts = c.execute("SELECT prompt FROM system_prompts").fetchall()
    assert row[0] is None and len(row[1]) == 64 and row[2] == 5000.0 and row[3:] == ("cli", "default")
    assert prompts == [("You are helpful.",)]  # stored once; the deleted session's prompt went with it


def _has_time_index(path) -> bool:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT 1 FROM sqlite_master WHERE name = 'hermes_agent_idx_messages_time'").fetchone() is not None


def test_the_time_index_is_made_at_once_on_a_small_file_and_left_to_the_background_prune_on_a_big_one(hermes_home):
    from hermes_agent.storage import retention
    from hermes_agent.storage.layout import TIME_INDEX_INLINE

    SessionStore().close()
    db = paths.state_db_path()
    assert _has_time_index(db)  # a new file: at once
    with SessionStore() as store:  # a big file from before step 8: no index, ledger at 7
        sid = store.create_session("cli").id
        store.append_messages(sid, [Message(role="user", content=f"m{i}") for i in range(TIME_INDEX_INLINE + 5)])
    with sqlite3.connect(db) as c:
        c.execute("DROP INDEX hermes_agent_idx_messages_time")
        c.execute(f"DELETE FROM {LEDGER} WHERE version = 8")
    with SessionStore() as store:  # migration 8 runs, but does not hold start-up for the index
        assert _ledger(db)[-1] == (8, "messages_time_index") and not _has_time_index(db)
        found = store.search("m7", since=0.0)
        assert [h.session.id for h in found] == [sid]  # searched without it
        retention.ensure_time_index(store._conn)  # what the background prune and optimize-storage do
    assert _has_time_index(db)
