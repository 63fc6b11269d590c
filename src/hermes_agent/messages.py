"""Conversation value types (frozen): Message, ToolCall, Usage. Only these cross layer boundaries. Also `safe_loads`,
the JSON decoder for text from outside this process (tool-call arguments above all)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


def safe_loads(text: str | bytes | bytearray, **kw: Any) -> Any:
    """json.loads for text from outside this process (a model endpoint's replies and tool-call arguments, MCP
    servers, webhooks, confined scripts and tools). Text nested deeper than the interpreter's stack makes the
    decoder raise RecursionError, which no `except ValueError` catches and which ended whole sessions (red-team
    rt7 a06); here it is a `json.JSONDecodeError` (a ValueError) like any other malformed JSON."""
    try:
        return json.loads(text, **kw)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text if isinstance(text, str) else "", 0) from None
# The user-role message that stands in for compacted turns starts with one of these (ours; Hermes's): core writes it,
# storage's retention keeps the newest one when it prunes an open chat's old turns.
SUMMARY_PREFIX = "[CONTEXT SUMMARY — REFERENCE ONLY]"
SUMMARY_PREFIXES = (SUMMARY_PREFIX, "[CONTEXT COMPACTION — REFERENCE ONLY]")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by the model; `arguments` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str = "{}"

    def to_openai(self) -> dict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_openai(cls, d: dict) -> ToolCall:
        fn = d.get("function") or {}
        args = fn.get("arguments", "{}")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        return cls(id=str(d.get("id") or ""), name=str(fn.get("name") or ""), arguments=args)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts reported by the API for one model call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message; `to_openai()` gives the chat-completions wire dict."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    usage: Usage | None = field(default=None, compare=False)
    finish_reason: str | None = field(default=None, compare=False)
    images: tuple[str, ...] = ()  # image URLs (data: URLs for local files) sent with a user message

    def content_parts(self) -> list[dict]:
        """OpenAI multimodal content: the text part, then one `image_url` part per image."""
        return [{"type": "text", "text": self.content or ""},
                *({"type": "image_url", "image_url": {"url": url}} for url in self.images)]

    def to_openai(self, *, include_reasoning: bool = True) -> dict:
        d: dict = {"role": self.role, "content": self.content_parts() if self.images else self.content}
        if self.tool_calls:
            d["tool_calls"] = [tc.to_openai() for tc in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.role == "tool" and self.name:
            d["name"] = self.name
        if include_reasoning and self.reasoning and self.role == "assistant":
            d["reasoning_content"] = self.reasoning
        return d

    @classmethod
    def from_openai(cls, d: dict) -> Message:
        calls = tuple(ToolCall.from_openai(tc) for tc in d.get("tool_calls") or ())
        content, images = d.get("content"), ()
        if isinstance(content, list):  # multimodal parts: the text, and the images' URLs
            parts = [p for p in content if isinstance(p, dict)]
            content = "".join(p.get("text", "") for p in parts)
            images = tuple(str((p.get("image_url") or {}).get("url", "")) for p in parts if p.get("type") == "image_url")
        return cls(
            role=d["role"],
            content=content,
            tool_calls=calls,
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
            reasoning=d.get("reasoning_content") or d.get("reasoning"),
            images=images,
        )

    def with_content(self, content: str | None) -> Message:
        return replace(self, content=content)


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str, images: tuple[str, ...] = ()) -> Message:
    return Message(role="user", content=text, images=images)


def tool_result(call: ToolCall, content: str) -> Message:
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)


# ---- results too long for the model ------------------------------------------------------------

def _cut(text: str, keep: int) -> str:
    head, tail = int(keep * 0.65), int(keep * 0.35)
    return f"{text[:head]}\n...[{len(text) - head - tail} characters cut from the middle of this tool result]...\n" \
           f"{text[len(text) - tail:] if tail else ''}"


def cap_result(result: str, limit: int) -> str:
    """An oversized result cut to about `limit` characters, head and tail kept with a marker of what was cut.
    A JSON result stays JSON: its longest strings are cut, never its text (red-team round 7 a35: a 30 MB MCP
    result cut mid-string reached the model as a broken tool message)."""
    if len(result) <= limit:
        return result
    try:
        value = json.loads(result)
    except (ValueError, RecursionError):
        return _cut(result, limit)
    if not isinstance(value, dict | list):
        return _cut(result, limit)
    for _ in range(12):
        text = json.dumps(value, ensure_ascii=False)
        over = len(text) - limit
        if over <= 0:
            return text
        (holder, key, longest), items = _longest(value)
        if holder is not None and len(longest) > 200:
            holder[key] = _cut(longest, max(len(longest) - over - 120, 100))
            continue
        if items is None or len(items) < 4:
            break
        keep = max(2, int(len(items) * limit / len(text) * 0.9))
        items[keep // 2: len(items) - keep // 2] = [f"...[{len(items) - keep // 2 * 2} items cut from the middle]..."]
    return json.dumps({"error": f"the tool result ({len(result)} characters) is too large to show",
                       "head": _cut(result, min(limit // 2, 4000))}, ensure_ascii=False)


def _longest(value: object) -> tuple[tuple[dict | list | None, object, str], list | None]:
    """In one iterative walk of `value`: (the container, its key or index, the string) of its longest string,
    and its longest list."""
    best: tuple[dict | list | None, object, str] = (None, None, "")
    longest: list | None = None
    stack: list = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list) and (longest is None or len(node) > len(longest)):
            longest = node
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if isinstance(v, str):
                if len(v) > len(best[2]):
                    best = (node, k, v)
            elif isinstance(v, dict | list):
                stack.append(v)
    return best, longest
