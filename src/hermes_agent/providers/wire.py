"""Chat-completions wire format: Message <-> JSON, streamed-chunk accumulation, error classification."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from hermes_agent import lazyre
from hermes_agent.errors import (
    AuthError,
    BadRequestError,
    ContextTooLongError,
    ProviderError,
    RateLimitedError,
    TransientError,
)
from hermes_agent.messages import Message, ToolCall, Usage, safe_loads

_CONTEXT_MARKERS = lazyre.compile(
    r"context[_ ]length|context window|maximum context|too many tokens|prompt is too long|"
    r"reduce the length|input is too long|exceeds the (?:model'?s? )?(?:maximum|context)", re.I)


def usage_from(data: dict | None) -> Usage | None:
    """Usage from an API `usage` object (None when absent)."""
    if not data:
        return None
    details = data.get("prompt_tokens_details") or {}
    out_details = data.get("completion_tokens_details") or {}
    return Usage(
        prompt_tokens=int(data.get("prompt_tokens") or 0),
        completion_tokens=int(data.get("completion_tokens") or 0),
        cache_read_tokens=int(details.get("cached_tokens") or data.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(data.get("cache_creation_input_tokens") or 0),
        reasoning_tokens=int(out_details.get("reasoning_tokens") or 0),
    )


TRUNCATED = "truncated"  # finish_reason of a reply cut at max_chars


def truncation_note(max_chars: int) -> str:
    return (f"\n\n[reply truncated: the model sent more than {max_chars:,} characters; "
            "the rest was discarded (agent.max_reply_chars)]")


@dataclass(slots=True)
class StreamAccumulator:
    """Folds chat.completion.chunk objects into one assistant Message, keeping at most `max_chars`
    characters of text, of reasoning and of each tool call's arguments (`truncated` says it cut)."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, dict] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    max_chars: int = 0  # 0: no cap
    truncated: bool = False
    _sizes: dict[str, int] = field(default_factory=dict)

    def _keep(self, channel: str, piece: str) -> str:
        """The part of `piece` that still fits the cap of `channel`."""
        if not self.max_chars or not piece:
            return piece
        used = self._sizes.get(channel, 0)
        room = self.max_chars - used
        if len(piece) > room:
            self.truncated = True
            piece = piece[:max(0, room)]
        self._sizes[channel] = used + len(piece)
        return piece

    def feed(self, chunk: dict) -> tuple[str, str]:
        """Absorb one chunk; return (text delta, reasoning delta) as kept."""
        if chunk.get("usage"):
            self.usage = usage_from(chunk["usage"])
        choices = chunk.get("choices") or []
        if not choices:
            return "", ""
        choice = choices[0]
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        delta = choice.get("delta") or choice.get("message") or {}
        text = self._keep("text", delta.get("content") or "")
        reasoning = self._keep("reasoning", delta.get("reasoning_content") or delta.get("reasoning") or "")
        if text:
            self.text.append(text)
        if reasoning:
            self.reasoning.append(reasoning)
        for i, tc in enumerate(delta.get("tool_calls") or ()):
            index = int(tc.get("index", i))
            slot = self.calls.setdefault(index, {"id": "", "name": "", "args": []})
            slot["id"] = tc.get("id") or slot["id"]
            fn = tc.get("function") or {}
            slot["name"] += fn.get("name") or ""
            args = fn.get("arguments")
            if args:
                args = args if isinstance(args, str) else json.dumps(args)
                slot["args"].append(self._keep(f"call{index}", args))
        return text, reasoning

    def message(self) -> Message:
        calls = tuple(
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments="".join(c["args"]) or "{}")
            for i, c in sorted(self.calls.items())
        )
        content = "".join(self.text) or None
        if self.truncated:
            content = (content or "") + truncation_note(self.max_chars)
        return Message(role="assistant", content=content, tool_calls=calls,
                       reasoning="".join(self.reasoning) or None, usage=self.usage,
                       finish_reason=TRUNCATED if self.truncated else self.finish_reason)


def to_wire(messages: tuple[Message, ...]) -> list[dict]:
    """Messages as chat-completions dicts."""
    return [m.to_openai() for m in messages]


def classify_http_error(status: int, body: str, retry_after: str | None, url: str, reason: str = "") -> ProviderError:
    """Map an HTTP error response to the typed ProviderError tree: one line with the status, its reason and at
    most a short plain-text excerpt of the body. 5xx (but 501), 408 and 429 are retryable; other 4xx are not."""
    detail = _error_detail(body)
    where = f"{url} answered {status} {reason or _phrase(status)}".rstrip()
    if status in (401, 403):
        return AuthError(f"{where}: the API key was refused ({detail})", status=status)
    if status == 429:
        return RateLimitedError(f"{where}: rate limited ({detail})", status=status,
                                retry_after=_parse_retry_after(retry_after))
    if status == 413 or (status in (400, 422) and _CONTEXT_MARKERS.search(body or "")):
        return ContextTooLongError(f"{where}: the conversation is too long for the model ({detail})", status=status)
    if status == 501:  # the endpoint does not do this at all: asking again cannot help
        return ProviderError(f"{where}: the endpoint does not implement this request ({detail})", status=status)
    if status >= 500 or status == 408:
        return TransientError(f"{where}: server error ({detail})", status=status,
                              retry_after=_parse_retry_after(retry_after))
    return BadRequestError(f"{where}: {detail}", status=status)


_EXCERPT = 160


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _error_detail(body: str) -> str:
    """The endpoint's error message (JSON `error.message`), else a short one-line excerpt of the body as plain
    text (an HTML error page reduced to its text)."""
    try:
        data = safe_loads(body)
        err = data.get("error", data)
        msg = err.get("message") if isinstance(err, dict) else err
        text = str(msg or body)
    except (ValueError, AttributeError):
        text = body or ""
    if "<" in text and re.search(r"<(html|body|head|title|p|h\d|div)\b", text, re.I):
        text = re.sub(r"(?is)<(head|script|style)\b.*?</\1\s*>", " ", text)
        text = re.sub(r"(?s)<!--.*?-->|<[^>]*>", " ", text)
        from html import unescape

        text = unescape(text)
    text = " ".join(text.split())
    if not text:
        return "no details"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT - 1].rstrip() + "…"


def _parse_retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
