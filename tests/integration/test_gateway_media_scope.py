"""Files a chat's user sends stay that chat's (red-team a35, issue 19): the real `hermes gateway run` against the
fake Telegram Bot API saves Alice's document in her chat's own folder (cache/documents/<scope>); her agent reads
it with a confined command and with read_file; Bob's agent, in another chat, reads nothing of it (her folder,
named by a hash, lists as empty), and a MEDIA line naming Alice's file in Bob's reply sends nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402

ALICE, BOB = 111, 222
SECRET = b"IBAN DE00 1234 5678 - alice-only-c4n4ry\n"


@pytest.fixture
def gw(fake, scripted, hermes_home):
    gateway = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true"})
    yield gateway
    gateway.stop()


def _tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_document_is_readable_in_its_own_chat_only(fake, scripted, gw, hermes_home):
    seen: dict[str, str] = {}

    def alice_reads(body: dict) -> dict:
        said = body["messages"][-1]["content"]
        seen["path"] = said.split("saved at ", 1)[1].split("]", 1)[0]
        return {"tool_calls": [{"name": "terminal", "arguments": {"command": f"cat '{seen['path']}'"}},
                               {"name": "read_file", "arguments": {"path": seen["path"]}}]}

    def bob_looks(body: dict) -> dict:
        folder = str(Path(seen["path"]).parent.parent)
        return {"tool_calls": [{"name": "terminal", "arguments": {
                    "command": f"cat '{seen['path']}'; ls -R '{folder}'; grep -rs c4n4ry '{folder}'; echo END"}},
                               {"name": "read_file", "arguments": {"path": seen["path"]}}]}

    scripted.add(alice_reads, {"content": "read it"}, bob_looks,
                 lambda body: {"content": f"here\n\nMEDIA:{seen['path']}"})
    gw.start()
    fake.user_sends_file("statement.txt", SECRET, caption="what is in this?", chat_id=ALICE)
    assert fake.wait_for(lambda: fake.texts(ALICE), timeout=60)
    saved = Path(seen["path"])
    assert saved.parent.parent == hermes_home / "cache" / "documents" and saved.parent.name.startswith("chat-")
    alice = "".join(_tool_results(scripted.requests[1]["body"]))
    assert alice.count("alice-only-c4n4ry") == 2, alice  # the command and read_file both read what she sent

    fake.user_says("what did the others send you?", chat_id=BOB, name="Bob")
    assert fake.wait_for(lambda: fake.texts(BOB), timeout=60)
    bob = _tool_results(scripted.requests[3]["body"])
    assert "END" in bob[0] and "c4n4ry" not in "".join(bob), bob
    assert bob[0].count("statement.txt") == 1  # the cat's own error line: her folder lists as empty
    assert "Access denied" in json.loads(bob[1])["error"]
    assert fake.documents == []  # the MEDIA line naming her file sent nothing to Bob


def test_media_lines_send_only_what_the_chats_commands_could_read(fake, scripted, hermes_home, outside_dir):
    """Red-team round 9 a15: a MEDIA line's own folder became the workspace, so any plain file of HOME (another
    project, ~/Documents) went to the chat. Now the chat's session policy decides: the workspace yes; the rest
    of HOME (default-deny) no, named directly or through a link in the workspace."""
    home, proj = outside_dir / "home", outside_dir / "home" / "proj"
    (home / "other").mkdir(parents=True)
    proj.mkdir()
    (home / "other" / "notes.txt").write_text("other project's private notes\n")
    (proj / "report.txt").write_text("quarterly numbers\n")
    (proj / "notes-link.txt").symlink_to(home / "other" / "notes.txt")
    lines = "\n".join(f"MEDIA:{p}" for p in (home / "other" / "notes.txt", proj / "notes-link.txt",
                                               proj / "report.txt"))
    scripted.add({"content": f"Here you go\n{lines}"})
    gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", "HOME": str(home)},
                 cwd=proj)
    gw.start()
    try:
        fake.user_says("send me the files", chat_id=ALICE)
        assert fake.wait_for(lambda: fake.documents, timeout=60), gw.output()
        time.sleep(1)  # anything else would have followed at once
    finally:
        gw.stop()
    assert [d["filename"] for d in fake.documents] == ["report.txt"], fake.documents
    assert fake.documents[0]["content"] == b"quarterly numbers\n"
    assert not list((hermes_home / "cache").glob("outbox-*")), "the private copies were not removed"
    text = "\n".join(fake.texts(ALICE))
    assert "Here you go" in text and "MEDIA:" in text and "report.txt" not in text  # refused lines stay as text


def test_a_cron_jobs_media_lines_send_only_what_its_commands_could_read(fake, scripted, hermes_home, outside_dir):
    """a15's repro: a job made by a session in `proj` delivers to Telegram; its reply names a file elsewhere in
    HOME. `hermes cron run --now` (a one-shot adapter) sends only what the job's confinement could read."""
    from tests.helpers import model_config, run_hermes

    home, proj = outside_dir / "home", outside_dir / "home" / "proj"
    (home / "other").mkdir(parents=True)
    proj.mkdir()
    (home / "other" / "notes.txt").write_text("other project's private notes\n")
    (proj / "report.txt").write_text("quarterly numbers\n")
    model_config(hermes_home, scripted.url, "platforms:\n  telegram:\n    extra:\n"
                                            f"      base_url: {fake.base_url}\n      base_file_url: {fake.file_url()}\n")
    env = {"HOME": str(home), "TELEGRAM_BOT_TOKEN": fake.token}
    scripted.add({"tool_calls": [{"name": "cronjob", "arguments": {
        "action": "create", "schedule": "every 1h", "prompt": "report", "name": "r", "deliver": "telegram:777000"}}]},
        {"content": "scheduled"})
    made = run_hermes("chat", "-q", "schedule it", home=hermes_home, cwd=str(proj), env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    job = json.loads((hermes_home / "cron" / "jobs.json").read_text())["jobs"][0]
    scripted.add({"content": f"Report\nMEDIA:{home / 'other' / 'notes.txt'}\nMEDIA:{proj / 'report.txt'}"})
    ran = run_hermes("cron", "run", job["id"], "--now", home=hermes_home, cwd=str(home), env=env, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [(d["chat_id"], d["filename"]) for d in fake.documents] == [(777000, "report.txt")], fake.documents
