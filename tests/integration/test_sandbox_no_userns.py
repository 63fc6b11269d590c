"""Issue 19 item 7 where the Landlock launcher can make no pid namespace: a normal user without user namespaces
(`user.max_user_namespaces=0`, `kernel.unprivileged_userns_clone=0`, an AppArmor rule), reproduced without
touching the host's setting (tests/integration/_no_userns.py: a user namespace whose own limit is 0, then
setpriv to uid 65534). hermes says in one line at session start what is missing; what still holds is proved
through `hermes chat -q` and the scripted model: a command cannot signal, ptrace or read the environment of hermes
or of another program of the same user, nor renice it (Landlock's signal scope and ptrace rule, seccomp's
`others` rule, which also refuses kill(-1)); its own children are still signalled; an `env -i setsid` orphan and a background process end with
the session (the launcher's keeper, a subreaper, tracks them without a pid namespace)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.integration.test_mcp_survivors import _kill_leftovers, _survivors
from tests.integration.test_sandbox_pidns import PROBE
from tests.integration.test_sandbox_secrets import UNPRIV, World, _calls, _can_drop_privileges, _user_python

HELPER, ARGV = str(Path(__file__).with_name("_no_userns.py")), "NO_USERNS_ARGV"
NOTICE = "no pid namespace for the sandbox here"
AS_USER = ["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups"]


def _no_userns_works() -> bool:
    """Root can make the helper's namespace here, and a normal user in it can make no user namespace."""
    if os.geteuid() != 0 or landlock_problem() is not None or not _can_drop_privileges():
        return False
    code = "import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).unshare(0x10000000) != 0 else 1)"
    pidfile = f"/tmp/hermes-no-userns-probe-{os.getpid()}"
    try:
        probe = subprocess.run([sys.executable, HELPER, pidfile], capture_output=True, check=False, cwd="/",
                               env={**os.environ, ARGV: json.dumps([*AS_USER, _user_python()[-1], "-c", code])})
    finally:
        if os.path.exists(pidfile):
            os.unlink(pidfile)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _no_userns_works(), reason="needs root, Landlock and setpriv to model a normal "
                                                                   "user without user namespaces")


@pytest.fixture
def world(outside_dir, scripted):
    w = World(outside_dir, scripted, "landlock", "user")
    w.ready = True
    yield w
    if w.cleanup:
        shutil.rmtree(w.cleanup, ignore_errors=True)


def _hermes(world: World, *args: str) -> subprocess.CompletedProcess:
    prog = [*_user_python(), "-c", "import sys; from hermes_agent.cli.main import main; sys.argv[0] = 'hermes'; "
            "sys.exit(main())"]
    return subprocess.run([sys.executable, HELPER, str(world.ws / "hermes.pid")], cwd=world.ws, timeout=240,
                          env={**world.env(), ARGV: json.dumps([*AS_USER, *prog, *args])}, capture_output=True,
                          text=True, check=False)


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def test_without_user_namespaces_it_says_what_is_missing_and_the_rest_holds(world):
    canary = f"NOUSERNS-PROMPT-{random.randint(10**6, 10**7)}"
    tag = f"nouserns-left-{random.randint(10**6, 10**7)}"
    victim = subprocess.Popen([*AS_USER, "sleep", "120"])  # the user's other program: same uid, outside
    (world.ws / "probe.py").write_text(PROBE)
    ptrace = (f"python3 -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); "
              f"print('PTRACE', l.ptrace(16, {victim.pid}, 0, 0), ctypes.get_errno())\"")
    attack = (f"kill -STOP {victim.pid}; echo STOP=$?; renice -n 19 -p {victim.pid} >/dev/null; echo RENICE=$?; "
              f"{ptrace}; cat /proc/{victim.pid}/environ >/dev/null; echo ENV=$?; python3 -c \"import os; os.kill(-1, 0)\" 2>/dev/null; echo ALL=$?")
    control = "sleep 30 & kill $!; wait $!; echo CHILD=$?"
    plant = f"(env -i setsid bash -c 'exec -a {tag} sleep 1377' </dev/null >/dev/null 2>&1 &); echo PLANTED"
    world.scripted.add(*_calls(("terminal", {"command": "python3 probe.py", "timeout": 60}),
                               ("terminal", {"command": attack}), ("terminal", {"command": control}),
                               ("terminal", {"command": f"bash -c 'exec -a {tag} sleep 1377'", "background": True}),
                               ("terminal", {"command": plant})))
    try:
        out = _hermes(world, "--yolo", "chat", "-q", f"look around {canary}")
        left = _survivors(tag)
        stat = _stat(victim.pid)
    finally:
        _kill_leftovers(tag)
        victim.kill()
        victim.wait()
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.count(NOTICE) == 1, out.stderr  # one line at session start: what is missing here
    assert "refused by Landlock" in out.stderr and "install bubblewrap" in out.stderr, out.stderr
    results = [str(m.get("content")) for m in world.scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == 5, results
    probe, attacked, controls, background, planted = results
    hermes = int((world.ws / "hermes.pid").read_text())
    assert "PS-END" in probe and str(hermes) in probe, probe  # the host's /proc: hermes is listed (documented)
    assert canary not in probe, "hermes's command line (the user's prompt) was readable"
    for what in ("KILL0", "SIGCONT", "ENVIRON"):
        assert f"{what} REFUSED" in probe, f"{what}: hermes (pid {hermes}) was reached: {probe}"
    assert "STOP=0" not in attacked and "RENICE=0" not in attacked and "ENV=0" not in attacked, attacked
    assert "ALL=1" in attacked, attacked  # kill(-1): seccomp refuses "every process I may signal"
    assert "PTRACE -1 1" in attacked, attacked  # EPERM
    assert stat[0] != "T" and int(stat[16]) == 0, f"the user's other program was stopped or reniced: {attacked}"
    assert "CHILD=143" in controls, controls  # its own processes are still signalled
    assert "proc_" in background and "PLANTED" in planted, (background, planted)
    assert not left, f"outlived the session: {left}"
