"""`hermes insights`: usage analytics over state.db, from sessions this hermes (or Hermes) wrote."""

from __future__ import annotations

import sqlite3
import time

from tests.helpers import model_config, run_hermes


def test_insights_reports_sessions_tools_tokens_by_model_and_activity(scripted, hermes_home, tmp_path):
    empty = run_hermes("insights", home=hermes_home)
    assert empty.returncode == 0 and empty.stdout.strip() == "No sessions found in the last 30 days."
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}},
                                 {"name": "todo", "arguments": {"todos": [{"id": "1", "content": "x",
                                                                           "status": "pending"}]}}],
                  "usage": {"prompt_tokens": 100, "completion_tokens": 20}},
                 {"content": "done", "usage": {"prompt_tokens": 150, "completion_tokens": 30}},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "true"}}],
                  "usage": {"prompt_tokens": 50, "completion_tokens": 5}},
                 {"content": "ok", "usage": {"prompt_tokens": 60, "completion_tokens": 6}})
    for q in ("first task", "second task"):
        out = run_hermes("chat", "-q", q, home=hermes_home, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
    with sqlite3.connect(hermes_home / "state.db") as db:  # a month-old session stays out of a 7-day window
        db.execute("UPDATE sessions SET started_at = ? WHERE title = 'second task'", (time.time() - 40 * 86400,))
    report = run_hermes("insights", "--days", "60", home=hermes_home)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    assert "  Hermes Insights — Last 60 days" in lines
    assert any(ln.split()[:2] == ["Sessions:", "2"] and "Messages:" in ln for ln in lines), report.stdout
    assert any(ln.split()[:3] == ["Tool", "calls:", "3"] for ln in lines), report.stdout
    assert any(ln.split()[:3] == ["Input", "tokens:", "360"] and ln.split()[-1] == "61" for ln in lines)
    model = next(ln for ln in lines if ln.strip().startswith("scripted-model"))
    assert model.split()[1:3] == ["2", "421"]
    assert [ln.split()[:2] for ln in lines if ln.strip().startswith(("terminal ", "todo "))] == \
        [["terminal", "2"], ["todo", "1"]]
    assert any(ln.startswith("  Active days: 2") for ln in lines)
    week = run_hermes("insights", "--days", "7", home=hermes_home)
    assert any(ln.split()[:2] == ["Sessions:", "1"] for ln in week.stdout.splitlines()), week.stdout
    other = run_hermes("insights", "--source", "telegram", home=hermes_home)
    assert other.stdout.strip() == "No sessions found in the last 30 days (source: telegram)."
