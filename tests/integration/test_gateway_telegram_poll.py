"""The gateway's own Telegram long-poll (gateway/platforms/telegram_poll.py: getMe, deleteWebhook and getUpdates
before python-telegram-bot has loaded) against the fake Bot API: rate limits and refusals are handled as the
library's polling handled them, and with a proxy in the environment the library polls as before."""

from __future__ import annotations

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402


@pytest.fixture
def gateway(fake, scripted, hermes_home):
    made: list[Gateway] = []

    def make(env: dict | None = None) -> Gateway:
        gw = Gateway(hermes_home, fake, scripted.url, env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})})
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_a_rate_limited_poll_waits_and_the_message_is_answered(fake, scripted, gateway):
    scripted.add({"content": "after the wait"})
    fake.fail("getUpdates", 429, count=1, retry_after=1, description="Too Many Requests: retry after 1")
    gateway().start()
    fake.user_says("are you there?")
    assert fake.wait_for(lambda: fake.texts() == ["after the wait"], timeout=20), fake.texts()


def test_a_refused_token_stops_the_gateway_with_one_line(fake, gateway):
    fake.fail("getMe", 401, count=1000, description="Unauthorized")
    gw = gateway()
    with pytest.raises(AssertionError, match="gateway exited"):
        gw.start(timeout=20)
    out = gw.output()
    assert "Unauthorized" in out
    assert "Traceback" not in out and "check TELEGRAM_BOT_TOKEN" in out


def test_with_a_proxy_in_the_environment_the_library_polls(fake, scripted, gateway):
    scripted.add({"content": "through the library"})
    # a proxy that loopback bypasses: our client steps aside for httpx, which honours both variables
    gateway({"https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
             "no_proxy": "127.0.0.1,localhost"}).start()
    fake.user_says("hello")
    assert fake.wait_for(lambda: fake.texts() == ["through the library"], timeout=20), fake.texts()



def test_a_token_refused_while_running_stops_the_gateway_with_one_line(fake, scripted, gateway):
    """Revoked while polling: the gateway used to run on silently, its polling task dead; now it stops as a
    refusal at start does (one line, a non-zero exit: a service manager restarts it)."""
    scripted.add({"content": "before the revocation"})
    gw = gateway()
    gw.start()
    fake.user_says("hello")
    assert fake.wait_for(lambda: fake.texts() == ["before the revocation"], timeout=20), fake.texts()
    fake.fail("getUpdates", 401, count=1000, description="Unauthorized")
    assert gw.proc is not None
    code = gw.proc.wait(30)
    out = gw.output()
    assert code != 0 and "check TELEGRAM_BOT_TOKEN" in out and "Unauthorized" in out, out
    assert "Traceback" not in out
    assert len([ln for ln in out.splitlines() if "Unauthorized" in ln]) == 1, out
