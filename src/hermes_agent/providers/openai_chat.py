"""OpenAI-compatible chat completions: streaming with tool-call deltas, reasoning kept, usage recorded,
failures raised as typed ProviderErrors. Wire-compatible with the openai SDK (the tests check both
against the same server) without its 300 ms import."""

from __future__ import annotations

import json
import threading
from typing import NamedTuple

from hermes_agent.errors import ProviderError, TransientError
from hermes_agent.lazylog import get_logger
from hermes_agent.messages import Message, safe_loads
from hermes_agent.providers.base import ChatRequest, OnDelta
from hermes_agent.providers.http import HttpClient, IdlePolicy, Proxy, Response
from hermes_agent.providers.http11 import HTTPError
from hermes_agent.providers.text_tool_calls import extract_text_tool_calls
from hermes_agent.providers.wire import StreamAccumulator, classify_http_error

log = get_logger(__name__)
_ERROR_BODY_MAX = 1_000_000


def _carries(chunk: object) -> bool:
    """Whether a stream event carries something besides text: a tool call's part, the end of a choice, usage."""
    if not isinstance(chunk, dict):
        return False
    if chunk.get("usage"):
        return True
    for choice in chunk.get("choices") or ():
        if isinstance(choice, dict):
            delta = choice.get("delta")
            if choice.get("finish_reason") or (isinstance(delta, dict) and (delta.get("tool_calls")
                                                                            or delta.get("function_call"))):
                return True
    return False


class OpenAIChatProvider:
    """One endpoint + model over one keep-alive connection (created on first use)."""

    def __init__(self, base_url: str, api_key: str, model: str, *, name: str = "custom",
                 timeout: float = 600.0, stream: bool = True, extra_headers: dict | None = None,
                 wire_hook=None, proxy: Proxy | None = None, idle: IdlePolicy | None = None,
                 max_reply_chars: int = 1_000_000) -> None:
        self.name, self.model = name, model
        self.base_url = base_url.rstrip("/")
        self._stream, self._wire_hook = stream, wire_hook
        self._idle, self.max_reply_chars = idle, max_reply_chars
        headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                   "Accept": "text/event-stream, application/json", "User-Agent": "hermes-agent",
                   **(extra_headers or {})}
        self._http = HttpClient(self.base_url, timeout=timeout, headers=headers, proxy=proxy)
        self._encoder = BodyEncoder()

    def body(self, request: ChatRequest) -> dict:
        """The JSON body sent for a request."""
        return self._body(request)[0]

    def _body(self, request: ChatRequest) -> tuple[dict, _Wire | None]:
        """The body, and the encoder's view of its messages (None when a hook replaced their dicts)."""
        entries = self._encoder.wire(request.messages)
        wire = [e[1] for e in entries.entries]
        sent = wire if self._wire_hook is None else self._wire_hook(wire, self.model, self.name)
        body: dict = {"model": self.model, "messages": sent}
        if request.tools:
            body["tools"] = list(request.tools)
        if request.max_tokens:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self._stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(request.extra_body)
        return body, entries if body["messages"] is wire else None

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        """POST /chat/completions and fold the (streamed) answer into a Message."""
        payload = self._encoder.encode(*self._body(request))  # compact JSON, each message and the tools encoded once
        try:
            resp = self._http.post("/chat/completions", payload, cancel, self._idle)
        except TransientError:
            if cancel is not None and cancel.is_set():
                return Message(role="assistant", content=None)
            raise
        try:
            if resp.status >= 400:
                body = resp.read(_ERROR_BODY_MAX).decode("utf-8", "replace")
                raise classify_http_error(resp.status, body, resp.headers.get("retry-after"),
                                          f"{self.base_url}/chat/completions", resp.raw.reason or "")
            if "text/event-stream" in resp.headers.get("content-type", ""):
                message = self._read_stream(resp, on_delta, cancel)
            else:
                message = self._read_json(self._json_body(resp), on_delta)
            resp.raise_if_stalled()
        except (OSError, HTTPError) as exc:
            resp.finish(drain=False)  # never reuse that socket
            if cancel is not None and cancel.is_set():
                return Message(role="assistant", content=None)
            resp.raise_if_stalled()
            raise TransientError(f"{self.base_url}: the response was cut off ({type(exc).__name__})") from None
        finally:
            cancelled = cancel is not None and cancel.is_set()
            # an unfinished stream is not drained: its socket is closed, never reused
            resp.finish(drain=not (cancelled or resp.progress.stalled_for or resp.oversized))
        return extract_text_tool_calls(message, request)

    def _json_body(self, resp: Response) -> bytes:
        """A non-streamed body, refused (not read on) beyond what a capped reply can need."""
        limit = self.max_reply_chars * 8 + _ERROR_BODY_MAX
        raw = resp.read(limit + 1)
        if len(raw) > limit:
            resp.oversized = True
            raise ProviderError(f"{self.base_url}: the reply is larger than {limit // 1_000_000} MB; not read "
                                "(agent.max_reply_chars)")
        return raw

    def _read_stream(self, resp: Response, on_delta: OnDelta | None, cancel: threading.Event | None) -> Message:
        acc = StreamAccumulator(max_chars=self.max_reply_chars)
        for line in resp.iter_lines(touch=False):
            if cancel is not None and cancel.is_set():
                break
            if acc.truncated:
                resp.oversized = True  # stop reading: the rest would only be discarded
                break
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = safe_loads(data)
            except ValueError:
                log.debug("skipping malformed SSE line: %.200s", data)
                continue
            if isinstance(chunk, dict) and chunk.get("error"):
                err = chunk["error"]
                raise TransientError(f"stream error: {err.get('message') if isinstance(err, dict) else err}")
            text, reasoning = acc.feed(chunk)
            if text or reasoning or _carries(chunk):
                resp.progress.advance()  # keep-alive comments and empty events are not progress (rt15b e03)
            if on_delta is not None:
                if reasoning:
                    on_delta("reasoning", reasoning)
                if text:
                    on_delta("text", text)
        return acc.message()

    def _read_json(self, raw: bytes, on_delta: OnDelta | None) -> Message:
        try:
            data = safe_loads(raw)
        except ValueError:
            raise TransientError(f"endpoint returned non-JSON: {raw[:200]!r}") from None
        acc = StreamAccumulator(max_chars=self.max_reply_chars)
        acc.feed(data)
        msg = acc.message()
        if on_delta is not None and msg.content:
            on_delta("text", msg.content)
        return msg

    def close(self) -> None:
        self._http.close()

# ---- the request body, encoded once per piece (issue 24: per-turn cost) -----------------------------
# Each message is encoded when it first goes out and its text reused by every later request of the
# conversation; the tool definitions (the bulk of a request, ~12 KB) once while they are the same objects.
# The bytes are exactly json.dumps(body, ensure_ascii=False, separators=(",", ":")) of the same body.

_ORDER = ("model", "messages", "tools")


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class BodyEncoder:
    """One per provider. A conversation only grows between requests, so the messages a request shares with the
    one before (the same objects, in order) reuse that request's wire dicts and its joined JSON text: a turn
    encodes and joins only what was appended. Anything else (compaction, /undo, another conversation on the same
    provider) starts from the entries it still finds by message. State is swapped whole per request."""

    def __init__(self) -> None:
        # the last request's message ids, entries and their JSON joined (None: not encoded, a hook replaced them)
        self._last: tuple[tuple[int, ...], list[list], str | None] = ((), [], None)
        self._tools: tuple[tuple[dict, ...], str] | None = None

    def wire(self, messages: tuple[Message, ...]) -> _Wire:
        """The messages' entries ([message, wire dict, JSON text or ""]), the same entry (and dict object) for a
        message sent before: callers must not change the dicts (a hook that edits the wire copies it first, as
        caching.py does)."""
        ids = tuple(map(id, messages))
        old_ids, old_entries, old_text = self._last
        if old_ids and ids[:len(old_ids)] == old_ids:  # the old entries hold their messages: same ids, same objects
            shared = len(old_ids)
            got = _Wire(ids, old_entries + [[m, m.to_openai(), ""] for m in messages[shared:]], shared, old_text)
        else:
            by_id = {id(e[0]): e for e in old_entries}
            got = _Wire(ids, [by_id.get(id(m)) or [m, m.to_openai(), ""] for m in messages], 0, None)
        self._last = (ids, got.entries, None)
        return got

    def encode(self, body: dict, sent: _Wire | None) -> bytes:
        """`body` (as OpenAIChatProvider.body builds it) as bytes. `sent`: what `wire()` gave when body["messages"]
        are its dicts unchanged (None when a hook replaced them: those are encoded afresh)."""
        first = [k for k in _ORDER if k in body]
        if list(body)[:len(first)] != first or first[:2] != ["model", "messages"]:
            return _dumps(body).encode()
        if sent is not None:
            if sent.text is not None and sent.shared:
                new = ",".join(_text(e) for e in sent.entries[sent.shared:])
                joined = sent.text + "," + new if new else sent.text
            else:
                joined = ",".join(_text(e) for e in sent.entries)
            self._last = (sent.ids, sent.entries, joined)  # the text of exactly these entries, whatever ran between
        else:
            joined = ",".join(_dumps(d) for d in body["messages"])
        parts = ['{"model":', _dumps(body["model"]), ',"messages":[', joined, "]"]
        if "tools" in body:
            parts += [',"tools":', self._tools_text(body["tools"])]
        rest = {k: v for k, v in body.items() if k not in _ORDER}
        if rest:
            parts += [",", _dumps(rest)[1:-1]]
        parts.append("}")
        return "".join(parts).encode()

    def _tools_text(self, tools: list[dict]) -> str:
        kept = self._tools
        if kept is not None and len(kept[0]) == len(tools) and all(a is b for a, b in zip(kept[0], tools, strict=True)):
            return kept[1]
        text = _dumps(tools)
        self._tools = (tuple(tools), text)
        return text


class _Wire(NamedTuple):
    ids: tuple[int, ...]
    entries: list[list]
    shared: int  # the first `shared` entries are the last request's, whose JSON joined is `text` (None: unknown)
    text: str | None


def _text(entry: list) -> str:
    if not entry[2]:
        entry[2] = _dumps(entry[1])
    return entry[2]
