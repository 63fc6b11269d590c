"""Files a chat's user sends stay that chat's (red-team a35, issue 19): the real `hermes gateway run` against the
fake Telegram Bot API saves Alice's document in her chat's own folder (cache/documents/<scope>); her agent reads
it with a confined command and with read_file; Bob's agent, in another chat, reads nothing of it (her folder,
named by a hash, lists as empty), and a MEDIA line naming Alice's file in Bob's reply sends nothing."""

from __future__ import annotations

import json
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
