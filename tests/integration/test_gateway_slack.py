"""The real `hermes gateway run` (slack-bolt inside it) against a local fake of Slack and the scripted model."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("slack_bolt")

from tests.fake_slack import APP_TOKEN, BOT_TOKEN, SECRET, FakeSlack  # noqa: E402
from tests.helpers import HERMES, model_config, run_hermes  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402


class SlackGateway(Gateway):
    """`hermes gateway run` configured for Slack only: Socket Mode, or HTTP events on a free port."""

    ready = ("gateway: slack socket", "gateway: slack http")

    def __init__(self, home: Path, fake: FakeSlack, model_url: str, *, http: bool = False,
                 env: dict | None = None, extra: str = "", cwd: Path | None = None) -> None:
        self.home, self.fake = home, fake
        port = _free_port()
        model_config(home, model_url, f"platforms:\n  slack:\n    extra:\n      base_url: {fake.base_url}\n"
                                      f"      ping_interval: 1\n      http_port: {port}\n{extra}")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_", "SLACK_", "GATEWAY_"))}
        self.env.update({"HERMES_HOME": str(home), "SLACK_BOT_TOKEN": BOT_TOKEN, "MESSAGING_CWD": str(cwd or home),
                         "HERMES_TOOL_PROGRESS": "false",
                         **({"SLACK_SIGNING_SECRET": SECRET} if http else {"SLACK_APP_TOKEN": APP_TOKEN}),
                         **(env or {})})
        fake.events_url = f"http://127.0.0.1:{port}/slack/events" if http else ""
        self.proc = None
        self.log = home / "gateway.out"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def slack():
    server = FakeSlack().start()
    yield server
    server.stop()


@pytest.fixture
def gateway(slack, scripted, hermes_home):
    made: list[SlackGateway] = []

    def make(http: bool = False, env: dict | None = None, **kw) -> SlackGateway:
        gw = SlackGateway(hermes_home, slack, scripted.url, http=http,
                          env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})}, **kw)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_socket_mode_dm_reply_in_mrkdwn_with_a_working_reaction(slack, scripted, gateway):
    scripted.add({"content": "# Result\nHello **Alice**! See [the docs](https://example.com/a?b=1&c=2) for x < y."})
    gateway().start()
    assert slack.wait_for(lambda: slack.connections == 1)
    said = slack.user_says("hi there")
    assert slack.wait_for(lambda: slack.sent)
    sent = slack.sent[0]
    assert sent["channel"] == "DALICE" and "thread_ts" not in sent
    assert sent["text"] == "*Result*\nHello *Alice*! See <https://example.com/a?b=1&amp;c=2|the docs> for x &lt; y."
    assert scripted.requests[0]["body"]["messages"][-1]["content"] == "hi there"
    assert slack.wait_for(lambda: ("remove", said["event"]["ts"], "eyes") in slack.reactions)
    assert slack.reactions == [("add", said["event"]["ts"], "eyes"), ("remove", said["event"]["ts"], "eyes")]
    assert len(slack.acks) == 1


def test_http_mode_signature_challenge_retries_and_reply(slack, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway(http=True).start()
    assert slack.post_event('{"type": "url_verification", "token": "x", "challenge": "abc123"}') == 200
    assert "abc123" in slack.last_response
    forged = '{"type": "event_callback", "event_id": "EvFORGED", "event": {"type": "message", "user": "UALICE", ' \
             '"channel": "DALICE", "channel_type": "im", "ts": "1.000001", "text": "forged"}}'
    assert slack.post_event(forged, secret="not-the-secret") == 401
    body = slack.user_says("hello over http")
    assert slack.pushes == [(body["event_id"], 200)]
    slack.deliver(body["event"], event_id=body["event_id"], retry=1)  # Slack retries: X-Slack-Retry-Num: 1
    assert slack.pushes[-1] == (body["event_id"], 200)
    assert slack.wait_for(lambda: slack.sent)
    time.sleep(1.0)
    assert slack.texts() == ["re: hello over http"]
    assert len(scripted.requests) == 1


def test_stranger_gets_a_pairing_code_without_a_model_call(slack, scripted, gateway):
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": ""}).start()
    slack.user_says("hello", user="UBOB", channel="DBOB")
    assert slack.wait_for(lambda: slack.sent)
    assert slack.sent[0]["channel"] == "DBOB"
    assert re.search(r"pairing code is [A-Z2-9]{8}", slack.sent[0]["text"])
    assert "hermes pairing approve slack" in slack.sent[0]["text"]
    time.sleep(0.5)
    assert scripted.requests == []


def test_allowlisted_user_is_answered_and_others_are_not(slack, scripted, gateway):
    scripted.default = {"content": "ok"}
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": "", "SLACK_ALLOWED_USERS": "UALICE"}).start()
    slack.user_says("from bob", user="UBOB", channel="DBOB")
    slack.user_says("from alice")
    assert slack.wait_for(lambda: slack.sent)
    time.sleep(0.5)
    assert [m["channel"] for m in slack.sent] == ["DALICE"] and len(scripted.requests) == 1


@pytest.mark.parametrize("token", ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"])
def test_a_refused_token_is_a_config_error(slack, scripted, hermes_home, token):
    gw = SlackGateway(hermes_home, slack, scripted.url, env={token: "xoxb-wrong" if "BOT" in token else "xapp-wrong"})
    done = subprocess.run([HERMES, "gateway", "run"], env=gw.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"config error: Slack refused {token}: invalid_auth" in done.stderr


def test_mention_in_a_channel_is_answered_in_its_thread(slack, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    slack.user_says("chatter without a mention", channel="CGENERAL")
    body = slack.mention("what is up?")
    assert slack.wait_for(lambda: slack.sent)
    ts = body["event"]["ts"]
    assert slack.sent[0]["channel"] == "CGENERAL" and slack.sent[0]["thread_ts"] == ts
    assert slack.texts() == ["re: what is up?"]
    slack.user_says("and a follow-up", channel="CGENERAL", thread_ts=ts)  # our thread: no mention needed
    assert slack.wait_for(lambda: len(slack.sent) == 2)
    assert slack.sent[1]["thread_ts"] == ts and slack.texts()[1] == "re: and a follow-up"
    history = [m["content"] for m in scripted.requests[1]["body"]["messages"] if m["role"] == "user"]
    assert history == ["what is up?", "and a follow-up"]  # the thread is one conversation
    other = slack.mention("a new topic")  # a new thread: a new session
    assert slack.wait_for(lambda: len(slack.sent) == 3)
    assert slack.sent[2]["thread_ts"] == other["event"]["ts"]
    assert [m["role"] for m in scripted.requests[2]["body"]["messages"]].count("user") == 1
    time.sleep(0.5)
    assert len(scripted.requests) == 3 and len(slack.sent) == 3


def test_channel_without_mentions_or_threads_when_configured(slack, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway(env={"SLACK_REQUIRE_MENTION": "false"}, extra="      reply_in_thread: false\n").start()
    slack.user_says("chatter", channel="CGENERAL")
    assert slack.wait_for(lambda: slack.sent)
    slack.mention("with a mention")
    assert slack.wait_for(lambda: len(slack.sent) == 2)
    time.sleep(0.5)
    assert slack.texts() == ["re: chatter", "re: with a mention"]
    assert all("thread_ts" not in m for m in slack.sent)


def test_long_reply_is_split_with_code_fences_kept_whole(slack, scripted, gateway):
    code = "```python\n" + "".join(f"print({i})  # **not bold**\n" for i in range(3000)) + "```"
    prose = "\n\n".join(f"**Part {i}** " + "word " * 2000 for i in range(6))
    scripted.add({"content": prose + "\n\n" + code})
    gateway().start()
    slack.user_says("long please")
    assert slack.wait_for(lambda: slack.sent and "print(2999)" in slack.sent[-1]["text"])
    texts = slack.texts()
    assert len(texts) >= 2 and all(len(t) <= 40000 for t in texts)
    assert all(t.count("```") % 2 == 0 for t in texts)
    joined = "".join(texts)
    assert all(f"*Part {i}*" in joined for i in range(6)) and "**Part" not in joined
    assert "# **not bold**" in joined and all(f"print({i})" in joined for i in (0, 1500, 2999))


def _approval_script(scripted, target):
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {target}"}}]})
    scripted.default = lambda body: {"content": "tool said: " + str(body["messages"][-1]["content"])[:300]}


@pytest.mark.parametrize(("answer", "http"), [("once", False), ("deny", True)])
def test_approval_with_block_kit_buttons(slack, scripted, gateway, tmp_path, answer, http):
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    _approval_script(scripted, target)
    gateway(http=http, env={"GATEWAY_ALLOW_ALL_USERS": "", "SLACK_ALLOWED_USERS": "UALICE"},
            extra="approvals:\n  timeout: 20\n", cwd=work).start()
    slack.user_says("clean up victim")
    assert slack.wait_for(lambda: slack.sent and slack.sent[0].get("blocks"), timeout=20)
    prompt = slack.sent[0]
    assert f"rm -r {target}" in prompt["text"]
    buttons = [b for blk in prompt["blocks"] if blk["type"] == "actions" for b in blk["elements"]]
    assert [b["text"]["text"] for b in buttons] == ["✅ Once", "Session", "Always", "❌ Deny"]
    value = next(b["value"] for b in buttons if b["value"].endswith(":" + answer))
    slack.press(value, prompt, user="UBOB")  # not allowed: told so privately, nothing happens
    assert slack.wait_for(lambda: slack.ephemeral)
    assert slack.ephemeral[0]["user"] == "UBOB" and slack.ephemeral[0]["text"] == "Not allowed."
    assert target.exists()
    slack.press(value, prompt)
    assert slack.wait_for(lambda: any(t.startswith("tool said") for t in slack.texts()))
    assert slack.updates and slack.updates[0]["ts"] == prompt["ts"] and slack.updates[0]["blocks"] in ([], "[]")
    assert f"Answer: {answer}" in slack.updates[0]["text"]
    assert target.exists() == (answer == "deny")


def test_text_approval_fallback(slack, scripted, gateway, tmp_path):
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    _approval_script(scripted, target)
    gateway(env={"SLACK_ALLOWED_USERS": "UALICE"}, extra="approvals:\n  timeout: 20\n", cwd=work).start()  # the owner
    slack.user_says("clean up victim")
    assert slack.wait_for(lambda: slack.sent and slack.sent[0].get("blocks"), timeout=20)
    slack.user_says("/approve")
    assert slack.wait_for(lambda: any(t.startswith("tool said") for t in slack.texts()))
    assert not target.exists()


def test_duplicate_events_and_a_restart_are_answered_exactly_once(slack, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gw = gateway()
    gw.start()
    body = slack.user_says("first")
    slack.deliver(body["event"], event_id=body["event_id"], retry=1)  # re-delivered envelope, same event_id
    assert slack.wait_for(lambda: slack.sent)
    scripted.add({"content": "slow answer", "delay": 3})
    slack.user_says("question")
    assert slack.wait_for(lambda: len(scripted.requests) == 2)
    gw.stop(signal.SIGKILL)  # accepted (acked) but not answered
    scripted.add({"content": "answer after restart"})
    gw.start()
    assert slack.wait_for(lambda: len(slack.sent) == 2)
    slack.user_says("last")
    assert slack.wait_for(lambda: len(slack.sent) == 3)
    time.sleep(1.0)
    assert slack.texts() == ["re: first", "answer after restart", "re: last"]


def test_dropped_websocket_reconnects(slack, scripted, gateway, hermes_home):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    slack.user_says("before")
    assert slack.wait_for(lambda: len(slack.sent) == 1)
    slack.drop()
    assert slack.wait_for(lambda: slack.connections == 2, timeout=15)
    slack.user_says("after the drop")
    assert slack.wait_for(lambda: len(slack.sent) == 2)
    assert slack.texts() == ["re: before", "re: after the drop"]
    assert slack.calls.count("apps.connections.open") == 3  # the token check at start, two websockets
    answered = time.time()
    state = hermes_home / "gateway" / "gateway_state.json"
    assert slack.wait_for(lambda: json.loads(state.read_text())["updated_at"] > answered, timeout=5)
    status = run_hermes("gateway", "status", home=hermes_home)
    assert "slack: connected as @hermes; unanswered 0" in status.stdout


def test_429_retry_after_is_honoured(slack, scripted, gateway):
    scripted.default = {"content": "eventually"}
    gateway().start()
    slack.fail("chat.postMessage", 429, retry_after=2)
    t0 = time.time()
    slack.user_says("hi")
    assert slack.wait_for(lambda: slack.sent)
    assert slack.texts() == ["eventually"] and slack.sent[0]["time"] - t0 >= 2.0


def test_a_502_outage_is_waited_out(slack, scripted, gateway):
    scripted.default = {"content": "after the outage"}
    gateway().start()
    slack.outage(3)
    slack.user_says("during the outage")
    assert not slack.wait_for(lambda: slack.sent, timeout=2.5)
    assert slack.wait_for(lambda: slack.sent, timeout=3)
    assert slack.texts() == ["after the outage"] and slack.sent[0]["time"] - slack.down_until < 1.5


def test_files_both_ways(slack, scripted, gateway, hermes_home, tmp_path):
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    scripted.add({"content": f"Here it is.\n\nMEDIA:{report}"})
    gateway().start()
    slack.user_sends_file("notes.txt", b"secret notes\n", text="summarise this")
    assert slack.wait_for(lambda: slack.uploads)
    said = scripted.requests[0]["body"]["messages"][-1]["content"]
    saved = re.search(r"saved at (\S+)\]", said).group(1)
    assert saved.startswith(str(hermes_home / "cache" / "documents")) and "summarise this" in said
    assert Path(saved).read_bytes() == b"secret notes\n"
    assert slack.uploads == [{"channel": "DALICE", "thread_ts": None, "filename": "report.csv",
                              "length": 8, "content": b"a,b\n1,2\n"}]
    assert slack.texts() == ["Here it is."]


def test_a_members_approval_goes_to_the_owners_dm(slack, scripted, gateway, tmp_path):
    """Team mode: the owner is asked in the DM channel conversations.open gives (DALICE), with the buttons; only
    the owner's press runs the member's command."""
    root = tmp_path / "team"
    victim = root / "slack_UBOB" / "victim"
    victim.mkdir(parents=True)
    _approval_script(scripted, victim)
    extra = ("team:\n  people:\n    'slack:UALICE': owner\n    'slack:UBOB': member\n"
             f"  workspace_root: {root}\napprovals:\n  timeout: 20\n")
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": ""}, extra=extra, cwd=tmp_path).start()
    slack.user_says("clean up victim", user="UBOB", channel="DBOB")
    assert slack.wait_for(lambda: any(m.get("blocks") for m in slack.sent), timeout=30), slack.sent
    prompt = next(m for m in slack.sent if m.get("blocks"))
    assert prompt["channel"] == "DALICE" and "conversations.open" in slack.calls
    assert f"rm -r {victim}" in prompt["text"] and "slack:UBOB" in prompt["text"]
    assert slack.wait_for(lambda: any("Waiting for the owner" in m["text"] for m in slack.sent if m["channel"] == "DBOB"))
    value = next(b["value"] for blk in prompt["blocks"] if blk["type"] == "actions" for b in blk["elements"]
                 if b["value"].endswith(":once"))
    slack.press(value, prompt, user="UBOB")  # the member: not allowed
    assert slack.wait_for(lambda: slack.ephemeral) and victim.exists()
    slack.press(value, prompt, user="UALICE")
    assert slack.wait_for(lambda: any(m["text"].startswith("tool said") for m in slack.sent if m["channel"] == "DBOB"),
                          timeout=30)
    assert not victim.exists()
