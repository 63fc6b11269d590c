"""Sessions pages: the list (newest first, by source, paginated), full-text search (FTS5 through the store)
and one conversation with its tool calls and tool results, paginated."""

from __future__ import annotations

import math
import re

from aiohttp import web

from hermes_agent.dashboard.html import (
    Safe,
    esc,
    facts,
    join,
    link,
    page,
    pager,
    pre,
    pretty_json,
    table,
    when,
)
from hermes_agent.dashboard.state import Home, respond
from hermes_agent.errors import StorageError
from hermes_agent.storage import SearchHit, SessionInfo, StoredMessage

PER_PAGE = 50
MESSAGES_PER_PAGE = 100


def _page_number(request: web.Request) -> int:
    try:
        return max(1, int(request.query.get("page", "1")))
    except ValueError:
        return 1


def _search_form(query: str, source: str) -> Safe:
    return Safe('<form method="get" action="/sessions"><input type="search" name="q" aria-label="search" '
                f'placeholder="search all messages" value="{esc(query)}"> <input type="text" name="source" '
                f'aria-label="source" placeholder="source (cli, telegram, cron…)" value="{esc(source)}"> '
                '<button type="submit">Search</button></form><p></p>')


def _title(s: SessionInfo) -> Safe:
    return link(f"/sessions/{s.id}", s.title or s.id)


def _row(s: SessionInfo) -> list[object]:
    return [_title(s), s.source, s.model or "—", when(s.started_at), when(s.last_active_at), s.message_count,
            s.tool_call_count]


_HEADERS = ("Session", "Source", "Model", "Started", "Last active", "Messages", "Tool calls")


def _marked(text: str) -> Safe:
    """A snippet with the store's **hit** markers as <mark>, everything else escaped."""
    parts = re.split(r"\*\*(.+?)\*\*", text)
    return Safe("".join(f"<mark>{esc(p)}</mark>" if i % 2 else esc(p) for i, p in enumerate(parts)))


def _hits(hits: list[SearchHit]) -> Safe:
    rows = [[_title(h.session), h.session.source, when(h.session.last_active_at),
             join(Safe(f"<div>{esc(s.role)}: {_marked(s.text)}</div>") for s in h.snippets)] for h in hits]
    return table(("Session", "Source", "Last active", "Matches"), rows)


async def sessions(request: web.Request) -> web.Response:
    """GET /sessions[?q=&source=&page=]."""
    home: Home = request.app["home"]
    query, source = request.query.get("q", "").strip(), request.query.get("source", "").strip()
    form = _search_form(query, source)
    store = await home.store()
    if store is None:
        return respond(page("Sessions", Safe(f"{form}<p>No sessions yet: state.db does not exist.</p>"), "/sessions"))
    if query:
        hits = await home.run(store.search, query, source or None, limit=PER_PAGE)
        found = f"{len(hits)} session(s) match" if hits else "No session matches"
        body = Safe(f"{form}<p>{esc(found)} <q>{esc(query)}</q>.</p>{_hits(hits) if hits else ''}")
        return respond(page("Sessions", body, "/sessions"))
    total = await home.run(store.count_sessions, source or None)
    pages, number = max(1, math.ceil(total / PER_PAGE)), _page_number(request)
    listed = await home.run(store.list_sessions, PER_PAGE, source or None, (), (number - 1) * PER_PAGE)
    body = Safe(f"{form}<p class=meta>{total} session(s)</p>{table(_HEADERS, map(_row, listed), (5, 6))}"
                f"{pager('/sessions', number, pages, source=source)}")
    return respond(page("Sessions", body, "/sessions"))


def _tool_calls(rec: StoredMessage) -> str:
    return "".join(f'<div class="meta">tool call <b>{esc(c.name)}</b> <code>{esc(c.id)}</code></div>'
                   f"{pre(pretty_json(c.arguments))}" for c in rec.message.tool_calls)


def _message(rec: StoredMessage) -> Safe:
    m = rec.message
    label = f"tool result: {m.name}" if m.role == "tool" and m.name else m.role
    ref = f" for <code>{esc(m.tool_call_id)}</code>" if m.tool_call_id else ""
    parts = [f'<div class="meta"><b>{esc(label)}</b>{ref} · {esc(when(rec.timestamp))} · #{rec.id}</div>']
    if m.reasoning:
        parts.append(f"<details><summary>reasoning</summary>{pre(m.reasoning)}</details>")
    if m.content:
        parts.append(pre(pretty_json(m.content) if m.role == "tool" else m.content))
    parts.append(_tool_calls(rec))
    return Safe(f'<div class="msg {esc(m.role)}">{"".join(parts)}</div>')


def _summary(s: SessionInfo) -> Safe:
    rows = [("Id", s.id), ("Source", s.source), ("Model", s.model or "—"), ("Started", when(s.started_at)),
            ("Messages", s.message_count), ("Tool calls", s.tool_call_count),
            ("Tokens in / out", f"{s.input_tokens:,} / {s.output_tokens:,}")]
    if s.parent_session_id:
        rows.append(("Continues", link(f"/sessions/{s.parent_session_id}", s.parent_session_id)))
    return facts(rows)


async def conversation(request: web.Request) -> web.Response:
    """GET /sessions/{id}[?page=]: the stored messages in order, tool calls and results included."""
    home: Home = request.app["home"]
    store = await home.store()
    try:
        info = await home.run(store.require_session, request.match_info["id"]) if store else None
    except StorageError as exc:
        return respond(page("Session not found", Safe(f"<p>{esc(exc)}</p>"), "/sessions"), 404)
    if info is None:
        return respond(page("Session not found", Safe("<p>No sessions yet.</p>"), "/sessions"), 404)
    records = await home.run(store.get_records, info.id)  # type: ignore[union-attr]
    pages, number = max(1, math.ceil(len(records) / MESSAGES_PER_PAGE)), _page_number(request)
    shown = records[(number - 1) * MESSAGES_PER_PAGE: number * MESSAGES_PER_PAGE]
    nav = pager(f"/sessions/{info.id}", number, pages)
    body = Safe(f"{_summary(info)}{nav}{join(_message(r) for r in shown)}{nav}")
    return respond(page(info.title or info.id, body, "/sessions"))
