"""Team mode: every in-chat command has a minimum role (gateway/commands.py). Walked through the real gateway
and the fake Telegram as a guest and as a member: nothing that changes shared state (the home channel in .env,
roles, approvals, the model) succeeds; the owner's do. Red-team round 6 a11 (a guest's /sethome rerouted the
owner's cron output), and stopping a team gateway with a member's chat open (DeskApprover had no `cancel`)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("telegram")

from hermes_agent.gateway.commands import COMMANDS  # noqa: E402
from tests.integration.test_gateway_team import GUEST, MEMBER, OWNER, _replies, team  # noqa: E402, F401

ARGS = {"/role": f" {GUEST} admin", "/model": " some-other-model", "/approve": " always"}


def _state(home) -> dict:
    files = (home / ".env", home / "config.yaml", home / "team" / "people.json")
    return {f.name: f.read_text() if f.exists() else None for f in files}


def _reply_to(fake, chat: int, text: str) -> str:
    before = len(fake.texts(chat))
    fake.user_says(text, chat_id=chat, name=f"u{chat}")
    assert fake.wait_for(lambda: len(fake.texts(chat)) > before), f"no reply to {text!r} in {chat}"
    return fake.texts(chat)[before]


@pytest.mark.parametrize("who", [GUEST, MEMBER])
def test_no_command_of_a_guest_or_member_changes_shared_state(fake, scripted, team, hermes_home, who):  # noqa: F811
    gw, _ = team
    role = "guest" if who == GUEST else "member"
    before = _state(hermes_home)
    for word, cmd in COMMANDS.items():
        reply = _reply_to(fake, who, word + ARGS.get(word, ""))
        if cmd.changes or cmd.role in ("owner", "admin") or (cmd.role == "member" and role == "guest"):
            assert reply.startswith("⛔ Only ") and f"can use {word} " in reply and f"(you are {role})" in reply, (word, reply)
        else:
            assert not reply.startswith("⛔"), (word, reply)
    assert _state(hermes_home) == before
    assert "/sethome" not in _reply_to(fake, who, "/help") and "/role" not in _reply_to(fake, who, "/help")
    status = _reply_to(fake, who, "/status")
    assert "Home channel: not set" in status
    # the owner's commands still work
    assert "Home channel set to this chat" in _reply_to(fake, OWNER, "/sethome")
    assert f"TELEGRAM_HOME_CHANNEL={OWNER}" in (hermes_home / ".env").read_text()
    assert f"telegram:{GUEST} is now member" in _reply_to(fake, OWNER, f"/role {GUEST} member")


def test_stopping_a_team_gateway_with_a_members_request_waiting(fake, scripted, team, tmp_path):  # noqa: F811
    """A member's request waits for the owner's button; SIGTERM calls it off (denied), no traceback."""
    gw, root = team
    victim = root / "telegram_222" / "victim"
    victim.mkdir(parents=True)
    fake.user_says(f"run rm -r {victim}", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: any("Waiting for the owner" in t for t in fake.texts(MEMBER)), timeout=30)
    t0 = time.monotonic()
    code = gw.stop()
    took = time.monotonic() - t0
    out = gw.output()
    assert "Traceback" not in out and "AttributeError" not in out, out[-2000:]
    assert code == 0 and took < 10, (code, took, out[-1000:])
    assert victim.exists()


def _reader(body: dict) -> dict:
    """A file sent in chat: the terminal reads it and the owner's document; a tool result is echoed."""
    last = body["messages"][-1]
    text = str(last.get("content") or "")
    if last["role"] == "tool":
        return {"content": "tool said: " + text[:1500]}
    if "saved at " in text:
        path = text.split("saved at ", 1)[1].split("]", 1)[0]
        return {"tool_calls": [{"name": "terminal", "arguments": {"command": f"cat {path} ../../hermes_home/cache/"
                                                                            "documents/owner_doc.txt"}}]}
    return {"content": "echo: " + text}


def test_a_member_reads_the_files_they_sent_not_the_owners(fake, scripted, team, hermes_home):  # noqa: F811
    gw, root = team
    owner_doc = hermes_home / "cache" / "documents" / "owner_doc.txt"
    owner_doc.parent.mkdir(parents=True)
    owner_doc.write_text("OWNER-CONTRACT-77\n")
    scripted.default = _reader
    fake.user_sends_file("notes.txt", b"BOBS-NOTES-42\n", caption="read it", chat_id=MEMBER)
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=30)
    said = _replies(fake, MEMBER, "tool said")[0]
    assert "BOBS-NOTES-42" in said and "OWNER-CONTRACT-77" not in said, said
    saved = [p for p in (hermes_home / "cache" / "documents").rglob("*") if p.is_file() and p != owner_doc]
    assert [p.read_text() for p in saved] == ["BOBS-NOTES-42\n"]  # in the member's chat's own folder
