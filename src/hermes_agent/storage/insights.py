"""Usage analytics over state.db for `hermes insights` (Hermes's report): sessions, messages, tools, skills,
tokens and cost by model (from session_model_usage, falling back to a session's totals), activity by day."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hermes_agent.messages import safe_loads

_SESSION_COLS = ("id, source, model, started_at, ended_at, message_count, tool_call_count, "
                 "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost_usd")
_JOINED = "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE s.started_at >= ? AND (? IS NULL OR s.source = ?)"


@dataclass(frozen=True, slots=True)
class ModelUsage:
    model: str
    sessions: int
    input_tokens: int
    output_tokens: int
    cache_tokens: int
    api_calls: int
    cost_usd: float

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_tokens


@dataclass(frozen=True, slots=True)
class DayUsage:
    """Tokens and cost of the sessions started on one local day (YYYY-MM-DD)."""

    day: str
    sessions: int
    input_tokens: int
    output_tokens: int
    cache_tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class Insights:
    """Everything `hermes insights` prints for the window (empty when no session started in it)."""

    days: int
    source: str | None
    sessions: int = 0
    messages: int = 0
    user_messages: int = 0
    tool_calls: int = 0
    first_at: float | None = None
    last_at: float | None = None
    active_seconds: float = 0.0
    models: tuple[ModelUsage, ...] = ()
    platforms: tuple[tuple[str, int, int, int], ...] = ()  # source, sessions, messages, tokens
    tools: tuple[tuple[str, int], ...] = ()
    skills: tuple[tuple[str, int, int], ...] = ()  # name, loads, edits
    by_weekday: tuple[int, ...] = (0,) * 7
    by_hour: tuple[int, ...] = (0,) * 24
    per_day: tuple[tuple[str, int], ...] = ()  # YYYY-MM-DD, sessions
    daily: tuple[DayUsage, ...] = ()  # oldest first
    top: tuple[tuple[str, str, str], ...] = field(default=())  # label, value, session id

    @property
    def empty(self) -> bool:
        return self.sessions == 0

    @property
    def input_tokens(self) -> int:
        return sum(m.input_tokens for m in self.models)

    @property
    def output_tokens(self) -> int:
        return sum(m.output_tokens for m in self.models)

    @property
    def total_tokens(self) -> int:
        return sum(m.total_tokens for m in self.models)

    @property
    def cost_usd(self) -> float:
        return sum(m.cost_usd for m in self.models)

    @property
    def best_streak(self) -> int:
        days = sorted(datetime.strptime(d, "%Y-%m-%d") for d, _ in self.per_day)
        best = run = 1 if days else 0
        for a, b in zip(days, days[1:], strict=False):
            run = run + 1 if b - a == timedelta(days=1) else 1
            best = max(best, run)
        return best


def collect(conn: sqlite3.Connection, days: int = 30, source: str | None = None, now: float | None = None) -> Insights:
    """The report over sessions started in the last `days` days (only `source`'s when given)."""
    cutoff = (now or time.time()) - days * 86400
    rows = [dict(zip(_SESSION_COLS.split(", "), r, strict=True)) for r in conn.execute(
        f"SELECT {_SESSION_COLS} FROM sessions WHERE started_at >= ? AND (? IS NULL OR source = ?) "
        "ORDER BY started_at DESC", (cutoff, source, source))]
    if not rows:
        return Insights(days=days, source=source)
    args = (cutoff, source, source)
    users = conn.execute(f"SELECT COUNT(*) {_JOINED} AND m.role = 'user'", args).fetchone()[0]
    starts = [r["started_at"] for r in rows if r["started_at"]]
    stamps = [datetime.fromtimestamp(t) for t in starts]
    return Insights(
        days=days, source=source, sessions=len(rows), messages=sum(r["message_count"] or 0 for r in rows),
        user_messages=users, tool_calls=sum(r["tool_call_count"] or 0 for r in rows),
        first_at=min(starts, default=None), last_at=max(starts, default=None),
        active_seconds=sum(r["ended_at"] - r["started_at"] for r in rows
                           if r["started_at"] and r["ended_at"] and r["ended_at"] > r["started_at"]),
        models=_models(conn, rows, args), platforms=_platforms(rows), tools=_tools(conn, args),
        skills=_skills(conn, args),
        by_weekday=tuple(sum(1 for d in stamps if d.weekday() == i) for i in range(7)),
        by_hour=tuple(sum(1 for d in stamps if d.hour == i) for i in range(24)),
        per_day=tuple(sorted(Counter(d.strftime("%Y-%m-%d") for d in stamps).items())),
        daily=_daily(conn, rows, args), top=_top(rows))


def _tokens(r: dict) -> int:
    return sum(r[k] or 0 for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))


def _models(conn: sqlite3.Connection, rows: list[dict], args: tuple) -> tuple[ModelUsage, ...]:
    """Per model from session_model_usage; a session without rows there counts under its own model."""
    acc: dict[str, dict] = {}

    def add(model: str, sid: str, inp: int, out: int, cache: int, calls: int, cost: float) -> None:
        a = acc.setdefault(model or "unknown", {"s": set(), "i": 0, "o": 0, "c": 0, "n": 0, "usd": 0.0})
        a["s"].add(sid)
        a["i"], a["o"], a["c"], a["n"], a["usd"] = a["i"] + inp, a["o"] + out, a["c"] + cache, a["n"] + calls, \
            a["usd"] + cost
    covered: set[str] = set()
    for u in conn.execute(
            "SELECT u.session_id, u.model, u.input_tokens, u.output_tokens, u.cache_read_tokens + "
            "u.cache_write_tokens, u.api_call_count, u.estimated_cost_usd FROM session_model_usage u "
            "JOIN sessions s ON s.id = u.session_id WHERE s.started_at >= ? AND (? IS NULL OR s.source = ?)", args):
        covered.add(u[0])
        add(u[1], u[0], u[2] or 0, u[3] or 0, u[4] or 0, u[5] or 0, u[6] or 0.0)
    for r in rows:
        if r["id"] not in covered:
            add(r["model"] or "", r["id"], r["input_tokens"] or 0, r["output_tokens"] or 0,
                (r["cache_read_tokens"] or 0) + (r["cache_write_tokens"] or 0), 0, r["estimated_cost_usd"] or 0.0)
    out = [ModelUsage(m, len(a["s"]), a["i"], a["o"], a["c"], a["n"], a["usd"]) for m, a in acc.items()]
    return tuple(sorted(out, key=lambda m: (-m.total_tokens, m.model)))


def _daily(conn: sqlite3.Connection, rows: list[dict], args: tuple) -> tuple[DayUsage, ...]:
    """Per start day, counted as `_models` counts: session_model_usage, else the session's own totals."""
    per_session = {r[0]: r[1:] for r in conn.execute(
        "SELECT u.session_id, SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_read_tokens + "
        "u.cache_write_tokens), SUM(u.estimated_cost_usd) FROM session_model_usage u JOIN sessions s "
        "ON s.id = u.session_id WHERE s.started_at >= ? AND (? IS NULL OR s.source = ?) GROUP BY u.session_id",
        args)}
    acc: dict[str, list[float]] = {}
    for r in rows:
        if not r["started_at"]:
            continue
        day = datetime.fromtimestamp(r["started_at"]).strftime("%Y-%m-%d")
        used = per_session.get(r["id"]) or (r["input_tokens"], r["output_tokens"], (r["cache_read_tokens"] or 0)
                                             + (r["cache_write_tokens"] or 0), r["estimated_cost_usd"])
        a = acc.setdefault(day, [0, 0, 0, 0, 0.0])
        for i, v in enumerate((1, *used)):
            a[i] += v or 0
    return tuple(DayUsage(d, int(a[0]), int(a[1]), int(a[2]), int(a[3]), float(a[4])) for d, a in sorted(acc.items()))


def _platforms(rows: list[dict]) -> tuple[tuple[str, int, int, int], ...]:
    acc: dict[str, list[int]] = {}
    for r in rows:
        a = acc.setdefault(r["source"] or "unknown", [0, 0, 0])
        a[0], a[1], a[2] = a[0] + 1, a[1] + (r["message_count"] or 0), a[2] + _tokens(r)
    return tuple(sorted(((k, *v) for k, v in acc.items()), key=lambda p: -p[1]))  # type: ignore[misc]


def _calls(conn: sqlite3.Connection, args: tuple) -> list[tuple[str, dict, float]]:
    """(tool name, arguments, timestamp) of every tool call assistants made in the window."""
    out = []
    for raw, ts in conn.execute(f"SELECT m.tool_calls, m.timestamp {_JOINED} AND m.role = 'assistant' "
                                "AND m.tool_calls IS NOT NULL", args):
        try:
            calls = safe_loads(raw)
        except (TypeError, ValueError):
            continue
        for call in calls if isinstance(calls, list) else ():
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not fn.get("name"):
                continue
            try:
                fargs = safe_loads(fn.get("arguments") or "{}") if isinstance(fn.get("arguments"), str) \
                    else fn.get("arguments")
            except ValueError:
                fargs = {}
            out.append((str(fn["name"]), fargs if isinstance(fargs, dict) else {}, ts))
    return out


def _tools(conn: sqlite3.Connection, args: tuple) -> tuple[tuple[str, int], ...]:
    """Calls per tool: the larger of the tool-result count and the assistant tool-call count (as Hermes)."""
    results = Counter(dict(conn.execute(
        f"SELECT m.tool_name, COUNT(*) {_JOINED} AND m.role = 'tool' AND m.tool_name IS NOT NULL "
        "GROUP BY m.tool_name", args).fetchall()))
    calls = Counter(name for name, _, _ in _calls(conn, args))
    merged = Counter({t: max(results.get(t, 0), calls.get(t, 0)) for t in set(results) | set(calls)})
    return tuple(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])))


def _skills(conn: sqlite3.Connection, args: tuple) -> tuple[tuple[str, int, int], ...]:
    acc: dict[str, list[int]] = {}
    for name, fargs, _ in _calls(conn, args):
        skill = fargs.get("name")
        if name in ("skill_view", "skill_manage") and isinstance(skill, str) and skill.strip():
            a = acc.setdefault(skill, [0, 0])
            a[0 if name == "skill_view" else 1] += 1
    return tuple(sorted(((k, *v) for k, v in acc.items()), key=lambda s: (-(s[1] + s[2]), s[0])))  # type: ignore[misc]


def _top(rows: list[dict]) -> tuple[tuple[str, str, str], ...]:
    out = []
    most = max(rows, key=lambda r: r["message_count"] or 0)
    if most["message_count"]:
        out.append(("Most messages", f"{most['message_count']} msgs", most["id"]))
    heavy = max(rows, key=lambda r: (r["input_tokens"] or 0) + (r["output_tokens"] or 0))
    if (heavy["input_tokens"] or 0) + (heavy["output_tokens"] or 0):
        out.append(("Most tokens", f"{(heavy['input_tokens'] or 0) + (heavy['output_tokens'] or 0):,} tokens",
                    heavy["id"]))
    busy = max(rows, key=lambda r: r["tool_call_count"] or 0)
    if busy["tool_call_count"]:
        out.append(("Most tool calls", f"{busy['tool_call_count']} calls", busy["id"]))
    return tuple(out)
