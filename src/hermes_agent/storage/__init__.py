"""Session storage: SQLite state.db with named migrations and FTS5 search. No other package runs SQL."""

from __future__ import annotations

from hermes_agent.storage.pricing import estimate_cost
from hermes_agent.storage.records import AmbiguousSessionId, SessionInfo, SessionNotFound, StoredMessage
from hermes_agent.storage.store import SessionStore, new_session_id, title_from

_SUMMARIES = ("SearchHit", "Snippet", "Stats")  # storage/summaries.py, built when first asked for


def __getattr__(name: str) -> object:
    if name in _SUMMARIES:
        from hermes_agent.storage import summaries

        return getattr(summaries, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AmbiguousSessionId",
    "SearchHit",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "Snippet",
    "Stats",
    "StoredMessage",
    "estimate_cost",
    "new_session_id",
    "title_from",
]
