"""Named, versioned migrations: fresh install, idempotent reopen, upgrade with backfill, refusal of newer schemas."""

from __future__ import annotations

import sqlite3

import pytest

from hermes_agent import paths
from hermes_agent.errors import StorageError
from hermes_agent.messages import Message
from hermes_agent.storage import SessionStore
from hermes_agent.storage.db import connect, split_statements
from hermes_agent.storage.migrations import LATEST_VERSION, MIGRATIONS, migrate


def _versions(path):
    with sqlite3.connect(path) as c:
        return c.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()


def test_fresh_database_gets_every_named_migration_once(hermes_home):
    SessionStore().close()
    SessionStore().close()
    assert _versions(paths.state_db_path()) == [(m.version, m.name) for m in MIGRATIONS]
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST_VERSION + 1))
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)


def test_pragmas_wal_and_busy_timeout(hermes_home):
    conn = connect(paths.state_db_path())
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()


def test_reapplying_returns_nothing(hermes_home):
    conn = connect(paths.state_db_path())
    assert len(migrate(conn)) == LATEST_VERSION
    assert migrate(conn) == []
    conn.close()


def test_upgrade_from_v1_backfills_both_search_indexes(hermes_home):
    conn = connect(paths.state_db_path())
    assert migrate(conn, MIGRATIONS[:1]) == ["create_sessions_and_messages"]
    conn.execute("INSERT INTO sessions (id, source, started_at, last_active_at) VALUES ('old', 'cli', 1, 1)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES "
                 "('old', 'user', 'legacy terraform plan', 1), ('old', 'user', '旧的数据库备份', 1)")
    conn.close()
    with SessionStore() as store:
        assert [h.session.id for h in store.search("terraform")] == ["old"]
        assert [h.session.id for h in store.search("数据库备份")] == ["old"]
        assert store.get_messages("old")[0] == Message("user", "legacy terraform plan")
    assert [v for v, _ in _versions(paths.state_db_path())] == [1, 2, 3]


def test_newer_schema_is_refused_with_one_clear_line(hermes_home):
    SessionStore().close()
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("INSERT INTO schema_version VALUES (99, 'future', 0)")
    with pytest.raises(StorageError, match=r"schema v99, newer than this hermes knows \(v3\)"):
        SessionStore()


def test_garbage_file_is_a_storage_error(hermes_home):
    paths.state_db_path().write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match="not a usable session database"):
        SessionStore()


def test_failed_migration_rolls_back_entirely(hermes_home):
    from hermes_agent.storage.migrations import Migration

    broken = (*MIGRATIONS, Migration(4, "broken", "CREATE TABLE ok_table (x); CREATE TABLE sessions (y);"))
    conn = connect(paths.state_db_path())
    with pytest.raises(StorageError, match="migration failed"):
        migrate(conn, broken)
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
