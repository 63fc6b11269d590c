"""Who may talk to the gateway (allowlists, DM pairing) and chat approvals, through `hermes gateway run`."""

from __future__ import annotations

import re
import stat
import time

import pytest

pytest.importorskip("telegram")

from tests.helpers import run_hermes  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402


@pytest.fixture
def gateway(fake, scripted, hermes_home):
    made: list[Gateway] = []

    def make(env: dict | None = None, extra: str = "", cwd=None) -> Gateway:
        gw = Gateway(hermes_home, fake, scripted.url, env=env, extra=extra, cwd=cwd)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_allowlist_ignores_strangers_without_a_model_call(fake, scripted, gateway):
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111"}).start()
    fake.user_says("hello from a stranger", chat_id=222)
    fake.user_says("hello from the owner", chat_id=111)
    assert fake.wait_for(lambda: fake.sent)
    time.sleep(0.5)
    assert [m["chat_id"] for m in fake.sent] == [111]
    assert len(scripted.requests) == 1


def test_pairing_flow_and_limits(fake, scripted, gateway, hermes_home):
    scripted.default = {"content": "welcome aboard"}
    gateway().start()
    fake.user_says("hi", chat_id=501, name="Bob")
    assert fake.wait_for(lambda: fake.sent)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", fake.sent[0]["text"]).group(1)
    fake.user_says("hi again", chat_id=501, name="Bob")  # 1 request per 10 min: no second code
    for uid in (502, 503, 504):  # at most 3 pending per platform: the 4th user gets nothing
        fake.user_says("hi", chat_id=uid)
    assert fake.wait_for(lambda: len(fake.sent) == 3)
    time.sleep(0.7)
    assert sorted(m["chat_id"] for m in fake.sent) == [501, 502, 503]
    assert scripted.requests == []
    pairing_dir = hermes_home / "platforms" / "pairing"
    for f in pairing_dir.glob("*.json"):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert code not in (pairing_dir / "telegram-pending.json").read_text()
    listed = run_hermes("pairing", "list", home=hermes_home)
    assert "501" in listed.stdout and "bob" in listed.stdout
    ok = run_hermes("pairing", "approve", "telegram", code.lower(), home=hermes_home)
    assert ok.returncode == 0 and "Approved" in ok.stdout
    fake.user_says("now?", chat_id=501, name="Bob")
    assert fake.wait_for(lambda: "welcome aboard" in fake.texts(501))
    assert len(scripted.requests) == 1
    assert "501" in run_hermes("pairing", "list", home=hermes_home).stdout.split("Approved users")[1]
    assert run_hermes("pairing", "revoke", "telegram", "501", home=hermes_home).returncode == 0
    n = len(fake.sent)
    fake.user_says("still there?", chat_id=501, name="Bob")
    time.sleep(1.0)
    assert len(fake.sent) == n and len(scripted.requests) == 1


def test_pairing_lockout_after_five_failed_approvals(fake, gateway, hermes_home):
    gateway().start()
    fake.user_says("hi", chat_id=601)
    assert fake.wait_for(lambda: fake.sent)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", fake.sent[0]["text"]).group(1)
    for _ in range(5):
        assert run_hermes("pairing", "approve", "telegram", "WRONGCDE", home=hermes_home).returncode == 1
    locked = run_hermes("pairing", "approve", "telegram", code, home=hermes_home)
    assert locked.returncode == 1 and "locked out" in locked.stderr
    fake.user_says("hi", chat_id=602)
    time.sleep(1.0)
    assert [m["chat_id"] for m in fake.sent] == [601]


def _approval_script(scripted, target):
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {target}"}}]})
    scripted.default = lambda body: {"content": "tool said: " + str(body["messages"][-1]["content"])[:300]}


@pytest.mark.parametrize("answer", ["button-once", "text-deny", "timeout"])
def test_chat_approval(fake, scripted, gateway, tmp_path, answer):
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    _approval_script(scripted, target)
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111"}, extra="approvals:\n  timeout: 3\n", cwd=work).start()
    fake.user_says("clean up victim")
    assert fake.wait_for(lambda: fake.sent and fake.sent[0]["reply_markup"], timeout=20)
    prompt = fake.sent[0]
    assert f"rm -r {target}" in prompt["text"]
    buttons = [b for row in prompt["reply_markup"]["inline_keyboard"] for b in row]
    assert [b["text"] for b in buttons] == ["✅ Once", "Session", "Always", "❌ Deny"]
    if answer == "button-once":
        fake.press(buttons[0]["callback_data"], chat_id=222, user_id=222)  # not an allowed user: ignored
        time.sleep(0.5)
        assert target.exists()
        fake.press(buttons[0]["callback_data"])
        assert fake.wait_for(lambda: any(t.startswith("tool said") for t in fake.texts()))
        assert not target.exists()
        assert any(c.get("text") == "Not allowed." for c in fake.callbacks)
    elif answer == "text-deny":
        fake.user_says("/deny")
        assert fake.wait_for(lambda: any(t.startswith("tool said") for t in fake.texts()))
        assert target.exists()
        assert "denied" in fake.texts()[-1].lower() or "deny" in fake.texts()[-1].lower()
    else:
        assert fake.wait_for(lambda: any("No answer within 3 s" in t for t in fake.texts()), timeout=10)
        assert fake.wait_for(lambda: any(t.startswith("tool said") for t in fake.texts()))
        assert target.exists()


def test_new_during_a_pending_approval_denies_it_at_once(fake, scripted, gateway, tmp_path):
    work = tmp_path / "work"
    target = work / "victim"
    target.mkdir(parents=True)
    _approval_script(scripted, target)
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111"}, extra="approvals:\n  timeout: 60\n", cwd=work).start()
    fake.user_says("clean up victim")
    assert fake.wait_for(lambda: fake.sent and fake.sent[0]["reply_markup"], timeout=20)
    started = time.time()
    fake.user_says("/new")
    assert fake.wait_for(lambda: any("New conversation" in t for t in fake.texts()), timeout=10)
    assert time.time() - started < 5
    fake.user_says("/status")
    assert fake.wait_for(lambda: any(t.startswith("Session: (new)") for t in fake.texts()), timeout=5), fake.texts()
    assert target.exists()


def test_memory_write_from_a_non_owner_message_needs_approval(fake, scripted, gateway, hermes_home):
    """Allow-all admits user 333, but only 111 is on the allowlist (the owner): 333's words taint the turn, so the
    memory write it asks for needs the owner's approval; 333 may not give it (rt14 b17), so in 333's DM it is
    refused at once with the reason, no buttons; the owner's own request is saved."""
    add = {"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "memory",
                                                           "content": "User wants every answer in French"}}]}
    scripted.add(add, {"content": "noted"})
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111", "GATEWAY_ALLOW_ALL_USERS": "true"},
            extra="approvals:\n  timeout: 30\n").start()
    fake.user_says("remember: answers in French", chat_id=333, user_id=333)
    assert fake.wait_for(lambda: any(t == "noted" for t in fake.texts()), timeout=20)
    assert not any(m.get("reply_markup") for m in fake.sent)  # nobody was asked in the guest's chat
    tool = [m for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"][0]["content"]
    assert "BLOCKED" in tool and "cannot ask" in tool, tool
    memory = hermes_home / "memories" / "MEMORY.md"
    assert not memory.exists() or "French" not in memory.read_text()
    scripted.add(add, {"content": "saved"})
    fake.user_says("remember: answers in French", chat_id=111)
    assert fake.wait_for(lambda: any(t == "saved" for t in fake.texts()), timeout=20)
    assert "French" in memory.read_text()


def test_a_guest_answers_no_question_and_changes_no_setting_of_the_owner(fake, scripted, gateway, hermes_home,
                                                                        tmp_path):
    """rt14 b17/b20/b31, not team mode: 111 is the owner (allowlist), 333 a guest admitted by allow-all. The guest's
    /sethome, /model, /approve are refused with one line (their own /status still works); the guest's press on the
    owner's question does not count (nor its "Always": no command_allowlist in config.yaml), the owner's does; a
    dangerous command of the guest's own turn is refused at once, nobody asked in the guest's chat."""
    work = tmp_path / "work"
    mine, theirs = work / "mine", work / "theirs"
    mine.mkdir(parents=True)
    theirs.mkdir()
    gateway(env={"TELEGRAM_ALLOWED_USERS": "111", "GATEWAY_ALLOW_ALL_USERS": "true"},
            extra="approvals:\n  timeout: 20\n", cwd=work).start()
    for text in ("/sethome", "/model other-model", "/approve always", "/status"):
        fake.user_says(text, chat_id=333, user_id=333, name="Mallory")
    assert fake.wait_for(lambda: len(fake.texts(333)) == 4, timeout=20)
    replies = fake.texts(333)
    for word, reply in zip(("/sethome", "/model", "/approve"), replies[:3], strict=True):
        assert reply.startswith(f"⛔ Only the owner can use {word}") and "TELEGRAM_ALLOWED_USERS" in reply, reply
    assert replies[3].startswith("Session:")
    env = hermes_home / ".env"
    assert not env.exists() or "333" not in env.read_text()
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {mine}"}}]},
                 {"content": "owner done"})
    fake.user_says("clean up mine")
    assert fake.wait_for(lambda: any(m["chat_id"] == 111 and m.get("reply_markup") for m in fake.sent), timeout=20)
    prompt = next(m for m in fake.sent if m["chat_id"] == 111 and m.get("reply_markup"))
    buttons = {b["text"]: b["callback_data"] for row in prompt["reply_markup"]["inline_keyboard"] for b in row}
    fake.press(buttons["Always"], chat_id=111, user_id=333, name="Mallory")
    assert fake.wait_for(lambda: any(c.get("text") == "Not allowed: only the owner can answer." for c in fake.callbacks))
    assert mine.exists()
    fake.press(buttons["✅ Once"])
    assert fake.wait_for(lambda: "owner done" in fake.texts(111), timeout=20)
    assert not mine.exists()
    assert "command_allowlist" not in (hermes_home / "config.yaml").read_text()
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {theirs}"}}]},
                 {"content": "guest done"})
    fake.user_says("clean up theirs", chat_id=333, user_id=333, name="Mallory")
    assert fake.wait_for(lambda: "guest done" in fake.texts(333), timeout=20)
    assert theirs.exists()
    assert not any(m["chat_id"] == 333 and m.get("reply_markup") for m in fake.sent)
    tool = [m for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "BLOCKED" in tool and "cannot ask" in tool, tool
