"""Helpers every tool uses to build its JSON result string."""

from __future__ import annotations

import json


def tool_result(data: object = None, **fields: object) -> str:
    """JSON text of `data` (or of the keyword fields)."""
    payload = fields if data is None else data
    return json.dumps(payload, ensure_ascii=False, default=str)


def tool_error(message: str, **extra: object) -> str:
    """`{"error": message, ...}` as JSON text: what the model sees when a call fails."""
    return json.dumps({"error": message, **extra}, ensure_ascii=False, default=str)


def is_error(result: str) -> bool:
    """True when a result string is an error object."""
    if not result.startswith('{"error"'):
        return False
    try:
        return "error" in json.loads(result)
    except ValueError:
        return False
