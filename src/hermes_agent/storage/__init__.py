"""Session storage: SQLite state.db with named migrations and FTS5 search. No other package runs SQL."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hermes_agent.storage.pricing import estimate_cost
    from hermes_agent.storage.records import AmbiguousSessionId, SessionInfo, SessionNotFound, StoredMessage
    from hermes_agent.storage.store import SessionStore, new_session_id, title_from
    from hermes_agent.storage.summaries import SearchHit, Snippet, Stats

# each name's module, imported when the name is first asked for: importing one module of the package (pricing, on
# `chat -q`'s path to its first request) no longer brings sqlite3 and the store (issue 24, speed14)
_HOMES = {"estimate_cost": "pricing", "AmbiguousSessionId": "records", "SessionInfo": "records",
          "SessionNotFound": "records", "StoredMessage": "records", "SessionStore": "store",
          "new_session_id": "store", "title_from": "store", "SearchHit": "summaries", "Snippet": "summaries",
          "Stats": "summaries"}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"hermes_agent.storage.{home}"), name)

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
