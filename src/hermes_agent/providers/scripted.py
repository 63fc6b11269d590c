"""A scripted OpenAI-compatible server (real HTTP on 127.0.0.1) for tests and benchmarks.

Each request consumes the next step of the script: {"content": str, "reasoning": str,
"tool_calls": [{"name": str, "arguments": obj}], "text_tool_calls": bool, "delay": s,
"error": {"status": int, "message": str, "retry_after": s}, "usage": {...}, "finish_reason": str,
"repeat": n (the content streamed n times over: huge replies without holding them), "stall": s (send
the headers, then nothing for s seconds; "stall_after": chunks sent first; "keepalive": SSE comments meanwhile)}. When the script is
exhausted the `default` step answers. Every request is logged with its arrival time and body size in bytes. With
`strict_tools` a request whose assistant tool calls lack tool results is refused with OpenAI's 400.
Run standalone: python -m hermes_agent.providers.scripted --script steps.json [--port N]."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _chunks(step: dict, model: str) -> Iterator[dict]:
    """The chat.completion.chunk objects for one step (generated lazily: `repeat` can make gigabytes)."""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def delta(d: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}

    yield delta({"role": "assistant"})
    if step.get("reasoning"):
        yield delta({"reasoning_content": step["reasoning"]})
    content = _content_of(step)
    if step.get("repeat"):
        for _ in range(int(step["repeat"])):
            yield delta({"content": content})
    else:
        yield from (delta({"content": piece}) for piece in _split(content))
    yield from _call_chunks(step, delta)
    yield {**base, "choices": [], "usage": _usage(step)}


def _call_chunks(step: dict, delta: Callable[..., dict]) -> Iterator[dict]:
    out = []
    calls = [] if step.get("text_tool_calls") else step.get("tool_calls") or []
    for i, call in enumerate(calls):
        args = call.get("arguments", {})
        args = args if isinstance(args, str) else json.dumps(args)
        head = {"index": i, "id": call.get("id", f"call_{i}_{int(time.time() * 1e6) % 10**8}"), "type": "function",
                "function": {"name": call["name"], "arguments": ""}}
        out.append(delta({"tool_calls": [head]}))
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            out.append(delta({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    out.append(delta({}, step.get("finish_reason") or ("tool_calls" if calls else "stop")))
    return iter(out)


def _content_of(step: dict) -> str:
    content = step.get("content") or ""
    if step.get("text_tool_calls"):
        for call in step.get("tool_calls") or []:
            content += "<tool_call>" + json.dumps({"name": call["name"], "arguments": call.get("arguments", {})}) + "</tool_call>"
    return content


def _split(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words) if w or i < len(words) - 1] if text else []


def _usage(step: dict) -> dict:
    usage = step.get("usage") or {}
    return {"prompt_tokens": usage.get("prompt_tokens", 10), "completion_tokens": usage.get("completion_tokens", 5),
            "total_tokens": usage.get("prompt_tokens", 10) + usage.get("completion_tokens", 5)}


def completion(step: dict, model: str) -> dict:
    """A non-streamed chat.completion object for one step."""
    message: dict = {"role": "assistant", "content": _content_of(step) or None}
    if step.get("reasoning"):
        message["reasoning_content"] = step["reasoning"]
    calls = [] if step.get("text_tool_calls") else step.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id", f"call_{i}"), "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                          else json.dumps(c.get("arguments", {}))}} for i, c in enumerate(calls)]
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": step.get("finish_reason") or ("tool_calls" if calls else "stop")}],
            "usage": _usage(step)}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.open_sockets: set = set()

    def process_request(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:  # type: ignore[no-untyped-def]
        self.open_sockets.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Close kept-alive client connections too, as a real server restart would."""
        for sock in list(self.open_sockets):
            try:
                sock.shutdown(2)
            except OSError:
                pass

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients dropping keep-alive connections is normal here; stay quiet."""


class ScriptedServer:
    """Serve a script of responses on 127.0.0.1; `url` ends in /v1."""

    def __init__(self, script: list[dict] | None = None, default: dict | None = None, port: int = 0,
                 models: tuple[str, ...] = ("scripted-model",), strict_tools: bool = False) -> None:
        self.script = list(script or [])
        self.strict_tools = strict_tools
        self.default = default if default is not None else {"content": "ok"}
        self.models = models
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", port), _handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def next_step(self, body: dict, authorization: str | None = None, size: int | None = None) -> dict:
        with self._lock:
            self.requests.append({"time": time.time(), "body": body, "authorization": authorization, "bytes": size})
            step = self.script.pop(0) if self.script else self.default
        return step(body) if callable(step) else step  # a callable step answers from the request (tests)

    def add(self, *steps: dict) -> None:
        with self._lock:
            self.script.extend(steps)

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.drop_connections()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    """Serves /v1/models and /v1/chat/completions from `scripted` (set per server by _handler_for)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small SSE writes must not wait for delayed ACKs
    scripted: ScriptedServer

    def log_message(self, *args: object) -> None:  # quiet
        return

    def _send_json(self, status: int, obj: dict, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.scripted.models]})
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._send_json(400, {"error": {"message": "invalid JSON body"}})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send_json(404, {"error": {"message": "not found"}})
        if self.scripted.strict_tools:
            unanswered = unanswered_tool_calls(body.get("messages") or [])
            if unanswered:
                self.scripted.next_step(body, self.headers.get("Authorization"))  # logged like any request; the step is spent as OpenAI would
                return self._send_json(400, {"error": {
                    "message": "An assistant message with 'tool_calls' must be followed by tool messages responding "
                               "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                               + ", ".join(unanswered), "type": "invalid_request_error", "code": None}})
        step = self.scripted.next_step(body, self.headers.get("Authorization"), size=length)
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if step.get("error"):
            err = step["error"]
            extra = {"Retry-After": str(err["retry_after"])} if "retry_after" in err else {}
            return self._send_json(int(err.get("status", 500)), {"error": {"message": err.get("message", "scripted error"),
                                                                           "code": err.get("code")}}, extra)
        model = body.get("model", "scripted-model")
        if not body.get("stream"):
            time.sleep(float(step.get("stall") or 0))
            return self._send_json(200, completion(step, model))
        self._stream(_chunks(step, model), step)

    def _stream(self, chunks: Iterator[dict], step: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        chunk_delay, stall_at = float(step.get("chunk_delay", 0)), int(step.get("stall_after", 0))
        try:
            for n, chunk in enumerate(chunks):
                if n == stall_at and step.get("stall"):
                    self._stall(float(step["stall"]), bool(step.get("keepalive")))
                self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
                if chunk_delay:
                    time.sleep(chunk_delay)
            self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _stall(self, seconds: float, keepalive: bool) -> None:
        """Nothing for `seconds`; with `keepalive`, an SSE comment every half second meanwhile (no content)."""
        end = time.monotonic() + seconds
        while keepalive and time.monotonic() < end:
            self._write_chunk(b": keep-alive\n\n")
            time.sleep(0.5)
        time.sleep(max(0.0, end - time.monotonic()))

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def unanswered_tool_calls(messages: list[dict]) -> list[str]:
    """Ids of assistant tool calls not answered by tool messages before the next non-tool message."""
    missing: list[str] = []
    pending: list[str] = []
    for m in messages:
        if m.get("role") == "tool":
            if m.get("tool_call_id") in pending:
                pending.remove(m["tool_call_id"])
            continue
        missing += pending
        pending = [c.get("id") for c in m.get("tool_calls") or []] if m.get("role") == "assistant" else []
    return missing + pending


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    return type("ScriptedHandler", (_Handler,), {"scripted": server})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--script", help="JSON file: a list of steps")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append each request (JSON line) to this file at exit")
    parser.add_argument("--strict-tools", action="store_true", help="refuse unanswered tool calls with a 400")
    args = parser.parse_args(argv)
    script = json.load(open(args.script, encoding="utf-8")) if args.script else []
    server = ScriptedServer(script, port=args.port, strict_tools=args.strict_tools).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        if args.log:
            with open(args.log, "a", encoding="utf-8") as fh:
                for r in server.requests:
                    fh.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
