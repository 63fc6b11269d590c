"""OpenAI-compatible chat completions over httpx2 (the openai SDK's own transport): streaming with
tool-call deltas, reasoning kept, usage recorded, failures raised as typed ProviderErrors."""

from __future__ import annotations

import json
import logging
import threading

from hermes_agent.errors import ProviderError, TransientError
from hermes_agent.messages import Message
from hermes_agent.providers.base import ChatRequest, OnDelta
from hermes_agent.providers.text_tool_calls import extract_text_tool_calls
from hermes_agent.providers.wire import StreamAccumulator, classify_http_error, to_wire

log = logging.getLogger(__name__)


class OpenAIChatProvider:
    """One endpoint + model. The HTTP client is created on first use and reused (keep-alive)."""

    def __init__(self, base_url: str, api_key: str, model: str, *, name: str = "custom",
                 timeout: float = 600.0, stream: bool = True, extra_headers: dict | None = None,
                 wire_hook=None) -> None:
        self.name, self.model = name, model
        self.base_url = base_url.rstrip("/")
        self._api_key, self._timeout, self._stream = api_key, timeout, stream
        self._headers = dict(extra_headers or {})
        self._wire_hook = wire_hook
        self._client = None
        self._lock = threading.Lock()

    def _http(self):
        with self._lock:
            if self._client is None:
                import httpx2

                plain = self.base_url.startswith("http://")
                self._client = httpx2.Client(
                    timeout=httpx2.Timeout(self._timeout, connect=15.0),
                    verify=not plain,  # no TLS context work for plain-http local endpoints
                    headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json",
                             "User-Agent": "hermes-agent", **self._headers},
                )
            return self._client

    def body(self, request: ChatRequest) -> dict:
        """The JSON body sent for a request."""
        wire = to_wire(request.messages)
        if self._wire_hook is not None:
            wire = self._wire_hook(wire, self.model, self.name)
        body: dict = {"model": self.model, "messages": wire}
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
        return body

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        """POST /chat/completions and fold the (streamed) answer into a Message."""
        import httpx2

        url = f"{self.base_url}/chat/completions"
        payload = json.dumps(self.body(request), ensure_ascii=False).encode()
        try:
            with self._http().stream("POST", url, content=payload) as resp:
                if resp.status_code >= 400:
                    body = resp.read().decode("utf-8", "replace")
                    raise classify_http_error(resp.status_code, body, resp.headers.get("retry-after"), url)
                ctype = resp.headers.get("content-type", "")
                if "text/event-stream" in ctype:
                    message = self._read_stream(resp, on_delta, cancel)
                else:
                    message = self._read_json(resp.read(), on_delta)
        except ProviderError:
            raise
        except httpx2.TimeoutException as exc:
            raise TransientError(f"{url}: timed out ({type(exc).__name__})") from None
        except httpx2.TransportError as exc:
            raise TransientError(f"cannot reach {self.base_url}: {exc or type(exc).__name__}") from None
        return extract_text_tool_calls(message)

    @staticmethod
    def _read_stream(resp, on_delta: OnDelta | None, cancel: threading.Event | None) -> Message:
        acc = StreamAccumulator()
        for line in resp.iter_lines():
            if cancel is not None and cancel.is_set():
                break
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                log.debug("skipping malformed SSE line: %.200s", data)
                continue
            if isinstance(chunk, dict) and chunk.get("error"):
                err = chunk["error"]
                raise TransientError(f"stream error: {err.get('message') if isinstance(err, dict) else err}")
            text, reasoning = acc.feed(chunk)
            if on_delta is not None:
                if reasoning:
                    on_delta("reasoning", reasoning)
                if text:
                    on_delta("text", text)
        return acc.message()

    @staticmethod
    def _read_json(raw: bytes, on_delta: OnDelta | None) -> Message:
        try:
            data = json.loads(raw)
        except ValueError:
            raise TransientError(f"endpoint returned non-JSON: {raw[:200]!r}") from None
        acc = StreamAccumulator()
        acc.feed(data)
        msg = acc.message()
        if on_delta is not None and msg.content:
            on_delta("text", msg.content)
        return msg

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
