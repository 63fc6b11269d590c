"""The real `hermes gateway run` with WhatsApp (Cloud API) against tests/fake_whatsapp.py and the scripted model."""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from tests.fake_whatsapp import ALICE, FakeWhatsApp  # noqa: E402
from tests.helpers import model_config, run_hermes  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402


class WhatsAppGateway(Gateway):
    ready = ("gateway: whatsapp webhook",)

    def __init__(self, home: Path, fake: FakeWhatsApp, model_url: str, env: dict | None = None,
                 extra: str = "", cwd: Path | None = None) -> None:
        self.home, self.fake = home, fake
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        fake.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"
        model_config(home, model_url, f"platforms:\n  whatsapp:\n    extra:\n      base_url: {fake.base_url}\n"
                                      f"      webhook_host: 127.0.0.1\n      webhook_port: {port}\n{extra}")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_", "WHATSAPP_", "GATEWAY_"))}
        self.env.update({"HERMES_HOME": str(home), "MESSAGING_CWD": str(cwd or home), "HERMES_TOOL_PROGRESS": "false",
                         "WHATSAPP_CLOUD_ACCESS_TOKEN": fake.token, "WHATSAPP_CLOUD_PHONE_NUMBER_ID": fake.phone_number_id,
                         "WHATSAPP_CLOUD_APP_SECRET": fake.app_secret, "WHATSAPP_CLOUD_VERIFY_TOKEN": fake.verify_token,
                         **(env or {})})
        self.proc = None
        self.log = home / "gateway.out"


@pytest.fixture
def wa():
    server = FakeWhatsApp().start()
    yield server
    server.stop()


@pytest.fixture
def gateway(wa, scripted, hermes_home):
    made: list[WhatsAppGateway] = []

    def make(env: dict | None = None, extra: str = "", cwd: Path | None = None) -> WhatsAppGateway:
        gw = WhatsAppGateway(hermes_home, wa, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})},
                             extra=extra, cwd=cwd)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_handshake_dm_reply_in_whatsapp_format_read_receipt_and_statuses_ignored(wa, scripted, gateway):
    scripted.add({"content": "Hello **Alice**! Here is *one* idea:\n```python\nprint(1)\n```"})
    gateway().start()
    assert wa.verify("wrong-token")[0] == 403
    assert wa.verify(wa.verify_token, challenge="8472") == (200, "8472")
    wamid = wa.user_says("hi there")
    assert wa.wait_for(lambda: wa.sent)
    sent = wa.sent[0]
    assert sent["to"] == ALICE and sent["type"] == "text"
    assert sent["text"]["body"] == "Hello *Alice*! Here is _one_ idea:\n```\nprint(1)\n```"
    assert scripted.requests[0]["body"]["messages"][-1]["content"] == "hi there"
    assert wa.wait_for(lambda: wa.reads)
    assert wa.reads[0]["message_id"] == wamid and wa.reads[0]["typing_indicator"] == {"type": "text"}
    assert wa.status_update(sent["id"]) == 200
    time.sleep(0.7)
    assert len(wa.sent) == 1 and len(scripted.requests) == 1


def test_a_wrong_or_missing_signature_is_refused(wa, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    forged = wa.message_payload("text", {"body": "rm -rf ~"}, "wamid.FORGED")
    assert wa.post(forged, signature="sha256=" + "0" * 64) == 403
    assert wa.post(forged, signature="") == 403
    assert wa.post(forged, signature="sha1=" + "0" * 40) == 403
    time.sleep(0.7)
    assert wa.sent == [] and scripted.requests == []
    assert wa.post(forged) == 200
    assert wa.wait_for(lambda: wa.texts() == ["re: rm -rf ~"])


def test_a_stranger_gets_a_pairing_code_without_a_model_call(wa, scripted, gateway, hermes_home):
    scripted.default = {"content": "welcome"}
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": ""}).start()
    wa.user_says("hi", wa_id="15557770000", name="Bob")
    assert wa.wait_for(lambda: wa.sent)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", wa.texts()[0]).group(1)
    assert "hermes pairing approve whatsapp" in wa.texts()[0] and scripted.requests == []
    assert run_hermes("pairing", "approve", "whatsapp", code, home=hermes_home).returncode == 0
    wa.user_says("hi again", wa_id="15557770000", name="Bob")
    assert wa.wait_for(lambda: wa.texts()[-1:] == ["welcome"])
    assert len(scripted.requests) == 1


def test_a_long_reply_is_split_into_4096_character_messages(wa, scripted, gateway):
    paragraphs = [f"Paragraph {i} " + "word " * 300 for i in range(6)]
    scripted.add({"content": "\n\n".join(paragraphs)})
    gateway().start()
    wa.user_says("long please")
    assert wa.wait_for(lambda: len(wa.sent) >= 2 and "Paragraph 5" in wa.texts()[-1])
    assert all(len(t) <= 4096 for t in wa.texts())
    joined = "".join(wa.texts())
    assert all(f"Paragraph {i}" in joined for i in range(6))


@pytest.mark.parametrize("answer", ["once", "deny"])
def test_approval_with_reply_buttons(wa, scripted, gateway, tmp_path, answer):
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {target}"}}]})
    scripted.default = lambda body: {"content": "tool said: " + str(body["messages"][-1]["content"])[:200]}
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": "", "WHATSAPP_ALLOWED_USERS": ALICE}, extra="approvals:\n  timeout: 20\n",
            cwd=work).start()
    wa.user_says("clean up victim")
    assert wa.wait_for(lambda: any(m["type"] == "interactive" for m in wa.sent), timeout=20)
    prompt = next(m for m in wa.sent if m["type"] == "interactive")
    assert f"rm -r {target}" in prompt["interactive"]["body"]["text"]
    assert "/approve session" in prompt["interactive"]["body"]["text"]
    buttons = {b["reply"]["title"]: b["reply"]["id"] for b in prompt["interactive"]["action"]["buttons"]}
    assert list(buttons) == ["✅ Once", "Always", "❌ Deny"]
    wa.press(buttons["✅ Once"], "✅ Once", wa_id="15559990000")  # not an allowed user: ignored
    time.sleep(0.7)
    assert target.exists()
    chosen = "✅ Once" if answer == "once" else "❌ Deny"
    wa.press(buttons[chosen], chosen)
    assert wa.wait_for(lambda: any(t.startswith("tool said") for t in wa.texts()))
    assert f"Answer: {answer}" in wa.texts()
    assert target.exists() == (answer == "deny")


def test_a_padded_command_is_asked_about_in_one_screen_naming_the_dangerous_part(wa, scripted, gateway, tmp_path):
    """rt12 a43 in chat: 60 blank lines and a harmless tail do not push the rm out of the message's first screen."""
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    command = f"rm -r {target}" + "\n" * 60 + "echo 'formatting the code'\x1b]52;c;ZXZpbA==\x07"
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]})
    scripted.default = lambda body: {"content": "tool said: " + str(body["messages"][-1]["content"])[:200]}
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": "", "WHATSAPP_ALLOWED_USERS": ALICE}, extra="approvals:\n  timeout: 20\n",
            cwd=work).start()
    wa.user_says("clean up victim")
    assert wa.wait_for(lambda: any(m["type"] == "interactive" for m in wa.sent), timeout=20)
    text = next(m for m in wa.sent if m["type"] == "interactive")["interactive"]["body"]["text"]
    assert len(text.splitlines()) < 20 and "«59 blank lines»" in text and "\x1b" not in text, text
    assert f"Dangerous part: rm -r {target}\nReason: " in text and "^[]52;c;" in text, text
    buttons = {b["reply"]["title"]: b["reply"]["id"] for b in
               next(m for m in wa.sent if m["type"] == "interactive")["interactive"]["action"]["buttons"]}
    wa.press(buttons["❌ Deny"], "❌ Deny")
    assert wa.wait_for(lambda: any(t.startswith("tool said") for t in wa.texts()))
    assert target.exists()


def test_a_redelivered_webhook_is_answered_once(wa, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    wamid = wa.user_says("only once")
    assert wa.wait_for(lambda: wa.texts() == ["re: only once"])
    assert wa.push(wamid, background=False) == 200
    wa.user_says("next")
    assert wa.wait_for(lambda: len(wa.sent) == 2)
    time.sleep(0.7)
    assert wa.texts() == ["re: only once", "re: next"] and len(scripted.requests) == 2


def test_messages_sent_while_the_gateway_was_down_are_answered_after_start(wa, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gw = gateway()
    wa.user_says("before the first start")  # Meta keeps retrying until the webhook answers 200
    time.sleep(0.3)
    gw.start()
    assert wa.wait_for(lambda: wa.texts() == ["re: before the first start"])
    gw.stop()
    wa.user_says("while it was down")
    time.sleep(0.3)
    gw.start()
    assert wa.wait_for(lambda: len(wa.sent) == 2)
    time.sleep(0.5)
    assert wa.texts() == ["re: before the first start", "re: while it was down"] and len(scripted.requests) == 2
    assert any(status == 0 for _, status in wa.pushes)


def test_files_both_ways(wa, scripted, gateway, hermes_home, tmp_path):
    report = tmp_path / "report.csv"
    report.write_bytes(b"a,b\n1,2\n")
    scripted.add(lambda body: {"content": f"Read it. Here is mine.\n\nMEDIA:{report}"})
    gateway().start()
    wa.user_sends_file("notes.txt", b"line one\nline two\n", "text/plain", caption="summarise this")
    assert wa.wait_for(lambda: any(m["type"] == "document" for m in wa.sent))
    said = scripted.requests[0]["body"]["messages"][-1]["content"]
    assert said.startswith("[The user sent a file, saved at ") and said.endswith("summarise this")
    saved = said.split("saved at ", 1)[1].split("]", 1)[0]
    assert saved.startswith(str(hermes_home / "cache" / "documents"))
    assert open(saved, "rb").read() == b"line one\nline two\n"
    doc = next(m for m in wa.sent if m["type"] == "document")["document"]
    assert doc["filename"] == "report.csv" and wa.uploads[doc["id"]]["content"] == b"a,b\n1,2\n"
    assert wa.uploads[doc["id"]]["mime"] == "text/csv"
    assert wa.texts() == ["Read it. Here is mine."]


def test_429_retry_after_and_5xx_are_retried(wa, scripted, gateway):
    scripted.add({"content": "throttled"}, {"content": "after the outage"})
    gateway().start()
    wa.fail("messages", 429, retry_after=2, code=130429, message="Rate limit hit")
    wa.user_says("hi")
    assert wa.wait_for(lambda: wa.sent)
    sends = [t for t, kind, _ in wa.calls if kind == "messages"]
    assert len(sends) == 2 and sends[1] - sends[0] >= 1.9
    wa.fail("messages", 503, count=3)
    wa.user_says("again")
    assert wa.wait_for(lambda: len(wa.sent) == 2)
    assert wa.texts() == ["throttled", "after the outage"]
    assert [s for _, kind, s in wa.calls if kind == "messages"].count(503) == 3


def test_missing_secrets_are_refused_at_start(wa, scripted, gateway):
    import subprocess

    from tests.helpers import HERMES

    gw = gateway(env={"WHATSAPP_CLOUD_APP_SECRET": ""})
    done = subprocess.run([HERMES, "gateway", "run"], env=gw.env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "WHATSAPP_CLOUD_APP_SECRET" in done.stdout + done.stderr


def test_a_message_taken_before_a_crash_is_answered_after_restart(wa, scripted, gateway):
    import signal

    scripted.add({"content": "slow answer", "delay": 3})
    gw = gateway()
    gw.start()
    wa.user_says("question")
    assert wa.wait_for(lambda: len(scripted.requests) == 1)
    assert wa.pushes[-1][1] == 200  # Meta has its 200: it will not deliver this message again
    gw.stop(signal.SIGKILL)
    scripted.add({"content": "answer after restart"})
    gw.start()
    assert wa.wait_for(lambda: wa.sent)
    time.sleep(0.5)
    assert wa.texts() == ["answer after restart"]
