"""Shared fixtures: a temp HERMES_HOME for every test, loopback-only networking, the scripted model
server, and a runner for the real `hermes` executable."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import uuid
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer

# A ~/.bashrc that runs `pyenv init` rehashes on every shell start; a test that kills a shell mid-rehash leaves
# pyenv's lock behind and every later shell then waits up to 60 s for it. Tests wait 2 s at most.
os.environ.setdefault("PYENV_REHASH_TIMEOUT", "2")

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


# The sandbox makes these writable for every command (approval/policy.py SHARED_TMP), so a test of what stays
# outside the sandbox needs a directory elsewhere, whatever HOME is (CI images often put HOME under /tmp).
_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")


def _outside_candidates() -> list[Path]:
    repo = Path(__file__).resolve().parent.parent
    return [Path.home(), repo, Path("/root"), Path("/var/lib"), Path("/srv"), Path("/opt")]


def _is_shared_tmp(path: Path) -> bool:
    real = os.path.realpath(path)
    roots = {os.path.realpath(t) for t in _SHARED_TMP} | {os.path.realpath(os.environ.get("TMPDIR") or "/tmp")}
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


@pytest.fixture
def outside_dir() -> Path:
    """A fresh directory outside the sandbox's writable roots (not under /tmp, /var/tmp, /dev/shm, nor the
    test's workspace): under HOME when HOME is not under them, else under the checkout or a root-only place.
    Skips when this user can write nowhere else."""
    for base in _outside_candidates():
        if base.is_dir() and os.access(base, os.W_OK | os.X_OK) and not _is_shared_tmp(base):
            made = base / f".hermes-test-outside-{uuid.uuid4().hex[:10]}"
            made.mkdir()
            yield made
            shutil.rmtree(made, ignore_errors=True)
            return
    pytest.skip("no writable directory outside /tmp, /var/tmp and /dev/shm for this user")
