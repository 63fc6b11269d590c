"""Helpers every tool uses to build its JSON result string."""

from __future__ import annotations

import json

from hermes_agent.messages import safe_loads


def tool_result(data: object = None, **fields: object) -> str:
    """JSON text of `data` (or of the keyword fields)."""
    payload = fields if data is None else data
    return json.dumps(payload, ensure_ascii=False, default=str)


def tool_error(message: str, **extra: object) -> str:
    """`{"error": message, ...}` as JSON text: what the model sees when a call fails."""
    return json.dumps({"error": message, **extra}, ensure_ascii=False, default=str)


def failure(result: str, limit: int = 120) -> str:
    """The first line of why a call failed or was refused ('' when it did not): an `{"error": ...}` object, a
    `{"success": false, ...}` one, or results that each carry an error (web_extract of blocked URLs)."""
    if not result.startswith("{") or ('"error"' not in result and '"success": false' not in result):
        return ""  # most results: no parse on the hot path
    try:
        data = safe_loads(result)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    why: object = ""
    if data.get("error") and data.get("success") is not True:
        why = data["error"]
    elif data.get("success") is False or data.get("status") == "error":
        why = data.get("error") or data.get("message") or "failed"
    else:
        items = data.get("results")
        if isinstance(items, list) and items and all(isinstance(i, dict) and i.get("error") for i in items):
            why = items[0]["error"]
    if not why:
        return ""
    lines = [ln.strip() for ln in str(why).splitlines() if ln.strip()]
    line = lines[0] if lines else "failed"
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def is_error(result: str) -> bool:
    """True when a result string is an error object."""
    if not result.startswith('{"error"'):
        return False
    try:
        return "error" in safe_loads(result)
    except ValueError:
        return False


def shown_name(name: str, limit: int = 64) -> str:
    """A tool name as echoed back to the model in an error: a hostile or garbled 1 MB name is not repeated."""
    return name if len(name) <= limit else f"{name[:limit]}...({len(name):,} characters)"
