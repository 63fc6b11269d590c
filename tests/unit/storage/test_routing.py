"""Hermes's gateway routing index (state.db gateway_routing + sessions/sessions.json), read and written here."""

from __future__ import annotations

import json
import sqlite3

from hermes_agent.gateway.session import SessionMap
from hermes_agent.storage.routing import RoutingIndex


def _db(home):
    home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(home / "state.db")
    conn.execute("CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL, "
                 "entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, session_key))")
    return conn


def test_hermes_rows_win_and_our_writes_touch_one_key(tmp_path):
    home = tmp_path / "home"
    conn = _db(home)
    scope = str((home / "sessions").resolve())
    hermes_entry = {"session_key": "agent:main:telegram:dm:111", "session_id": "S-hermes", "suspended": False,
                    "created_at": "2026-11-01T10:00:00", "updated_at": "2026-11-01T10:00:00", "custom": 1}
    conn.execute("INSERT INTO gateway_routing VALUES (?,?,?,1)", (scope, hermes_entry["session_key"], json.dumps(hermes_entry)))
    conn.execute("INSERT INTO gateway_routing VALUES ('/elsewhere','agent:main:telegram:dm:111','{}',1)")
    conn.commit()
    (home / "sessions").mkdir()
    (home / "sessions" / "sessions.json").write_text(json.dumps({
        "_README": "x", "agent:main:telegram:dm:111": {**hermes_entry, "session_id": "S-stale"},
        "agent:main:telegram:dm:222": {**hermes_entry, "session_key": "agent:main:telegram:dm:222", "session_id": "S-2"}}))
    index = RoutingIndex(home)
    assert index.get("agent:main:telegram:dm:111") == "S-hermes"  # the table first, as Hermes reads
    assert index.get("agent:main:telegram:dm:222") == "S-2"  # then the mirror
    index.set("agent:main:telegram:dm:111", "S-hermes")  # unchanged: nothing rewritten
    assert json.loads((home / "sessions" / "sessions.json").read_text())["agent:main:telegram:dm:111"]["session_id"] == "S-stale"

    index.set("agent:main:telegram:dm:111", "S-ours", {"platform": "telegram", "chat_id": "111", "chat_type": "dm"})
    row = json.loads(conn.execute("SELECT entry_json FROM gateway_routing WHERE scope=? AND session_key=?",
                                  (scope, "agent:main:telegram:dm:111")).fetchone()[0])
    assert row["session_id"] == "S-ours" and row["custom"] == 1 and row["suspended"] is False
    assert conn.execute("SELECT entry_json FROM gateway_routing WHERE scope='/elsewhere'").fetchone()[0] == "{}"
    mirror = json.loads((home / "sessions" / "sessions.json").read_text())
    assert mirror["agent:main:telegram:dm:111"]["session_id"] == "S-ours" and mirror["agent:main:telegram:dm:222"]["session_id"] == "S-2"
    assert "_README" in mirror
    index.set("agent:main:telegram:dm:111", None)  # /new
    assert index.get("agent:main:telegram:dm:111") is None


def test_chats_remembered_by_earlier_versions_are_found(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    legacy = home / "gateway" / "sessions.json"
    legacy.parent.mkdir()
    legacy.write_text(json.dumps({"telegram:111": "S-old", "telegram:-100": "S-group"}))
    sessions = SessionMap(home, legacy=legacy)
    assert sessions.get("agent:main:telegram:dm:111") == "S-old"
    assert sessions.get("agent:main:telegram:group:-100:42") == "S-group"
    sessions.set("agent:main:telegram:dm:111", "S-new")  # no state.db yet: the mirror carries it
    assert sessions.get("agent:main:telegram:dm:111") == "S-new"


def test_many_chats_at_once_all_land_in_both_places_and_hermes_edits_are_seen(tmp_path):
    import os
    import threading

    home = tmp_path / "home"
    conn = _db(home)
    index = RoutingIndex(home)
    keys = [f"agent:main:telegram:dm:{n}" for n in range(60)]

    def point(chunk: list[str]) -> None:
        for key in chunk:
            index.set(key, f"S-{key.rsplit(':', 1)[1]}", {"platform": "telegram", "chat_type": "dm"}, wait=False)

    threads = [threading.Thread(target=point, args=(keys[i::6],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    index.settle()  # what a reply waits for: every change so far is in sessions.json
    mirror = json.loads((home / "sessions" / "sessions.json").read_text())
    assert {k: mirror[k]["session_id"] for k in keys} == {k: f"S-{k.rsplit(':', 1)[1]}" for k in keys}
    assert conn.execute("SELECT COUNT(*) FROM gateway_routing").fetchone()[0] == 60
    # Hermes rewrites the mirror (a chat only it knows): the next read sees it, and our next write keeps it
    mirror["agent:main:telegram:dm:hermes-only"] = {"session_id": "S-h", "session_key": "agent:main:telegram:dm:hermes-only"}
    path = home / "sessions" / "sessions.json"
    path.write_text(json.dumps(mirror))
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    assert index.get("agent:main:telegram:dm:hermes-only") == "S-h"
    index.set("agent:main:telegram:dm:999", "S-999")
    after = json.loads(path.read_text())
    assert after["agent:main:telegram:dm:hermes-only"]["session_id"] == "S-h" and "agent:main:telegram:dm:999" in after
    index.close()
    index.close()  # twice is fine
