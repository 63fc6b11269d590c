"""Fixtures for the REPL tests: `start` opens the real `hermes` in a pseudo-terminal."""

from __future__ import annotations

import pytest

from tests.helpers import model_config
from tests.integration.repl_driver import Repl


@pytest.fixture
def start(scripted, hermes_home, tmp_path):
    """start(extra_config="", *args) -> a ready Repl on the scripted server."""
    opened: list[Repl] = []
    cwd = tmp_path / "work"
    cwd.mkdir()

    def _start(extra: str = "", *args: str, wait: bool = True) -> Repl:
        model_config(hermes_home, scripted.url, extra)
        repl = Repl(hermes_home, cwd, *args)
        opened.append(repl)
        if wait:
            repl.ready()
        return repl

    yield _start
    for repl in opened:
        repl.close()


@pytest.fixture
def fake():
    """A fake Telegram Bot API on loopback (tests/fake_telegram.py) for the gateway tests."""
    from tests.fake_telegram import FakeTelegram

    server = FakeTelegram().start()
    yield server
    server.stop()
