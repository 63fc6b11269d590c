"""The spend ledger behind spending caps (budget.*): one row per model call, and the sums caps are checked
against. SQL over a connection the SessionStore hands in; no policy here."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from hermes_agent.storage.layout import SPEND


@dataclass(frozen=True, slots=True)
class SpendRow:
    """One model call: who caused it, in which session, for what (main, an auxiliary task, a subagent)."""

    session_id: str
    who: str
    model: str
    task: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: the model has no price (tokens only)


@dataclass(frozen=True, slots=True)
class Spent:
    """USD and tokens spent in one window."""

    usd: float = 0.0
    tokens: int = 0
    unpriced_calls: int = 0


def add(c: sqlite3.Connection, row: SpendRow, ts: float | None = None) -> None:
    c.execute(f"INSERT INTO {SPEND} (ts, session_id, who, model, task, input_tokens, output_tokens, cost_usd, "
              "priced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (time.time() if ts is None else ts, row.session_id, row.who, row.model, row.task, row.input_tokens,
               row.output_tokens, row.cost_usd, int(row.cost_usd is not None)))


def _sum(c: sqlite3.Connection, where: str, args: tuple) -> Spent:
    r = c.execute(f"SELECT COALESCE(SUM(cost_usd), 0), COALESCE(SUM(input_tokens + output_tokens), 0), "
                  f"COALESCE(SUM(1 - priced), 0) FROM {SPEND} WHERE {where}", args).fetchone()
    return Spent(float(r[0]), int(r[1]), int(r[2]))


def session_spent(c: sqlite3.Connection, session_id: str) -> Spent:
    """Everything one session's work cost (its auxiliary calls and subagents included)."""
    return _sum(c, "session_id = ?", (session_id,))


def spent_since(c: sqlite3.Connection, who: str, since: float) -> Spent:
    """What one person (or cron, or batch) spent since a time (the start of the day or month)."""
    return _sum(c, "who = ? AND ts >= ?", (who, since))


def spenders(c: sqlite3.Connection, since: float) -> list[str]:
    """Everyone (owner "", platform:user, cron, batch) with spend since a time, most recent first."""
    rows = c.execute(f"SELECT who FROM {SPEND} WHERE ts >= ? GROUP BY who ORDER BY MAX(ts) DESC", (since,))
    return [r[0] for r in rows]


def latest_session(c: sqlite3.Connection, who: str) -> str | None:
    """The session `who` spent in last (what a session cap is shown against)."""
    row = c.execute(f"SELECT session_id FROM {SPEND} WHERE who = ? AND session_id != '' ORDER BY id DESC LIMIT 1",
                    (who,)).fetchone()
    return row[0] if row else None
