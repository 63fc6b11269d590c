"""Real processes on one state.db: concurrent writers never see "database is locked"; SIGKILL loses nothing committed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

from hermes_agent import paths
from hermes_agent.messages import Message
from hermes_agent.storage import SessionStore
from hermes_agent.storage.migrations import MIGRATIONS

WRITER = textwrap.dedent("""
    import sys
    from hermes_agent.messages import Message, ToolCall
    from hermes_agent.storage import SessionStore
    tag, count = sys.argv[1], int(sys.argv[2])
    store = SessionStore()
    sid = store.create_session(source=tag).id
    print(sid, flush=True)
    sys.stdin.readline()  # start together
    for i in range(count):
        calls = (ToolCall(f"c{i}", "terminal", '{"command": "echo %d"}' % i),) if i % 5 == 0 else ()
        mid = store.append_message(sid, Message("assistant", f"{tag} message {i} 数据 {i}", calls))
        if tag == "killme":
            print(mid, flush=True)
    store.close()
    print("done", flush=True)
""")

OPENER = "from hermes_agent.storage import SessionStore\nSessionStore().close()\nprint('ok')\n"


def _spawn(*args: str, stdin=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", *args], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def test_two_writer_processes_at_once_lose_nothing(hermes_home):
    SessionStore().close()
    procs = [_spawn(WRITER, tag, "500", stdin=subprocess.PIPE) for tag in ("alpha", "beta")]
    sids = [p.stdout.readline().strip() for p in procs]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    with SessionStore() as reader:  # a third process-level reader while they write
        while any(p.poll() is None for p in procs):
            reader.search("message")
            time.sleep(0.01)
    results = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err and out.strip().endswith("done")
    with SessionStore() as store:
        for sid, tag in zip(sids, ("alpha", "beta"), strict=True):
            msgs = store.get_messages(sid)
            assert [m.content for m in msgs] == [f"{tag} message {i} 数据 {i}" for i in range(500)]
            info = store.require_session(sid)
            assert (info.message_count, info.tool_call_count) == (500, 100)
        assert len(store.search("alpha message", limit=10)) == 1
        assert {h.session.id for h in store.search("数据")} == set(sids)


def test_processes_creating_a_fresh_database_together(hermes_home):
    procs = [_spawn(OPENER) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "ok", err
    with sqlite3.connect(paths.state_db_path()) as c:
        assert c.execute("SELECT version FROM schema_version").fetchall() == [(22,)]  # one row, as Hermes has it
        ours = [v for (v,) in c.execute("SELECT version FROM hermes_agent_schema ORDER BY version")]
        assert ours == [m.version for m in MIGRATIONS]  # each applied once, whoever won the race


def test_sigkill_mid_loop_keeps_every_committed_message(hermes_home):
    proc = _spawn(WRITER, "killme", "1000000", stdin=subprocess.PIPE)
    sid = proc.stdout.readline().strip()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    acknowledged = []
    while len(acknowledged) < 300:
        acknowledged.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with SessionStore() as store:
        records = store.get_records(sid)
        ids = [r.id for r in records]
        assert set(acknowledged) <= set(ids)
        assert [r.message.content for r in records] == [f"killme message {i} 数据 {i}" for i in range(len(records))]
        assert store.require_session(sid).message_count == len(records)
        store.append_message(sid, Message("user", "still writable after the crash"))
        assert store.search("writable")[0].session.id == sid
    with sqlite3.connect(paths.state_db_path()) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        c.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
