"""Red-team attacks on `hermes api` (no API_SERVER_KEY, loopback, its default): a web page the user visits
posts to http://127.0.0.1:<port>/v1/chat/completions (a "simple" cross-site request: text/plain, no
preflight), or reaches it through DNS rebinding. Either makes the agent run a turn with its tools for the
page's author. Each test asserts the SAFE outcome: the browser's request is refused and no model call made."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def api(hermes_home: Path):
    model = ScriptedServer(default={"content": "pwned"}).start()
    model_config(hermes_home, model.url)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_SERVER"))}
    env["HERMES_HOME"] = str(hermes_home)
    proc = subprocess.Popen([HERMES, "api", "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    yield port, model
    proc.terminate()
    proc.wait(15)
    model.stop()


def _post(port: int, headers: dict) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"model": "hermes-agent", "messages": [{"role": "user", "content": "run my payload"}]})
    conn.request("POST", "/v1/chat/completions", body=body, headers=headers)
    resp = conn.getresponse()
    return resp.status, resp.read().decode()


def test_cross_site_page_cannot_drive_the_local_api(api) -> None:
    port, model = api
    status, text = _post(port, {"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example"})
    assert status == 403, f"a cross-site page got a turn: {status} {text[:200]}"
    assert not model.requests, "the model was called for a cross-site request"


def test_dns_rebinding_page_cannot_drive_the_local_api(api) -> None:
    """evil.example re-resolved to 127.0.0.1: same-origin for the browser, but Host names the attacker's site."""
    port, model = api
    status, text = _post(port, {"Content-Type": "application/json", "Host": f"evil.example:{port}",
                                "Origin": f"http://evil.example:{port}"})
    assert status == 403, f"a rebinding page got a turn: {status} {text[:200]}"
    assert not model.requests


def test_plain_clients_still_work(api) -> None:
    """The fix must not lock out ordinary (non-browser) clients."""
    port, model = api
    status, text = _post(port, {"Content-Type": "application/json"})
    assert status == 200, text
    assert "pwned" in text


def test_a_listed_browser_origin_works_only_with_the_key(hermes_home: Path) -> None:
    """API_SERVER_CORS_ORIGINS (Hermes's name) lets a configured web front-end in: its preflight is answered,
    its requests carry the key and get Access-Control-Allow-Origin; any other origin is still refused."""
    model = ScriptedServer(default={"content": "hello from the agent"}).start()
    model_config(hermes_home, model.url)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_SERVER"))}
    env.update(HERMES_HOME=str(hermes_home), API_SERVER_KEY="k" * 20, API_SERVER_CORS_ORIGINS="http://app.example")
    proc = subprocess.Popen([HERMES, "api", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("OPTIONS", "/v1/chat/completions", headers={"Origin": "http://app.example",
                                                                 "Access-Control-Request-Method": "POST"})
        pre = conn.getresponse()
        pre.read()
        assert pre.status == 204 and pre.getheader("Access-Control-Allow-Origin") == "http://app.example"
        auth = {"Origin": "http://app.example", "Authorization": "Bearer " + "k" * 20, "Content-Type": "application/json"}
        status, text = _post(port, auth)
        assert status == 200 and "hello from the agent" in text
        status, _ = _post(port, {**auth, "Origin": "https://evil.example"})
        assert status == 403
        status, _ = _post(port, {"Origin": "http://app.example", "Content-Type": "application/json"})
        assert status == 401
    finally:
        proc.terminate()
        proc.wait(15)
        model.stop()


@pytest.mark.parametrize("host", ["127.attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example",
                                  "127.0.0.1evil", "localhost.", "[::1].evil", "0x7f.0.0.1", "127.1"])
def test_host_that_only_starts_like_loopback_is_refused(api, host) -> None:
    """DNS-rebinding names shaped like an address: only exact names and literal addresses pass."""
    port, model = api
    status, text = _post(port, {"Content-Type": "application/json", "Host": f"{host}:{port}"})
    assert status == 403 and "unexpected Host" in text, (host, status, text[:200])
    assert not model.requests


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST", "127.0.0.2", "[::1]"])
def test_exact_loopback_hosts_are_answered(api, host) -> None:
    port, _ = api
    status, text = _post(port, {"Content-Type": "application/json", "Host": f"{host}:{port}"})
    assert status == 200, (host, text[:200])
