"""Spending caps in the gateway (fake Telegram Bot API, real `hermes gateway run`): each person spends their own
budget (budget.users.<id>), a tool loop stops at the cap with one line in the chat, and /budget shows what is left."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402
from tests.integration.test_budget import PRICED, TOOL_STEP, within_one_call  # noqa: E402

ALICE, BOB = 111, 222


def test_each_person_is_stopped_at_their_own_cap(fake, scripted, hermes_home):
    gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true"},
                 extra='budget:\n  users:\n    "111": {session_usd: 0.15}\n'
                       "platform_toolsets:\n  telegram: [todo]\n")
    cfg = hermes_home / "config.yaml"
    cfg.write_text(cfg.read_text().replace("  api_key: test-key\n", "  api_key: test-key\n" + PRICED, 1))
    scripted.default = TOOL_STEP
    try:
        gw.start()
        fake.user_says("keep going", chat_id=ALICE)
        assert fake.wait_for(lambda: any("Budget reached" in t for t in fake.texts()), timeout=90), fake.texts()
        stop = next(t for t in fake.texts() if "Budget reached" in t)
        assert "session cap" in stop and "budget.users" in stop, stop
        within_one_call(stop, hermes_home, 0.15)
        warned = [t for t in fake.texts() if "of the session cap used" in t]
        assert len(warned) == 1 and "budget.users" in warned[0], fake.texts()  # 80% warns once, in the chat
        assert len(scripted.requests) >= 2
        fake.user_says("/budget", chat_id=ALICE)
        assert fake.wait_for(lambda: any("of $0.1500 spent" in t for t in fake.texts()), timeout=30), fake.texts()
        scripted.default = {"content": "bob's answer", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
        fake.user_says("hello", chat_id=BOB, name="Bob")
        assert fake.wait_for(lambda: any("bob" in t and "answer" in t for t in fake.texts()), timeout=60), fake.texts()
    finally:
        gw.stop()
    with sqlite3.connect(hermes_home / "state.db") as c:
        who = dict(c.execute("SELECT who, COUNT(*) FROM hermes_agent_spend GROUP BY who").fetchall())
    assert list(who) == ["telegram:111"]  # Bob has no cap: nothing metered for him


def test_a_guest_is_stopped_at_their_roles_cap_and_the_owner_is_not(fake, scripted, hermes_home):
    """Team mode: `team.roles.guest.budget` caps every guest (a newcomer let in by allow-all is one); the owner's
    role has no cap, so their turns are not even metered."""
    gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true"},
                 extra=f"team:\n  people:\n    'telegram:{ALICE}': owner\n"
                       "  roles:\n    guest:\n      budget: {session_usd: 0.05}\n"
                       "platform_toolsets:\n  telegram: [todo]\n")
    cfg = hermes_home / "config.yaml"
    cfg.write_text(cfg.read_text().replace("  api_key: test-key\n", "  api_key: test-key\n" + PRICED, 1))
    scripted.default = TOOL_STEP
    try:
        gw.start()
        fake.user_says("keep going", chat_id=BOB, name="Bob")
        assert fake.wait_for(lambda: any("Budget reached" in t for t in fake.texts()), timeout=90), fake.texts()
        stop = next(t for t in fake.texts() if "Budget reached" in t)
        assert "session cap" in stop and "team.roles.guest.budget" in stop, stop
        within_one_call(stop, hermes_home, 0.05)
        fake.user_says("/budget", chat_id=BOB, name="Bob")
        assert fake.wait_for(lambda: any("of $0.0500 spent" in t for t in fake.texts()), timeout=30), fake.texts()
        scripted.default = {"content": "owner's answer", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
        fake.user_says("hello", chat_id=ALICE)
        assert fake.wait_for(lambda: any("owner's answer" in t for t in fake.texts()), timeout=60), fake.texts()
    finally:
        gw.stop()
    with sqlite3.connect(hermes_home / "state.db") as c:
        who = dict(c.execute("SELECT who, COUNT(*) FROM hermes_agent_spend GROUP BY who").fetchall())
    assert list(who) == [f"telegram:{BOB}"]  # the owner has no cap: nothing metered for them
