"""The confined Chromium has a network namespace of its own (netwrap.py): what Chromium itself fetches (pages'
subresources, anything a compromised renderer or browser process opens, requests Playwright's routing never
sees) cannot reach the user's loopback services nor the cloud metadata address, except the ports
`sandbox.loopback_ports` grants. Driven as Playwright drives it: the wrapper hermes writes, started with the
browser's own arguments (here a headless --dump-dom of a page), HOME outside /tmp."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.netns import forwarder
from hermes_agent.tools.builtin._browser_confine import confined_executable
from hermes_agent.tools.builtin._checks import chromium_path
from tests.integration.test_sandbox_netns import SECRET, _Web

CHROMIUM = chromium_path()
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine"),
              pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap"),
              pytest.mark.skipif(forwarder() is None, reason="slirp4netns is not installed")]


@pytest.fixture
def home():
    path = Path(os.path.expanduser("~")) / f".hb-{uuid.uuid4().hex[:4]}"  # short: Chromium's socket path has a limit
    if not os.access(path.parent, os.W_OK):
        pytest.skip("cannot create a home outside /tmp")
    (path / ".hermes").mkdir(parents=True)
    (path / "project").mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _dump(home: Path, url: str, ports: list[int]) -> tuple[str, tuple[int, ...] | None]:
    policy = PathPolicy.build(workspace=[str(home / "project")], hermes_home=str(home / ".hermes"),
                              home=str(home))
    wrapper, problem, granted = confined_executable(
        CHROMIUM, policy, {"mode": "workspace-write", "mechanism": "bwrap", "loopback_ports": ports},
        str(home / ".hermes"))
    assert not problem, problem
    profile = Path(os.path.realpath("/tmp")) / f"playwright_chromiumdev_profile-{uuid.uuid4().hex[:6]}"
    profile.mkdir()
    try:
        res = subprocess.run([wrapper, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                              "--virtual-time-budget=3000", "--dump-dom", url], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "HOME": str(home)})
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return res.stdout + res.stderr[-2000:], granted


def test_chromium_reaches_the_hosts_loopback_only_on_granted_ports(home):
    web = _Web("127.0.0.1", f"<html><body>{SECRET}</body></html>")
    url = f"http://127.0.0.1:{web.port}/"
    try:
        shut, none_granted = _dump(home, url, [])
        metadata, _ = _dump(home, "http://169.254.169.254/latest/meta-data/", [])
        granted, ports = _dump(home, url, [web.port])
    finally:
        web.close()
    assert none_granted == () and ports == (web.port,)
    assert SECRET not in shut and "ERR_CONNECTION_REFUSED" in shut, shut
    assert "ERR_ADDRESS_UNREACHABLE" in metadata, metadata  # the unreachable route: at once, never tried
    assert SECRET in granted, granted
