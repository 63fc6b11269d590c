"""The real `hermes gateway run` against a local fake of the Telegram Bot API and the scripted model."""

from __future__ import annotations

import pytest

pytest.importorskip("telegram")

from tests.fake_telegram import FakeTelegram  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402

ALICE = 111


@pytest.fixture
def fake():
    server = FakeTelegram().start()
    yield server
    server.stop()


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
