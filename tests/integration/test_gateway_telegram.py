"""The real `hermes gateway run` against a local fake of the Telegram Bot API and the scripted model."""

from __future__ import annotations

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402

ALICE = 111


@pytest.fixture
def gateway(fake, scripted, hermes_home):
    made: list[Gateway] = []

    def make(env: dict | None = None, extra: str = "") -> Gateway:
        gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})},
                     extra=extra)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_dm_reply(fake, scripted, gateway):
    scripted.add({"content": "Hello **Alice**! 2+2=4."})
    gateway().start()
    fake.user_says("hi there")
    assert fake.wait_for(lambda: fake.sent)
    sent = fake.sent[0]
    assert sent["chat_id"] == ALICE
    assert sent["parse_mode"] == "MarkdownV2"
    assert sent["text"] == "Hello *Alice*\\! 2\\+2\\=4\\."
    assert scripted.requests[0]["body"]["messages"][-1]["content"] == "hi there"


def test_markdown_refused_is_retried_as_plain_text(fake, scripted, gateway):
    scripted.add({"content": "a_b (c)"})
    fake.fail("sendMessage", 400, description="Bad Request: can't parse entities: unsupported start tag")
    gateway().start()
    fake.user_says("hi")
    assert fake.wait_for(lambda: fake.sent)
    assert fake.sent[0]["text"] == "a_b (c)" and fake.sent[0]["parse_mode"] is None


def test_long_reply_is_split_at_paragraphs(fake, scripted, gateway):
    paragraphs = [f"Paragraph {i} " + "word " * 300 for i in range(6)]
    scripted.add({"content": "\n\n".join(paragraphs)})
    gateway().start()
    fake.user_says("long please")
    assert fake.wait_for(lambda: len(fake.sent) >= 2 and "Paragraph 5" in fake.sent[-1]["text"])
    assert all(len(m["text"]) <= 4096 for m in fake.sent)
    joined = "".join(fake.texts())
    assert all(f"Paragraph {i}" in joined for i in range(6))
    assert all(m["text"].rstrip().endswith("word") for m in fake.sent)


def test_exactly_once_across_restart_duplicates_and_downtime(fake, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gw = gateway()
    fake.user_says("sent before the gateway ever started")
    gw.start()
    assert fake.wait_for(lambda: len(fake.sent) == 1)
    fake.user_says("first")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    gw.stop()
    fake.user_says("sent while it was down")
    gw.start()
    assert fake.wait_for(lambda: len(fake.sent) == 3)
    fake.redeliver()
    fake.user_says("after the duplicates")
    assert fake.wait_for(lambda: len(fake.sent) == 4)
    gw.stop()
    gw.start()
    fake.user_says("last")
    assert fake.wait_for(lambda: len(fake.sent) == 5)
    import time
    time.sleep(1.0)
    print(fake.texts(), [(u["update_id"], u.get("message", {}).get("text")) for u in fake.confirmed])
    assert fake.texts() == ["re: sent before the gateway ever started", "re: first", "re: sent while it was down",
                            "re: after the duplicates", "re: last"]
    assert len(scripted.requests) == 5


def test_unanswered_message_is_answered_after_a_crash(fake, scripted, gateway):
    import signal
    import time

    scripted.add({"content": "slow answer", "delay": 3})
    gw = gateway()
    gw.start()
    fake.user_says("question")
    assert fake.wait_for(lambda: len(scripted.requests) == 1)
    gw.stop(signal.SIGKILL)
    scripted.add({"content": "answer after restart"})
    gw.start()
    assert fake.wait_for(lambda: fake.sent)
    time.sleep(0.5)
    assert fake.texts() == ["answer after restart"]


def test_502_outage_and_hanging_api_are_survived(fake, scripted, gateway):
    import time

    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    fake.outage(3)
    fake.user_says("during the outage")
    assert not fake.wait_for(lambda: fake.sent, timeout=2.5)
    assert fake.wait_for(lambda: fake.texts() == ["re: during the outage"], timeout=3.0)
    recovered = fake.sent[0]["time"] - fake.down_until
    assert recovered < 2.0
    fake.hang(3)
    fake.user_says("while it hangs")
    assert fake.wait_for(lambda: len(fake.sent) == 2, timeout=15)
    assert fake.texts()[-1] == "re: while it hangs"
    time.sleep(0.3)
    assert len(fake.sent) == 2


def test_429_retry_after_is_honoured(fake, scripted, gateway):
    scripted.add({"content": "throttled"})
    gateway().start()
    fake.fail("sendMessage", 429, retry_after=2)
    fake.user_says("hi")
    assert fake.wait_for(lambda: fake.sent)
    sends = [t for t, m in fake.calls if m == "sendMessage"]
    assert len(sends) == 2 and sends[1] - sends[0] >= 1.9
    assert fake.texts() == ["throttled"]


def test_busy_chat_messages_are_merged(fake, scripted, gateway):
    import time

    scripted.add({"content": "first answer", "delay": 2}, {"content": "second answer"})
    gateway().start()
    fake.user_says("one")
    time.sleep(0.3)
    fake.user_says("two")
    fake.user_says("three")
    assert fake.wait_for(lambda: fake.sent, timeout=15)
    time.sleep(1.5)  # room for a second turn
    users = [[m["content"] for m in r["body"]["messages"] if m["role"] == "user"] for r in scripted.requests]
    print(fake.texts(), users)
    assert fake.texts() in (["first answer", "second answer"], ["first answer"])
    assert 1 <= len(scripted.requests) == len(fake.sent) <= 2
    merged = "\n\n".join(users[-1])
    assert all(word in merged for word in ("one", "two", "three"))


def test_typing_while_working_and_stopped_after_reply(fake, scripted, gateway):
    import time

    scripted.add({"content": "done", "delay": 5})
    gateway().start()
    fake.user_says("work hard")
    assert fake.wait_for(lambda: fake.sent, timeout=15)
    replied = fake.sent[0]["time"]
    time.sleep(4.5)
    during = [a for a in fake.actions if a["time"] <= replied]
    assert len(during) >= 2 and all(a["action"] == "typing" for a in during)
    assert [a for a in fake.actions if a["time"] > replied] == []


def test_chat_commands_and_session_resumed_after_restart(fake, scripted, gateway, hermes_home):
    import sqlite3

    scripted.default = lambda body: {"content": f"{len(body['messages'])} messages"}
    gw = gateway()
    gw.start()
    fake.user_says("my name is Alice")
    assert fake.wait_for(lambda: len(fake.sent) == 1)
    fake.user_says("/status")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    assert "Session: " in fake.sent[1]["text"] and "(new)" not in fake.sent[1]["text"]
    gw.stop()
    gw.start()
    fake.user_says("what is my name?")
    assert fake.wait_for(lambda: len(fake.sent) == 3)
    contents = [m["content"] for m in scripted.requests[-1]["body"]["messages"]]
    assert "my name is Alice" in contents
    fake.user_says("/new")
    assert fake.wait_for(lambda: len(fake.sent) == 4)
    fake.user_says("fresh start")
    assert fake.wait_for(lambda: len(fake.sent) == 5)
    contents = [m["content"] for m in scripted.requests[-1]["body"]["messages"]]
    assert "my name is Alice" not in contents
    fake.user_says("/help")
    assert fake.wait_for(lambda: len(fake.sent) == 6)
    assert "/new" in fake.sent[5]["text"]
    assert len(scripted.requests) == 3
    with sqlite3.connect(hermes_home / "state.db") as db:
        rows = db.execute("select source from sessions").fetchall()
    assert rows == [("telegram",), ("telegram",)]


def test_idle_chat_is_evicted_then_resumed_and_status_shows_it(fake, scripted, gateway, hermes_home):
    import time

    from tests.helpers import run_hermes

    scripted.default = lambda body: {"content": f"{len(body['messages'])} messages"}
    gw = gateway(extra="gateway:\n  idle_evict_seconds: 1\n")
    gw.start()
    fake.user_says("remember: blue")
    assert fake.wait_for(lambda: len(fake.sent) == 1)
    time.sleep(0.3)
    busy = run_hermes("gateway", "status", home=hermes_home)
    assert busy.returncode == 0 and "Gateway: running" in busy.stdout and "telegram: connected as @hermes_test_bot" in busy.stdout
    assert fake.wait_for(lambda: "Sessions: 0" in run_hermes("gateway", "status", home=hermes_home).stdout, timeout=10)
    fake.user_says("what colour?")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    assert "remember: blue" in [m["content"] for m in scripted.requests[-1]["body"]["messages"]]
    gw.stop()
    stopped = run_hermes("gateway", "status", home=hermes_home)
    assert stopped.returncode == 1 and "Gateway: stopped" in stopped.stdout


HOOK_HANDLER = '''
import asyncio, json, os

async def handle(event_type, context):
    if context.get("message") == "slow hook":
        await asyncio.sleep(30)
    if event_type == "agent:start" and context.get("message") == "boom":
        raise RuntimeError("hook failure")
    with open(os.path.join(os.path.dirname(__file__), "events.jsonl"), "a") as f:
        f.write(json.dumps({"event": event_type, **context}) + "\\n")
'''


def test_hooks_fire_and_a_failing_or_slow_hook_never_stalls_a_chat(fake, scripted, gateway, hermes_home, tmp_path):
    import json

    hook = hermes_home / "hooks" / "recorder"
    hook.mkdir(parents=True)
    (hook / "HOOK.yaml").write_text("name: recorder\ndescription: records\nevents: [gateway:startup, session:start, "
                                    "session:reset, agent:start, agent:step, agent:end, 'command:*']\n")
    (hook / "handler.py").write_text(HOOK_HANDLER)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hooked"}}]}, {"content": "ran"})
    scripted.default = {"content": "fine"}
    gateway(extra="gateway:\n  hook_timeout: 1\n").start()
    fake.user_says("run echo")
    assert fake.wait_for(lambda: "ran" in fake.texts())
    fake.user_says("boom")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    fake.user_says("slow hook")
    assert fake.wait_for(lambda: len(fake.sent) == 3, timeout=3)
    fake.user_says("/new")
    assert fake.wait_for(lambda: len(fake.sent) == 4)
    log = hook / "events.jsonl"
    assert fake.wait_for(lambda: log.exists() and "session:reset" in log.read_text())
    events = [json.loads(line) for line in log.read_text().splitlines()]
    names = [e["event"] for e in events]
    assert names[0] == "gateway:startup" and events[0]["platforms"] == ["telegram"]
    assert names.count("session:start") == 1
    assert {"agent:start", "agent:step", "agent:end", "command:new", "session:reset"} <= set(names)
    step = next(e for e in events if e["event"] == "agent:step")
    assert step["tool_names"] == ["terminal"] and step["user_id"] == "111"
    end = next(e for e in events if e["event"] == "agent:end")
    assert end["response"] == "ran" and end["session_id"]


def test_tool_progress_is_one_message_edited_in_place(fake, scripted, gateway):
    calls = [{"name": "terminal", "arguments": {"command": "echo one"}}]
    scripted.add({"tool_calls": calls}, {"tool_calls": [{"name": "terminal", "arguments": {"command": "ls -la"}}]},
                 {"content": "all done"})
    gateway(env={"HERMES_TOOL_PROGRESS": "true", "HERMES_TOOL_PROGRESS_MODE": "all"}).start()
    fake.user_says("work")
    assert fake.wait_for(lambda: "all done" in fake.texts())
    assert fake.wait_for(lambda: fake.edits)
    progress = fake.sent[0]
    assert progress["text"].startswith("💻") and "echo one" in progress["text"]
    assert int(fake.edits[-1]["message_id"]) == progress["message_id"]
    assert "echo one" in fake.edits[-1]["text"] and "ls -la" in fake.edits[-1]["text"]
    assert fake.texts()[-1] == "all done"


def test_model_command_switches_this_chat_only(fake, scripted, gateway):
    scripted.default = lambda body: {"content": "via " + body["model"]}
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111"}).start()  # /model is the owner's (222: an allow-all guest)
    fake.user_says("/model")
    assert fake.wait_for(lambda: fake.texts() and fake.texts()[0].startswith("Model: scripted-model"))
    fake.user_says("/model other-model")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    assert "other-model" in fake.texts()[1]
    fake.user_says("hello")
    fake.user_says("hello", chat_id=222)
    assert fake.wait_for(lambda: len(fake.sent) == 4)
    assert fake.texts(111)[-1] == "via other-model" and fake.texts(222) == ["via scripted-model"]
    fake.user_says("/model third-model")
    assert fake.wait_for(lambda: len(fake.sent) == 5)
    fake.user_says("again")
    assert fake.wait_for(lambda: len(fake.sent) == 6)
    assert fake.texts(111)[-1] == "via third-model"


def test_a_refused_send_does_not_wedge_the_chat(fake, scripted, gateway, hermes_home):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gw = gateway()
    gw.start()
    fake.fail("sendMessage", 403, count=1, description="Forbidden: bot was blocked by the user")
    fake.user_says("first")
    assert fake.wait_for(lambda: len(scripted.requests) == 1)
    fake.user_says("second")
    assert fake.wait_for(lambda: fake.texts() == ["re: second"])
    gw.stop()
    gw.start()
    import time
    time.sleep(1.0)
    assert fake.texts() == ["re: second"] and len(scripted.requests) == 2


def test_gateway_start_stop_in_the_background(fake, scripted, hermes_home):
    import subprocess

    from tests.helpers import HERMES

    scripted.add({"content": "from the background"})
    gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true"})

    def hermes(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([HERMES, "gateway", *args], env=gw.env, capture_output=True, text=True, timeout=60)

    started = hermes("start")
    try:
        assert started.returncode == 0 and "Gateway started" in started.stdout
        assert "already running" in hermes("start").stdout
        fake.user_says("hi")
        assert fake.wait_for(lambda: fake.texts() == ["from the background"], timeout=30)
        assert "Gateway: running" in hermes("status").stdout
    finally:
        stopped = hermes("stop")
    assert stopped.returncode == 0 and "Gateway stopped" in stopped.stdout
    assert "Gateway: stopped" in hermes("status").stdout
    assert hermes("stop").returncode == 1
    assert "telegram polling" in (hermes_home / "logs" / "gateway.log").read_text()


def test_webhook_mode_requires_the_secret_and_answers_once(fake, scripted, gateway, hermes_home):
    import socket
    import subprocess
    import time

    from tests.helpers import HERMES

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hook_url = f"http://127.0.0.1:{port}/tg/hook"
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    fake.user_says("sent before start")
    gw = gateway(extra=f"      webhook_url: {hook_url}\n      webhook_port: {port}\n")
    refused = subprocess.run([HERMES, "gateway", "run"], env=gw.env, capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "TELEGRAM_WEBHOOK_SECRET" in refused.stdout + refused.stderr
    gw.env["TELEGRAM_WEBHOOK_SECRET"] = "s3cret"
    gw.start()
    assert fake.wait_for(lambda: fake.texts() == ["re: sent before start"])
    assert fake.webhook == {"url": hook_url, "secret": "s3cret"}
    uid = fake.user_says("hello hook")
    assert fake.wait_for(lambda: "re: hello hook" in fake.texts())
    forged = {"update_id": uid + 50, "message": {"message_id": 1, "date": 0, "text": "forged",
                                                  "from": {"id": 111, "is_bot": False, "first_name": "M"},
                                                  "chat": {"id": 111, "type": "private"}}}
    assert fake._push_webhook(forged, secret="wrong") == 403
    dup = next(u for u in fake.updates if u["update_id"] == uid)
    assert fake._push_webhook(dup) == 200
    time.sleep(1.0)
    assert fake.texts() == ["re: sent before start", "re: hello hook"] and len(scripted.requests) == 2


def test_a_document_sent_by_the_user_reaches_the_agent_as_a_file(fake, scripted, gateway, hermes_home):
    scripted.default = lambda body: {"content": "got: " + body["messages"][-1]["content"]}
    gateway().start()
    fake.user_sends_file("notes.txt", b"line one\nline two\n", caption="summarise this")
    assert fake.wait_for(lambda: fake.sent)
    said = scripted.requests[0]["body"]["messages"][-1]["content"]
    assert said.startswith("[The user sent a file, saved at ") and said.endswith("summarise this")
    saved = said.split("saved at ", 1)[1].split("]", 1)[0]
    assert saved.startswith(str(hermes_home / "cache" / "documents"))
    assert open(saved, "rb").read() == b"line one\nline two\n"


def test_a_media_line_in_the_reply_sends_the_file(fake, scripted, gateway, tmp_path):
    report = tmp_path / "report.csv"
    report.write_bytes(b"a,b\n1,2\n")
    gw = gateway()
    secret = gw.home / "config.yaml"
    scripted.add({"content": f"Here is the report.\n\nMEDIA:{report}\nMEDIA:/nonexistent/file.txt\nMEDIA:{secret}"})
    gw.start()
    fake.user_says("send me the report")
    assert fake.wait_for(lambda: fake.documents)
    assert fake.documents == [{"chat_id": 111, "filename": "report.csv", "content": b"a,b\n1,2\n"}]
    assert fake.texts() == [f"Here is the report.\n\nMEDIA:/nonexistent/file.txt\nMEDIA:{secret}"]


def test_skill_commands_in_chat(fake, scripted, gateway, hermes_home):
    skill = hermes_home / "skills" / "ops" / "tidy-logs"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy-logs\ndescription: Rotate and compress old log files\n---\n"
                                    "1. Find logs older than a week.\n2. Compress them.\n")
    scripted.add({"content": "Logs tidied."})
    gateway().start()
    fake.user_says("/skills")
    assert fake.wait_for(lambda: any("/tidy-logs - Rotate and compress" in t for t in fake.texts()))
    fake.user_says("/tidy-logs in /var/log/app")
    assert fake.wait_for(lambda: any("Logs tidied" in t for t in fake.texts()))
    sent = scripted.requests[-1]["body"]["messages"][-1]["content"]
    assert "Follow the skill `tidy-logs`" in sent and "in /var/log/app" in sent and "Compress them." in sent
    fake.user_says("/no-such-skill please")
    assert fake.wait_for(lambda: len(scripted.requests) == 2)
    assert scripted.requests[-1]["body"]["messages"][-1]["content"] == "/no-such-skill please"


def test_a_voice_note_is_transcribed_for_the_agent_and_echoed(fake, scripted, gateway, hermes_home):
    from tests.fake_media import FakeMedia

    media = FakeMedia().start()
    try:
        scripted.add({"content": "Watered."})
        gateway(env={"OPENAI_API_KEY": "sk-stt"},
                extra=f"stt:\n  provider: openai\n  openai:\n    base_url: {media.url}/v1\n").start()
        fake.user_sends_voice(b"OggS" + b"\x00" * 200)
        assert fake.wait_for(lambda: any("Watered." in t for t in fake.texts()), timeout=30)
        assert "🎙️ please water the plants" in fake.texts()
        sent = scripted.requests[-1]["body"]["messages"][-1]["content"]
        assert 'Transcript: "please water the plants"' in sent
        req = media.requests[-1]
        assert req["path"] == "/v1/audio/transcriptions" and req["headers"]["authorization"] == "Bearer sk-stt"
        assert b'name="model"\r\n\r\nwhisper-1' in req["body"] and b"OggS" in req["body"]
    finally:
        media.stop()


def test_a_voice_note_uses_a_legacy_flat_stt_model(fake, scripted, gateway, hermes_home):
    """0.19.0's `stt.model` (today's Hermes moves it to stt.<provider>.model) is the model asked for."""
    from tests.fake_media import FakeMedia

    media = FakeMedia().start()
    try:
        scripted.add({"content": "Noted."})
        gateway(env={"OPENAI_API_KEY": "sk-stt"}, extra=f"stt:\n  provider: openai\n  model: gpt-4o-transcribe\n"
                                                       f"  openai:\n    base_url: {media.url}/v1\n").start()
        fake.user_sends_voice(b"OggS" + b"\x00" * 200)
        assert fake.wait_for(lambda: any("Noted." in t for t in fake.texts()), timeout=30)
        assert b'name="model"\r\n\r\ngpt-4o-transcribe' in media.requests[-1]["body"]
    finally:
        media.stop()


GROUP = -1001234


def test_group_with_require_mention_answers_mentions_replies_and_addressed_commands(fake, scripted, gateway):
    import time

    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway(extra="      require_mention: true\n").start()
    for text in ("just chatting", "/status", "ask @other_person_bot", "mail me at bob@hermes_test_bot.example"):
        fake.user_says(text, chat_id=GROUP, user_id=ALICE, chat_type="supergroup")
    fake.user_says("@hermes_test_bot what is 2+2?", chat_id=GROUP, user_id=ALICE, chat_type="supergroup")
    assert fake.wait_for(lambda: fake.sent)
    time.sleep(0.7)
    assert fake.texts() == ["re: what is 2+2?"]
    fake.user_says("and 3+3?", chat_id=GROUP, user_id=ALICE, chat_type="supergroup", reply_to=fake.sent[0]["message_id"])
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    fake.user_says("/status@hermes_test_bot", chat_id=GROUP, user_id=ALICE, chat_type="supergroup")
    assert fake.wait_for(lambda: len(fake.sent) == 3)
    fake.user_says("no mention needed in a DM")
    assert fake.wait_for(lambda: len(fake.sent) == 4)
    texts = fake.texts()
    assert texts[1] == "re: and 3+3?" and texts[2].startswith("Session: ") and texts[3] == "re: no mention needed in a DM"
    assert len(scripted.requests) == 3


def test_group_without_require_mention_answers_everything_as_hermes_does(fake, scripted, gateway):
    scripted.default = lambda body: {"content": "re: " + body["messages"][-1]["content"]}
    gateway().start()
    fake.user_says("hello everyone", chat_id=GROUP, user_id=ALICE, chat_type="group")
    assert fake.wait_for(lambda: fake.texts() == ["re: hello everyone"])
    fake.user_says("@hermes_test_bot, and you", chat_id=GROUP, user_id=ALICE, chat_type="group")
    assert fake.wait_for(lambda: fake.texts() == ["re: hello everyone", "re: and you"])
