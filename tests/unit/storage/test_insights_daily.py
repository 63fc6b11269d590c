"""Per-day usage in `Insights.daily` and paging through sessions, over a real state.db."""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime

from hermes_agent.messages import Usage
from hermes_agent.storage import SessionStore


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


def test_daily_usage_sums_tokens_and_cost_per_start_day(tmp_path):
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        a = store.create_session("cli", "m1")
        store.add_usage(a.id, Usage(100, 10), 0.5, model="m1")
        store.add_usage(a.id, Usage(40, 4), 0.25, model="m2")
        b = store.create_session("telegram", "m1")
        store.add_usage(b.id, Usage(7, 3), 0.01, model="m1")
        old = store.create_session("cli", "m1")
        store.add_usage(old.id, Usage(1000, 100), 2.0, model="m1")
    two_days_ago = time.time() - 2 * 86400
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET started_at = ? WHERE id = ?", (two_days_ago, old.id))
        db.execute("DELETE FROM session_model_usage WHERE session_id = ?", (old.id,))  # counted from its row
    with SessionStore(path) as store:
        report = store.insights(30)
        only_cli = store.insights(30, "cli")
    assert [d.day for d in report.daily] == [_day(two_days_ago), _day(time.time())]
    old_day, today = report.daily
    assert (old_day.sessions, old_day.input_tokens, old_day.output_tokens, old_day.cost_usd) == (1, 1000, 100, 2.0)
    assert (today.sessions, today.input_tokens, today.output_tokens) == (2, 147, 17)
    assert abs(today.cost_usd - 0.76) < 1e-9
    assert only_cli.daily[-1].input_tokens == 140


def test_list_sessions_pages_with_offset_and_counts(tmp_path):
    with SessionStore(tmp_path / "state.db") as store:
        ids = [store.create_session("cli" if i % 2 else "cron").id for i in range(5)]
        first, second = store.list_sessions(3), store.list_sessions(3, offset=3)
        assert [s.id for s in first + second] == list(reversed(ids))
        assert store.count_sessions() == 5 and store.count_sessions("cli") == 2
        assert len(store.list_sessions(10, "cron", offset=1)) == 2
