"""Trajectories byte-compatible with Hermes's: ShareGPT turns (`<think>`, `<tool_call>`, `<tool_response>`
holding the result as an object), the fixed function-calling system preamble with `<tools>`, appended
to trajectory_samples.jsonl / failed_trajectories.jsonl in the working directory as Hermes does."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hermes_agent.messages import Message, safe_loads

_PREAMBLE_HEAD = (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. "
    "You may call one or more functions to assist with the user query. If available tools are not relevant in assisting "
    "with user query, just respond in natural conversational language. Don't make assumptions about what values to plug "
    "into functions. After calling & executing the functions, you will be provided with function results within "
    "<tool_response> </tool_response> XML tags. Here are the available tools:\n")
_PREAMBLE_TAIL = (
    "For each function call return a JSON object, with the following pydantic model json schema for each:\n"
    "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, "
    "'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n"
    "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n"
    "Example:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>")


def system_turn(tools: list[dict]) -> str:
    """Hermes's fixed function-calling system turn with the tools inside <tools>."""
    listed = [{"name": f["name"], "description": f.get("description", ""), "parameters": f.get("parameters", {}),
               "required": None} for f in (t.get("function", t) for t in tools)]
    return f"{_PREAMBLE_HEAD}<tools>\n{json.dumps(listed, ensure_ascii=False) if listed else '[]'}\n</tools>\n{_PREAMBLE_TAIL}"


def _gpt_value(m: Message) -> str:
    """An assistant turn as Hermes writes it: a <think> block always (empty without reasoning), the
    text, then one <tool_call> per call."""
    text = f"<think>\n{m.reasoning}\n</think>\n" if m.reasoning and m.reasoning.strip() else ""
    raw = (m.content or "").replace("<REASONING_SCRATCHPAD>", "<think>").replace("</REASONING_SCRATCHPAD>", "</think>")
    if not m.tool_calls:
        text += raw
    elif raw.strip():
        text += raw + "\n"
    for call in m.tool_calls:
        try:
            args = safe_loads(call.arguments) if call.arguments else {}
        except ValueError:
            args = {}
        text += "<tool_call>\n" + json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False) + "\n</tool_call>\n"
    if "<think>" not in text:
        text = "<think>\n</think>\n" + text
    return text.rstrip() if m.tool_calls else text.strip()


def _tool_value(results: list[Message], caller: Message) -> str:
    """The tool results answering `caller`, one <tool_response> each; JSON results as objects."""
    parts = []
    for i, m in enumerate(results):
        content: object = m.content or ""
        if isinstance(content, str) and content.strip().startswith(("{", "[")):
            try:
                content = safe_loads(content)
            except ValueError:
                pass
        name = caller.tool_calls[i].name if i < len(caller.tool_calls) else "unknown"
        body = {"tool_call_id": m.tool_call_id or "", "name": name, "content": content}
        parts.append("<tool_response>\n" + json.dumps(body, ensure_ascii=False) + "\n</tool_response>")
    return "\n".join(parts)


def to_sharegpt(messages: list[Message], tools: list[dict]) -> list[dict]:
    """A conversation as Hermes's trajectory turns (our system prompt is replaced by Hermes's fixed
    function-calling preamble, as Hermes does)."""
    out: list[dict] = [{"from": "system", "value": system_turn(tools)}]
    rest = [m for m in messages if m.role != "system"]
    i = 0
    while i < len(rest):
        m = rest[i]
        if m.role == "user":
            out.append({"from": "human", "value": m.content or ""})
        elif m.role == "assistant":
            out.append({"from": "gpt", "value": _gpt_value(m)})
            j = i + 1
            while j < len(rest) and rest[j].role == "tool":
                j += 1
            if m.tool_calls and j > i + 1:
                out.append({"from": "tool", "value": _tool_value(rest[i + 1:j], m)})
                i = j - 1
        i += 1
    return out


def save_trajectory(directory: Path, messages: list[Message], tools: list[dict], model: str, completed: bool) -> Path:
    """Append one record to trajectory_samples.jsonl (or failed_trajectories.jsonl) in `directory`."""
    from hermes_agent.nofollow import append_nofollow

    path = directory / ("trajectory_samples.jsonl" if completed else "failed_trajectories.jsonl")
    record = {"conversations": to_sharegpt(messages, tools), "timestamp": datetime.now().isoformat(),
              "model": model, "completed": completed}
    append_nofollow(path, json.dumps(record, ensure_ascii=False) + "\n")  # the workspace: no link followed
    return path
