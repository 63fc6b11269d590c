"""A home that stays small, through the real `hermes`: tool outputs stored capped (whole in a file only when
asked), retention by age and by size with the freed pages given back, size by kind, a doctor warning."""

from __future__ import annotations

import sqlite3
import time

from hermes_agent.messages import Message
from hermes_agent.storage.store import SessionStore
from tests.helpers import model_config, run_hermes

BIG = "python3 -c \"print(('y' * 99 + chr(10)) * 400)\""


def _tool_rows(home) -> list[str]:  # noqa: ANN001
    with sqlite3.connect(home / "state.db") as c:
        return [r[0] for r in c.execute("SELECT content FROM messages WHERE role = 'tool'")]


def test_a_big_tool_output_is_stored_capped_and_kept_whole_only_when_asked(scripted, hermes_home, tmp_path):
    for keep in (False, True):
        model_config(hermes_home, scripted.url,
                     f"sessions:\n  tool_output_max_chars: 4000\n  keep_full_tool_output: {str(keep).lower()}\n")
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": BIG}}]}, {"content": "done"})
        out = run_hermes("chat", "-q", "print a lot", "--yolo", home=hermes_home, cwd=str(tmp_path))
        assert out.returncode == 0 and out.stdout == "done\n", out.stderr
        seen = scripted.requests[-1]["body"]["messages"][-1]["content"]
        assert seen.count("y") >= 39000  # the model saw the whole output; only the stored copy is capped
        stored = _tool_rows(hermes_home)[-1]
        assert len(stored) < 4300 and "chars not stored" in stored
        full = list((hermes_home / "sessions" / "tool_outputs").glob("*.txt"))
        assert ("full text in" in stored) is keep and bool(full) is keep
        if keep:
            assert full[0].read_text().count("y") >= 39000 and str(full[0]) in stored


def _fill(home, n: int, age_days: float, chars: int) -> list[str]:  # noqa: ANN001
    ids = []
    with SessionStore(home / "state.db") as store:
        store.retention = None  # write them whole, as an older version did
        for i in range(n):
            sid = store.create_session("cli").id
            store.append_messages(sid, [Message(role="user", content=f"question {i} about whales"),
                                        Message(role="tool", content="z" * chars, tool_call_id="c", name="t")],
                                  timestamp=time.time() - age_days * 86400)
            store.end_session(sid)
            ids.append(sid)
    with sqlite3.connect(home / "state.db") as c:
        c.executemany("UPDATE sessions SET last_active_at = ? WHERE id = ?",
                      [(time.time() - age_days * 86400, s) for s in ids])
    return ids


def test_retention_by_age_and_size_shrinks_the_file_and_doctor_warns_first(hermes_home):
    old = _fill(hermes_home, 40, 120, 50_000)
    recent = _fill(hermes_home, 40, 1, 50_000)
    (hermes_home / "config.yaml").write_text("sessions:\n  max_db_mb: 1\n")
    doc = run_hermes("doctor", "--offline", home=hermes_home)
    assert "state.db is" in doc.stdout and "sessions.max_db_mb" in doc.stdout
    stats = run_hermes("sessions", "stats", home=hermes_home)
    assert stats.returncode == 0 and "Size by kind: tool outputs 4.0 MB" in stats.stdout, stats.stdout
    size_before = (hermes_home / "state.db").stat().st_size
    out = run_hermes("sessions", "prune", "--yes", home=hermes_home)
    assert out.returncode == 0 and "Deleted" in out.stdout, out.stderr
    with SessionStore(hermes_home / "state.db") as store:
        left = {s.id for s in store.list_sessions(limit=1000)}
    assert not left & set(old)  # older than 90 days: gone
    assert 0 < len(left) < len(recent) and left <= set(recent)  # then the oldest recent ones, down to 1 MB
    assert (hermes_home / "state.db").stat().st_size < size_before / 2  # pages given back to the OS
    assert (hermes_home / "state.db").stat().st_size <= 1.3 * 1024 * 1024


def test_auto_prune_runs_in_the_background_of_a_chat(scripted, hermes_home):
    old = _fill(hermes_home, 30, 200, 1000)
    model_config(hermes_home, scripted.url, "sessions:\n  auto_prune_delay: 0\n")
    scripted.add({"content": "hi", "delay": 1.0})
    out = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert out.returncode == 0 and out.stdout == "hi\n", out.stderr
    with SessionStore(hermes_home / "state.db") as store:
        left = {s.id for s in store.list_sessions(limit=1000)}
    assert not left & set(old) and len(left) == 1
    assert (hermes_home / "sessions" / ".last_auto_prune").exists()


def _a2a_tasks(home, per_owner: dict[str, int]) -> None:  # noqa: ANN001
    from hermes_agent.storage.a2a_tasks import A2aTaskFile

    rows = A2aTaskFile(home / "api_server" / "a2a_tasks.db")
    now = time.time_ns()
    for owner, n in per_owner.items():
        for i in range(n):
            rows.save(owner, f"{owner}-{i}", "ctx", 3, now - i, "1", b"x" * 100_000)
    rows.close()


def test_doctor_warns_when_the_a2a_tasks_file_is_big_with_its_size_and_the_key_to_change(hermes_home):
    (hermes_home / "api_server").mkdir()
    _a2a_tasks(hermes_home, {"api:alice": 2, "api:ci-bot": 10})  # 1.2 MB
    (hermes_home / "config.yaml").write_text("sessions:\n  a2a_tasks_max_mb: 2\n")
    quiet = run_hermes("doctor", "--offline", home=hermes_home)
    assert "A2A tasks file" not in quiet.stdout  # 60% of the limit: nothing to say

    (hermes_home / "config.yaml").write_text("sessions:\n  a2a_tasks_max_mb: 1.2\n")
    doc = run_hermes("doctor", "--offline", home=hermes_home)
    line = next(ln for ln in doc.stdout.splitlines() if "A2A tasks file" in ln)
    assert "a2a_tasks.db is 1 MB (limit sessions.a2a_tasks_max_mb: 1.2)" in line, line
    assert "the biggest caller is api:ci-bot with 1 MB" in line and "sessions.a2a_tasks_by_caller.ci-bot.max_mb" in line

    (hermes_home / "config.yaml").write_text("sessions:\n  auto_prune: false\n")
    _a2a_tasks(hermes_home, {"": 1100})  # 105 MiB more, and nothing prunes the file
    doc = run_hermes("doctor", "--offline", home=hermes_home)
    line = next(ln for ln in doc.stdout.splitlines() if "A2A tasks file" in ln)
    assert "nothing prunes it (sessions.auto_prune is off): set sessions.a2a_tasks_max_mb" in line, line
    assert "a2a_tasks.db is 10" in line  # ~106 MiB
