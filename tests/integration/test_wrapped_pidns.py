"""Issue 19 item 7 for programs hermes does not start itself (`sandbox_launch`: MCP stdio servers, the browser):
a stdio MCP server sees and reaches only its own processes. A hostile server (`run_shell`, driven by the scripted
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

from tests.integration.test_mcp_confinement import HOSTILE
from tests.integration.test_sandbox_pidns import _hermes_popen
from tests.integration.test_sandbox_secrets import USERS, World, _bwrap_as_user, _mechanisms, _user_python

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
def attempt(what, act):
    try:
        act()
        print(what, "REACHED")
    except OSError as exc:
        print(what, "REFUSED", type(exc).__name__)
attempt("KILL0", lambda: os.kill(pid, 0))
attempt("SIGCONT", lambda: os.kill(pid, 18))
attempt("ENVIRON", lambda: open(f"/proc/{pid}/environ", "rb").read())
attempt("CMDLINE", lambda: open(f"/proc/{pid}/cmdline", "rb").read())
attempt("FD", lambda: os.listdir(f"/proc/{pid}/fd"))
"""


@pytest.fixture(params=_mechanisms())
def mechanism(request):
    return request.param


@pytest.fixture(params=USERS)
def world(request, outside_dir, scripted, mechanism):
    if request.param == "user" and mechanism == "bwrap" and not _bwrap_as_user():
        pytest.skip("uid 65534 cannot start bwrap here")
    w = World(outside_dir, scripted, mechanism, request.param)
    yield w
    if w.cleanup:
        import shutil

        shutil.rmtree(w.cleanup, ignore_errors=True)


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
