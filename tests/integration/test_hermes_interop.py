"""One ~/.hermes shared with the released Hermes (hermes-agent 0.19.0 from PyPI, in its own venv).

The released Hermes writes a home (sessions with a tool call) against the scripted model; ours lists,
searches, shows and continues those sessions; Hermes then lists and continues what ours wrote. And a
state.db that ours creates is read and continued by Hermes. Hermes's files stay as they were except
for the rows each user action added.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from hermes_agent.storage.layout import table
from tests.helpers import other_hermes_skip, run_hermes

HERMES_REF = os.environ.get("HERMES_REF_BIN") or "/work/hermes-ref/bin/hermes"
pytestmark = [pytest.mark.skipif(
    bool(other_hermes_skip(HERMES_REF)),
    reason=f"the released Hermes: {other_hermes_skip(HERMES_REF)}; .ci/install-hermes-ref.sh installs it"),
    pytest.mark.xdist_group("hermes_interop")]  # the module's home built by the released Hermes, built once

HERMES_SESSION_COLUMNS = [c for c, _ in table("sessions")]
HERMES_MESSAGE_COLUMNS = [c for c, _ in table("messages")]
COUNTERS = {"message_count", "tool_call_count", "api_call_count", "input_tokens", "output_tokens",
            "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "ended_at", "end_reason",
            "estimated_cost_usd", "actual_cost_usd", "cost_status", "cost_source"}


def hermes(*args: str, home: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run the released Hermes with HERMES_HOME=home (and a private HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), HOME=str(home.parent / "user-home"), NO_COLOR="1")
    (home.parent / "user-home").mkdir(exist_ok=True)
    return subprocess.run([HERMES_REF, *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(home.parent))


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    return proc.stdout


def write_config(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: test-key\n"
        "auxiliary:\n  title_generation:\n    enabled: false\n", encoding="utf-8")


def rows(db: Path, tbl: str, cols: list[str]) -> dict:
    with sqlite3.connect(db) as c:
        return {r[0]: r for r in c.execute(f"SELECT {', '.join(cols)} FROM {tbl} ORDER BY 1")}


def file_hashes(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in home.rglob("*") if p.is_file() and not p.name.startswith("state.db")}


def sent_texts(server: ScriptedServer) -> str:
    """Everything the last chat request carried, as one string."""
    return repr(server.requests[-1]["body"]["messages"])


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(default={"content": "ok"}) as s:
        yield s


@pytest.fixture(scope="module")
def hermes_built(server, tmp_path_factory) -> Path:
    """A home the released Hermes wrote: one session, two turns, a terminal tool call."""
    home = tmp_path_factory.mktemp("by-hermes") / "home"
    write_config(home, server.url)
    server.add({"content": "Pineapples are tropical."})
    ok(hermes("chat", "-q", "hello pineapple", home=home))
    server.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo kumquat-42"}}]},
               {"content": "The command printed kumquat-42."})
    ok(hermes("chat", "--continue", "-q", "run echo kumquat", "--yolo", home=home))
    return home


def test_ours_uses_a_home_hermes_wrote_and_hermes_keeps_using_it(hermes_built, server, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(hermes_built, home)
    db = home / "state.db"
    files_before = file_hashes(home)
    sessions_before = rows(db, "sessions", HERMES_SESSION_COLUMNS)
    messages_before = rows(db, "messages", HERMES_MESSAGE_COLUMNS)
    (sid,) = sessions_before

    listed = run_hermes("sessions", "list", home=home)
    assert listed.returncode == 0 and sid in listed.stdout, listed.stderr
    found = run_hermes("sessions", "search", "kumquat", home=home)
    assert sid in found.stdout and "**kumquat**-42" in found.stdout
    shown = run_hermes("sessions", "show", sid, home=home).stdout
    assert "hello pineapple" in shown and 'terminal({"command": "echo kumquat-42"})' in shown
    assert "kumquat-42" in shown.split("tool terminal", 1)[1]

    server.add({"content": "It printed kumquat-42, as before."})
    cont = run_hermes("chat", "--continue", "-q", "what did it print?", home=home)
    assert cont.returncode == 0 and "It printed kumquat-42, as before." in cont.stdout, cont.stderr
    assert "hello pineapple" in sent_texts(server) and "call_" in sent_texts(server)  # Hermes's turns replayed

    # Hermes's rows are as they were; only the continued session's counters moved; its files are untouched.
    after = rows(db, "messages", HERMES_MESSAGE_COLUMNS)
    assert {k: after[k] for k in messages_before} == messages_before and len(after) == len(messages_before) + 2
    old, new = sessions_before[sid], rows(db, "sessions", HERMES_SESSION_COLUMNS)[sid]
    changed = {c for c, a, b in zip(HERMES_SESSION_COLUMNS, old, new, strict=True) if a != b}
    assert changed <= COUNTERS, changed
    assert {k: v for k, v in file_hashes(home).items() if k in files_before} == files_before

    # Hermes again: lists the session and continues it, with our turn in the history it sends.
    assert sid in ok(hermes("sessions", "list", home=home))
    server.add({"content": "Hermes here again."})
    assert "Hermes here again." in ok(hermes("chat", "--continue", "-q", "and now?", home=home))
    assert "what did it print?" in sent_texts(server) and "It printed kumquat-42, as before." in sent_texts(server)

    # A new session ours starts is listed by Hermes next to its own.
    server.add({"content": "A fresh start."})
    assert run_hermes("chat", "-q", "brand new topic", home=home).returncode == 0
    listing = ok(hermes("sessions", "list", home=home))
    assert "brand new topic" in listing and sid in listing


def test_a_state_db_ours_creates_is_read_and_continued_by_hermes(server, tmp_path):
    home = tmp_path / "home"
    write_config(home, server.url)
    server.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo durian-7"}}]},
               {"content": "It printed durian-7."})
    first = run_hermes("chat", "-q", "run echo durian", "--yolo", home=home)
    assert first.returncode == 0 and "It printed durian-7." in first.stdout, first.stderr
    sid = run_hermes("sessions", "list", home=home).stdout.splitlines()[1].split()[0]

    listing = ok(hermes("sessions", "list", home=home))
    assert sid in listing and "run echo durian" in listing
    server.add({"content": "Summary: durian-7."})
    assert "Summary: durian-7." in ok(hermes("chat", "--continue", "-q", "summarise", home=home))
    sent = sent_texts(server)
    assert "run echo durian" in sent and "durian-7" in sent and "'tool_calls'" in sent  # our tool call replayed

    shown = run_hermes("sessions", "show", sid, home=home).stdout
    assert "summarise" in shown and "Summary: durian-7." in shown
    doctor = run_hermes("doctor", "--offline", home=home).stdout
    assert "schema v22, shared with Hermes" in doctor and "search indexes match the stored messages" in doctor


def _av(db: Path) -> tuple[int, int, str]:
    """(auto_vacuum mode, free pages, integrity); the search index's own check raises when inconsistent."""
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        return (c.execute("PRAGMA auto_vacuum").fetchone()[0], c.execute("PRAGMA freelist_count").fetchone()[0],
                c.execute("PRAGMA integrity_check").fetchone()[0])


def _aged_home(home: Path) -> str:
    """A home ours wrote months ago: 30 ended sessions 120 days old (past retention) and 20 with big tool outputs
    10 days old (shrunk by a prune), the newest mentioning a wombat."""
    from hermes_agent.messages import Message, ToolCall
    from hermes_agent.storage.store import SessionStore

    now = time.time()
    with SessionStore(home / "state.db") as store:
        for i in range(50):
            age = 120 if i < 30 else 10
            sid = store.create_session("cli").id
            call = ToolCall(f"call_{i}", "terminal", '{"command": "cat big.log"}')
            store.append_messages(sid, [Message("user", f"question {i} about the wombat" if i == 49 else f"q{i}"),
                                        Message("assistant", "", tool_calls=(call,)),
                                        Message("tool", f"START{i} " + "w" * 12_000 + " END", tool_call_id=call.id,
                                                name="terminal"),
                                        Message("assistant", f"answer {i}")], timestamp=now - age * 86400)
            store.end_session(sid)
    with sqlite3.connect(home / "state.db") as c:
        c.execute("UPDATE sessions SET last_active_at = (SELECT MAX(timestamp) FROM messages WHERE session_id = sessions.id)")
    return sid


def test_a_file_ours_shrinks_online_is_used_and_optimized_by_hermes(server, tmp_path):
    home = tmp_path / "home"
    write_config(home, server.url)
    sid = _aged_home(home)
    db = home / "state.db"
    before = db.stat().st_size
    pruned = run_hermes("sessions", "prune", "-y", home=home)
    assert pruned.returncode == 0 and "Deleted 30 sessions" in pruned.stdout, pruned.stdout + pruned.stderr
    assert "20 old tool outputs shrunk" in pruned.stdout
    assert _av(db) == (2, 0, "ok") and db.stat().st_size < before / 2  # pages given back online, none left free

    assert sid in ok(hermes("sessions", "list", home=home))
    server.add({"content": "Wombats are marsupials."})
    assert "Wombats are marsupials." in ok(hermes("chat", "--resume", sid, "-q", "more wombat", home=home))
    assert "question 49 about the wombat" in sent_texts(server) and "START49" in sent_texts(server)
    assert "Optimized" in ok(hermes("sessions", "optimize", home=home))
    assert _av(db) == (2, 0, "ok")  # Hermes's VACUUM keeps the mode

    found = run_hermes("sessions", "search", "wombat", home=home).stdout
    assert "question 49 about the **wombat**" in found and "more **wombat**" in found
    shown = run_hermes("sessions", "show", sid, "--full", home=home).stdout
    assert "START49" in shown and "chars not stored" in shown and "Wombats are marsupials." in shown


def test_optimize_storage_makes_a_file_hermes_created_give_pages_back_and_hermes_keeps_it(hermes_built, server,
                                                                                        tmp_path):
    home = tmp_path / "home"
    shutil.copytree(hermes_built, home)
    db = home / "state.db"
    assert _av(db)[0] == 0  # Hermes creates its file without auto_vacuum
    out = run_hermes("sessions", "optimize-storage", home=home)
    assert out.returncode == 0 and "file rewritten compactly" in out.stdout, out.stderr
    assert _av(db) == (2, 0, "ok")
    server.add({"content": "Still tropical."})
    assert "Still tropical." in ok(hermes("chat", "--continue", "-q", "pineapple again?", home=home))
    assert "Optimized" in ok(hermes("sessions", "optimize", home=home))
    assert _av(db) == (2, 0, "ok")
    found = run_hermes("sessions", "search", "pineapple", home=home).stdout
    assert "hello **pineapple**" in found and "**pineapple** again?" in found
