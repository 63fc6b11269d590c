"""Aggregate figures over the session store (tokens, cost, counts by source and model)."""

from __future__ import annotations

import sqlite3

from hermes_agent.storage.summaries import Stats


def collect(conn: sqlite3.Connection) -> Stats:
    """Totals over all sessions; db_bytes is filled in by the caller, who knows the file."""
    row = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(message_count), 0), COALESCE(SUM(tool_call_count), 0), "
        "COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cache_read_tokens), 0), "
        "COALESCE(SUM(cache_write_tokens), 0), SUM(estimated_cost_usd), MIN(started_at), MAX(last_active_at) "
        "FROM sessions").fetchone()
    by_source = conn.execute(
        "SELECT source, COUNT(*), COALESCE(SUM(message_count), 0) FROM sessions "
        "GROUP BY source ORDER BY COUNT(*) DESC, source").fetchall()
    by_model = conn.execute(
        "SELECT COALESCE(model, '(unknown)'), COUNT(*), COALESCE(SUM(input_tokens), 0), "
        "COALESCE(SUM(output_tokens), 0), SUM(estimated_cost_usd) FROM sessions "
        "GROUP BY 1 ORDER BY SUM(input_tokens) + SUM(output_tokens) DESC, 1").fetchall()
    return Stats(
        sessions=row[0], messages=row[1], tool_calls=row[2], input_tokens=row[3], output_tokens=row[4],
        cache_read_tokens=row[5], cache_write_tokens=row[6], cost_usd=row[7], first_at=row[8], last_at=row[9],
        db_bytes=0,
        by_source=tuple((r[0], r[1], r[2]) for r in by_source),
        by_model=tuple((r[0], r[1], r[2], r[3], r[4]) for r in by_model),
    )
