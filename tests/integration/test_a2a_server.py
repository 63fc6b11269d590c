"""`hermes api` with `a2a.enabled`, driven by a2a-sdk's own client over loopback HTTP, the scripted model
behind the agent: the card, a streamed task, a non-streamed task, one session per context id, the bearer
key, and a remote agent's message that cannot get a dangerous command run or a memory written."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config

pytest.importorskip("aiohttp")
pytest.importorskip("a2a")
httpx = pytest.importorskip("httpx")
KEY = "a2a-key-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(home: Path, port: int, key: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    env.update(HERMES_HOME=str(home), API_SERVER_PORT=str(port), API_SERVER_KEY=key)
    proc = subprocess.Popen([HERMES, "api"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "listening on" in proc.stdout.readline()
    return proc


def _serve(scripted, home: Path, key: str):
    model_config(home, scripted.url, "a2a:\n  enabled: true\n")
    port = _free_port()
    proc = _start(home, port, key)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture
def a2a_url(scripted, hermes_home):
    proc, url = _serve(scripted, hermes_home, KEY)
    yield url
    proc.terminate()
    proc.wait(timeout=20)


async def _ask(url: str, text: str, *, streaming: bool = True, context_id: str = "", key: str = KEY):
    """Send `text` with a2a-sdk's client; returns (the stream responses, the agent's text)."""
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import get_stream_response_text, new_text_message
    from a2a.types import Role, SendMessageRequest

    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http),
                                     resolver_http_kwargs={"headers": headers})
        message = new_text_message(text, role=Role.ROLE_USER, context_id=context_id or None)
        events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    text = ""
    for event in events:  # a streamed answer: appended pieces, then the whole (append=False replaces)
        if event.HasField("artifact_update"):
            piece = get_stream_response_text(event, "")
            text = text + piece if event.artifact_update.append else piece
    return events, text or get_stream_response_text(events[-1], "")


def test_the_sdk_client_reads_the_card_and_streams_a_task(a2a_url, scripted):
    # pieces that arrive apart are forwarded apart (ones that arrive together go as one update)
    scripted.add({"content": "hello from hermes, streamed in pieces", "chunks": 4, "chunk_delay": 0.15})
    events, text = asyncio.run(_ask(a2a_url, "say hello"))
    assert text == "hello from hermes, streamed in pieces"
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and kinds.count("artifact_update") >= 3 and kinds[-1] == "status_update"
    assert [e.artifact_update.append for e in events if e.HasField("artifact_update")][1:-1] == [True] * (
        kinds.count("artifact_update") - 2)  # streamed in pieces before the whole answer
    from a2a.types import TaskState

    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    request = urllib.request.Request(a2a_url + "/.well-known/agent-card.json",
                                     headers={"Authorization": f"Bearer {KEY}"})
    card = json.loads(urllib.request.urlopen(request, timeout=10).read())
    assert card["capabilities"]["streaming"] is True and {s["id"] for s in card["skills"]} == {"chat", "research"}


def test_one_session_per_context_and_tasks_can_be_fetched(a2a_url, scripted, hermes_home):
    users = lambda body: {"content": "|".join(str(m["content"]) for m in body["messages"]  # noqa: E731
                                              if m.get("role") == "user")}
    scripted.default = users
    asyncio.run(_ask(a2a_url, "I am Ada", streaming=False, context_id="ctx-ada"))
    events, text = asyncio.run(_ask(a2a_url, "who am I", streaming=False, context_id="ctx-ada"))
    assert text.endswith("I am Ada|who am I")
    _, other = asyncio.run(_ask(a2a_url, "fresh", streaming=False, context_id="ctx-bob"))
    assert other.endswith("fresh") and "Ada" not in other
    task_id = events[-1].task.id if events[-1].HasField("task") else events[-1].status_update.task_id
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    got = httpx.post(a2a_url + "/a2a", json=rpc, headers={"Authorization": f"Bearer {KEY}"}, timeout=10).json()
    assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED" and got["result"]["contextId"] == "ctx-ada"
    with sqlite3.connect(hermes_home / "state.db") as db:
        assert db.execute("select count(*) from sessions where source = 'api_server'").fetchone() == (2,)


def test_without_the_key_a_caller_gets_401(a2a_url):
    for path, data in (("/.well-known/agent-card.json", None), ("/a2a", b'{"jsonrpc":"2.0","id":1}')):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(a2a_url + path, data=data), timeout=10)
        assert err.value.code == 401
    with pytest.raises(Exception, match="401"):
        asyncio.run(_ask(a2a_url, "hi", key="wrong-key-0123456789"))


def _last_tool_result(body: dict) -> str:
    tools = [m for m in body["messages"] if m.get("role") == "tool"]
    return str(tools[-1]["content"]) if tools else "no tool result"


def test_a_remote_agent_cannot_run_a_dangerous_command_or_write_memory(a2a_url, scripted, hermes_home, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -rf {victim}"}}]},
                 lambda body: {"content": "terminal said: " + _last_tool_result(body)})
    _, text = asyncio.run(_ask(a2a_url, "clean up"))
    assert (victim / "keep.txt").read_text() == "precious"
    assert "BLOCKED: `rm -rf" in text and "was not run" in text and "\"blocked\": true" in text
    scripted.add({"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "memory",
                                                                  "content": "User wants replies in Klingon"}}]},
                 lambda body: {"content": "memory said: " + _last_tool_result(body)})
    _, text = asyncio.run(_ask(a2a_url, "remember Klingon"))
    assert "BLOCKED" in text and "A2A" in text
    memory = hermes_home / "memories" / "MEMORY.md"
    assert not memory.exists() or "Klingon" not in memory.read_text()


def test_a_running_task_can_be_cancelled(a2a_url, scripted):
    scripted.add({"content": "too late", "delay": 30})

    async def run() -> tuple[list, dict, float]:
        from a2a.client import ClientConfig, create_client
        from a2a.helpers import new_text_message
        from a2a.types import Role, SendMessageRequest

        headers = {"Authorization": f"Bearer {KEY}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http),
                                         resolver_http_kwargs={"headers": headers})
            stream = client.send_message(SendMessageRequest(message=new_text_message("slow", role=Role.ROLE_USER)))
            first = await anext(stream)
            started = asyncio.get_running_loop().time()
            rpc = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": first.task.id}}
            cancelled = (await http.post(a2a_url + "/a2a", json=rpc)).json()
            rest = [e async for e in stream]
            return [first, *rest], cancelled, asyncio.get_running_loop().time() - started

    events, cancelled, seconds = asyncio.run(run())
    assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancelled
    from a2a.types import TaskState

    assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED and seconds < 20  # not 30 s on


def test_without_a_key_only_loopback_hosts_and_no_browsers(scripted, hermes_home):
    proc, url = _serve(scripted, hermes_home, "")
    try:
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=10).json()
        assert card["supportedInterfaces"][0]["url"] == url + "/a2a"  # where we were reached, not the bind address
        rebound = httpx.get(url + "/.well-known/agent-card.json", headers={"Host": "127.attacker.example"}, timeout=10)
        browser = httpx.post(url + "/a2a", headers={"Origin": "https://evil.example"}, timeout=10,
                             json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}})
        assert (rebound.status_code, browser.status_code) == (403, 403)
        bad = [httpx.post(url + "/a2a", content=body, timeout=10).json()["error"] for body in (
            b"{not json", b'{"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": 5}}',
            b'{"jsonrpc": "2.0", "id": 4, "method": "DeleteEverything"}')]
        assert [e["code"] for e in bad] == [-32700, -32602, -32601] and "Traceback" not in json.dumps(bad)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_context_continues_after_a_restart(scripted, hermes_home):
    scripted.default = lambda body: {"content": "|".join(str(m["content"]) for m in body["messages"]
                                                         if m.get("role") == "user")}
    for said, expected in (("I am Ada", "I am Ada"), ("who am I", "I am Ada|who am I")):
        proc, url = _serve(scripted, hermes_home, KEY)
        try:
            _, text = asyncio.run(_ask(url, said, streaming=False, context_id="ctx-kept"))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        assert text.endswith(expected)
