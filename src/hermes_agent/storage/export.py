"""Render a stored session as JSON Lines or Markdown. Pure functions over records; no SQL.

Two shapes: Hermes's (`hermes sessions export`: one JSON object per session, its row plus `messages`, and
Markdown files with a front matter) and ours (a session line, then one line per message)."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime

from hermes_agent.messages import safe_loads
from hermes_agent.storage.records import SessionInfo, StoredMessage

_SESSION_FIELDS = ("id", "source", "model", "title", "parent_session_id", "started_at", "ended_at", "end_reason",
                   "message_count", "tool_call_count", "api_call_count", "input_tokens", "output_tokens",
                   "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd", "cwd",
                   "system_prompt")


def when(ts: float | None) -> str:
    """Local time as 'YYYY-MM-DD HH:MM' ('-' when unknown)."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def message_dict(rec: StoredMessage) -> dict:
    """One message as an OpenAI-style dict plus id, timestamp and reasoning (None fields dropped)."""
    m = rec.message
    d: dict = {"id": rec.id, "timestamp": rec.timestamp, "role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [tc.to_openai() for tc in m.tool_calls]
    extra = {"tool_call_id": m.tool_call_id, "name": m.name, "reasoning": m.reasoning,
             "finish_reason": m.finish_reason}
    d.update({k: v for k, v in extra.items() if v is not None})
    if m.usage is not None:
        d["usage"] = {"prompt_tokens": m.usage.prompt_tokens, "completion_tokens": m.usage.completion_tokens,
                      "cache_read_tokens": m.usage.cache_read_tokens,
                      "cache_write_tokens": m.usage.cache_write_tokens,
                      "reasoning_tokens": m.usage.reasoning_tokens}
    return d


def to_jsonl(info: SessionInfo, records: list[StoredMessage]) -> str:
    """A `{"type": "session", ...}` line, then one `{"type": "message", ...}` line per message."""
    head = {"type": "session", **{f: getattr(info, f) for f in _SESSION_FIELDS}}
    lines = [json.dumps(head, ensure_ascii=False)]
    lines += [json.dumps({"type": "message", **message_dict(r)}, ensure_ascii=False) for r in records]
    return "\n".join(lines) + "\n"


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _pretty_args(arguments: str) -> str:
    try:
        return json.dumps(safe_loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


def usage_line(info: SessionInfo) -> str:
    """'12,345 in / 678 out tokens, $0.0123' (cost omitted when unknown)."""
    cost = f", ${info.estimated_cost_usd:.4f}" if info.estimated_cost_usd is not None else ""
    return f"{info.input_tokens:,} in / {info.output_tokens:,} out tokens{cost}"


def to_markdown(info: SessionInfo, records: list[StoredMessage]) -> str:
    """A readable transcript: header with metadata, then one section per message."""
    out = [f"# {info.title or info.id}", "",
           f"- Session: `{info.id}` ({info.source}{', model ' + info.model if info.model else ''})",
           f"- Started: {when(info.started_at)} · Last active: {when(info.last_active_at)}",
           f"- Messages: {info.message_count} · Tool calls: {info.tool_call_count} · Usage: {usage_line(info)}"]
    if info.parent_session_id:
        out.append(f"- Continues: `{info.parent_session_id}`")
    for rec in records:
        m = rec.message
        label = f"tool result ({m.name})" if m.role == "tool" and m.name else m.role
        out += ["", f"## {label} · {when(rec.timestamp)}", ""]
        if m.reasoning:
            out += ["> " + line for line in m.reasoning.splitlines()] + [""]
        if m.content:
            out.append(_fence(m.content) if m.role == "tool" else m.content)
        for tc in m.tool_calls:
            out += ["", f"**Tool call** `{tc.name}`", "", _fence(_pretty_args(tc.arguments), "json")]
    return "\n".join(out) + "\n"


def _plain(value: object) -> object:
    return value.hex() if isinstance(value, bytes | bytearray) else value


def hermes_record(raw: dict) -> dict:
    """Hermes's export object: row columns as stored (BLOBs as hex), each message's tool_calls as a list."""
    out = {k: _plain(v) for k, v in raw.items() if k != "messages"}
    msgs = []
    for m in raw.get("messages", []):
        m = {k: _plain(v) for k, v in m.items()}
        if isinstance(m.get("tool_calls"), str):
            try:
                m["tool_calls"] = safe_loads(m["tool_calls"])
            except ValueError:
                pass
        msgs.append(m)
    out["messages"] = msgs
    return out


def _iso(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if ts else ""


def hermes_markdown(info: SessionInfo, records: list[StoredMessage]) -> str:
    """One session as Hermes's Markdown export: a YAML front matter Hermes reads back, then our transcript."""
    meta = {"session_id": info.id, "title": info.title, "source": info.source, "created_at": _iso(info.started_at),
            "updated_at": _iso(info.last_active_at), "ended_at": _iso(info.ended_at), "model": info.model,
            "cwd": info.cwd, "message_count": info.message_count,
            "tool_call_count": info.tool_call_count, "format": "md", "exported_at": _iso(time.time()),
            "exporter": "hermes-agent sessions export (md)"}
    front = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items())
    return f"---\n{front}\n---\n\n" + to_markdown(info, records)
