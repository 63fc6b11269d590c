"""Delivery targets of a job, and how a target names a chat (home channels included)."""

from __future__ import annotations

import pytest

from hermes_agent.cron.scheduler import delivery_targets
from hermes_agent.gateway.send import HomeChannels, resolve
from hermes_agent.tools.builtin.send_message import DeliveryError

ORIGIN = {"platform": "telegram", "chat_id": "111"}


@pytest.mark.parametrize(("deliver", "origin", "targets"), [
    ("local", ORIGIN, []),
    ("origin", ORIGIN, ["telegram:111"]),
    ("telegram", ORIGIN, ["telegram:111"]),  # the origin's own platform: back to that chat (as Hermes)
    ("telegram", None, ["telegram"]),  # else the home channel, resolved when sending
    ("origin,telegram:222,local", ORIGIN, ["telegram:111", "telegram:222"]),
])
def test_delivery_targets(deliver, origin, targets):
    assert delivery_targets({"deliver": deliver, "origin": origin}) == targets


def test_origin_without_a_chat_goes_to_the_first_home_channel(hermes_home):
    assert delivery_targets({"deliver": "origin", "origin": None}) == ["origin"]
    assert resolve("origin", HomeChannels({"TELEGRAM_HOME_CHANNEL": "555"})) == ("telegram", "555")
    with pytest.raises(DeliveryError, match="not created from a chat and no home channel"):
        resolve("origin", HomeChannels({}))


def test_resolve_uses_the_home_channel(hermes_home):
    homes = HomeChannels({"TELEGRAM_HOME_CHANNEL": "555"})
    assert resolve("telegram", homes) == ("telegram", "555")
    assert resolve("Telegram:-100123", homes) == ("telegram", "-100123")
    with pytest.raises(DeliveryError, match="Unknown platform: fax"):
        resolve("fax:1", homes)
    with pytest.raises(DeliveryError, match="No home channel set for telegram"):
        resolve("telegram", HomeChannels({}))
    homes.set("telegram", "777")
    assert resolve("telegram", homes) == ("telegram", "777")
    assert "TELEGRAM_HOME_CHANNEL=777" in (hermes_home / ".env").read_text()
