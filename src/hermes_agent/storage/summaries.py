"""Value types of the store's search and statistics (storage/search.py, storage/stats.py): apart from
records.py, so a run that neither searches nor counts does not build them (issue 24: start-up)."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent.storage.records import SessionInfo


@dataclass(frozen=True, slots=True)
class Snippet:
    """Text around one search hit; hits are wrapped in ** markers."""

    message_id: int
    role: str
    timestamp: float
    text: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One session matching a search: higher score is better."""

    session: SessionInfo
    score: float
    snippets: tuple[Snippet, ...]


@dataclass(frozen=True, slots=True)
class Stats:
    """Totals over the whole store (cost is None when no priced usage was recorded)."""

    sessions: int
    messages: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None
    first_at: float | None
    last_at: float | None
    db_bytes: int
    by_source: tuple[tuple[str, int, int], ...]
    by_model: tuple[tuple[str, int, int, int, float | None], ...]
