"""One model call's tokens and cost booked on its session row and in Hermes's per-model usage table, inside
the caller's transaction (SessionStore.add_usage, or append_messages with the reply that call produced)."""

from __future__ import annotations

import sqlite3
import time
from typing import NamedTuple

from hermes_agent.messages import Usage


class Booking(NamedTuple):
    """A model call to book: its tokens, its priced cost (None: unknown) and the model that answered."""

    usage: Usage
    cost: float | None
    model: str | None


def book(c: sqlite3.Connection, session_id: str, usage: Usage, cost: float | None, model: str | None) -> int:
    """Add one API call's tokens and cost to the session (its model becomes `model` when given); returns the
    rows changed (0: no such session)."""
    changed = c.execute(
        "UPDATE sessions SET api_call_count = api_call_count + 1, input_tokens = input_tokens + ?, "
        "output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, "
        "cache_write_tokens = cache_write_tokens + ?, reasoning_tokens = reasoning_tokens + ?, "
        "estimated_cost_usd = CASE WHEN ? IS NULL THEN estimated_cost_usd "
        "ELSE COALESCE(estimated_cost_usd, 0) + ? END, model = COALESCE(?, model) WHERE id = ?",
        (usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
         usage.reasoning_tokens, cost, cost, model, session_id)).rowcount
    if changed:
        _per_model(c, session_id, model or "unknown", usage, cost)
    return changed


def _per_model(c: sqlite3.Connection, session_id: str, model: str, usage: Usage, cost: float | None) -> None:
    """One API call into Hermes's per-model usage table (what its `insights` reads)."""
    now = time.time()
    c.execute(
        "INSERT INTO session_model_usage (session_id, model, api_call_count, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, first_seen, last_seen) "
        "VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, model, billing_provider, "
        "billing_base_url, billing_mode, task) DO UPDATE SET api_call_count = api_call_count + 1, "
        "input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, "
        "cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, "
        "cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens, "
        "reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, "
        "estimated_cost_usd = estimated_cost_usd + excluded.estimated_cost_usd, last_seen = excluded.last_seen",
        (session_id, model, usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens,
         usage.cache_write_tokens, usage.reasoning_tokens, cost or 0.0, now, now))
