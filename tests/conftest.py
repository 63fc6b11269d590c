"""Shared fixtures: a temp HERMES_HOME for every test, loopback-only networking, the scripted model
server, and a runner for the real `hermes` executable."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer

_real_connect = socket.socket.connect


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple):
        return True  # unix sockets
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise ConnectionRefusedError(f"test network guard: non-loopback connection to {address!r} refused")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes_home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "HERMES_INFERENCE_MODEL",
                "HERMES_INFERENCE_PROVIDER", "TERMINAL_ENV", "HERMES_YOLO_MODE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    return home


@pytest.fixture
def scripted():
    """A running scripted OpenAI-compatible server; add steps with `scripted.add(...)`."""
    server = ScriptedServer().start()
    yield server
    server.stop()
