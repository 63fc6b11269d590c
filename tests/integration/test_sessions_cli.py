"""Sessions through the real `hermes`: persisted as they happen, resumed exactly, killed runs lose nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from tests.helpers import HERMES, model_config, run_hermes


def _session_id(home) -> str:
    from hermes_agent.storage.store import SessionStore

    store = SessionStore(home / "state.db")
    try:
        return store.latest_session().id
    finally:
        store.close()


def test_resume_restores_the_conversation_exactly(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {"todos": [{"id": "1", "content": "x",
                                                                          "status": "pending"}]}}]},
                 {"content": "first answer"}, {"content": "second answer"}, {"content": "third"})
    assert run_hermes("chat", "-q", "first question", home=hermes_home).returncode == 0
    sid = _session_id(hermes_home)
    out = run_hermes("chat", "-q", "second question", "--resume", sid[:10], home=hermes_home)
    assert out.returncode == 0, out.stderr
    first_msgs, resumed = scripted.requests[1]["body"]["messages"], scripted.requests[2]["body"]["messages"]
    assert resumed[: len(first_msgs)] == first_msgs  # byte-identical history incl. the system prompt
    assert [m["role"] for m in resumed[len(first_msgs):]] == ["assistant", "user"]
    assert run_hermes("chat", "-q", "third question", "--continue", home=hermes_home).returncode == 0
    assert scripted.requests[3]["body"]["messages"][-1]["content"] == "third question"
    assert len(scripted.requests[3]["body"]["messages"]) == len(resumed) + 2
    show = run_hermes("sessions", "show", sid, home=hermes_home)
    assert show.returncode == 0 and "second question" in show.stdout and "third question" in show.stdout


def test_a_run_killed_mid_loop_keeps_every_completed_message(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url, "sandbox:\n  shared_tmp: true\n")  # the marker is in the host's /tmp
    marker = tmp_path / "started"
    scripted.add({"content": "working on it", "tool_calls": [{"name": "terminal", "arguments": {"command": "echo step-one"}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": f"touch {marker}; sleep 60"}}]})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env["HERMES_HOME"] = str(hermes_home)
    proc = subprocess.Popen([HERMES, "chat", "-q", "do the long task", "--yolo"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the second tool call never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    show = run_hermes("sessions", "export", _session_id(hermes_home), "--format", "jsonl", home=hermes_home)
    assert show.returncode == 0, show.stderr
    rows = [json.loads(line) for line in show.stdout.splitlines() if line.strip()]
    text = json.dumps(rows)
    for expected in ("do the long task", "working on it", "step-one", "sleep 60"):
        assert expected in text, f"{expected!r} lost after SIGKILL"


def test_session_search_tool_finds_an_earlier_session(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "The deploy key lives in vault path kv/prod/zebra."},
                 {"tool_calls": [{"name": "session_search", "arguments": {"query": "zebra"}}]}, {"content": "found it"})
    assert run_hermes("chat", "-q", "where is the deploy key?", home=hermes_home).returncode == 0
    assert run_hermes("chat", "-q", "remind me about the deploy key", home=hermes_home).returncode == 0
    result = scripted.requests[2]["body"]["messages"][-1]
    assert result["role"] == "tool" and "deploy key lives in vault path kv/prod/" in result["content"]


def test_usage_and_cost_are_recorded(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "hi", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}})
    assert run_hermes("chat", "-q", "hi", home=hermes_home).returncode == 0
    stats = run_hermes("sessions", "stats", home=hermes_home)
    assert stats.returncode == 0 and ("1,200" in stats.stdout or "1200" in stats.stdout), stats.stdout


def test_undone_turns_do_not_come_back_on_continue(scripted, hermes_home):
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.config.loader import load_settings

    model_config(hermes_home, scripted.url)
    scripted.add({"content": "kept answer"}, {"content": "undone answer"}, {"content": "continued"})
    agent = build_agent(load_settings())
    agent.run_turn("keep this")
    agent.run_turn("undo this")
    agent.rewind(next(i for i, m in enumerate(agent.history) if m.content == "undo this"))
    agent.close()
    out = run_hermes("chat", "-q", "next", "--continue", home=hermes_home)
    assert out.returncode == 0, out.stderr
    contents = [m["content"] for m in scripted.requests[-1]["body"]["messages"]]
    assert "keep this" in contents and "kept answer" in contents
    assert "undo this" not in contents and "undone answer" not in contents


def test_titles_come_from_the_first_message_and_llm_titles_only_when_asked(scripted, hermes_home):
    from hermes_agent.storage.store import SessionStore

    model_config(hermes_home, scripted.url)
    scripted.add({"content": "Paris."})
    assert run_hermes("chat", "-q", "What is the capital of France?", home=hermes_home).returncode == 0
    assert len(scripted.requests) == 1  # no hidden model call for a title
    scripted.add({"content": "Berlin."}, {"content": "German capital question"})
    out = run_hermes("chat", "-q", "And of Germany?", "-C", "sessions.title_mode=llm", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert "And of Germany?" in scripted.requests[-1]["body"]["messages"][0]["content"]
    store = SessionStore(hermes_home / "state.db")
    titles = {s.title for s in store.list_sessions(10)}
    store.close()
    assert titles == {"What is the capital of France?", "German capital question"}


def test_archived_sessions_are_not_listed_but_still_exported_and_shown(scripted, hermes_home):
    import sqlite3

    model_config(hermes_home, scripted.url)
    scripted.add({"content": "kept answer"}, {"content": "archived answer"})
    assert run_hermes("chat", "-q", "keep this one", home=hermes_home).returncode == 0
    kept = _session_id(hermes_home)
    assert run_hermes("chat", "-q", "archive this one", home=hermes_home).returncode == 0
    gone = _session_id(hermes_home)
    with sqlite3.connect(hermes_home / "state.db") as db:  # what Hermes's `sessions archive` sets
        db.execute("UPDATE sessions SET archived = 1 WHERE id = ?", (gone,))
    listing = run_hermes("sessions", "list", home=hermes_home).stdout
    assert kept in listing and gone not in listing, listing
    scripted.add({"content": "continued"})
    assert run_hermes("chat", "-q", "go on", "--continue", home=hermes_home).returncode == 0
    assert "keep this one" in json.dumps(scripted.requests[-1]["body"]["messages"])  # the latest listed one
    exported = run_hermes("sessions", "export", "-", home=hermes_home).stdout
    assert gone in exported and kept in exported
    assert "archive this one" in run_hermes("sessions", "show", gone, home=hermes_home).stdout
