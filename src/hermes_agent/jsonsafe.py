"""`loads`: json.loads for text from outside this process (a model endpoint's replies and tool-call arguments,
MCP servers, webhooks, confined scripts and tools). Text nested deeper than the interpreter's stack makes the
decoder raise RecursionError, which no `except ValueError` catches and which ended whole sessions (red-team
rt7 a06); here it is a `json.JSONDecodeError` (a ValueError) like any other malformed JSON. Stdlib only."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes | bytearray, **kw: Any) -> Any:
    """json.loads(text); nesting too deep for the decoder is a JSONDecodeError, never a RecursionError."""
    try:
        return json.loads(text, **kw)
    except RecursionError:
        doc = text if isinstance(text, str) else ""
        raise json.JSONDecodeError("nested too deeply", doc, 0) from None
