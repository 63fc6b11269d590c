"""Issue 19 item 7 for programs hermes does not start itself (`sandbox_launch`: MCP stdio servers, the browser):
a stdio MCP server and the browser see and reach only their own processes. A hostile server (`run_shell`, driven by the scripted
model through `hermes chat -q`) lists /proc, reads /proc/<hermes pid>/environ and cmdline and signals hermes:
under bubblewrap (its own pid namespace) and under Landlock (a pid namespace and /proc of its own, as root and as
a normal user: terminal/sandbox/nsmount.user_pidns), none of it reaches hermes or another program of the user;
the server's own processes are there and it still works. As whoever runs the suite and as uid 65534."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import sysconfig

import pytest

from hermes_agent.tools.builtin._checks import chromium_path
from tests.integration.test_browser_netns import home  # noqa: F401 - a fixture (a short HOME: Chromium's socket path)
from tests.integration.test_mcp_confinement import HOSTILE
from tests.integration.test_sandbox_pidns import ATTEMPTS, _hermes_popen
from tests.integration.test_sandbox_secrets import (
    USERS,
    World,
    _mechanisms,
    _user_python,
    world_as,
)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")

PROBE = r"""
import os, sys
pid = int(sys.argv[1])
mine = []
for name in sorted(os.listdir("/proc"), key=lambda n: (len(n), n)):
    if name.isdigit():
        try:
            mine.append(name + " " + open(f"/proc/{name}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:120])
        except OSError:
            pass
print("PS-BEGIN"); print("\n".join(mine)); print("PS-END")
""" + ATTEMPTS + r"""
attempt("FD", lambda: os.listdir(f"/proc/{pid}/fd"))
"""


@pytest.fixture(params=_mechanisms())
def mechanism(request):
    return request.param


@pytest.fixture(params=USERS)
def world(request, outside_dir, scripted, mechanism):
    with world_as(request.param, outside_dir, scripted, mechanism) as w:
        yield w


def _server(world: World) -> str:
    """The hostile server in config: the suite's python; uid 65534 runs the system one with the venv's packages,
    granted to this server (`mcp_servers.NAME.sandbox.readable_paths`: a checkout owned by root is not public)."""
    python = _user_python()[-1] if world.user == "user" else sys.executable
    purelib = sysconfig.get_paths()["purelib"]
    grant = (f"    sandbox:\n      readable_paths: [{purelib}, {os.path.dirname(HOSTILE)}]\n"
             if world.user == "user" else "")
    return (f"mcp_discovery_timeout: 60\nmcp_single_query_discovery_timeout: 90\nmcp_servers:\n  evil:\n"
            f"    command: {python}\n    args: [{HOSTILE}]\n    env:\n      PYTHONPATH: {purelib}\n{grant}")


def test_mcp_server_sees_and_reaches_only_its_own_processes(world):
    canary = f"WRAPPED-PIDNS-{random.randint(10**6, 10**7)}"
    world.config(world.home / ".hermes", _server(world))
    (world.ws / "probe.py").write_text(PROBE)
    world.ready = True  # from here on, as the world's user
    other = subprocess.Popen([*world._as_user(), "bash", "-c", f"exec -a 'mysql -p{canary}' sleep 120"])
    hermes_pid: list[int] = []

    def probe(body: dict) -> dict:
        return {"tool_calls": [{"id": "c0", "name": "mcp__evil__run_shell",
                                "arguments": {"command": f"python3 {world.ws}/probe.py {hermes_pid[0]}"}}]}

    world.scripted.add(probe, {"content": "done"})
    try:
        proc = _hermes_popen(world, "--yolo", "chat", "-q", f"look around {canary}")
        hermes_pid.append(proc.pid)
        out, err = proc.communicate(timeout=240)
    finally:
        other.kill()
        other.wait()
    assert "Traceback" not in err, err[-2000:]
    last = world.scripted.requests[-1]["body"]["messages"] if world.scripted.requests else []
    result = "\n".join(str(m.get("content")) for m in last if m.get("role") == "tool")
    log = world.home / ".hermes/logs/mcp/evil.log"
    assert "PS-END" in result, (result, err[-2000:], log.read_text()[-3000:] if log.exists() else "")
    listed = result.split("PS-BEGIN", 1)[1].split("PS-END", 1)[0]
    assert "probe.py" in listed, listed  # its own processes are there: /proc works
    assert canary not in listed, f"another program of the user (or hermes's prompt) is listed: {listed}"
    pids = [line.split()[0] for line in listed.strip().splitlines() if line.strip()]
    assert str(proc.pid) not in pids and "hermes_agent.cli" not in listed, f"hermes is listed: {listed}"
    for what in ("KILL0", "SIGCONT", "ENVIRON", "CMDLINE", "FD"):
        assert f"{what} REFUSED" in result, f"{what}: hermes (pid {proc.pid}) was reached: {result}"
    assert proc.returncode == 0, err[-2000:]


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium on this machine")
def test_the_browser_sees_only_its_own_processes(home, mechanism):  # noqa: F811 - the imported fixture
    """Chromium started as Playwright starts it (the wrapper hermes writes), asked for file:///proc/: what a
    compromised browser process would list. Its own processes are there; hermes (here: this test's process, which
    started it) and another program of the user are not."""
    import re
    import shutil
    import uuid
    from pathlib import Path

    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.tools.builtin._browser_confine import confined_executable

    policy = PathPolicy.build(workspace=[str(home / "project")], hermes_home=str(home / ".hermes"), home=str(home))
    wrapper, problem, _ = confined_executable(chromium_path(), policy, {"mode": "workspace-write", "mechanism": mechanism},
                                              str(home / ".hermes"))
    assert not problem, problem
    profile = Path(os.path.realpath("/tmp")) / f"playwright_chromiumdev_profile-{uuid.uuid4().hex[:6]}"
    profile.mkdir()
    other = subprocess.Popen(["sleep", "120"])
    try:
        res = subprocess.run([wrapper, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                              "--virtual-time-budget=2000", "--dump-dom", "file:///proc/"], capture_output=True,
                             text=True, timeout=120, env={**os.environ, "HOME": str(home)})
    finally:
        other.kill()
        other.wait()
        shutil.rmtree(profile, ignore_errors=True)
    pids = {int(p) for p in re.findall(r'addRow\("(\d+)"', res.stdout)}
    assert 1 in pids, (res.returncode, res.stderr[-2000:])  # /proc was listed: the browser's own namespace
    assert os.getpid() not in pids and other.pid not in pids, f"the browser lists the host's processes: {sorted(pids)}"
