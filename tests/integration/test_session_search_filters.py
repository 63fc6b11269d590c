"""`hermes sessions search` with a source or a date filter on a home with a busy session, many sessions of one
source and few of another: the newest matches passing the filter are ranked a window at a time (one busy session
filling the first window still leaves room for the others), a source with many sessions is checked per hit and one
with few through its list of sessions, and each filter gives exactly the sessions it names."""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import datetime, timedelta

import pytest

from hermes_agent.messages import Message
from hermes_agent.storage.store import SessionStore
from tests.helpers import run_hermes

DAY = 86400.0


def _session(store: SessionStore, source: str, texts: list[str], when: float) -> str:
    sid = store.create_session(source).id
    store.append_messages(sid, [Message(role="user", content=t) for t in texts], timestamp=when)
    store.end_session(sid)
    return sid


def _found(out: str) -> list[str]:
    return re.findall(r"^(\S+)  ", out, flags=re.MULTILINE)


def _time_index(home) -> bool:  # noqa: ANN001
    with sqlite3.connect(home / "state.db") as c:
        return c.execute("SELECT 1 FROM sqlite_master WHERE name = 'hermes_agent_idx_messages_time'").fetchone() is not None


@pytest.mark.parametrize("indexed", [True, False], ids=["time-index", "no-time-index-yet"])
def test_filtered_search_finds_the_sessions_the_filter_names_past_a_busy_one(hermes_home, indexed):
    now = time.time()
    with SessionStore(hermes_home / "state.db") as store:
        old_cli = [_session(store, "cli", [f"walrus tusk {i}"], now - 20 * DAY + i) for i in range(6)]
        chats = [_session(store, "telegram", [f"walrus in chat {i}"], now - 15 * DAY + i) for i in range(3)]
        quiet = [_session(store, "cli", [f"nothing here {i}"], now - 5 * DAY) for i in range(240)]  # cli: many
        recent = [_session(store, "cli", [f"walrus again {i}"], now - 2 * DAY + i) for i in range(5)]
        busy = _session(store, "cli", [f"walrus note {i}" for i in range(400)], now - DAY)  # fills a window alone
    assert len(quiet) == 240 and _time_index(hermes_home)
    if not indexed:  # a big file before its background prune made the index: the same answers, by a longer scan
        with sqlite3.connect(hermes_home / "state.db") as c:
            c.execute("DROP INDEX hermes_agent_idx_messages_time")

    by_cli = run_hermes("sessions", "search", "walrus", "--source", "cli", "--limit", "20", home=hermes_home)
    assert by_cli.returncode == 0, by_cli.stderr
    assert set(_found(by_cli.stdout)) == {busy, *recent, *old_cli}
    by_chat = run_hermes("sessions", "search", "walrus", "--source", "telegram", home=hermes_home)
    assert set(_found(by_chat.stdout)) == set(chats)

    since = (datetime.fromtimestamp(now) - timedelta(days=3)).strftime("%Y-%m-%d")
    lately = run_hermes("sessions", "search", "walrus", "--since", since, "--limit", "20", home=hermes_home)
    assert set(_found(lately.stdout)) == {busy, *recent}
    until = (datetime.fromtimestamp(now) - timedelta(days=10)).strftime("%Y-%m-%d")
    earlier = run_hermes("sessions", "search", "walrus", "--until", until, "--limit", "20", home=hermes_home)
    assert set(_found(earlier.stdout)) == {*old_cli, *chats}
    few = run_hermes("sessions", "search", "walrus", "--source", "cli", "--limit", "3", home=hermes_home)
    assert len(_found(few.stdout)) == 3 and _found(few.stdout)[0] in {busy, *recent}
    none = run_hermes("sessions", "search", "walrus", "--since", "2000-01-01", "--until", "2000-01-02", home=hermes_home)
    assert none.returncode == 0 and "No sessions match 'walrus'." in none.stdout
    if not indexed:
        assert run_hermes("sessions", "optimize-storage", home=hermes_home).returncode == 0
        assert _time_index(hermes_home)
