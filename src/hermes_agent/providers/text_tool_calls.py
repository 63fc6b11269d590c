"""Tool calls written as text by local models (`<tool_call>{"name":..,"arguments":..}</tool_call>`)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from hermes_agent import lazyre
from hermes_agent.messages import Message, ToolCall, safe_loads
from hermes_agent.providers.base import ChatRequest

_BLOCK = lazyre.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_NUMBERED = lazyre.compile(r"(?m)^ *\d+\|")


def extract_text_tool_calls(message: Message, request: ChatRequest | None = None) -> Message:
    """Move Hermes/Qwen-style textual tool calls into `tool_calls`; leave other messages unchanged. With the
    `request`, never a block the model was shown (rt15b e07: a model
    quoting a README, a page or a tool result that holds `<tool_call>` text is quoting, not calling): such a
    block stays in the reply's text."""
    text = message.content or ""
    if message.tool_calls or "<tool_call>" not in text:
        return message
    shown = _shown(request)
    calls: list[ToolCall] = []
    kept: list[str] = []
    for match in _BLOCK.finditer(text):
        call = _call(match.group(1), len(calls))
        if call is None or _canonical(call) in shown:
            kept.append(match.group(0))
            continue
        calls.append(call)
    if not calls:
        return message
    rest = _BLOCK.sub(lambda m: m.group(0) if m.group(0) in kept else "", text).strip() or None
    return replace(message, content=rest, tool_calls=tuple(calls))


def _call(raw: str, n: int) -> ToolCall | None:
    try:
        data = safe_loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not data.get("name"):
        return None
    args = data.get("arguments", data.get("parameters", {}))
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return ToolCall(id=f"textcall_{n}", name=str(data["name"]), arguments=args)


def _canonical(call: ToolCall) -> str:
    """A call's name and arguments, whatever their spacing and key order."""
    try:
        args = json.loads(call.arguments)
    except ValueError:
        args = call.arguments
    return json.dumps([call.name, args], sort_keys=True, ensure_ascii=False)


def _shown(request: ChatRequest | None) -> set[str]:
    """The textual calls inside what the model was shown (tool results, the user's and system words), canonical."""
    out: set[str] = set()
    for m in request.messages if request is not None else ():
        content = m.content or ""
        if m.role == "assistant" or "<tool_call>" not in content:
            continue
        for text in _readings(content):
            for raw in _BLOCK.findall(text):
                call = _call(raw, 0)
                if call is not None:
                    out.add(_canonical(call))
    return out


def _readings(content: str) -> list[str]:
    """The texts a tool result shows the model: itself, the strings inside it when it is JSON (a file's
    contents, a command's output), and each of those without read_file's `   12|` line numbers."""
    texts = [content]
    try:
        texts += _strings(json.loads(content))
    except ValueError:
        pass
    return texts + [_NUMBERED.sub("", t) for t in texts if "|" in t]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if "<tool_call>" in value else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
