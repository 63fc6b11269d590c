"""Fixtures for the integration tests: `start` opens the real `hermes` in a pseudo-terminal (REPL tests), `fake`
a fake Telegram, `http_sink` a loopback HTTP server that keeps what is POSTed to it (exfiltration tests)."""

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


@pytest.fixture
def http_sink():
    """(port, bodies): a loopback HTTP server; every POST body it receives is appended to `bodies`."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    got: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            got.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1], got
    srv.shutdown()


@pytest.fixture(params=["bwrap", "landlock"])
def mechanism(request):
    """Each OS sandbox this machine can build: bubblewrap and Landlock (skipped where it cannot)."""
    from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
    from hermes_agent.terminal.sandbox.launcher import landlock_problem

    problem = bwrap_problem() if request.param == "bwrap" else landlock_problem()
    if problem:
        pytest.skip(problem)
    return request.param
