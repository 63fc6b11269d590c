"""The online search-index rebuild leaves a later Hermes's own rebuild markers to it."""

from __future__ import annotations

import sqlite3

from hermes_agent import paths
from hermes_agent.messages import Message
from hermes_agent.storage import SessionStore


def test_a_newer_hermes_files_rebuild_markers_are_not_ours(hermes_home):
    with SessionStore() as store:
        store.append_message(store.create_session().id, Message("user", "kept as it is"))
    with sqlite3.connect(paths.state_db_path()) as c:
        c.execute("UPDATE schema_version SET version = 31")
        c.executemany("INSERT INTO state_meta (key, value) VALUES (?, ?)",
                      [("fts_rebuild_high_water", "1"), ("fts_rebuild_progress", "0")])
    with SessionStore() as store:
        assert store.search_index_pending() is None
        assert store.rebuild_search_index() is True
    with sqlite3.connect(paths.state_db_path()) as c:
        assert dict(c.execute("SELECT key, value FROM state_meta WHERE key LIKE 'fts_rebuild%'")) == {
            "fts_rebuild_high_water": "1", "fts_rebuild_progress": "0"}
