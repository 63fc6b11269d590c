"""storage/people.py: tool calls attributed to people in state.db, read back per person."""

from __future__ import annotations

import sqlite3

from hermes_agent.storage.people import Attribution, by_person
from hermes_agent.storage.store import SessionStore


def test_records_and_sums_per_person(tmp_path):
    db = tmp_path / "state.db"
    SessionStore(db).close()  # a real state.db first: the table is added beside Hermes's own
    book = Attribution(db)
    for sid, who, role, tool in (("s1", "telegram:2", "member", "terminal"), ("s1", "telegram:2", "member", "todo"),
                                 ("s2", "telegram:2", "member", "terminal"), ("s3", "api:alice", "guest", "web_search")):
        book.record(sid, who, role, tool)
    book.close()
    got = by_person(db)
    assert got["telegram:2"]["tool_calls"] == 3 and sorted(got["telegram:2"]["sessions"]) == ["s1", "s2"]
    assert got["api:alice"] == {**got["api:alice"], "role": "guest", "tool_calls": 1, "sessions": ["s3"]}
    tables = {r[0] for r in sqlite3.connect(db).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "hermes_agent_tool_people"} <= tables


def test_never_breaks_a_tool_call(tmp_path):
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    Attribution(bad).record("s", "telegram:1", "owner", "terminal")  # logged, not raised
    assert by_person(tmp_path / "missing.db") == {} and by_person(bad) == {}
