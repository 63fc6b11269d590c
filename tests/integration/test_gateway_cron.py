"""Cron, send_message and home channels inside the real `hermes gateway run` (fake Telegram Bot API, scripted
model): a job created from a chat is delivered back to it, a failure is delivered as one, a gateway and a
`hermes cron daemon` on one home run each due time once, /sethome and send_message to the home channel."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("telegram")

from tests.helpers import HERMES, run_hermes, wait_for  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402

ALICE, BOB = 111, 222
FAST = "cron:\n  tick_seconds: 0.2\n"


@pytest.fixture
def gateway(fake, scripted, hermes_home):
    made: list[Gateway] = []

    def make(env: dict | None = None, extra: str = FAST) -> Gateway:
        gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})},
                     extra=extra)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def _brain(answers: dict[str, dict]):  # type: ignore[no-untyped-def]
    """A model that answers each user text from `answers` (a tool call, or a reply) and, after a tool call,
    replies with the tool's result."""
    def step(body: dict) -> dict:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return {"content": "tool said: " + str(last["content"])}
        return answers.get(str(last["content"]), {"content": "ok"})
    return step


def _user_texts(scripted, text: str) -> list[dict]:
    return [r for r in scripted.requests if r["body"]["messages"][-1].get("content") == text]


def _jobs(home: Path) -> list[dict]:
    return json.loads((home / "cron" / "jobs.json").read_text())["jobs"]


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_"))}
    return {**env, "HERMES_HOME": str(home)}


def test_job_created_in_a_chat_is_delivered_back_to_that_chat(fake, scripted, gateway, hermes_home):
    scripted.default = _brain({
        "remind me in 2 seconds": {"tool_calls": [{"name": "cronjob", "arguments": {
            "action": "create", "schedule": "2s", "prompt": "Say the cron word.", "name": "cron word"}}]},
        "Say the cron word.": {"content": "The cron word is PAPAYA."}})
    gateway({"TELEGRAM_ALLOWED_USERS": str(ALICE)}).start()  # the owner: a stranger's cron job would need approval
    fake.user_says("remind me in 2 seconds", chat_id=ALICE)
    assert fake.wait_for(lambda: any("tool said" in t for t in fake.texts(ALICE)))
    job = _jobs(hermes_home)[0]
    assert job["origin"] == {"platform": "telegram", "chat_id": str(ALICE)} and job["deliver"] == "origin"
    assert fake.wait_for(lambda: any("PAPAYA" in t for t in fake.texts(ALICE)), timeout=30), fake.texts()
    delivered = next(t for t in fake.texts(ALICE) if "PAPAYA" in t)
    assert delivered.startswith("Cronjob Response: cron word") and f"job_id: {job['id']}" in delivered
    assert not any("PAPAYA" in t for t in fake.texts(BOB))
    output = next((hermes_home / "cron" / "output" / job["id"]).glob("*.md")).read_text()
    assert "## Response\n\nThe cron word is PAPAYA." in output
    assert fake.wait_for(lambda: _jobs(hermes_home)[0]["state"] == "completed")
    assert _jobs(hermes_home)[0]["last_delivery_error"] is None


def test_failed_job_is_delivered_as_a_failure(fake, scripted, gateway, hermes_home):
    scripted.default = lambda body: ({"error": {"status": 401, "message": "bad key for cron"}}
                                     if body["messages"][-1].get("content") == "doomed" else {"content": "ok"})
    created = run_hermes("cron", "create", "every 1h", "doomed", "--name", "doomed job", "--deliver",
                         f"telegram:{BOB}", home=hermes_home)
    job_id = created.stdout.split("Created job ", 1)[1].split()[0]
    run_hermes("cron", "run", job_id, home=hermes_home)  # due on the next tick
    gateway().start()
    assert fake.wait_for(lambda: fake.texts(BOB), timeout=30)
    text = fake.texts(BOB)[0]
    assert text.startswith("⚠️ Cron 'doomed job' failed:") and "bad key for cron" in text
    assert wait_for(lambda: _jobs(hermes_home)[0].get("last_status"))  # recorded just after the delivery
    job = _jobs(hermes_home)[0]
    assert job["last_status"] == "error" and job["last_delivery_error"] is None


def test_gateway_and_cron_daemon_on_one_home_run_each_due_time_once(fake, scripted, gateway, hermes_home):
    scripted.default = _brain({"every minute prompt": {"content": "minute ran"},
                               "every 2s prompt": {"content": "fast ran"}})
    run_hermes("cron", "create", "every 1m", "every minute prompt", home=hermes_home)
    run_hermes("cron", "create", "every 2s", "every 2s prompt", home=hermes_home)
    store = hermes_home / "cron" / "jobs.json"
    data = json.loads(store.read_text())
    missed = (datetime.now(UTC) - timedelta(minutes=7)).isoformat()  # seven due times missed while down
    data["jobs"][0]["next_run_at"] = missed
    store.write_text(json.dumps(data))
    gw = gateway()
    t0 = time.time()
    daemon = subprocess.Popen([HERMES, "cron", "daemon"], env=_env(hermes_home), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        gw.start()
        time.sleep(9)
    finally:
        window = time.time() - t0
        daemon.send_signal(signal.SIGTERM)
        out = daemon.communicate(timeout=30)[0]
        gw.stop()
    assert "ticking every 0.2s" in out
    assert len(_user_texts(scripted, "every minute prompt")) == 1, out
    runs = sorted(r["time"] for r in _user_texts(scripted, "every 2s prompt"))
    assert 3 <= len(runs) <= window / 2 + 1, (runs, window, out)  # a due time run twice would double the count
    ran_in = {"gateway": gw.output().count("gateway: cron job"), "daemon": out.count(": ok ->")}
    assert sum(ran_in.values()) == len(runs) + 1, (ran_in, gw.output(), out)
    nxt = datetime.fromisoformat(_jobs(hermes_home)[0]["next_run_at"])
    assert nxt > datetime.now(UTC) - timedelta(seconds=30)


def test_sethome_then_send_message_reaches_the_home_channel(fake, scripted, gateway, hermes_home, tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("numbers: 1 2 3")
    scripted.default = _brain({
        "tell home": {"tool_calls": [{"name": "send_message", "arguments": {
            "target": "telegram", "message": f"Hello home from Bob\nMEDIA:{report}"}}]},
        "where can you send": {"tool_calls": [{"name": "send_message", "arguments": {"action": "list"}}]}})
    gw = gateway(env={"TELEGRAM_ALLOWED_USERS": str(ALICE)})  # /sethome is the owner's; Bob: an allow-all guest
    gw.start()
    fake.user_says("tell home", chat_id=BOB, user_id=BOB, name="Bob")
    assert fake.wait_for(lambda: any("tool said" in t for t in fake.texts(BOB)))
    assert "No home channel set for telegram" in fake.texts(BOB)[-1]
    fake.user_says("/sethome", chat_id=ALICE)
    assert fake.wait_for(lambda: any("Home channel set" in t for t in fake.texts(ALICE)))
    assert f"TELEGRAM_HOME_CHANNEL={ALICE}" in (hermes_home / ".env").read_text()
    fake.user_says("/status", chat_id=ALICE)
    assert fake.wait_for(lambda: any(f"Home channel: {ALICE} (this chat)" in t for t in fake.texts(ALICE)))
    fake.user_says("tell home", chat_id=BOB, user_id=BOB, name="Bob")
    assert fake.wait_for(lambda: any("Hello home from Bob" in t for t in fake.texts(ALICE)))
    assert fake.wait_for(lambda: fake.documents)
    assert fake.documents[0]["chat_id"] == ALICE and fake.documents[0]["filename"] == "report.txt"
    assert fake.wait_for(lambda: f"telegram:{ALICE}" in fake.texts(BOB)[-1])
    fake.user_says("where can you send", chat_id=BOB, user_id=BOB, name="Bob")
    assert fake.wait_for(lambda: '"home_channel": "111"' in fake.texts(BOB)[-1])
    gw.stop()
    gw.start()  # the home channel survives a restart (.env)
    fake.user_says("/status", chat_id=BOB, user_id=BOB, name="Bob")
    assert fake.wait_for(lambda: f"Home channel: {ALICE}\n" in fake.texts(BOB)[-1] + "\n")


def test_cron_daemon_alone_delivers_through_the_bot_api(fake, scripted, hermes_home):
    scripted.default = _brain({"daemon prompt": {"content": "delivered without a gateway"}})
    Gateway(hermes_home, fake, scripted.url)  # writes the config (the fake's base_url), not started
    env = {**_env(hermes_home), "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_HOME_CHANNEL": str(ALICE)}
    run_hermes("cron", "create", "every 1h", "daemon prompt", "--deliver", "telegram", home=hermes_home)
    job = _jobs(hermes_home)[0]["id"]
    run_hermes("cron", "run", job, home=hermes_home)
    res = subprocess.run([HERMES, "cron", "daemon", "--once"], env=env, capture_output=True, text=True, timeout=60)
    assert f"job {job}: ok" in res.stdout, res.stdout + res.stderr
    delivered = [t for t in fake.texts(ALICE) if "delivered without a gateway" in t]
    assert len(delivered) == 1 and delivered[0].startswith("Cronjob Response: daemon prompt")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http(url: str, body: dict | None = None, key: str | None = None) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_api_server_runs_inside_the_gateway_with_its_key(fake, scripted, gateway, hermes_home):
    key = "gateway-key-0123456789"
    scripted.default = _brain({"api hello": {"content": "hello over http"}, "chat hello": {"content": "hi chat"}})
    port = _free_port()
    gw = gateway(env={"API_SERVER_ENABLED": "true", "API_SERVER_PORT": str(port), "API_SERVER_KEY": key})
    gw.start()
    assert fake.wait_for(lambda: "hermes api: listening on" in gw.output())
    base = f"http://127.0.0.1:{port}/v1"
    assert _http(f"{base}/models")[0] == 401
    assert _http(f"{base}/models", key="wrong-key-0123456789")[0] == 401
    status, models = _http(f"{base}/models", key=key)
    assert status == 200 and [m["id"] for m in models["data"]] == ["hermes-agent"]
    fake.user_says("chat hello", chat_id=ALICE)
    status, answer = _http(f"{base}/chat/completions", {"model": "hermes-agent", "messages": [
        {"role": "user", "content": "api hello"}]}, key=key)
    assert status == 200 and answer["choices"][0]["message"]["content"] == "hello over http"
    assert fake.wait_for(lambda: "hi chat" in fake.texts(ALICE))
    status = run_hermes("gateway", "status", home=hermes_home).stdout
    assert f"API server: http://127.0.0.1:{port}/v1" in status and "Cron: ticking; 0 run(s)" in status
    assert "Scheduler: running in the gateway (pid" in run_hermes("cron", "status", home=hermes_home).stdout


def test_gateway_refuses_a_public_api_host_without_a_long_key(fake, scripted, hermes_home):
    Gateway(hermes_home, fake, scripted.url)  # the config only
    env = {"TELEGRAM_BOT_TOKEN": fake.token, "API_SERVER_ENABLED": "true", "API_SERVER_HOST": "0.0.0.0",
           "API_SERVER_KEY": "short"}
    res = run_hermes("gateway", "run", home=hermes_home, env=env, timeout=60)
    assert res.returncode == 2 and "API_SERVER_KEY of at least 16" in res.stderr
