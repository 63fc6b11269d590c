"""Team mode through the real `hermes gateway run` against the fake Telegram: an owner (111), a member (222)
and a guest (333), each in a DM and all three in one group (-500)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import sqlite3
import subprocess
import time
import urllib.request

import pytest

pytest.importorskip("telegram")

from tests.helpers import HERMES  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402

OWNER, MEMBER, GUEST, GROUP = 111, 222, 333, -500


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _brain(body: dict) -> dict:
    """The scripted model: `run CMD` calls the terminal; a tool result is echoed; anything else is echoed."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": "tool said: " + _text(last)[:400]}
    text = _text(last).strip().splitlines()[-1]
    if text.startswith("run "):
        return {"tool_calls": [{"name": "terminal", "arguments": {"command": text[4:]}}]}
    for word, target in (("profile ", "user"), ("remember ", "memory")):
        if text.startswith(word):
            args = {"action": "add", "target": target, "content": text[len(word):]}
            return {"tool_calls": [{"name": "memory", "arguments": args}]}
    return {"content": "echo: " + text}


def _request_for(scripted, phrase: str) -> dict:
    """The (last) model request whose newest user message says `phrase`."""
    found = [r["body"] for r in scripted.requests
             if any(m["role"] == "user" and phrase in _text(m) for m in r["body"]["messages"][-1:])]
    assert found, f"no request for {phrase!r}"
    return found[-1]


def _everything(body: dict) -> str:
    return "\n".join(_text(m) for m in body["messages"])


def _tools(body: dict) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


@pytest.fixture
def team(fake, scripted, hermes_home, tmp_path):
    scripted.default = _brain
    root = tmp_path / "team"
    memories = hermes_home / "memories"
    (memories / "people" / "telegram_222").mkdir(parents=True)
    (memories / "USER.md").write_text("OWNER-PROFILE: the owner likes tea\n")
    (memories / "people" / "telegram_222" / "USER.md").write_text("MEMBER-PROFILE: Bob writes Rust\n")
    (memories / "MEMORY.md").write_text("SHARED-MEMORY: the server is called atlas\n")
    extra = (f"team:\n  people:\n    'telegram:{OWNER}': owner\n    'telegram:{MEMBER}': member\n"
             f"    'telegram:{GUEST}': guest\n  workspace_root: {root}\napprovals:\n  timeout: 20\n")
    gw = Gateway(hermes_home, fake, scripted.url, extra=extra, cwd=tmp_path)
    gw.start()
    yield gw, root
    gw.stop()


def _dashboard_people(home) -> str:
    """The /people page of a real `hermes dashboard` on `home`, signed in through its printed URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "DASHBOARD_"))}
    proc = subprocess.Popen([HERMES, "dashboard", "--port", "0", "--no-open"], env={**env, "HERMES_HOME": str(home)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        url = line.split("listening on ", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        opener.open(url, timeout=10).read()
        with opener.open(url.split("/?", 1)[0] + "/people", timeout=10) as resp:
            return resp.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _replies(fake, chat: int, prefix: str) -> list[str]:
    return [t for t in fake.texts(chat) if t.startswith(prefix)]


def test_each_person_sees_only_their_own_conversation_and_profile(fake, scripted, team):
    fake.user_says("hello from the owner", chat_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: _replies(fake, OWNER, "echo: hello from the owner"))
    fake.user_says("hello from the member", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "echo: hello from the member"))
    fake.user_says("owner in the group", chat_id=GROUP, user_id=OWNER, name="Olga", chat_type="group")
    assert fake.wait_for(lambda: _replies(fake, GROUP, "echo: owner in the group"))
    fake.user_says("member in the group", chat_id=GROUP, user_id=MEMBER, name="Bob", chat_type="group")
    assert fake.wait_for(lambda: _replies(fake, GROUP, "echo: member in the group"))
    fake.user_says("guest in the group", chat_id=GROUP, user_id=GUEST, name="Gus", chat_type="group")
    assert fake.wait_for(lambda: _replies(fake, GROUP, "echo: guest in the group"))

    owner = _everything(_request_for(scripted, "hello from the owner"))
    assert "OWNER-PROFILE" in owner and "MEMBER-PROFILE" not in owner and "SHARED-MEMORY" in owner
    member = _everything(_request_for(scripted, "hello from the member"))
    assert "MEMBER-PROFILE" in member and "OWNER-PROFILE" not in member and "SHARED-MEMORY" in member
    assert "hello from the owner" not in member
    member_group = _everything(_request_for(scripted, "member in the group"))
    assert "owner in the group" not in member_group and "hello from" not in member_group
    assert "OWNER-PROFILE" not in member_group and "MEMBER-PROFILE" in member_group
    guest = _everything(_request_for(scripted, "guest in the group"))
    assert not any(word in guest for word in ("OWNER-PROFILE", "MEMBER-PROFILE", "owner in the group",
                                              "member in the group"))


def test_guest_never_reaches_a_terminal(fake, scripted, team, tmp_path):
    marker = tmp_path / "guest-was-here"
    fake.user_says(f"run touch {marker}", chat_id=GUEST, name="Gus")
    assert fake.wait_for(lambda: _replies(fake, GUEST, "tool said"))
    body = _request_for(scripted, f"run touch {marker}")
    offered = _tools(body)
    assert offered and not offered & {"terminal", "process", "execute_code", "write_file", "read_file",
                                       "send_message", "delegate_task", "cronjob", "session_search"}
    assert "Unknown tool: terminal" in _replies(fake, GUEST, "tool said")[0]
    time.sleep(0.3)
    assert not marker.exists()
    member = fake.user_says("what tools", chat_id=MEMBER, name="Bob")
    assert member and fake.wait_for(lambda: _replies(fake, MEMBER, "echo: what tools"))
    member_tools = _tools(_request_for(scripted, "what tools"))
    assert "terminal" in member_tools and "cronjob" in member_tools and "session_search" not in member_tools


def test_member_dangerous_command_needs_the_owners_button(fake, scripted, team, hermes_home):
    gw, root = team
    work = root / "telegram_222"
    victim = work / "victim"
    victim.mkdir(parents=True)
    fake.user_says(f"run rm -r {victim}", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: any(m["chat_id"] == OWNER and m["reply_markup"] for m in fake.sent), timeout=30)
    prompt = next(m for m in fake.sent if m["chat_id"] == OWNER and m["reply_markup"])
    assert f"rm -r {victim}" in prompt["text"] and "telegram:222" in prompt["text"]
    assert not any(m["reply_markup"] for m in fake.sent if m["chat_id"] != OWNER)  # the member gets no buttons
    assert fake.wait_for(lambda: any("Waiting for the owner" in t for t in fake.texts(MEMBER)))
    once = next(b for row in prompt["reply_markup"]["inline_keyboard"] for b in row if b["text"] == "✅ Once")
    fake.press(once["callback_data"], chat_id=MEMBER, user_id=MEMBER, name="Bob")  # the member: refused
    fake.press(once["callback_data"], chat_id=GROUP, user_id=GUEST, name="Gus", chat_type="group")  # refused
    fake.user_says("/approve", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: sum("Not allowed" in str(c.get("text")) for c in fake.callbacks) == 2)
    assert fake.wait_for(lambda: any("Only the owner or an admin" in t for t in fake.texts(MEMBER)))
    assert victim.exists()
    fake.press(once["callback_data"], chat_id=OWNER, user_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=30)
    assert not victim.exists()
    assert any("Approved by" in t for t in fake.texts(MEMBER))

    db = sqlite3.connect(hermes_home / "state.db")
    rows = db.execute("SELECT person, role, tool_name, session_id FROM hermes_agent_tool_people").fetchall()
    assert ("telegram:222", "member", "terminal") in [r[:3] for r in rows]
    sid = next(r[3] for r in rows if r[0] == "telegram:222")
    assert db.execute("SELECT COUNT(*) FROM sessions WHERE id = ?", (sid,)).fetchone()[0] == 1
    page = _dashboard_people(hermes_home)
    row = next(r for r in page.split("<tr>") if "telegram:222" in r)
    assert "member" in row and sid[:18] in row and ">1<" in row.replace(" ", "")
    assert "telegram:111" in page and "owner" in page and "telegram:333" in page


def test_member_command_denied_at_once_when_no_approver_can_be_reached(fake, scripted, team):
    gw, root = team
    victim = root / "telegram_222" / "victim"
    victim.mkdir(parents=True)
    # the owner never started the bot: Telegram refuses the DM with the approval buttons
    fake.fail("sendMessage", 403, description="Forbidden: bot can't initiate conversation with a user")
    fake.user_says(f"run rm -r {victim}", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: any("none of them could be reached" in t for t in fake.texts(MEMBER)), timeout=30)
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=20)
    assert victim.exists() and not any("Waiting for the owner" in t for t in fake.texts(MEMBER))


def test_member_command_denied_when_nobody_answers(fake, scripted, hermes_home, tmp_path):
    scripted.default = _brain
    root = tmp_path / "team"
    victim = root / "telegram_222" / "victim"
    victim.mkdir(parents=True)
    extra = (f"team:\n  people:\n    'telegram:{OWNER}': owner\n    'telegram:{MEMBER}': member\n"
             f"  workspace_root: {root}\napprovals:\n  timeout: 2\n")
    gw = Gateway(hermes_home, fake, scripted.url, extra=extra, cwd=tmp_path)
    gw.start()
    try:
        fake.user_says(f"run rm -r {victim}", chat_id=MEMBER, name="Bob")
        assert fake.wait_for(lambda: any("No answer within 2 s" in t for t in fake.texts(MEMBER)), timeout=30)
        assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=20)
        assert victim.exists()
    finally:
        gw.stop()


def test_role_and_users_commands(fake, scripted, team, hermes_home):
    fake.user_says("/users", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: any("Only the owner or an admin" in t for t in fake.texts(MEMBER)))
    fake.user_says("/users", chat_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: any(t.startswith("People:") for t in fake.texts(OWNER)))
    listing = next(t for t in fake.texts(OWNER) if t.startswith("People:"))
    assert "owner  telegram:111" in listing and "guest  telegram:333" in listing
    fake.user_says(f"/role {GUEST} member", chat_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: any("telegram:333 is now member" in t for t in fake.texts(OWNER)))
    stored = json.loads((hermes_home / "team" / "people.json").read_text())
    assert stored["telegram:333"]["role"] == "member" and stored["telegram:333"]["by"] == "telegram:111"
    fake.user_says("now with tools", chat_id=GUEST, name="Gus")
    assert fake.wait_for(lambda: _replies(fake, GUEST, "echo: now with tools"))
    assert "terminal" in _tools(_request_for(scripted, "now with tools"))
    fake.user_says(f"/role {MEMBER} owner", chat_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: any("admin, member, guest" in t for t in fake.texts(OWNER)))


def test_pairing_admits_a_newcomer_as_a_guest(fake, scripted, team, hermes_home):
    import re

    from tests.helpers import run_hermes

    fake.user_says("hi", chat_id=444, name="Nia")
    assert fake.wait_for(lambda: any("pairing code" in t for t in fake.texts(444)))
    code = re.search(r"pairing code is ([A-Z2-9]{8})", fake.texts(444)[0]).group(1)
    assert run_hermes("pairing", "approve", "telegram", code, home=hermes_home).returncode == 0
    fake.user_says("may I use tools", chat_id=444, name="Nia")
    assert fake.wait_for(lambda: _replies(fake, 444, "echo: may I use tools"))
    assert "terminal" not in _tools(_request_for(scripted, "may I use tools"))
    fake.user_says("/users", chat_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: any("guest  telegram:444" in t for t in fake.texts(OWNER)))


def test_a_members_terminal_works_in_their_own_folder_only(fake, scripted, team):
    gw, root = team
    other = root / "telegram_999"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text("OTHER-PERSONS-NOTES\n")
    fake.user_says("run pwd; echo made > mine.txt; cat mine.txt", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=30)
    reply = _replies(fake, MEMBER, "tool said")[-1]
    assert str(root / "telegram_222") in reply and "made" in reply
    assert (root / "telegram_222" / "mine.txt").read_text() == "made\n"
    fake.user_says(f"run cat {other / 'notes.txt'}", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: len(_replies(fake, MEMBER, "tool said")) == 2, timeout=30)
    assert "OTHER-PERSONS-NOTES" not in _replies(fake, MEMBER, "tool said")[-1]


def test_in_a_group_only_the_owner_answers_the_owners_approval(fake, scripted, team, tmp_path):
    victim = tmp_path / "owner-victim"
    victim.mkdir()
    fake.user_says(f"run rm -r {victim}", chat_id=GROUP, user_id=OWNER, name="Olga", chat_type="group")
    assert fake.wait_for(lambda: any(m["chat_id"] == GROUP and m["reply_markup"] for m in fake.sent), timeout=30)
    prompt = next(m for m in fake.sent if m["chat_id"] == GROUP and m["reply_markup"])
    once = next(b for row in prompt["reply_markup"]["inline_keyboard"] for b in row if b["text"] == "✅ Once")
    fake.press(once["callback_data"], chat_id=GROUP, user_id=MEMBER, name="Bob", chat_type="group")
    fake.user_says("/approve", chat_id=GROUP, user_id=MEMBER, name="Bob", chat_type="group")
    assert fake.wait_for(lambda: any("Not allowed" in str(c.get("text")) for c in fake.callbacks))
    assert fake.wait_for(lambda: any("Only the owner or an admin" in t for t in fake.texts(GROUP)))
    assert victim.exists()
    fake.press(once["callback_data"], chat_id=GROUP, user_id=OWNER, name="Olga", chat_type="group")
    assert fake.wait_for(lambda: _replies(fake, GROUP, "tool said"), timeout=30)
    assert not victim.exists()


def test_a_member_writes_their_own_profile_but_shared_memory_asks_the_owner(fake, scripted, team, hermes_home):
    fake.user_says("profile Bob prefers short answers", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"), timeout=30)
    own = hermes_home / "memories" / "people" / "telegram_222" / "USER.md"
    assert "Bob prefers short answers" in own.read_text()
    assert "Bob prefers" not in (hermes_home / "memories" / "USER.md").read_text()
    assert not any(m["reply_markup"] for m in fake.sent)  # nobody was asked
    fake.user_says("remember the server is called zeus", chat_id=MEMBER, name="Bob")
    assert fake.wait_for(lambda: any(m["chat_id"] == OWNER and m["reply_markup"] for m in fake.sent), timeout=30)
    prompt = next(m for m in fake.sent if m["chat_id"] == OWNER and m["reply_markup"])
    deny = next(b for row in prompt["reply_markup"]["inline_keyboard"] for b in row if b["text"] == "❌ Deny")
    fake.press(deny["callback_data"], chat_id=OWNER, user_id=OWNER, name="Olga")
    assert fake.wait_for(lambda: len(_replies(fake, MEMBER, "tool said")) == 2, timeout=30)
    assert "zeus" not in (hermes_home / "memories" / "MEMORY.md").read_text()
    assert any("Denied by" in t for t in fake.texts(MEMBER))


def _cron_brain(body: dict) -> dict:
    """`schedule PROMPT` makes a one-shot job in 2 s; `list jobs` / `remove job ID` manage them; else _brain."""
    last = body["messages"][-1]
    text = _text(last).strip() if last["role"] == "user" else ""
    if text.startswith("schedule "):
        args = {"action": "create", "schedule": "2s", "prompt": text[9:], "name": "job of " + text[9:]}
        return {"tool_calls": [{"name": "cronjob", "arguments": args}]}
    if text == "list jobs":
        return {"tool_calls": [{"name": "cronjob", "arguments": {"action": "list"}}]}
    if text.startswith("remove job "):
        return {"tool_calls": [{"name": "cronjob", "arguments": {"action": "remove", "job_id": text[11:]}}]}
    return _brain(body)


def test_a_members_cron_job_is_theirs_and_runs_as_them(fake, scripted, hermes_home, tmp_path):
    from tests.helpers import run_hermes

    scripted.default = _cron_brain
    root = tmp_path / "team"
    memories = hermes_home / "memories"
    (memories / "people" / "telegram_222").mkdir(parents=True)
    (memories / "USER.md").write_text("OWNER-PROFILE: the owner likes tea\n")
    (memories / "people" / "telegram_222" / "USER.md").write_text("MEMBER-PROFILE: Bob writes Rust\n")
    extra = (f"team:\n  people:\n    'telegram:{OWNER}': owner\n    'telegram:{MEMBER}': member\n"
             f"    'telegram:{GUEST}': guest\n  workspace_root: {root}\n"
             "  roles:\n    member:\n      budget: {day_tokens: 1000000}\ncron:\n  tick_seconds: 0.2\n")
    gw = Gateway(hermes_home, fake, scripted.url, extra=extra, cwd=tmp_path)
    made = run_hermes("cron", "create", "every 1h", "owner secret task", "--name", "owner-job", home=hermes_home)
    owners_job = made.stdout.split()[2]
    gw.start()
    try:
        fake.user_says("schedule run pwd", chat_id=MEMBER, name="Bob")
        assert fake.wait_for(lambda: _replies(fake, MEMBER, "tool said"))
        fake.user_says("schedule run id", chat_id=GUEST, name="Gus")  # guests cannot make jobs
        assert fake.wait_for(lambda: _replies(fake, GUEST, "tool said"))
        assert "Unknown tool: cronjob" in _replies(fake, GUEST, "tool said")[0]
        jobs = json.loads((hermes_home / "cron" / "jobs.json").read_text())["jobs"]
        mine = next(j for j in jobs if j["prompt"] == "run pwd")
        assert len(jobs) == 2 and mine["created_by"] == "telegram:222"
        # the run: delivered to the member's chat, working in the member's own folder
        assert fake.wait_for(lambda: any(t.startswith("Cronjob Response: job of run pwd")
                                         for t in fake.texts(MEMBER)), timeout=40), fake.texts(MEMBER)
        delivered = next(t for t in fake.texts(MEMBER) if t.startswith("Cronjob Response"))
        assert f'"output": "{root / "telegram_222"}\\n"' in delivered, delivered
        run = next(r["body"] for r in scripted.requests if _text(r["body"]["messages"][-1]) == "run pwd")
        assert "MEMBER-PROFILE" in _everything(run) and "OWNER-PROFILE" not in _everything(run)
        assert "terminal" in _tools(run) and "session_search" not in _tools(run)  # the member's toolsets
        db = sqlite3.connect(hermes_home / "state.db")
        cron_sid = db.execute("SELECT id FROM sessions WHERE source = 'cron'").fetchone()[0]
        assert {r[0] for r in db.execute("SELECT who FROM hermes_agent_spend WHERE session_id = ?",
                                         (cron_sid,))} == {"telegram:222"}  # the member's budget
        assert db.execute("SELECT person, role, tool_name FROM hermes_agent_tool_people WHERE session_id = ?",
                          (cron_sid,)).fetchall() == [("telegram:222", "member", "terminal")]
        # the member lists and changes only their own jobs
        fake.user_says("list jobs", chat_id=MEMBER, name="Bob")
        assert fake.wait_for(lambda: any('"count": 1' in t for t in _replies(fake, MEMBER, "tool said")))
        assert not any("owner secret task" in t for t in fake.texts(MEMBER))
        fake.user_says(f"remove job {owners_job}", chat_id=MEMBER, name="Bob")
        assert fake.wait_for(lambda: any("no job" in t for t in _replies(fake, MEMBER, "tool said")))
        listing = run_hermes("cron", "list", "--all", home=hermes_home).stdout
        assert "owner: telegram:222 (member)" in listing and "owner: you" in listing, listing
        assert owners_job in listing
    finally:
        gw.stop()
