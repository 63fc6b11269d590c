"""Issue 19 (lock4): what a confined command sees of other processes through /proc. Under bubblewrap, and
under Landlock wherever the launcher may make a pid namespace (root; a normal user where user namespaces are
allowed, a40), commands see only their own session:
not hermes's command line (the user's prompt), not the keeper, not another program of the user's with a
password in its argv. Through `hermes chat -q`, HOME outside /tmp."""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.test_sandbox_kernel import mechanism, world  # noqa: F401 - fixtures
from tests.integration.test_sandbox_secrets import _calls, _user_python

SCAN = r"""
import os
seen = []
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                full = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        at = full.find("c4n4ry")  # a canary anywhere in a long command line (the shell wrapper's is long)
        if at >= 0:
            print("SEEN", full[max(0, at - 30):at + 6])
        seen.append(full[:300])
print("PIDS", len(seen))
print("\n".join(seen))
"""


def _pidns_for(world) -> bool:  # noqa: F811
    """Can the Landlock launcher of the world's user make a pid namespace and /proc here (launcher's probe)?"""
    from hermes_agent.terminal.sandbox.launcher import _PIDNS_PROBE, landlock_pidns_works

    if world.user != "user":
        return landlock_pidns_works()
    probe = subprocess.run([*world._as_user(), _user_python()[-1], "-I", "-S", "-c", _PIDNS_PROBE], cwd="/",
                           capture_output=True, check=False)
    return probe.returncode == 0


def test_commands_do_not_see_hermes_or_other_programs_command_lines(world):  # noqa: F811
    if world.mechanism == "landlock" and not _pidns_for(world):
        pytest.skip("Landlock without a pid namespace here (no user namespaces for this user): documented limit")
    other = subprocess.Popen(["bash", "-c", "exec -a 'mysql -pPROCVIEW-OTHER-c4n4ry' sleep 120"])
    try:
        (world.ws / "scan.py").write_text(SCAN)
        world.scripted.add(*_calls(("terminal", {"command": "python3 scan.py"})))
        out = world.hermes("--yolo", "chat", "-q", "look around PROCVIEW-PROMPT-c4n4ry")
    finally:
        other.kill()
        other.wait()
    assert "Traceback" not in out.stderr
    results = world.tool_results()
    assert "PIDS" in results, results
    assert "PROCVIEW-PROMPT-c4n4ry" not in results, "hermes's command line (the user's prompt) was readable"
    assert "PROCVIEW-OTHER-c4n4ry" not in results, "another program's command line was readable"
    assert "python3 scan.py" in results  # the command itself is there: /proc works


def test_landlock_without_a_pid_namespace_blanks_hermes_command_line(world):  # noqa: F811
    """Where Landlock runs without a pid namespace (a normal user where user namespaces are off), /proc/<pid>/cmdline of every
    process stays readable (mode 0444 whatever the dumpable flag): hermes blanks its own arguments (the prompt)
    and each keeper its plan (the names of the hidden paths) once they are read (terminal/sandbox/argscrub.py).
    Elsewhere the first test covers it: the command sees its own session only."""
    import uuid

    if world.mechanism != "landlock" or _pidns_for(world):
        pytest.skip("a pid namespace of its own: see the test above")
    canary = f"PROCVIEW-PROMPT-{uuid.uuid4().hex[:10]}"
    marks = (canary, "scan.py", str(world.home / ".ssh"))
    report = (f"print(sum('hermes-confined' in s for s in seen), 'KEEPERS')\n"
              f"print('\\n'.join(s for s in seen if any(m in s for m in {marks!r})))")
    (world.ws / "scan.py").write_text(SCAN.replace('print("\\n".join(seen))', report))
    world.scripted.add(*_calls(("terminal", {"command": "python3 scan.py"})))
    out = world.hermes("--yolo", "chat", "-q", f"look around {canary}")
    assert "Traceback" not in out.stderr
    results = world.tool_results()
    assert "PIDS" in results and "python3 scan.py" in results and " KEEPERS" in results, results
    assert canary not in results, "hermes's command line (the user's prompt) was readable"
    assert str(world.home / ".ssh") not in results, "a keeper's plan (hidden paths) was readable"
