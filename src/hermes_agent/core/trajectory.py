"""Trajectories in the ShareGPT format (`<tool_call>`, `<tool_response>`, `<think>`) for training data."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hermes_agent.messages import Message


def _gpt_value(m: Message) -> str:
    parts = []
    if m.reasoning:
        parts.append(f"<think>\n{m.reasoning}\n</think>")
    if m.content:
        parts.append(m.content)
    for call in m.tool_calls:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            args = call.arguments
        parts.append("<tool_call>\n" + json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False)
                     + "\n</tool_call>")
    return "\n".join(parts)


def to_sharegpt(messages: list[Message], tools: list[dict]) -> list[dict]:
    """Convert a conversation (system first) to ShareGPT turns."""
    out: list[dict] = []
    tool_json = json.dumps([t.get("function", t) for t in tools], ensure_ascii=False)
    for m in messages:
        if m.role == "system":
            out.append({"from": "system", "value": f"{m.content or ''}\n<tools>\n{tool_json}\n</tools>"})
        elif m.role == "user":
            out.append({"from": "human", "value": m.content or ""})
        elif m.role == "assistant":
            out.append({"from": "gpt", "value": _gpt_value(m)})
        else:
            body = {"tool_call_id": m.tool_call_id, "name": m.name, "content": m.content}
            out.append({"from": "tool", "value": "<tool_response>\n" + json.dumps(body, ensure_ascii=False)
                        + "\n</tool_response>"})
    return out


def save_trajectory(directory: Path, messages: list[Message], tools: list[dict], model: str, completed: bool) -> Path:
    """Append one record to trajectory_samples.jsonl (or failed_trajectories.jsonl) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ("trajectory_samples.jsonl" if completed else "failed_trajectories.jsonl")
    record = {"conversations": to_sharegpt(messages, tools), "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "model": model, "completed": completed}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
