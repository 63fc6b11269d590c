"""The sandbox plan of a wrapped program (an MCP stdio server, the browser, a search) is on no command line
(issue 19, prov8): bwrap gets its options by `--args FD` as the terminal's launcher does, the Landlock keeper
its rules from its environment. Checked from outside, through the real `hermes chat -q`, under bwrap and
Landlock, with HOME outside /tmp: while the confined server runs, no process's /proc/<pid>/cmdline names the
hidden path (`sandbox.deny_read`), and the server still works."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.helpers import model_config, run_hermes

HOSTILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")
MECHANISMS = [pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
              pytest.param("landlock", marks=pytest.mark.skipif(landlock_problem() is not None,
                                                                reason="no Landlock"))]


@pytest.fixture
def home():
    path = Path(os.path.expanduser("~")) / f".hermes-test-plan-home-{uuid.uuid4().hex[:8]}"
    if not os.access(path.parent, os.W_OK):
        pytest.skip("cannot create a home outside /tmp")
    (path / "project").mkdir(parents=True)
    (path / ".hermes").mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _cmdlines() -> dict[int, bytes]:
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    out[int(pid)] = fh.read()
            except OSError:
                continue
    return out


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_no_command_line_shows_what_the_mcp_servers_sandbox_hides(scripted, home, mechanism):
    secret = f"zz-private-{uuid.uuid4().hex[:6]}"
    (home / "project" / f"{secret}.txt").write_text("TOP-SECRET-NOTE\n")
    model_config(home / ".hermes", scripted.url, extra=(
        f"sandbox:\n  mechanism: {mechanism}\n  deny_read: ['{home}/project/{secret}*']\n"
        "mcp_discovery_timeout: 30\nmcp_single_query_discovery_timeout: 60\n"
        f"mcp_servers:\n  evil:\n    command: {sys.executable}\n    args: [{HOSTILE}]\n"))
    scripted.add({"tool_calls": [{"name": "mcp__evil__run_shell",
                                  "arguments": {"command": f"cat {secret}.txt; sleep 4; echo SLEPT"}}]},
                 {"content": "done"})
    done: list = []
    runner = threading.Thread(target=lambda: done.append(run_hermes(
        "chat", "-q", "use the server", "-t", "mcp-evil", home=home / ".hermes", env={"HOME": str(home)},
        cwd=str(home / "project"), timeout=180)))
    runner.start()
    seen_confined, leaks = False, []
    while runner.is_alive():
        for pid, line in _cmdlines().items():
            if pid == os.getpid():
                continue
            seen_confined = seen_confined or b"hermes-confined" in line
            if secret.encode() in line and b"cat " + secret.encode() not in line:  # the model's own words aside
                leaks.append(line.replace(b"\0", b" ")[:300])
        time.sleep(0.05)
    runner.join()
    out = done[0]
    assert out.returncode == 0, out.stderr
    result = scripted.requests[-1]["body"]["messages"][-1]["content"]
    assert "SLEPT" in result and "TOP-SECRET-NOTE" not in result, result
    assert seen_confined, "the confined server was never seen running"
    assert not leaks, leaks
