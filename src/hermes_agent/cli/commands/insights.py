"""`hermes insights [--days N] [--source S]`: usage analytics from state.db, laid out like Hermes's report
(overview, models with tokens and cost, platforms, top tools and skills, activity by weekday, hour and day)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.storage.insights import Insights

_RULE = "  " + "─" * 56
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("insights", help="usage insights: sessions, tools, tokens and cost by model",
                              description="Token usage, costs, tool patterns and activity from your sessions")
    p.add_argument("--days", type=int, default=30, help="number of days to analyse (default: 30)")
    p.add_argument("--source", help="only sessions from this platform (cli, telegram, cron, ...)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent import paths
    from hermes_agent.storage import SessionStore

    if args.days <= 0:
        print("hermes insights: --days must be a positive number", file=sys.stderr)
        return 2
    caps: list[tuple[str, str, str, str, float]] = []
    if not paths.state_db_path().exists():
        report = Insights(days=args.days, source=args.source)
    else:
        try:
            with SessionStore() as store:
                report = store.insights(args.days, args.source)
                caps = _caps(settings, store)
        except HermesError as exc:
            print(f"hermes insights: {exc}", file=sys.stderr)
            return 1
    print(render(report) + ("\n" + "\n".join(_budget(caps)) if caps else ""))
    return 0


def _caps(settings: Settings, store: object) -> list[tuple[str, str, str, str, float]]:
    from hermes_agent.bootstrap.budget import overview

    return overview(settings, store)


def _budget(rows: list[tuple[str, str, str, str, float]]) -> list[str]:
    """Spend against each spending cap (budget.*)."""
    lines = ["", "  Spending caps", _RULE]
    for who, key, spent, cap, share in rows:
        lines.append(f"  {who:<16} {key:<34} {spent} of {cap} ({share:.0%})")
    return lines


def render(r: Insights) -> str:
    if r.empty:
        src = f" (source: {r.source})" if r.source else ""
        return f"  No sessions found in the last {r.days} days{src}."
    label = f"Last {r.days} days" + (f" ({r.source})" if r.source else "")
    lines = ["", f"  Hermes Insights — {label}", "  " + "═" * 56]
    if r.first_at and r.last_at:
        lines.append(f"  Period: {_date(r.first_at, '%b %d, %Y')} — {_date(r.last_at, '%b %d, %Y')}")
    lines += ["", "  Overview", _RULE,
              f"  Sessions:          {r.sessions:<12}  Messages:        {r.messages:,}",
              f"  Tool calls:        {r.tool_calls:<12,}  User messages:   {r.user_messages:,}",
              f"  Input tokens:      {r.input_tokens:<12,}  Output tokens:   {r.output_tokens:,}",
              f"  Total tokens:      {r.total_tokens:<12,}  Est. cost:       {_usd(r.cost_usd)}"]
    if r.active_seconds > 0:
        lines.append(f"  Active time:       ~{_dur(r.active_seconds):<11}  Avg session:     "
                     f"~{_dur(r.active_seconds / r.sessions)}")
    lines += [f"  Avg msgs/session:  {r.messages / r.sessions:.1f}", ""]
    lines += _models(r) + _platforms(r) + _tools(r) + _skills(r) + _activity(r) + _top(r)
    return "\n".join(lines)


def _models(r: Insights) -> list[str]:
    out = ["  Models Used", _RULE, f"  {'Model':<30} {'Sessions':>8} {'Tokens':>12} {'Cost':>9}"]
    out += [f"  {m.model[:28]:<30} {m.sessions:>8} {m.total_tokens:>12,} {_usd(m.cost_usd):>9}" for m in r.models]
    return [*out, ""]


def _platforms(r: Insights) -> list[str]:
    if not r.platforms or (len(r.platforms) == 1 and r.platforms[0][0] == "cli"):
        return []
    out = ["  Platforms", _RULE, f"  {'Platform':<14} {'Sessions':>8} {'Messages':>10} {'Tokens':>14}"]
    out += [f"  {name:<14} {n:>8} {msgs:>10,} {tok:>14,}" for name, n, msgs, tok in r.platforms]
    return [*out, ""]


def _tools(r: Insights) -> list[str]:
    if not r.tools:
        return []
    total = sum(n for _, n in r.tools)
    out = ["  Top Tools", _RULE, f"  {'Tool':<28} {'Calls':>8} {'%':>8}"]
    out += [f"  {name:<28} {n:>8,} {n / total * 100:>7.1f}%" for name, n in r.tools[:15]]
    if len(r.tools) > 15:
        out.append(f"  ... and {len(r.tools) - 15} more tools")
    return [*out, ""]


def _skills(r: Insights) -> list[str]:
    if not r.skills:
        return []
    out = ["  Top Skills", _RULE, f"  {'Skill':<28} {'Loads':>7} {'Edits':>7}"]
    out += [f"  {name[:28]:<28} {loads:>7,} {edits:>7,}" for name, loads, edits in r.skills[:10]]
    out.append(f"  Distinct skills: {len(r.skills)}  Loads: {sum(s[1] for s in r.skills):,}  "
               f"Edits: {sum(s[2] for s in r.skills):,}")
    return [*out, ""]


def _activity(r: Insights) -> list[str]:
    peak = max(r.by_weekday) or 1
    out = ["  Activity Patterns", _RULE]
    out += [f"  {day}  {'█' * round(n / peak * 15):<15} {n}" for day, n in zip(_WEEKDAYS, r.by_weekday, strict=True)]
    hours = sorted(((n, h) for h, n in enumerate(r.by_hour) if n), reverse=True)[:5]
    out += ["", "  Peak hours: " + ", ".join(f"{h % 12 or 12}{'AM' if h < 12 else 'PM'} ({n})" for n, h in hours)]
    out.append(f"  Active days: {len(r.per_day)}")
    if r.best_streak > 1:
        out.append(f"  Best streak: {r.best_streak} consecutive days")
    out += ["", "  Sessions per day", _RULE]
    out += [f"  {day}  {n}" for day, n in r.per_day[-14:]]
    return [*out, ""]


def _top(r: Insights) -> list[str]:
    if not r.top:
        return []
    return ["  Notable Sessions", _RULE, *(f"  {label:<20} {value:<18} ({sid})" for label, value, sid in r.top), ""]


def _date(ts: float, fmt: str) -> str:
    return datetime.fromtimestamp(ts).strftime(fmt)


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def _dur(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
