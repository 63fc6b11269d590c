"""Frozen value types the session store returns, and its two lookup errors. No SQL here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_agent.errors import StorageError
from hermes_agent.messages import Message, ToolCall, Usage, safe_loads


class SessionNotFound(StorageError):
    """No session has this id (or id prefix)."""


class AmbiguousSessionId(StorageError):
    """An id prefix matched more than one session."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of `sessions`: identity, lineage, counters, token totals and cost."""

    id: str
    source: str
    model: str | None
    title: str | None
    parent_session_id: str | None
    started_at: float
    last_active_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    tool_call_count: int
    api_call_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    estimated_cost_usd: float | None
    cwd: str | None
    system_prompt: str | None
    session_key: str | None
    user_id: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SessionInfo:
        return cls.from_values([row[name] for name in cls.__slots__])

    @classmethod
    def from_values(cls, values: Sequence) -> SessionInfo:
        """From the values of SESSION_COLUMNS, in that order (a row selected with them, read by position)."""
        values = list(values)
        # Hermes leaves counters it never touched NULL; a row it wrote before we first opened the file
        # has no last_active_at until the migration backfills it.
        for i in _COUNTERS:
            values[i] = values[i] or 0
        values[_LAST_ACTIVE] = values[_LAST_ACTIVE] or values[_STARTED]
        return cls(*values)


SESSION_COLUMNS = ", ".join(SessionInfo.__slots__)
_COUNTERS = tuple(SessionInfo.__slots__.index(n) for n in (
    "message_count", "tool_call_count", "api_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens"))
_LAST_ACTIVE, _STARTED = SessionInfo.__slots__.index("last_active_at"), SessionInfo.__slots__.index("started_at")


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A persisted message with its row id and timestamp."""

    id: int
    session_id: str
    timestamp: float
    message: Message


def tool_calls_json(calls: tuple[ToolCall, ...]) -> str | None:
    """The tool_calls column in Hermes's format: OpenAI tool-call objects (None when there are none)."""
    if not calls:
        return None
    return json.dumps([c.to_openai() for c in calls], ensure_ascii=False)


def _tool_call(d: dict) -> ToolCall:
    if "function" in d:  # Hermes's format (and ours since the shared layout)
        return ToolCall.from_openai(d)
    return ToolCall(id=str(d.get("id") or ""), name=str(d.get("name") or ""), arguments=d.get("arguments") or "{}")


_JSON_CONTENT = "\x00json:"  # Hermes's prefix for list (multimodal) content stored as JSON


def content_text(raw: str | None, *, markers: bool = True) -> str | None:
    """Message text; Hermes's JSON-encoded multimodal content becomes its text parts (with markers:
    `[image_url]` lines for the other parts)."""
    if not raw or not raw.startswith(_JSON_CONTENT):
        return raw
    try:
        parts = safe_loads(raw[len(_JSON_CONTENT):])
    except ValueError:
        return raw
    if not isinstance(parts, list):
        return json.dumps(parts, ensure_ascii=False)
    return "\n".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type', 'part')}]"
                     for p in parts if isinstance(p, dict) and (markers or p.get("type") == "text"))


def stored_content(message: Message) -> str | None:
    """The content column: text, or (with images) the OpenAI parts JSON-encoded behind Hermes's prefix."""
    if not message.images:
        return message.content
    return _JSON_CONTENT + json.dumps(message.content_parts(), ensure_ascii=False)


def _images(raw: str | None) -> tuple[str, ...]:
    """The image URLs of JSON-encoded multimodal content (so a resumed conversation still carries them)."""
    if not raw or not raw.startswith(_JSON_CONTENT):
        return ()
    try:
        parts = safe_loads(raw[len(_JSON_CONTENT):])
    except ValueError:
        return ()
    return tuple(str((p.get("image_url") or {}).get("url", "")) for p in parts if isinstance(parts, list)
                 and isinstance(p, dict) and p.get("type") == "image_url" and isinstance(p.get("image_url"), dict))


def usage_json(usage: Usage | None) -> str | None:
    if usage is None:
        return None
    return json.dumps([usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens,
                       usage.cache_write_tokens, usage.reasoning_tokens])


def message_from_row(row: sqlite3.Row) -> StoredMessage:
    """Rebuild the exact Message that was appended."""
    try:
        calls = tuple(_tool_call(c) for c in safe_loads(row["tool_calls"] or "[]") if isinstance(c, dict))
    except ValueError:
        calls = ()
    usage = Usage(*safe_loads(row["usage"])) if row["usage"] else None
    images = _images(row["content"])
    # Hermes keeps what the model was sent in api_content when the shown text differs (hidden rows, notes).
    raw = row["api_content"] if "api_content" in row.keys() and row["api_content"] else row["content"]
    msg = Message(role=row["role"], content=content_text(raw, markers=not images), tool_calls=calls,
                  tool_call_id=row["tool_call_id"], name=row["tool_name"],
                  reasoning=row["reasoning"] or row["reasoning_content"], usage=usage,
                  finish_reason=row["finish_reason"], images=images)
    return StoredMessage(id=row["id"], session_id=row["session_id"], timestamp=row["timestamp"], message=msg)
