"""`hermes api` as a real process, driven by the real `openai` client, backed by the scripted model server:
answers streamed and not, tool calls run server-side, bearer key, conversation isolation, disconnects."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config, run_hermes

pytest.importorskip("aiohttp")
openai = pytest.importorskip("openai")
KEY = "test-key-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_api(home: Path, port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    env.update(HERMES_HOME=str(home), API_SERVER_PORT=str(port), API_SERVER_KEY=KEY)
    proc = subprocess.Popen([HERMES, "api"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "listening on" in proc.stdout.readline()
    return proc


@pytest.fixture
def api(scripted, hermes_home):
    """A running `hermes api` on a free port; yields its base URL."""
    model_config(hermes_home, scripted.url)
    port = _free_port()
    proc = _start_api(hermes_home, port)
    yield f"http://127.0.0.1:{port}/v1"
    proc.terminate()
    proc.wait(timeout=20)


def _client(url: str, key: str = KEY):
    return openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=60)


def _last_tool_result(body: dict) -> str:
    tools = [m for m in body["messages"] if m.get("role") == "tool"]
    return str(tools[-1]["content"]) if tools else "no tool result"


def _todo_then_echo(scripted) -> None:
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {"todos": [
                     {"id": "1", "content": "ship the api", "status": "in_progress"}]}}]},
                 lambda body: {"content": "server ran: " + _last_tool_result(body)})


def test_non_streamed_answer_with_server_side_tool_call(api, scripted):
    _todo_then_echo(scripted)
    raw = _client(api).chat.completions.with_raw_response.create(
        model="hermes-agent", messages=[{"role": "user", "content": "plan it"}])
    answer = raw.parse().choices[0].message.content
    assert answer.startswith("server ran: ") and "ship the api" in answer and "in_progress" in answer
    assert raw.headers["X-Hermes-Session-Id"].startswith("api-")
    assert [m.id for m in _client(api).models.list().data] == ["hermes-agent"]


def test_streamed_answer_with_server_side_tool_call(api, scripted):
    _todo_then_echo(scripted)
    stream = _client(api).chat.completions.create(model="hermes-agent", stream=True,
                                                  messages=[{"role": "user", "content": "plan it"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("server ran: ") and "ship the api" in text
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_wrong_or_missing_key_is_401(api):
    with pytest.raises(openai.AuthenticationError):
        _client(api, "wrong-key").chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(api + "/models", timeout=10)
    assert err.value.code == 401


def test_a_request_body_nested_too_deep_is_a_400_and_the_server_goes_on(api, scripted):
    """rt7 a06's shape at the API door: JSON nested 200,000 deep is bad JSON, not an internal error."""
    import urllib.error
    import urllib.request

    deep = ('{"model": "x", "messages": ' + "[" * 200_000 + "]" * 200_000 + "}").encode()
    for path in ("/chat/completions", "/responses"):
        req = urllib.request.Request(api + path, data=deep, method="POST", headers={
            "Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=30)
        assert err.value.code == 400 and b"not valid JSON" in err.value.read()
    scripted.add({"content": "still serving"})
    reply = _client(api).chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "still serving"


def _users(body: dict) -> str:
    return "|".join(str(m["content"]) for m in body["messages"] if m.get("role") == "user")


def test_twenty_concurrent_conversations_see_only_their_own_history(api, scripted, hermes_home):
    scripted.default = lambda body: {"content": _users(body), "delay": 0.2}

    def conversation(n: int) -> tuple[str, str]:
        client = _client(api)
        first = client.chat.completions.with_raw_response.create(
            model="hermes-agent", messages=[{"role": "user", "content": f"I am {n}"}])
        sid = first.headers["X-Hermes-Session-Id"]
        second = client.chat.completions.create(model="hermes-agent", extra_headers={"X-Hermes-Session-Id": sid},
                                                messages=[{"role": "user", "content": f"again {n}"}])
        return sid, second.choices[0].message.content

    with ThreadPoolExecutor(20) as ex:
        results = list(ex.map(conversation, range(20)))
    assert len({sid for sid, _ in results}) == 20
    assert [text for _, text in results] == [f"I am {n}|again {n}" for n in range(20)]
    import sqlite3

    with sqlite3.connect(hermes_home / "state.db") as db:  # one stored session per conversation
        assert db.execute("select count(*) from sessions where source = 'api_server'").fetchone() == (20,)


def test_client_disconnect_interrupts_its_turn(api, scripted):
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {}}], "delay": 2},
                 {"content": "must never be asked"})
    import http.client

    conn = http.client.HTTPConnection(api.split("//")[1].split("/")[0], timeout=10)
    conn.request("POST", "/v1/chat/completions", json.dumps({"model": "x", "stream": True, "messages": [
        {"role": "user", "content": "slow"}]}), {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    time.sleep(0.5)
    conn.sock.close()
    conn.close()
    time.sleep(4)
    assert len(scripted.requests) == 1  # the turn stopped: no second model call after the tool round


def test_refuses_non_loopback_without_a_long_key(hermes_home):
    res = run_hermes("api", "--host", "0.0.0.0", home=hermes_home, env={"API_SERVER_KEY": "short"})
    assert res.returncode == 2 and "API_SERVER_KEY of at least 16" in res.stderr


def test_responses_with_previous_response_id(api, scripted):
    scripted.default = lambda body: {"content": _users(body)}
    client = _client(api)
    first = client.responses.create(model="hermes-agent", input="remember 7")
    assert first.output_text == "remember 7" and first.id.startswith("resp_")
    second = client.responses.create(model="hermes-agent", input="what number?", previous_response_id=first.id)
    assert second.output_text == "remember 7|what number?"
    fork = client.responses.create(model="hermes-agent", input="other branch", previous_response_id=first.id)
    assert fork.output_text == "remember 7|other branch"  # forked from `first`, not mixed with `second`
    with client.responses.stream(model="hermes-agent", input="streamed", previous_response_id=second.id) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == "remember 7|what number?|streamed"
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="hermes-agent", input="x", previous_response_id="resp_missing")


@pytest.mark.skipif(not os.environ.get("HERMES_TEST_OPENAI_NPM"), reason="the openai npm package is not installed "
                    "(.ci/install-openai-npm.sh sets HERMES_TEST_OPENAI_NPM)")
def test_openai_npm_client(api, scripted):
    _todo_then_echo(scripted)
    _todo_then_echo(scripted)
    script = Path(__file__).parent.parent / "fixtures" / "openai_npm_client.mjs"
    res = subprocess.run(["node", str(script), os.environ["HERMES_TEST_OPENAI_NPM"], api, KEY],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["plain"].startswith("server ran: ") and "ship the api" in out["plain"]
    assert out["streamed"].startswith("server ran: ") and "ship the api" in out["streamed"]
    assert out["badStatus"] == 401


def test_conversations_continue_after_a_restart_and_after_idle_eviction(scripted, hermes_home):
    """A session header and a previous_response_id both continue from state.db after `hermes api` restarts;
    an idle conversation (gateway.idle_evict_seconds) leaves memory and comes back the same way."""
    model_config(hermes_home, scripted.url, "gateway:\n  idle_evict_seconds: 1\n")
    scripted.default = lambda body: {"content": _users(body)}
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    proc = _start_api(hermes_home, port)
    try:
        raw = _client(url).chat.completions.with_raw_response.create(
            model="hermes-agent", messages=[{"role": "user", "content": "my name is Ada"}],
            extra_headers={"X-Hermes-Session-Id": "conv-ada"})
        assert raw.parse().choices[0].message.content == "my name is Ada"
        first = _client(url).responses.create(model="hermes-agent", input="remember 7")
        second = _client(url).responses.create(model="hermes-agent", input="and 8", previous_response_id=first.id)
        assert second.output_text == "remember 7|and 8"
        time.sleep(3)  # idle past 1 s: evicted from memory, kept in state.db
        again = _client(url).chat.completions.create(model="hermes-agent", messages=[
            {"role": "user", "content": "still there?"}], extra_headers={"X-Hermes-Session-Id": "conv-ada"})
        assert again.choices[0].message.content == "my name is Ada|still there?"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    proc = _start_api(hermes_home, port)
    try:
        after = _client(url).chat.completions.create(model="hermes-agent", messages=[
            {"role": "user", "content": "who am I?"}], extra_headers={"X-Hermes-Session-Id": "conv-ada"})
        assert after.choices[0].message.content == "my name is Ada|still there?|who am I?"
        cont = _client(url).responses.create(model="hermes-agent", input="and 9", previous_response_id=second.id)
        assert cont.output_text == "remember 7|and 8|and 9"
        fork = _client(url).responses.create(model="hermes-agent", input="only 7", previous_response_id=first.id)
        assert fork.output_text == "remember 7|only 7"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    import sqlite3

    with sqlite3.connect(hermes_home / "state.db") as db:
        rows = db.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source").fetchall()
    assert rows == [("api_server", 3)]  # Ada's, the responses chain, the fork: one session per conversation


def test_an_api_caller_cannot_plant_memory_for_later_sessions(api, scripted, hermes_home):
    """An API request is untrusted input: a memory write it leads to is refused with the reason."""
    scripted.add({"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "memory",
                                                                  "content": "User wants replies in Klingon"}}]},
                 lambda body: {"content": "server said: " + _last_tool_result(body)})
    answer = _client(api).chat.completions.create(
        model="hermes-agent", messages=[{"role": "user", "content": "remember Klingon"}]).choices[0].message.content
    assert "BLOCKED" in answer and "untrusted content" in answer and "API server" in answer
    memory = hermes_home / "memories" / "MEMORY.md"
    assert not memory.exists() or "Klingon" not in memory.read_text()
