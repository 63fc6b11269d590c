"""Issue 19 item 7 across a re-planned launcher: `git init` in a workspace without a repository re-plans the
sandbox (a `.git` to protect), and later commands run in a new launcher (a pid namespace of its own under
bubblewrap, and under Landlock as root and as a normal user). What the first launcher runs is neither lost nor
left behind: the background process the user asked for is still listed (with a note that later commands cannot
see it where they run in a pid namespace of their own), polled and read by the `process` tool,
an `env -i setsid` orphan of the first generation keeps running meanwhile, and when `hermes chat -q` ends both are
gone (session-end cleanup reaches every generation). Through the real CLI and the scripted model, as whoever runs
the suite and as uid 65534."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

from tests.integration.test_mcp_survivors import _kill_leftovers, _survivors
from tests.integration.test_sandbox_other_procs import mechanism, world  # noqa: F401 - fixtures
from tests.integration.test_sandbox_pidns import _hermes_popen
from tests.integration.test_sandbox_procview import _pidns_for


def _launchers(hermes: int) -> int:
    """Confined launchers hermes started (its children tagged `hermes-confined`: bwrap or the Landlock keeper)."""
    count = 0
    for pid in filter(str.isdigit, [p.name for p in Path("/proc").iterdir()]):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == hermes and b"hermes-confined" in cmd:
            count += 1
    return count


def test_a_replanned_launcher_keeps_the_first_ones_processes_listed_and_ends_them(world):  # noqa: F811
    tag = f"replan-kept-{random.randint(10**6, 10**7)}"
    shutil.rmtree(world.ws / ".git")  # `git init` below re-plans the sandbox
    hermes: list[int] = []
    seen: dict[str, object] = {}

    def look(i: int, tool: str, args: dict, key: str):  # type: ignore[no-untyped-def]
        def step(body: dict) -> dict:  # runs when hermes asks for the next step: the state between two calls
            seen[key] = (_launchers(hermes[0]), sorted(line.split(": ", 1)[1] for line in _survivors(tag)))
            found = re.findall(r"proc_[0-9a-f]+", json.dumps(body["messages"]))
            full = {**args, "id": found[0]} if tool == "process" and found else args
            return {"tool_calls": [{"id": f"c{i}", "name": tool, "arguments": full}]}
        return step

    keep = f"bash -c 'exec -a {tag}-bg sleep 1377'"
    orphan = f"(env -i setsid bash -c 'exec -a {tag}-orphan sleep 1377' </dev/null >/dev/null 2>&1 &)"
    world.scripted.add(
        {"tool_calls": [{"id": "c0", "name": "terminal", "arguments": {"command": keep, "background": True}}]},
        {"tool_calls": [{"id": "c1", "name": "terminal",
                         "arguments": {"command": f"{orphan}; git init -q . && echo INITED"}}]},
        look(2, "terminal", {"command": "ls -d .git && echo SECOND"}, "before"),
        look(3, "process", {"action": "list"}, "after"),
        look(4, "process", {"action": "poll"}, "listed"),
        {"content": "done"})
    try:
        proc = _hermes_popen(world, "--yolo", "chat", "-q", "start it, init the repo, then check on it")
        hermes.append(proc.pid)
        out, err = proc.communicate(timeout=240)
        left = _survivors(tag)
    finally:
        _kill_leftovers(tag)
    assert "Traceback" not in err, err[-2000:]
    assert proc.returncode == 0, err[-2000:]
    results = [str(m.get("content")) for m in world.scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == 5, results
    assert "proc_" in results[0] and "INITED" in results[1] and "SECOND" in results[2], results
    assert seen["before"][0] == 1 and seen["after"][0] == 2, f"no second launcher after the re-plan: {seen}"
    alive = [f"{tag}-bg 1377", f"{tag}-orphan 1377"]
    assert all(any(a in s for s in seen["after"][1]) for a in alive), f"gone before the session ended: {seen}"
    listed = json.loads(results[3])
    bg = [p for p in listed["processes"] if tag in p["command"]]
    assert bg and bg[0].get("status") == "running", results[3]  # the first generation's process is listed
    if world.mechanism == "bwrap" or _pidns_for(world):  # later commands cannot see it: the listing says so
        assert "re-planned" in bg[0].get("note", ""), bg[0]
    assert '"running"' in results[4] and "error" not in results[4].lower(), results[4]
    assert not left, f"outlived the session: {left}"


def test_closing_a_session_ends_every_launcher_generation_while_hermes_lives_on(mechanism, tmp_path):  # noqa: F811
    """The gateway's and the API server's case: the session ends but the hermes process does not, so no parent's
    death takes the launchers down; `LocalBackend.close` must reach the retired launcher's processes too."""
    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.terminal.local import LocalBackend
    from hermes_agent.terminal.sandbox.spec import spec_from_policy

    tag = f"replan-closed-{random.randint(10**6, 10**7)}"
    work = tmp_path / "work"
    work.mkdir()
    policy = PathPolicy.build(workspace=[str(work)], hermes_home=str(tmp_path / "hh"))
    backend = LocalBackend(str(work), source_rc=False, sandbox=spec_from_policy(policy, mechanism=mechanism))
    try:
        first = backend.spawn(f"bash -c 'exec -a {tag}-bg sleep 1377'", token="t")
        made = backend.execute(f"(env -i setsid bash -c 'exec -a {tag}-orphan sleep 1377' </dev/null >/dev/null "
                               "2>&1 &); git init -q . && echo INITED")
        assert "INITED" in made.output, made.output
        second = backend.execute("echo SECOND")
        assert "SECOND" in second.output, second.output
        runner = backend._runner
        assert runner is not None and len(runner._retired) == 1, "the .git did not re-plan the sandbox"
        running = " ".join(_survivors(tag))
        assert first.poll() is None and f"{tag}-bg 1377" in running and f"{tag}-orphan 1377" in running, running
        backend.close()
        left = _survivors(tag)
    finally:
        _kill_leftovers(tag)
    assert not left, f"outlived the session's close: {left}"
