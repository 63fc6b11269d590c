"""The real `hermes gateway run` (the real discord.py inside it) against a local fake of Discord's REST API
and gateway websocket (tests/fake_discord.py) and the scripted model."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("discord")

from tests.fake_discord import ALICE, DM_CHANNEL, GUILD, FakeDiscord  # noqa: E402
from tests.helpers import model_config, run_hermes  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402

STRANGER = 800000000000000222
GENERAL = 700000000000000500  # a guild channel
FREE = 700000000000000600  # a guild channel in `extra.channels`: no mention needed


class DiscordGateway(Gateway):
    """`hermes gateway run` with only Discord configured, pointed at the fake."""

    ready = ("gateway: discord gateway",)

    def __init__(self, home: Path, fake: FakeDiscord, model_url: str, env: dict | None = None,
                 extra: str = "", cwd: Path | None = None) -> None:
        self.home, self.fake = home, fake  # type: ignore[assignment]
        model_config(home, model_url, f"platforms:\n  discord:\n    extra:\n      base_url: {fake.api_url}\n"
                                      f"      gateway_url: {fake.gateway_url}\n      channels: [{FREE}]\n{extra}")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_", "DISCORD_", "GATEWAY_"))}
        self.env.update({"HERMES_HOME": str(home), "DISCORD_BOT_TOKEN": fake.token,
                         "MESSAGING_CWD": str(cwd or home), "HERMES_TOOL_PROGRESS": "false",
                         **(env or {})})
        self.proc = None
        self.log = home / "gateway.out"


@pytest.fixture
def discord_fake():
    server = FakeDiscord().start()
    yield server
    server.stop()


@pytest.fixture
def gateway(discord_fake, scripted, hermes_home):
    made: list[DiscordGateway] = []

    def make(env: dict | None = None, extra: str = "", cwd: Path | None = None) -> DiscordGateway:
        gw = DiscordGateway(hermes_home, discord_fake, scripted.url,
                            env=env if env is not None else {"GATEWAY_ALLOW_ALL_USERS": "true"}, extra=extra, cwd=cwd)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def echo(scripted) -> None:  # type: ignore[no-untyped-def]
    scripted.default = lambda body: {"content": "re: " + str(body["messages"][-1]["content"])}


def test_dm_reply_with_typing_while_working(discord_fake, scripted, gateway, hermes_home):
    import sqlite3

    fake = discord_fake
    scripted.add({"content": "Hello **Alice**! `2+2` = 4.", "delay": 5})
    gateway().start()
    assert fake.identifies == 1
    fake.user_says("hi there")
    assert fake.wait_for(lambda: fake.sent, timeout=20)
    sent = fake.sent[0]
    assert sent["channel_id"] == DM_CHANNEL and sent["content"] == "Hello **Alice**! `2+2` = 4."
    assert sent["allowed_mentions"] == {"parse": []}
    assert scripted.requests[0]["body"]["messages"][-1]["content"] == "hi there"
    time.sleep(4.5)
    during = [t for t in fake.typing if t["time"] <= sent["time"]]
    assert len(during) >= 2 and all(t["channel_id"] == DM_CHANNEL for t in during)
    assert [t for t in fake.typing if t["time"] > sent["time"]] == []
    status = run_hermes("gateway", "status", home=hermes_home)
    assert "discord: connected as @hermes" in status.stdout
    with sqlite3.connect(hermes_home / "state.db") as db:
        assert db.execute("select source from sessions").fetchall() == [("discord",)]


def test_allowlist_stranger_gets_a_pairing_code_and_no_model_call(discord_fake, scripted, gateway, hermes_home):
    fake = discord_fake
    echo(scripted)
    gateway(env={}).start()
    fake.user_says("let me in", channel=DM_CHANNEL + 1, user=STRANGER, name="mallory")
    assert fake.wait_for(lambda: fake.sent)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", fake.sent[0]["content"]).group(1)
    assert "hermes pairing approve discord" in fake.sent[0]["content"]
    assert scripted.requests == []
    assert (hermes_home / "platforms" / "pairing" / "discord-pending.json").exists()
    assert code not in (hermes_home / "platforms" / "pairing" / "discord-pending.json").read_text()


def test_allowed_users_list(discord_fake, scripted, gateway):
    fake = discord_fake
    echo(scripted)
    gateway(env={"DISCORD_ALLOWED_USERS": str(ALICE)}).start()
    fake.user_says("stranger here", channel=DM_CHANNEL + 1, user=STRANGER)
    fake.user_says("owner here")
    assert fake.wait_for(lambda: fake.sent)
    time.sleep(0.5)
    assert fake.texts() == ["re: owner here"] and len(scripted.requests) == 1


def test_guild_messages_need_a_mention_unless_the_channel_is_configured(discord_fake, scripted, gateway):
    fake = discord_fake
    echo(scripted)
    gateway().start()
    fake.user_says("just chatting, not for the bot", channel=GENERAL, guild=GUILD)
    fake.user_says("what time is it?", channel=GENERAL, guild=GUILD, mention=True)
    assert fake.wait_for(lambda: fake.sent)
    fake.user_says("free channel question", channel=FREE, guild=GUILD)
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    time.sleep(0.5)
    assert fake.texts(GENERAL) == ["re: what time is it?"]  # the mention is not part of what the model sees
    assert fake.texts(FREE) == ["re: free channel question"]
    assert len(scripted.requests) == 2


def test_long_reply_is_split_and_code_fences_are_never_broken(discord_fake, scripted, gateway):
    fake = discord_fake
    code = "\n".join(f"print({i})  # line {i}" for i in range(250))
    prose = "\n\n".join(f"Paragraph {i} " + "word " * 120 for i in range(4))
    scripted.add({"content": f"{prose}\n\n```python\n{code}\n```\n\nThat is all."})
    gateway().start()
    fake.user_says("long please")
    assert fake.wait_for(lambda: fake.texts() and fake.texts()[-1].endswith("That is all."), timeout=20)
    texts = fake.texts()
    assert len(texts) >= 4 and all(len(t) <= 2000 for t in texts)
    for t in texts:  # every piece renders on its own: fences balanced
        assert len(re.findall(r"^```", t, re.M)) % 2 == 0, t
    code_pieces = [t for t in texts if "print(" in t]
    assert len(code_pieces) >= 2 and all(t.lstrip().startswith("```python") or "Paragraph" in t for t in code_pieces)
    joined = "\n".join(texts)
    assert all(f"print({i})  # line {i}" in joined for i in range(250))
    assert all(f"Paragraph {i}" in joined for i in range(4))


def _approval_script(scripted, target: Path) -> None:  # type: ignore[no-untyped-def]
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {target}"}}]})
    scripted.default = lambda body: {"content": "tool said: " + str(body["messages"][-1]["content"])[:300]}


@pytest.mark.parametrize("answer", ["once", "deny", "text-deny"])
def test_chat_approval_with_buttons(discord_fake, scripted, gateway, tmp_path, answer):
    fake = discord_fake
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    _approval_script(scripted, target)
    gateway(env={"DISCORD_ALLOWED_USERS": str(ALICE)}, extra="approvals:\n  timeout: 20\n", cwd=work).start()
    fake.user_says("clean up victim")
    assert fake.wait_for(lambda: fake.sent and fake.sent[0]["components"], timeout=20)
    prompt = fake.sent[0]
    assert f"rm -r {target}" in prompt["content"]
    buttons = prompt["components"][0]["components"]
    assert [b["label"] for b in buttons] == ["✅ Once", "Session", "Always", "❌ Deny"]
    assert [b["style"] for b in buttons] == [3, 1, 2, 4]
    if answer == "text-deny":
        fake.user_says("/deny")
    else:
        press = next(b["custom_id"] for b in buttons if b["custom_id"].endswith(":" + answer))
        stranger = fake.press(press, channel=DM_CHANNEL, user=STRANGER)  # not an allowed user: refused
        assert fake.wait_for(lambda: any(c["interaction_id"] == stranger for c in fake.callbacks))
        time.sleep(0.3)
        assert target.exists()
        mine = fake.press(press)
        assert fake.wait_for(lambda: any(c["interaction_id"] == mine for c in fake.callbacks))
        answered = next(c for c in fake.callbacks if c["interaction_id"] == mine)
        assert answered == {"interaction_id": mine, "type": 4, "data": {"content": f"Answer: {answer}", "flags": 64}}
        refused = next(c for c in fake.callbacks if c["interaction_id"] == stranger)
        assert refused["data"]["content"] == "Not allowed."
    assert fake.wait_for(lambda: any(t.startswith("tool said") for t in fake.texts()), timeout=20)
    assert target.exists() == (answer != "once")
    assert {"channel_id": prompt["channel_id"], "message_id": int(prompt["id"]), "content": None,
            "components": []} in fake.edits  # the answered prompt lost its buttons


def test_duplicate_message_create_is_answered_once(discord_fake, scripted, gateway):
    fake = discord_fake
    echo(scripted)
    gateway().start()
    mid = fake.user_says("only once please")
    assert fake.wait_for(lambda: fake.sent)
    fake.redispatch(mid)  # after it was answered
    mid2 = fake.user_says("second")
    fake.redispatch(mid2)  # while it is being handled
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    time.sleep(1.0)
    assert fake.texts() == ["re: only once please", "re: second"] and len(scripted.requests) == 2


def test_websocket_drop_reconnects_with_backoff_and_resumes(discord_fake, scripted, gateway, hermes_home):
    import json

    fake = discord_fake
    echo(scripted)
    gateway().start()
    fake.user_says("before the drop")
    assert fake.wait_for(lambda: fake.sent)
    fake.replay_everything = True  # the RESUME repeats "before the drop" too: answered once all the same
    fake.drop(refuse_for=2.0)
    dropped = time.time()
    fake.user_says("sent while disconnected")  # kept for the RESUME, as Discord does
    assert fake.wait_for(lambda: fake.resumes == 1, timeout=30)
    assert fake.wait_for(lambda: len(fake.sent) == 2, timeout=20)
    fake.user_says("after the reconnect")
    assert fake.wait_for(lambda: len(fake.sent) == 3, timeout=20)
    time.sleep(0.5)
    assert fake.texts() == ["re: before the drop", "re: sent while disconnected", "re: after the reconnect"]
    assert len(scripted.requests) == 3
    after = [(t - dropped, status) for t, status in fake.connects if t >= dropped]
    assert after[0][1] == 503 and after[-1][1] == 101 and after[-1][0] >= 2.0  # refused, backed off, came back
    assert len(after) < 10  # backoff, not a busy loop
    assert fake.identifies == 1  # resumed the session, not a new one

    def state() -> dict:
        return json.loads((hermes_home / "gateway" / "gateway_state.json").read_text())["platforms"]["discord"]
    assert fake.wait_for(lambda: state()["connected"] and state()["disconnects"] >= 1, timeout=5)


def test_unanswered_message_is_answered_after_a_crash(discord_fake, scripted, gateway):
    import signal

    fake = discord_fake
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
    assert fake.texts() == ["answer after restart"] and fake.identifies == 2


def test_a_refused_token_is_a_plain_error(discord_fake, scripted, hermes_home):
    import subprocess

    from tests.helpers import HERMES

    gw = DiscordGateway(hermes_home, discord_fake, scripted.url, env={"DISCORD_BOT_TOKEN": "wrong"})
    out = subprocess.run([HERMES, "gateway", "run"], env=gw.env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "Discord refused the bot token" in out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_429_retry_after_is_honoured(discord_fake, scripted, gateway):
    fake = discord_fake
    scripted.add({"content": "throttled"})
    gateway().start()
    fake.fail("POST /channels/{id}/messages", 429, retry_after=1.5)
    fake.user_says("hi")
    assert fake.wait_for(lambda: fake.sent)
    posts = [t for t, route, _ in fake.calls if route == "POST /channels/{id}/messages"]
    assert len(posts) == 2 and posts[1] - posts[0] >= 1.4
    assert fake.texts() == ["throttled"]


def test_file_round_trip(discord_fake, scripted, gateway, hermes_home, tmp_path):
    fake = discord_fake
    report = tmp_path / "report.csv"
    report.write_bytes(b"a,b\n1,2\n")
    scripted.add({"content": f"Here is the report.\n\nMEDIA:{report}"})
    gateway().start()
    fake.user_sends_file("notes.txt", b"line one\nline two\n", text="summarise this")
    assert fake.wait_for(lambda: len(fake.sent) == 2)
    said = scripted.requests[0]["body"]["messages"][-1]["content"]
    assert said.startswith("[The user sent a file, saved at ") and said.endswith("summarise this")
    saved = said.split("saved at ", 1)[1].split("]", 1)[0]
    assert saved.startswith(str(hermes_home / "cache" / "documents"))
    assert open(saved, "rb").read() == b"line one\nline two\n"
    assert fake.sent[0]["content"] == "Here is the report."
    assert fake.sent[1]["files"] == [{"filename": "report.csv", "content": b"a,b\n1,2\n"}]


def test_a_rest_outage_delays_the_reply_but_does_not_lose_it(discord_fake, scripted, gateway):
    fake = discord_fake
    scripted.add({"content": "patience"})
    gateway().start()
    fake.fail("POST /channels/{id}/messages", 502, count=2)
    fake.user_says("hi")
    assert fake.wait_for(lambda: fake.sent, timeout=30)
    posts = [route for _, route, _ in fake.calls if route == "POST /channels/{id}/messages"]
    assert fake.texts() == ["patience"] and len(posts) == 3


def test_tool_progress_is_one_message_edited_in_place(discord_fake, scripted, gateway):
    fake = discord_fake
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo one"}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "ls -la"}}]}, {"content": "all done"})
    gateway(env={"GATEWAY_ALLOW_ALL_USERS": "true", "HERMES_TOOL_PROGRESS": "true"}).start()
    fake.user_says("work")
    assert fake.wait_for(lambda: "all done" in fake.texts(), timeout=30)
    assert fake.wait_for(lambda: fake.edits)
    progress = fake.sent[0]
    assert "echo one" in progress["content"]
    assert fake.edits[-1]["message_id"] == progress["id"] and "ls -la" in fake.edits[-1]["content"]


def test_a_members_approval_goes_to_the_owners_dm_channel(discord_fake, scripted, gateway, tmp_path):
    """Team mode: the owner is asked in the DM channel Discord opens for them (POST /users/@me/channels), not in a
    "channel" named by their user id."""
    fake = discord_fake
    root = tmp_path / "team"
    victim = root / f"discord_{STRANGER}" / "victim"
    victim.mkdir(parents=True)
    _approval_script(scripted, victim)
    member_dm = 700000000000000222
    extra = (f"team:\n  people:\n    'discord:{ALICE}': owner\n    'discord:{STRANGER}': member\n"
             f"  workspace_root: {root}\napprovals:\n  timeout: 20\n")
    gateway(env={}, extra=extra, cwd=tmp_path).start()
    fake.user_says("clean up victim", channel=member_dm, user=STRANGER, name="bob")
    assert fake.wait_for(lambda: any(m["components"] for m in fake.sent), timeout=30), fake.sent
    prompt = next(m for m in fake.sent if m["components"])
    assert prompt["channel_id"] == DM_CHANNEL, prompt  # the owner's DM channel, as Discord opened it
    assert any(route == "POST /users/@me/channels" for _, route, _ in fake.calls)
    assert f"rm -r {victim}" in prompt["content"] and f"discord:{STRANGER}" in prompt["content"]
    assert fake.wait_for(lambda: any("Waiting for the owner" in t for t in fake.texts(member_dm)))
    once = next(b["custom_id"] for b in prompt["components"][0]["components"] if b["custom_id"].endswith(":once"))
    fake.press(once, channel=DM_CHANNEL, user=ALICE)
    assert fake.wait_for(lambda: any(t.startswith("tool said") for t in fake.texts(member_dm)), timeout=30)
    assert not victim.exists()
