"""The real `hermes gateway run` (slack-bolt inside it) against a local fake of Slack and the scripted model."""

from __future__ import annotations

import os
import re
import signal
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("slack_bolt")

from tests.fake_slack import APP_TOKEN, BOT_TOKEN, SECRET, FakeSlack  # noqa: E402
from tests.helpers import model_config  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402


class SlackGateway(Gateway):
    """`hermes gateway run` configured for Slack only: Socket Mode, or HTTP events on a free port."""

    ready = ("gateway: slack socket", "gateway: slack http")

    def __init__(self, home: Path, fake: FakeSlack, model_url: str, *, http: bool = False,
                 env: dict | None = None, extra: str = "", cwd: Path | None = None) -> None:
        self.home, self.fake = home, fake
        port = _free_port()
        model_config(home, model_url, f"platforms:\n  slack:\n    extra:\n      base_url: {fake.base_url}\n"
                                      f"      ping_interval: 1\n      http_port: {port}\n{extra}")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_", "SLACK_", "GATEWAY_"))}
        self.env.update({"HERMES_HOME": str(home), "SLACK_BOT_TOKEN": BOT_TOKEN, "MESSAGING_CWD": str(cwd or home),
                         **({"SLACK_SIGNING_SECRET": SECRET} if http else {"SLACK_APP_TOKEN": APP_TOKEN}),
                         **(env or {})})
        fake.events_url = f"http://127.0.0.1:{port}/slack/events" if http else ""
        self.proc = None
        self.log = home / "gateway.out"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def slack():
    server = FakeSlack().start()
    yield server
    server.stop()


@pytest.fixture
def gateway(slack, scripted, hermes_home):
    made: list[SlackGateway] = []

    def make(http: bool = False, env: dict | None = None, **kw) -> SlackGateway:
        gw = SlackGateway(hermes_home, slack, scripted.url, http=http,
                          env={"GATEWAY_ALLOW_ALL_USERS": "true", **(env or {})}, **kw)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.stop()


def test_socket_mode_dm_reply_in_mrkdwn_with_a_working_reaction(slack, scripted, gateway):
    scripted.add({"content": "# Result\nHello **Alice**! See [the docs](https://example.com/a?b=1&c=2) for x < y."})
    gateway().start()
    assert slack.connections == 1
    said = slack.user_says("hi there")
    assert slack.wait_for(lambda: slack.sent)
    sent = slack.sent[0]
    assert sent["channel"] == "DALICE" and "thread_ts" not in sent
    assert sent["text"] == "*Result*\nHello *Alice*! See <https://example.com/a?b=1&amp;c=2|the docs> for x &lt; y."
    assert scripted.requests[0]["body"]["messages"][-1]["content"] == "hi there"
    assert slack.wait_for(lambda: ("remove", said["event"]["ts"], "eyes") in slack.reactions)
    assert slack.reactions == [("add", said["event"]["ts"], "eyes"), ("remove", said["event"]["ts"], "eyes")]
    assert len(slack.acks) == 1
