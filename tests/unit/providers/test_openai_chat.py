"""The provider against the scripted server over real HTTP: streaming, errors by type, retries, fallback."""

from __future__ import annotations

import json
import time

import pytest

from hermes_agent.errors import AuthError, ContextTooLongError, RateLimitedError, TransientError
from hermes_agent.messages import Message, ToolCall
from hermes_agent.providers.base import ChatRequest
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.providers.retry import FallbackProvider, RetryingProvider
from hermes_agent.providers.scripted import ScriptedServer

REQ = ChatRequest((Message("user", "hi"),), tools=({"type": "function", "function": {"name": "terminal"}},))


def provider(url: str, **kw) -> OpenAIChatProvider:
    return OpenAIChatProvider(url, "k", "scripted-model", **kw)


def test_streamed_text_reasoning_tool_calls_and_usage(scripted):
    scripted.add({"content": "two words", "reasoning": "thinking hard",
                  "tool_calls": [{"name": "terminal", "arguments": {"command": "ls -la"}}],
                  "usage": {"prompt_tokens": 123, "completion_tokens": 7}})
    deltas = []
    msg = provider(scripted.url).complete(REQ, lambda kind, text: deltas.append((kind, text)))
    assert msg.content == "two words" and msg.reasoning == "thinking hard"
    assert msg.tool_calls[0].name == "terminal" and json.loads(msg.tool_calls[0].arguments) == {"command": "ls -la"}
    assert msg.usage.prompt_tokens == 123 and msg.usage.completion_tokens == 7
    assert ("reasoning", "thinking hard") in deltas and "".join(t for k, t in deltas if k == "text") == "two words"
    body = scripted.requests[0]["body"]
    assert body["stream"] is True and body["tools"][0]["function"]["name"] == "terminal"


def test_reasoning_is_sent_back_on_assistant_messages(scripted):
    history = (Message("user", "q"), Message("assistant", "a", reasoning="r1",
                                              tool_calls=(ToolCall("c1", "terminal", "{}"),)),
               Message("tool", "{}", tool_call_id="c1", name="terminal"))
    provider(scripted.url).complete(ChatRequest(history))
    sent = scripted.requests[0]["body"]["messages"]
    assert sent[1]["reasoning_content"] == "r1" and sent[2]["tool_call_id"] == "c1"


def test_non_streaming_endpoint(scripted):
    scripted.add({"content": "plain"})
    assert provider(scripted.url, stream=False).complete(REQ).content == "plain"


def test_text_tool_calls_from_local_models_are_parsed(scripted):
    scripted.add({"content": "Let me look. ", "text_tool_calls": True,
                  "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]})
    msg = provider(scripted.url).complete(REQ)
    assert msg.tool_calls[0].name == "read_file" and json.loads(msg.tool_calls[0].arguments) == {"path": "a.py"}
    assert msg.content == "Let me look."


@pytest.mark.parametrize("status,body,etype", [
    (401, "bad key", AuthError), (429, "slow down", RateLimitedError), (503, "overloaded", TransientError),
    (400, "This model's maximum context length is 8192 tokens", ContextTooLongError),
])
def test_errors_are_typed(scripted, status, body, etype):
    scripted.add({"error": {"status": status, "message": body}})
    with pytest.raises(etype) as info:
        provider(scripted.url).complete(REQ)
    assert str(status) in str(info.value)


def test_unreachable_endpoint_is_one_clear_transient_error():
    with pytest.raises(TransientError, match="cannot reach http://127.0.0.1:9/v1"):
        provider("http://127.0.0.1:9/v1").complete(REQ)


def test_retries_honour_retry_after_then_succeed(scripted):
    scripted.add({"error": {"status": 429, "message": "wait", "retry_after": 0.3}},
                 {"error": {"status": 502, "message": "bad gateway"}}, {"content": "finally"})
    notes = []
    started = time.monotonic()
    msg = RetryingProvider(provider(scripted.url), max_retries=3, base_delay=0.01, notify=notes.append).complete(REQ)
    assert msg.content == "finally" and len(scripted.requests) == 3
    assert time.monotonic() - started >= 0.3
    assert "retrying in 0.3s (1/3)" in notes[0]


def test_auth_errors_are_not_retried(scripted):
    scripted.add({"error": {"status": 401, "message": "nope"}}, {"content": "never"})
    with pytest.raises(AuthError):
        RetryingProvider(provider(scripted.url), base_delay=0.01).complete(REQ)
    assert len(scripted.requests) == 1


def test_fallback_chain_moves_on_when_a_provider_keeps_failing(scripted):
    backup = ScriptedServer([{"content": "from backup"}]).start()
    try:
        scripted.add(*[{"error": {"status": 503, "message": "down"}}] * 3)
        notes = []
        chain = FallbackProvider([RetryingProvider(provider(scripted.url), 2, 0.01),
                                  RetryingProvider(OpenAIChatProvider(backup.url, "k", "backup-model", name="b"), 2, 0.01)],
                                 notify=notes.append)
        assert chain.complete(REQ).content == "from backup"
        assert len(scripted.requests) == 3 and "falling back to b/backup-model" in notes[0]
        assert chain.model == "backup-model"
    finally:
        backup.stop()


def test_scripted_server_speaks_the_real_openai_client(scripted):
    from openai import OpenAI

    scripted.add({"content": "hello there", "tool_calls": [{"name": "terminal", "arguments": {"command": "pwd"}}]},
                 {"content": "non-streamed"})
    client = OpenAI(base_url=scripted.url, api_key="k")
    stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True,
                                            stream_options={"include_usage": True})
    text, args = "", ""
    for chunk in stream:
        if chunk.choices:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for tc in delta.tool_calls or []:
                args += tc.function.arguments or ""
    assert text == "hello there" and json.loads(args) == {"command": "pwd"}
    resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert resp.choices[0].message.content == "non-streamed" and resp.usage.prompt_tokens == 10
    assert [m.id for m in client.models.list()] == ["scripted-model"]


def test_interrupting_a_stalled_stream_returns_at_once(scripted):
    import threading

    scripted.add({"content": "late", "delay": 30})
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    msg = provider(scripted.url).complete(REQ, cancel=cancel)
    assert time.monotonic() - started < 3 and msg.content is None


def test_keep_alive_connection_is_reused_and_recovers_when_the_server_restarts():
    server = ScriptedServer([{"content": "one"}]).start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    p = provider(server.url)
    assert p.complete(REQ).content == "one"
    server.stop()
    again = ScriptedServer([{"content": "two"}], port=port).start()
    try:
        assert p.complete(REQ).content == "two"  # the dead kept-alive socket is replaced transparently
    finally:
        again.stop()


def test_requests_go_through_the_configured_http_proxy(scripted):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from hermes_agent.bootstrap.provider import proxy_for
    from hermes_agent.providers.scripted import completion

    seen = []

    class ProxyHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            return

        def do_POST(self):
            seen.append(self.path)
            self.rfile.read(int(self.headers["Content-Length"]))
            data = json.dumps(completion({"content": "via proxy"}, "m")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    proxy_server = ThreadingHTTPServer(("127.0.0.1", 0), ProxyHandler)
    threading_ = __import__("threading")
    threading_.Thread(target=proxy_server.serve_forever, daemon=True).start()
    try:
        env = {"HTTP_PROXY": f"127.0.0.1:{proxy_server.server_address[1]}", "NO_PROXY": "example.org"}
        p = OpenAIChatProvider(scripted.url, "k", "m", proxy=proxy_for(scripted.url, env))
        assert p.complete(REQ).content == "via proxy"
        assert seen == [f"{scripted.url}/chat/completions"] and scripted.requests == []
        assert proxy_for("http://example.org/v1", env).applies_to("example.org") is False
    finally:
        proxy_server.shutdown()


def _compact(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_growing_conversation_is_sent_as_exactly_the_json_of_its_body(scripted):
    """Messages and tool definitions are encoded once and reused (issue 24: per-turn cost); what goes on the
    wire is byte for byte the compact JSON of the body, keys in order, as the tools and messages change."""
    scripted.add({"content": "one"}, {"content": "two"}, {"content": "three"}, {"content": "four"})
    tools = ({"type": "function", "function": {"name": "terminal", "description": "runs ünïcode"}},)
    p = provider(scripted.url, extra_headers={"X-Test": "1"})
    history = [Message("system", "sys"), Message("user", "héllo 数据")]
    for i, offered in enumerate((tools, tools, tools + ({"type": "function", "function": {"name": "todo"}},), ())):
        reply = p.complete(ChatRequest(tuple(history), tools=offered, max_tokens=50 + i, extra_body={"top_p": 0.5}))
        history += [reply, Message("user", f"next {i}")]
        sent = scripted.requests[i]
        expected = p.body(ChatRequest(tuple(history[:-2]), tools=offered, max_tokens=50 + i, extra_body={"top_p": 0.5}))
        assert sent["body"] == expected and list(sent["body"]) == list(expected)
        assert sent["bytes"] == len(_compact(expected))
        assert [m["content"] for m in sent["body"]["messages"]][-1] == ("héllo 数据" if i == 0 else f"next {i - 1}")
    assert "tools" not in scripted.requests[3]["body"] and len(scripted.requests[2]["body"]["tools"]) == 2


def test_a_hook_that_rewrites_the_wire_is_encoded_as_it_returned_it(scripted):
    from hermes_agent.providers.caching import apply_cache_breakpoints
    from hermes_agent.providers.openai_chat import BodyEncoder

    scripted.add({"content": "ok"}, {"content": "ok"})
    p = provider(scripted.url, wire_hook=apply_cache_breakpoints)
    p.model = "anthropic/claude-sonnet-4"
    history = (Message("system", "sys"), Message("user", "q"))
    for _ in range(2):
        p.complete(ChatRequest(history, tools=REQ.tools))
        body = scripted.requests[-1]["body"]
        assert body["messages"][0]["content"][0]["cache_control"]["type"] == "ephemeral"
        assert scripted.requests[-1]["bytes"] == len(_compact(body))
    enc = BodyEncoder()
    odd = {"messages": [], "model": "m"}  # keys in another order: encoded whole, the same bytes
    assert enc.encode(odd, None) == _compact(odd)


def test_a_rewound_compacted_or_repeated_conversation_is_sent_as_its_own_json(scripted):
    """The encoder reuses the JSON of the messages a request shares with the one before: a history cut short
    (/undo), compacted (other messages at the front), repeated (a retry) or another conversation's is still
    sent byte for byte as the JSON of its own body."""
    p = provider(scripted.url)
    base = [Message("system", "sys"), Message("user", "première")]
    grown = base + [Message("assistant", "a1"), Message("user", "q2"), Message("assistant", "a2"), Message("user", "q3")]
    other = [Message("system", "other conversation"), Message("user", "x")]
    histories = [base, grown[:4], grown, grown, grown[:4], [grown[0], Message("user", "summary"), *grown[4:]],
                 other, grown + [Message("user", "q4")], []]
    for i, history in enumerate(histories):
        scripted.add({"content": "ok"})
        p.complete(ChatRequest(tuple(history), tools=REQ.tools))
        sent = scripted.requests[i]
        expected = p.body(ChatRequest(tuple(history), tools=REQ.tools))
        assert sent["body"] == expected and sent["bytes"] == len(_compact(expected)), i
