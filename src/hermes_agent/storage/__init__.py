"""Session storage: SQLite state.db with named migrations and FTS5 search. No other package runs SQL."""

from __future__ import annotations

from hermes_agent.storage.pricing import estimate_cost
from hermes_agent.storage.records import (
    AmbiguousSessionId,
    SearchHit,
    SessionInfo,
    SessionNotFound,
    Snippet,
    Stats,
    StoredMessage,
)
from hermes_agent.storage.store import SessionStore, new_session_id, title_from

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
