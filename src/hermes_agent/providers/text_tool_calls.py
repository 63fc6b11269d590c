"""Tool calls written as text by local models (`<tool_call>{"name":..,"arguments":..}</tool_call>`)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from hermes_agent import lazyre
from hermes_agent.messages import Message, ToolCall, safe_loads

_BLOCK = lazyre.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


def extract_text_tool_calls(message: Message) -> Message:
    """Move Hermes/Qwen-style textual tool calls into `tool_calls`; leave other messages unchanged."""
    text = message.content or ""
    if message.tool_calls or "<tool_call>" not in text:
        return message
    calls: list[ToolCall] = []
    for n, raw in enumerate(_BLOCK.findall(text)):
        try:
            data = safe_loads(raw)
        except ValueError:
            continue
        if not isinstance(data, dict) or not data.get("name"):
            continue
        args = data.get("arguments", data.get("parameters", {}))
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        calls.append(ToolCall(id=f"textcall_{n}", name=str(data["name"]), arguments=args))
    if not calls:
        return message
    rest = _BLOCK.sub("", text).strip() or None
    return replace(message, content=rest, tool_calls=tuple(calls))
