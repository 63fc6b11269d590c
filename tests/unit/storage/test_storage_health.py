"""`hermes doctor`'s database checks: version, quick integrity check, search indexes in step with messages."""

from __future__ import annotations

import sqlite3

from hermes_agent import paths
from hermes_agent.messages import Message
from hermes_agent.storage import SessionStore
from hermes_agent.storage.health import check_database


def _texts(level: str) -> list[str]:
    return [c.text for c in check_database(paths.state_db_path()) if c.level == level]


def test_missing_database_is_information_only(hermes_home):
    assert [c.level for c in check_database(paths.state_db_path())] == ["info"]


def test_healthy_database_and_a_search_index_that_lost_a_row(hermes_home):
    with SessionStore() as store:
        sid = store.create_session().id
        store.append_message(sid, Message("user", "数据库 backups every night"))
    assert any("schema v22, shared with Hermes (1 sessions, 1 messages)" in t for t in _texts("ok"))
    assert _texts("fail") == []
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("DELETE FROM messages_fts_trigram")
    assert _texts("fail") == ["search index messages_fts_trigram: 1 messages missing, 0 stale entries"]


def test_newer_schema_is_a_note_naming_both_versions(hermes_home):
    SessionStore().close()
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("UPDATE schema_version SET version = 99")
    assert not _texts("warn")
    (note,) = [t for t in _texts("info") if "schema v99" in t]
    assert "newer than this hermes-agent's v22" in note and "read and written in the columns both know" in note
