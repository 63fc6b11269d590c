"""Issue 19 (red-team a40): a confined command sees and reaches only its own session's processes. Under
bubblewrap, and under Landlock as root and as a normal user (the launcher's pid namespace and fresh /proc, made
in a user namespace of its own: terminal/sandbox/nsmount.user_pidns), `ps ax` inside lists neither hermes nor
another program of the same user, and hermes can be neither signalled nor read through /proc; the session's own
processes are still managed: a background server, `process` wait/kill, `pkill -f`, execute_code. Through
`hermes chat -q` and the scripted model, as root and as uid 65534."""

from __future__ import annotations

import json
import random
import re
import subprocess

from tests.helpers import HERMES
from tests.integration.test_sandbox_kernel import mechanism, world  # noqa: F401 - fixtures
from tests.integration.test_sandbox_secrets import _calls, _user_python

# What a confined probe tries on hermes's process (`pid`): each line says REACHED or REFUSED
ATTEMPTS = r"""
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
"""
PROBE = r"""
import os, subprocess, time
for _ in range(400):
    text = open("hermes.pid").read().strip() if os.path.exists("hermes.pid") else ""
    if text:
        break
    time.sleep(0.05)
pid = int(text)
print("PS-BEGIN")
print(subprocess.run(["ps", "ax", "-o", "pid=,args="], capture_output=True, text=True).stdout, end="")
print("PS-END")
""" + ATTEMPTS



def _hermes_popen(w, *args: str) -> subprocess.Popen:
    """`hermes ARGS` as World.hermes runs it, but started: its pid is hermes's own (setpriv and env exec)."""
    w.ready = True
    prog = [*_user_python(), "-c", "import sys; from hermes_agent.cli.main import main; sys.argv[0] = 'hermes'; "
             "sys.exit(main())"] if w.user == "user" else [HERMES]
    return subprocess.Popen([*w._as_user(), *prog, *args], cwd=w.ws, env=w.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _outputs(w) -> list[str]:  # type: ignore[no-untyped-def]
    """Each tool result the model got last, its `output` decoded when it is a terminal's JSON."""
    last = w.scripted.requests[-1]["body"]["messages"] if w.scripted.requests else []
    found = []
    for m in last:
        if m.get("role") == "tool":
            text = str(m.get("content"))
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            found.append(data["output"] if isinstance(data, dict) and isinstance(data.get("output"), str) else text)
    return found


def test_commands_see_and_reach_only_their_own_session(world):  # noqa: F811
    canary = f"PIDNS-PROMPT-{random.randint(10**6, 10**7)}"
    other = subprocess.Popen([*world._as_user(), "bash", "-c", f"exec -a 'mysql -pPIDNS-OTHER-{canary}' sleep 120"])
    (world.ws / "probe.py").write_text(PROBE)
    world.scripted.add(*_calls(("terminal", {"command": "python3 probe.py", "timeout": 60})))
    try:
        proc = _hermes_popen(world, "--yolo", "chat", "-q", f"look around {canary}")
        (world.ws / "hermes.pid").write_text(f"{proc.pid}\n")
        out, err = proc.communicate(timeout=180)
    finally:
        other.kill()
        other.wait()
    assert "Traceback" not in err, err[-2000:]
    results = _outputs(world)[0]
    assert "PS-END" in results, results
    listed = results.split("PS-BEGIN", 1)[1].split("PS-END", 1)[0]
    assert "ps ax" in listed and "python3 probe.py" in listed, listed  # its own session is there: /proc works
    assert canary not in listed, f"another process of the user (or hermes's prompt) is listed: {listed}"
    assert "hermes_agent.cli" not in listed and HERMES not in listed, f"hermes itself is listed: {listed}"
    pids = [int(line.split()[0]) for line in listed.strip().splitlines()]
    assert str(proc.pid) not in map(str, pids), listed
    for what in ("KILL0", "SIGCONT", "ENVIRON", "CMDLINE"):
        assert f"{what} REFUSED" in results, f"{what}: hermes (pid {proc.pid}) was reached: {results}"
    assert proc.returncode == 0, err[-2000:]


def _proc_step(i: int, tool: str, args: dict):  # type: ignore[no-untyped-def]
    """A call naming the last background process hermes reported (its id is only known then)."""
    def step(body: dict) -> dict:
        found = re.findall(r"proc_[0-9a-f]+", json.dumps(body["messages"]))
        return {"tool_calls": [{"id": f"c{i}", "name": tool, "arguments": {**args, "id": found[-1] if found else "x"}}]}
    return step


def test_the_sessions_own_processes_are_still_managed(world):  # noqa: F811
    port = random.randint(20000, 40000)
    serve = f"python3 -m http.server {port} --bind 127.0.0.1"
    pattern = f"http.serve[r] {port}"  # a bracket: the pattern does not match the shell running pkill
    steps = [
        {"tool_calls": [{"id": "c0", "name": "terminal", "arguments": {"command": serve, "background": True}}]},
        {"tool_calls": [{"id": "c1", "name": "terminal", "arguments": {"command": (
            f"for i in $(seq 100); do python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/')\" "
            f"2>/dev/null && echo SERVED && break; sleep 0.1; done; pgrep -f '{pattern}' >/dev/null && echo FOUND; "
            f"pkill -f '{pattern}'; echo PKILL=$?")}}]},
        _proc_step(2, "process", {"action": "wait", "timeout": 20}),
        {"tool_calls": [{"id": "c3", "name": "terminal", "arguments": {"command": "sleep 300", "background": True}}]},
        _proc_step(4, "process", {"action": "kill"}),
        _proc_step(5, "process", {"action": "wait", "timeout": 20}),
        {"tool_calls": [{"id": "c6", "name": "execute_code", "arguments": {"code": (
            "import subprocess\nchild = subprocess.Popen(['sleep', '30'])\n"
            "print('PSX', subprocess.run(['ps', 'ax', '-o', 'args='], capture_output=True, text=True).stdout)\n"
            "child.kill()\nprint('CHILD', child.wait())")}}]},
        {"content": "done"},
    ]
    world.scripted.add(*steps)
    out = world.hermes("--yolo", "chat", "-q", "run the server and stop it", timeout=240)
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    results = _outputs(world)
    assert len(results) == 7, results
    assert "SERVED" in results[1] and "FOUND" in results[1] and "PKILL=0" in results[1], results[1]
    assert '"exited"' in results[2] or "exit" in results[2], results[2]  # the server ended by pkill: wait returns
    assert "kill" in results[4].lower() and "error" not in results[4].lower(), results[4]
    assert "running" not in results[5], results[5]
    assert "PSX" in results[6] and "sleep 30" in results[6] and "CHILD -9" in results[6], results[6]
    assert out.returncode == 0, out.stderr[-2000:]
