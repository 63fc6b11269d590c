"""Usage page: tokens and estimated cost per day and per model over the last N days, counted as
`hermes insights` counts them (session_model_usage, else each session's own totals)."""

from __future__ import annotations

from aiohttp import web

from hermes_agent.dashboard.html import Safe, esc, num, page, table, usd
from hermes_agent.dashboard.state import Home, respond

_WINDOWS = (7, 30, 90, 365)


def _days(request: web.Request) -> int:
    try:
        return min(3650, max(1, int(request.query.get("days", "30"))))
    except ValueError:
        return 30


def _caps(home: Home, store: object | None) -> Safe:
    """Spend against each spending cap (budget.*), per person, cron and batch; empty when no cap is set."""
    from hermes_agent.bootstrap.budget import overview

    rows = overview(home.settings, store)
    if not rows:
        return Safe("")
    return Safe("<h2>Spending caps</h2>" + str(table(("Who", "Cap", "Spent", "Limit", "Used"), [
        [who, key, spent, cap, f"{share:.0%}"] for who, key, spent, cap, share in rows], range(2, 5))))


async def usage(request: web.Request) -> web.Response:
    """GET /usage[?days=30]."""
    home: Home = request.app["home"]
    days = _days(request)
    links = " · ".join(f'<a href="/usage?days={d}">{d} days</a>' for d in _WINDOWS)
    store = await home.store()
    report = await home.run(store.insights, days) if store else None
    caps = await home.run(_caps, home, store)
    if report is None or report.empty:
        body = Safe(f"<p>{links}</p><p>No sessions in the last {days} days.</p>{caps}")
        return respond(page("Usage", body, "/usage"))
    totals = table(("Sessions", "Messages", "Tool calls", "Input tokens", "Output tokens", "Est. cost"),
                   [[report.sessions, num(report.messages), num(report.tool_calls), num(report.input_tokens),
                     num(report.output_tokens), usd(report.cost_usd)]], range(6))
    daily = table(("Day", "Sessions", "Input tokens", "Output tokens", "Cache tokens", "Est. cost"),
                  [[d.day, d.sessions, num(d.input_tokens), num(d.output_tokens), num(d.cache_tokens),
                    usd(d.cost_usd)] for d in reversed(report.daily)], range(1, 6))
    models = table(("Model", "Sessions", "Input tokens", "Output tokens", "API calls", "Est. cost"),
                   [[m.model, m.sessions, num(m.input_tokens), num(m.output_tokens), num(m.api_calls),
                     usd(m.cost_usd)] for m in report.models], range(1, 6))
    body = Safe(f"<p>{links}</p><p class=meta>Last {esc(days)} days</p>{totals}<h2>Per day</h2>{daily}"
                f"<h2>Per model</h2>{models}{caps}")
    return respond(page("Usage", body, "/usage"))
