"""Issue 22, the gateway list, through the real `hermes gateway run` against the fake Telegram: hooks never take
the agent's workers, the hook events and their context, display.tool_progress, speech as voice messages, and
an approval pending across a restart."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402


@pytest.fixture
def gateway(fake, scripted, hermes_home):
    made: list[Gateway] = []

    def make(env: dict | None = None, extra: str = "", cwd=None) -> Gateway:
        gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})},
                     extra=extra, cwd=cwd)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def _hook(home, name: str, yaml: str, code: str) -> None:
    d = home / "hooks" / name
    d.mkdir(parents=True)
    (d / "HOOK.yaml").write_text(yaml)
    (d / "handler.py").write_text(code)


HUNG = '''
import time

def handle(event_type, context):
    time.sleep(120)
'''


def test_a_hung_plain_hook_never_starves_the_chats(fake, scripted, gateway, hermes_home):
    _hook(hermes_home, "sleepy", "name: sleepy\nevents: [message:received, agent:start, agent:step, agent:end]\n",
          HUNG)
    scripted.default = lambda body: {"content": "re: " + str(body["messages"][-1]["content"])}
    gw = gateway(extra="gateway:\n  hook_timeout: 0.5\n  max_concurrent_turns: 2\n")
    gw.start()
    for round_ in range(2):  # a second round: the first one's abandoned hook calls would hold the workers
        t0 = time.time()
        for chat in range(5):
            fake.user_says(f"round {round_} chat {chat}", chat_id=500 + chat)
        assert fake.wait_for(lambda r=round_: sum(t.startswith(f"re: round {r}") for t in fake.texts()) == 5,
                             timeout=20), fake.texts()
        print(f"round {round_}: 5 chats answered in {time.time() - t0:.2f} s")
        assert time.time() - t0 < 15
    # the report comes hook_timeout after the first call, which a fast gateway may answer both rounds within
    assert fake.wait_for(lambda: "hook sleepy hung" in gw.output(), timeout=10), gw.output()
    hung = [line for line in gw.output().splitlines() if "hook sleepy hung" in line]
    assert len(hung) == 1 and hung[0].startswith("hermes gateway: hook sleepy hung on message:received")
    assert gw.stop() == 0  # the hung thread does not hold the process


RECORDER = '''
import json, os

def handle(event_type, context):
    with open(os.path.join(os.path.dirname(__file__), "events.jsonl"), "a") as f:
        f.write(json.dumps({"event": event_type, **context}) + "\\n")
'''


def test_hook_events_and_their_context(fake, scripted, gateway, hermes_home):
    _hook(hermes_home, "recorder", "name: recorder\nevents: [message:received, session:start, agent:start, "
                                   "agent:end]\n", RECORDER)
    _hook(hermes_home, "broken", "name: broken\nevents: [agent:start\n  - oops: [\n", "def handle(e, c): pass\n")
    scripted.default = {"content": "hello back"}
    gw = gateway()
    gw.start()
    fake.user_says("hello hooks")
    assert fake.wait_for(lambda: fake.texts() == ["hello back"])
    log = hermes_home / "hooks" / "recorder" / "events.jsonl"
    assert fake.wait_for(lambda: log.exists() and "agent:end" in log.read_text())
    events = [json.loads(line) for line in log.read_text().splitlines()]
    names = [e["event"] for e in events]
    assert names == ["message:received", "session:start", "agent:start", "agent:end"]
    received, started, agent_start, end = events
    assert received["message"] == "hello hooks" and received["chat_id"] == "111" and received["user_id"] == "111"
    with sqlite3.connect(hermes_home / "state.db") as db:
        (sid,) = db.execute("select id from sessions").fetchone()
    assert started["session_id"] == agent_start["session_id"] == end["session_id"] == sid
    assert agent_start["message"] == "hello hooks"
    assert end["message"] == "hello hooks" and end["response"] == "hello back"
    console = [line for line in gw.output().splitlines() if "hook broken" in line]
    assert len(console) == 1 and console[0].startswith("hermes gateway: hook broken skipped:"), gw.output()
    assert "Traceback" not in gw.output()


def _two_tools(scripted) -> None:
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo one"}}]},
                 {"content": "done"})


@pytest.mark.parametrize("setting", ["default", "off", "env", "platform", "platform-0.19", "platform-on"])
def test_display_tool_progress_is_honoured_in_chats(fake, scripted, gateway, setting):
    _two_tools(scripted)
    env = {"HERMES_TOOL_PROGRESS": None}  # no variable: the config decides
    extra = {"off": "display:\n  tool_progress: 'off'\n",
             # a platform's own setting, as today's Hermes writes it and as 0.19.0 did: it wins over the global one
             "platform": "display:\n  platforms:\n    telegram:\n      tool_progress: 'off'\n",
             "platform-0.19": "display:\n  tool_progress_overrides:\n    telegram: 'off'\n",
             "platform-on": "display:\n  tool_progress: 'off'\n  platforms:\n    telegram:\n      tool_progress: all\n",
             }.get(setting, "")
    if setting == "env":
        env = {"HERMES_TOOL_PROGRESS": "false"}
    gateway(env=env, extra=extra).start()
    fake.user_says("work")
    assert fake.wait_for(lambda: "done" in fake.texts())
    time.sleep(0.3)
    if setting in ("default", "platform-on"):  # display.tool_progress defaults to all
        assert fake.texts()[0].startswith("💻") and "echo one" in fake.texts()[0]
    else:
        assert fake.texts() == ["done"]


def _speech_script(scripted, texts: list[str]) -> None:
    for text in texts:
        scripted.add({"tool_calls": [{"name": "text_to_speech", "arguments": {"text": text}}]})
        scripted.add(lambda body: {"content": "Here it is.\n" + json.loads(body["messages"][-1]["content"])["media"]})


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_speech_replies_are_voice_messages(fake, scripted, gateway):
    if shutil.which("ffmpeg") is None and shutil.which("opusenc") is None:
        pytest.skip("needs ffmpeg or opusenc (opus-tools)")
    _speech_script(scripted, ["good morning"])
    gateway(extra="tts:\n  provider: espeak\n").start()
    fake.user_says("say good morning")
    assert fake.wait_for(lambda: fake.voices, timeout=30)
    voice = fake.voices[0]
    assert voice["chat_id"] == 111 and voice["filename"].endswith(".ogg")
    assert voice["content"].startswith(b"OggS") and b"OpusHead" in voice["content"][:64]
    assert fake.documents == [] and fake.texts() == ["Here it is."]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_speech_without_an_encoder_is_a_document_said_once(fake, scripted, gateway, tmp_path_factory):
    # a PATH with the speech engine and a shell, but no ffmpeg or opusenc; outside the gateway's working directory
    # (hermes runs programs only from PATH directories the sandbox cannot write: paths.py: trusted_which)
    bin_dir = tmp_path_factory.mktemp("speech-bin")
    for tool in ("espeak-ng", "sh", "bash"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    _speech_script(scripted, ["one", "two"])
    gw = gateway(env={"PATH": str(bin_dir)}, extra="tts:\n  provider: espeak\n")
    gw.start()
    fake.user_says("say one")
    assert fake.wait_for(lambda: len(fake.documents) == 1, timeout=30)
    fake.user_says("say two")
    assert fake.wait_for(lambda: len(fake.documents) == 2, timeout=30)
    assert fake.voices == [] and all(d["filename"].endswith(".wav") for d in fake.documents)
    notes = [t for t in fake.texts() if "no OGG/Opus encoder" in t]
    assert len(notes) == 1 and "ffmpeg or opus-tools" in notes[0]
    assert gw.output().count("no OGG/Opus encoder") == 1


def test_approval_pending_across_a_restart(fake, scripted, gateway, hermes_home, tmp_path):
    work = tmp_path / "work"
    (work / "a").mkdir(parents=True)
    (work / "b").mkdir()
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {work / 'a'}"}}]},
                 {"content": "a removed"},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {work / 'b'}"}}]})
    scripted.default = lambda body: {"content": "after restart: " + str(body["messages"][-1]["content"])[:200]}
    gw = gateway(env={"TELEGRAM_ALLOWED_USERS": "111"}, extra="approvals:\n  timeout: 60\n", cwd=work)  # the owner asks
    gw.start()
    fake.user_says("remove a")
    assert fake.wait_for(lambda: fake.sent and fake.sent[-1]["reply_markup"], timeout=20)
    first = fake.sent[-1]
    fake.press(first["reply_markup"]["inline_keyboard"][0][0]["callback_data"])
    assert fake.wait_for(lambda: "a removed" in fake.texts())
    assert fake.wait_for(lambda: [int(m["message_id"]) for m in fake.markups] == [first["message_id"]])
    assert not (work / "a").exists()

    fake.user_says("remove b")
    assert fake.wait_for(lambda: len([m for m in fake.sent if m["reply_markup"]]) == 2, timeout=20)
    second = fake.sent[-1]
    gw.stop()  # a restart while the approval waits
    assert int(fake.markups[-1]["message_id"]) == second["message_id"]  # its buttons are gone
    gw.start()
    assert fake.wait_for(lambda: any(t.startswith("after restart") for t in fake.texts()), timeout=30)
    assert (work / "b").exists()
    with sqlite3.connect(hermes_home / "state.db") as db:
        rows = db.execute("select role, content from messages order by id").fetchall()
    users = [c for r, c in rows if r == "user"]
    assert users == ["remove a", "remove b"]
    results = [c for r, c in rows if r == "tool"]
    assert "CANCELLED" in results[-1] and "restart" in results[-1] and "denied" not in results[-1]
    reply = next(t for t in fake.texts() if t.startswith("after restart"))
    assert "CANCELLED" in reply
