"""A confined command cannot renice, pin, re-schedule or re-limit a process outside its session (red-team
round 11 a27: on the Landlock path without a pid namespace — a normal user's — `renice -n 19 -p <pid>` and
`taskset -p 1 <pid>` reached hermes and the user's other programs of the same uid). Through `hermes chat -q`
with the scripted model, HOME outside /tmp, as whoever runs the tests and as uid 65534, under bubblewrap and Landlock: a
program of the same user started beside hermes keeps its nice value, CPU set and limits. Controls: `nice -n 5`,
`taskset -c 0` and `ulimit -n` on the command itself keep working."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.integration.test_sandbox_secrets import (
    UNPRIV,
    USERS,
    World,
    _calls,
    _mechanisms,
    world_as,
)


@pytest.fixture(params=_mechanisms())
def mechanism(request):
    return request.param


@pytest.fixture(params=["me", USERS[1]])  # whoever runs the suite (root, or rtuser: HERMES_TEST_AS), and uid 65534
def world(request, outside_dir, scripted, mechanism):
    with world_as("root" if request.param == "me" else request.param, outside_dir, scripted, mechanism) as w:
        yield w


def _victim(world: World) -> subprocess.Popen:
    """The user's other program: same uid as hermes, outside the session."""
    as_user = ["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups"] if world.user == "user" else []
    return subprocess.Popen([*as_user, "sleep", "120"])


def test_another_process_of_the_user_keeps_its_priority_cpus_and_limits(world):
    victim = _victim(world)
    pid = victim.pid
    try:
        cpus, limits = os.sched_getaffinity(pid), open(f"/proc/{pid}/limits").read()
        attack = (f"renice -n 19 -p {pid}; taskset -p 1 {pid}; prlimit --pid {pid} --nofile=16:16; "
                  f"chrt -i -p 0 {pid}; ionice -c 3 -p {pid}; echo ATTACKED; "
                  "renice -n 19 -p $(pgrep -u $(id -u) -f [h]ermes_agent.cli.main | head -1)")  # hermes itself
        controls = ("nice -n 5 sh -c 'cut -d\" \" -f19 /proc/self/stat'; ulimit -n 512 && ulimit -n; "
                    "taskset -c 0 sh -c 'echo pinned'; echo CONTROLS")
        world.scripted.add(*_calls(("terminal", {"command": attack}), ("terminal", {"command": controls})))
        out = world.hermes("chat", "-q", "tidy up the machine", "--yolo")
        assert out.returncode == 0, out.stderr
        tools = [m["content"] for m in world.scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
        assert "ATTACKED" in tools[0] and "CONTROLS" in tools[1], tools
        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        assert "new priority" not in tools[0], tools[0]  # neither the program nor hermes
        assert int(stat[16]) == 0, f"the command reniced a process outside the session: {tools[0]}"
        assert os.sched_getaffinity(pid) == cpus, tools[0]
        assert open(f"/proc/{pid}/limits").read() == limits, tools[0]
        assert "SCHED_IDLE" not in subprocess.run(["chrt", "-p", str(pid)], capture_output=True, text=True).stdout
        assert "idle" not in subprocess.run(["ionice", "-p", str(pid)], capture_output=True, text=True).stdout
        assert '"output": "5\\n512\\npinned\\nCONTROLS' in tools[1], tools[1]  # the command's own: all work
    finally:
        victim.kill()
        victim.wait()
