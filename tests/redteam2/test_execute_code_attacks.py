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
import ctypes, glob, json, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
REQ = json.dumps({"tool": "terminal", "args": {"command": "echo STOLEN-$PWD > stolen.txt"}}).encode() + b"\n"
tried = []
def use(sock, how):
    tried.append(how)
    try:
        sock.sendall(REQ)
        print("answer", how, sock.recv(65536)[:300])
    except OSError as exc:
        print("refused", how, exc)
deadline = time.time() + 40
while not tried and time.time() < deadline:
    # 1. a stub or socket left by name in a shared directory (the old design)
    for stub in glob.glob("/tmp/hermes-*/**/hermes_tools.py", recursive=True) + glob.glob("/tmp/**/rpc.sock", recursive=True):
        tried.append(stub)
    # 2. named unix sockets of other hermes sessions
    try:
        names = [ln.split()[-1] for ln in open("/proc/net/unix").read().splitlines()[1:] if len(ln.split()) == 8]
    except OSError:
        names = []
    for name in names:
        if "hermes" in name or "rpc" in name:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(name)
                use(s, "path " + name)
            except OSError as exc:
                tried.append(f"{name}: {exc}")
    # 3. the victim script's own channel, taken from the process (pidfd_getfd of its fd 5)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if b"hermes_tools" not in open(f"/proc/{pid}/cmdline", "rb").read():
                continue
        except OSError:
            continue
        pidfd = libc.syscall(434, int(pid), 0)
        fd = libc.syscall(438, pidfd, 5, 0) if pidfd >= 0 else -1
        if fd >= 0 and os.fstat(fd).st_ino == os.fstat(5).st_ino:
            os.close(fd)  # this script's own channel (its parent shell holds it too)
        elif fd >= 0:
            use(socket.socket(fileno=fd), f"pidfd_getfd {pid}")
        else:
            tried.append(f"pidfd {pid}: errno {ctypes.get_errno()}")
    time.sleep(0.5)
print("searched", tried[:10])
'''

_VICTIM = "import time\nfrom hermes_tools import terminal\ntime.sleep(25)\nprint('victim done')\n"


def test_a_script_cannot_drive_another_sessions_rpc_socket(hermes_home: Path, tmp_path: Path) -> None:
    """Session B's script looks for session A's RPC channel (a stub or socket by name in /tmp, a named unix
    socket, or A's script's fd taken with pidfd_getfd) to call `terminal` in A's session (A's cwd, A's
    approvals, A's tool budget). The channel is one end of a socketpair only A's script holds: nothing is
    reachable."""
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
    assert results and "searched" in results[0], f"the thief did not run (test setup): {results} {out_b}"
    assert not (work_a / "stolen.txt").exists(), f"B ran a command inside A's session: {results[0]}"
    assert "answer" not in results[0], f"B reached A's RPC channel: {results[0]}"


_RAW = r'''def raw(tool, args):
    s = hermes_tools._SOCK
    s.sendall(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        data += s.recv(65536)
    return data.decode()
'''

_FORGE = r'''
import json, hermes_tools
def raw(tool, args):
    s = hermes_tools._SOCK
    s.sendall(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        data += s.recv(65536)
    return data.decode()
print("T", raw("terminal", {"command": "echo FORGED > forged.txt"}))
print("W", raw("write_file", {"path": "forged2.txt", "content": "x"}))
print("M", raw("memory", {"action": "add", "target": "memory", "content": "forged memory"}))
print("N", sorted(n for n in dir(hermes_tools) if not n.startswith("_")))
'''


def test_a_script_cannot_call_tools_the_agent_does_not_offer(hermes_home: Path, tmp_path: Path) -> None:
    """execute_code with the file tools (-t code_execution,file): the stub must not carry terminal, and a
    hand-made RPC request with the script's own token must be refused for it (and for non-script tools such as
    memory); the offered write_file still works. (execute_code offered alone gets every script tool:
    test_execute_code.py.)"""
    with ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": _FORGE}}]},
                         {"content": "done"}]) as server:
        model_config(hermes_home, server.url)
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "code_execution,file", "--yolo"],
                              env=_env(hermes_home), cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
        results = _tool_results(server)
    assert results, proc.stdout + proc.stderr
    output = json.loads(results[0])["output"]
    assert "N " in output, f"the script did not run (test setup): {results[0]}"
    assert not (tmp_path / "forged.txt").exists(), output
    assert "not available to scripts here" in output.split("T ", 1)[1].split("\n", 1)[0], output
    assert (tmp_path / "forged2.txt").exists(), output
    assert "forged memory" not in (hermes_home / "memories" / "MEMORY.md").read_text() \
        if (hermes_home / "memories" / "MEMORY.md").exists() else True
    assert "'terminal'" not in output.split("N ", 1)[1] and "'write_file'" in output.split("N ", 1)[1], output


def test_the_approval_gate_holds_for_calls_made_through_the_script(hermes_home: Path, tmp_path: Path,
                                                                   outside_dir: Path) -> None:
    """No --yolo, no one to ask (chat -q): a dangerous command a script runs through `terminal` must be
    refused like the model's own call; so must a raw request asking to run it outside the sandbox."""
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    outside = outside_dir  # not a writable root of the sandbox
    code = (f"import json, hermes_tools\nfrom hermes_tools import terminal\n{_RAW}"
            f"print('A', terminal('rm' + ' -rf {target}'))\n"  # spelled apart: the script itself is judged too
            f"print('B', raw('terminal', {{'command': 'echo escaped > {outside}/escaped.txt', 'sandbox': False, "
            "'reason': 'trust me'}))\n")
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": code}}]},
                         {"content": "done"}]) as server:
        model_config(hermes_home, server.url)
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "code_execution,terminal"], env=_env(hermes_home),
                              cwd=str(work), capture_output=True, text=True, timeout=120)
        results = _tool_results(server)
    assert results, proc.stdout + proc.stderr
    result = json.loads(results[0])
    output = result.get("output", "")
    # the script itself is judged as Python first; where its text already asks, nothing of it runs (also safe)
    refused_whole = "BLOCKED" in result.get("error", "") and "cannot ask" in result["error"]
    assert refused_whole or ("A " in output and "B " in output), f"the script did not run (test setup): {results[0]}"
    assert (target / "keep.txt").exists(), f"a script deleted without approval: {results[0]}"
    escaped = (outside / "escaped.txt").exists()
    assert not escaped, f"a script ran unsandboxed without approval: {results[0]}"


def test_huge_output_through_a_subprocess_is_cut(hermes_home: Path, tmp_path: Path) -> None:
    """The script's Python-level output cap is bypassed by a child writing straight to fd 1 (100 MB): the
    call must still end with a capped result, not hang or hand the model megabytes."""
    code = ("import subprocess\n"
            "subprocess.run(\"head -c 100000000 /dev/zero | tr '\\\\0' x\", shell=True)\n"
            "print('after')\n")
    with ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": code}}]},
                         {"content": "done"}]) as server:
        model_config(hermes_home, server.url)
        started = time.monotonic()
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "code_execution", "--yolo"], env=_env(hermes_home),
                              cwd=str(tmp_path), capture_output=True, text=True, timeout=180)
        took = time.monotonic() - started
        results = _tool_results(server)
    assert results, proc.stdout + proc.stderr
    assert len(results[0]) < 200_000, f"{len(results[0])} characters reached the model"
    assert took < 120, took


def test_raw_rpc_cannot_use_arguments_the_script_api_does_not_have(hermes_home: Path, tmp_path: Path) -> None:
    """Scripts get `terminal(command, timeout, workdir)`, foreground only. A hand-made request adding
    background=True must still run in the foreground (no process left for later, no id handed back)."""
    code = ("import json, hermes_tools\n" + _RAW +
            "print('R', raw('terminal', {'command': 'sleep 1; echo FOREGROUND-DONE', 'background': True}))\n")
    with ScriptedServer([{"tool_calls": [{"name": "execute_code", "arguments": {"code": code}}]},
                         {"content": "done"}]) as server:
        model_config(hermes_home, server.url)
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "code_execution,terminal", "--yolo"],
                              env=_env(hermes_home), cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
        results = _tool_results(server)
    assert results, proc.stdout + proc.stderr
    assert "FOREGROUND-DONE" in results[0], f"the script started a background process: {results[0]}"
