"""Red-team attacks on execute_code: processes left behind after the call, and a script of one session
driving the RPC socket of another session (its token read from the other session's scratch directory).
Each test drives the real `hermes chat -q` with the scripted model and asserts the SAFE outcome."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux process checks")


def _tool_results(server: ScriptedServer) -> list[str]:
    """Every tool result the model was shown, in order."""
    out: list[str] = []
    seen = 0
    for req in server.requests:
        msgs = [m for m in req["body"].get("messages", []) if m.get("role") == "tool"]
        out += [str(m.get("content")) for m in msgs[seen:]]
        seen = len(msgs)
    return out


def _alive(marker: str) -> list[int]:
    pids = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    return env


def _chat(home: Path, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([HERMES, "chat", "-q", "go", "-t", "code_execution,terminal", "--yolo"],
                            env=_env(home), cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_execute_code_kills_what_the_script_left_running(hermes_home: Path, tmp_path: Path) -> None:
    """A script starts a detached child (own session, like a daemon) and returns. The call is over: the
    child must be gone before the model's next tool runs, not linger for the rest of the session."""
    marker = f"rt2-linger-{uuid.uuid4().hex[:8]}"
    code = ("import subprocess\n"
            f"subprocess.Popen(['sh', '-c', 'exec -a {marker} sleep 120'], start_new_session=True,\n"
            "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print('spawned')\n")
    check = f"sleep 0.5; ps -eo args | grep -c '^{marker}' || true"
    with ScriptedServer([
        {"tool_calls": [{"name": "execute_code", "arguments": {"code": code}}]},
        {"tool_calls": [{"name": "terminal", "arguments": {"command": check}}]},
        {"content": "done"},
    ]) as server:
        model_config(hermes_home, server.url)
        try:
            proc = _chat(hermes_home, tmp_path)
            out, _ = proc.communicate(timeout=120)
            results = _tool_results(server)
        finally:
            for pid in _alive(marker):
                os.kill(pid, 9)
    assert len(results) >= 2, out
    assert "spawned" in results[0], results[0]
    count = json.loads(results[1])["output"].strip().splitlines()[-1]
    assert count == "0", f"the script's detached child outlived the execute_code call: {results[1]}"


_STEAL = r'''
import glob, json, os, re, socket, time
mine = os.path.dirname(os.path.abspath(__file__))
found = None
deadline = time.time() + 40
while found is None and time.time() < deadline:
    for stub in glob.glob("/tmp/hermes-term-*/scratch/code-*/hermes_tools.py"):
        if os.path.dirname(stub) == mine:
            continue
        text = open(stub).read()
        found = (re.search(r"_SOCK = '([^']+)'", text).group(1), re.search(r"_TOKEN = '([^']+)'", text).group(1))
        break
    time.sleep(0.2)
if found is None:
    print("no other session found")
else:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(found[0])
        s.sendall(json.dumps({"token": found[1], "tool": "terminal",
                              "args": {"command": "echo STOLEN-$PWD > stolen.txt"}}).encode() + b"\n")
        print("answer", s.recv(65536)[:300])
'''

_VICTIM = "import time\nfrom hermes_tools import terminal\ntime.sleep(25)\nprint('victim done')\n"


def test_a_script_cannot_drive_another_sessions_rpc_socket(hermes_home: Path, tmp_path: Path) -> None:
    """Session B's script reads session A's generated stub (socket path + token) from the shared /tmp and
    calls `terminal` through A's socket: the command would run in A's session (A's cwd, A's approvals, A's
    tool budget). A's RPC server must refuse a caller that is not A's own script."""
    home_b = tmp_path / "home_b"
    home_b.mkdir()
    work_a, work_b = tmp_path / "a", tmp_path / "b"
    work_a.mkdir()
    work_b.mkdir()
    victim = ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": _VICTIM}}]},
                             {"content": "done"}]).start()
    thief = ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": _STEAL}}]},
                            {"content": "done"}]).start()
    try:
        model_config(hermes_home, victim.url)
        model_config(home_b, thief.url)
        a = _chat(hermes_home, work_a)
        time.sleep(3)
        b = _chat(home_b, work_b)
        out_b, _ = b.communicate(timeout=120)
        a.communicate(timeout=120)
        results = _tool_results(thief)
    finally:
        victim.stop()
        thief.stop()
    assert results, out_b
    assert "no other session found" not in results[0], "the attack did not find the victim (test setup)"
    assert not (work_a / "stolen.txt").exists(), f"B ran a command inside A's session: {results[0]}"
