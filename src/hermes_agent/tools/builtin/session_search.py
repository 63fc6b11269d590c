"""session_search: recall of past conversations. The handler runs `ctx.session_search`, which
bootstrap binds to the agent's SessionStore and current session (run_session_search below)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from hermes_agent import lazyre
from hermes_agent.errors import HermesError, StorageError
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

if TYPE_CHECKING:
    from hermes_agent.storage import SessionInfo, SessionStore, StoredMessage

SCHEMA = {
    "name": "session_search",
    "description": (
        "Search past conversations (not this one) when the user refers to earlier work or you need a past "
        "decision, command, path or fact. query: best sessions first, snippets with message ids; no query: "
        "latest sessions; session_id (+ around_id): read one."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "all words, else any; \"phrase\", prefix*, a OR b"},
            "source": {"type": "string", "description": "e.g. cli, telegram, cron"},
            "since": {"type": "string", "description": "YYYY-MM-DD or relative (7d, 12h)"},
            "until": {"type": "string", "description": "the same, inclusive"},
            "session_id": {"type": "string"},
            "around_id": {"type": "integer"},
            "limit": {"type": "integer", "description": "default 3, max 10"},
        },
    },
}

_RELATIVE = lazyre.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}
_HIDDEN_SOURCES = ("subagent",)
_TRANSCRIPT_CHARS = 6000


class _BadArgument(ValueError):
    pass


def _handle(args: dict, **kw: object) -> str:
    from hermes_agent.tools import taintmark

    result = kw["ctx"].session_search(args)  # type: ignore[attr-defined]  # `needs` guarantees it
    taintmark.session_hits(kw["ctx"], result)  # messages of a tainted session taint this one
    return result


registry.register("session_search", "session_search", SCHEMA, _handle, emoji="🔎", parallel_safe=True,
                  needs={"session_search"})


def parse_when(value: object, field: str, end: bool = False) -> float | None:
    """Epoch seconds for 'YYYY-MM-DD', an ISO datetime or '7d'/'12h' ago; a date as `until` means its end."""
    text = str(value or "").strip()
    if not text:
        return None
    rel = _RELATIVE.match(text.lower())
    if rel:
        return time.time() - int(rel.group(1)) * _UNITS[rel.group(2)]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _BadArgument(f"{field}: expected YYYY-MM-DD or a relative age like 7d, got {text!r}") from None
    if end and len(text) <= 10:
        moment += timedelta(days=1)
    return moment.timestamp()


def _limit(value: object) -> int:
    try:
        return max(1, min(10, int(value))) if value is not None else 3
    except (TypeError, ValueError):
        raise _BadArgument(f"limit: expected an integer, got {value!r}") from None


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else ""


def _session_brief(info: SessionInfo) -> dict:
    return {"session_id": info.id, "title": info.title or "", "source": info.source,
            "when": _when(info.last_active_at), "messages": info.message_count}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def _message_text(rec: StoredMessage, limit: int) -> str:
    m = rec.message
    parts = [_clip(m.content, limit if m.role != "tool" else min(limit, 400))] if m.content else []
    parts += [f"[call {tc.name} {_clip(tc.arguments, 200)}]" for tc in m.tool_calls]
    return " ".join(parts)


def _browse(store: SessionStore, current: str | None, source: str | None, since: float | None,
            until: float | None, limit: int) -> str:
    rows = store.list_sessions(limit + 50, source, exclude=[current] if current else ())
    rows = [s for s in rows if (source or s.source not in _HIDDEN_SOURCES)
            and (since is None or s.last_active_at >= since) and (until is None or s.started_at < until)]
    sessions = [_session_brief(s) for s in rows[:limit]]
    return tool_result({"mode": "recent", "count": len(sessions), "sessions": sessions})


def normalise_args(args: dict) -> dict:
    """Hermes's session_search shapes as ours: `around_message_id` is `around_id`; `window` (messages each
    side, 1-20), `sort` (newest/oldest) and `role_filter` ("user,assistant") are kept; `profile` names
    another profile's database, which this home cannot reach (an error unless it is "default")."""
    out = dict(args)
    if out.get("around_id") is None and out.get("around_message_id") is not None:
        out["around_id"] = out["around_message_id"]
    profile = str(out.pop("profile", "") or "").strip()
    if profile and profile != "default":
        raise _BadArgument(f"profile {profile!r}: only this home's sessions can be searched here")
    try:
        out["window"] = max(1, min(20, int(out.get("window") or 5)))
    except (TypeError, ValueError):
        raise _BadArgument(f"window: expected an integer, got {out.get('window')!r}") from None
    roles = out.get("role_filter")
    out["role_filter"] = frozenset(r.strip() for r in str(roles).split(",") if r.strip()) if roles else None
    if out.get("sort") not in (None, "newest", "oldest"):
        raise _BadArgument(f"sort: expected newest or oldest, got {out.get('sort')!r}")
    return out


def _read(store: SessionStore, session_id: str, around_id: object, window: int = 5,
          roles: frozenset[str] | None = None) -> str:
    info = store.require_session(session_id)
    if around_id is not None:
        try:
            records = store.get_records(info.id, int(around_id), window=window)
        except (TypeError, ValueError):
            raise _BadArgument(f"around_id: expected a message id, got {around_id!r}") from None
    else:
        records = store.get_records(info.id)
        if len(records) > 10:  # bookends: how it started and how it ended
            records = records[:5] + records[-5:]
    messages = [{"id": r.id, "role": r.message.role, "text": _message_text(r, 1500)}
                for r in records if r.message.role != "system" and (roles is None or r.message.role in roles)]
    return tool_result({"mode": "read", **_session_brief(info), "shown": messages})


def _transcript(store: SessionStore, session_id: str, around: list[int]) -> str:
    seen: dict[int, str] = {}
    for mid in around:
        for rec in store.get_records(session_id, mid, window=3):
            if rec.message.role != "system":
                seen.setdefault(rec.id, f"{rec.message.role}: {_message_text(rec, 600)}")
    return _clip("\n".join(seen[k] for k in sorted(seen)), _TRANSCRIPT_CHARS)


def _summary(store: SessionStore, hit_session: str, ids: list[int], query: str,
             summarize: Callable[[str], str]) -> str | None:
    prompt = (f"Summarise what this earlier conversation says that is relevant to: {query}\n"
              "Be factual and brief; keep commands, paths, decisions and outcomes.\n\n"
              + _transcript(store, hit_session, ids))
    try:
        return summarize(prompt).strip() or None
    except HermesError:
        return None  # the snippets still answer; a failed summary must not fail the search


def _search(store: SessionStore, query: str, current: str | None, source: str | None, since: float | None,
            until: float | None, limit: int, summarize: Callable[[str], str] | None, args: dict) -> str:
    hits = store.search(query, source=source, since=since, until=until, limit=limit,
                        exclude_session=current, exclude_sources=() if source else _HIDDEN_SOURCES)
    if args.get("sort"):
        hits = sorted(hits, key=lambda h: h.session.last_active_at or 0, reverse=args["sort"] == "newest")
    roles = args.get("role_filter")
    results = []
    for hit in hits:
        entry = _session_brief(hit.session)
        entry["hits"] = [{"id": s.message_id, "role": s.role, "text": s.text} for s in hit.snippets
                         if roles is None or s.role in roles]
        if summarize is not None:
            text = _summary(store, hit.session.id, [s.message_id for s in hit.snippets], query, summarize)
            if text:
                entry["summary"] = text
        results.append(entry)
    payload: dict = {"mode": "search", "query": query, "count": len(results), "results": results}
    if missed := store.search_unscanned():
        payload["note"] = (f"{missed} older messages are still being indexed and were not searched: older sessions "
                           "may be missing from these results.")
    if not results:
        payload["hint"] = "No match. Try fewer or different words, a prefix*, or no query to list recent sessions."
    return json.dumps(payload, ensure_ascii=False)


def run_session_search(args: dict, store: SessionStore, current_session_id: str | None,
                       summarize: Callable[[str], str] | None = None) -> str:
    """Execute a session_search call for the agent loop; always returns JSON (errors as {"error": ...})."""
    try:
        args = normalise_args(args)
        if args.get("session_id"):
            return _read(store, str(args["session_id"]), args.get("around_id"), args["window"],
                         args["role_filter"])
        source = str(args.get("source") or "").strip() or None
        since = parse_when(args.get("since"), "since")
        until = parse_when(args.get("until"), "until", end=True)
        limit = _limit(args.get("limit"))
        query = str(args.get("query") or "").strip()
        if not query:
            return _browse(store, current_session_id, source, since, until, limit)
        return _search(store, query, current_session_id, source, since, until, limit, summarize, args)
    except _BadArgument as exc:
        return tool_error(str(exc))
    except StorageError as exc:
        return tool_error(str(exc))
