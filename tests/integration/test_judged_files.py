"""Issue 19 (rt13 a50, rt14 b29/b41): the bytes the approval gate judged are the bytes that run. A confined
process alive while the question is up (here a background process of an earlier call) swaps the script the
user is being asked about; the answer "once" then must not run the swapped script, least of all outside the
sandbox. Through the real `hermes` REPL with the scripted model."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.integration.repl_driver import wait_requests

WAITER = "while [ ! -e go ]; do sleep 0.05; done; cat evil.sh > {name}; sleep 60"


def _call(name: str, **args) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _scripts(work: Path, name: str, benign: str, evil: str) -> Path:
    script = work / name
    script.write_text(f"#!/bin/sh\n{benign}\n")
    script.chmod(0o755)
    (work / "evil.sh").write_text(f"#!/bin/sh\n{evil}\n")
    return script


def _swap_during_question(repl, work: Path, script: Path) -> None:
    repl.expect(r"Choice \[o/")  # the waiter itself: it replaces a project file with other content (c02), asked
    repl.send("o")
    repl.expect(r"Choice \[o/")
    (work / "go").write_text("")  # the background process (confined) now rewrites the script
    assert wait_for(lambda: "evil" in script.read_text() or "PWNED" in script.read_text(), 10)
    time.sleep(0.2)
    repl.send("o")


@pytest.mark.parametrize("mechanism", ["auto", "landlock"])
def test_a_script_swapped_while_asked_to_leave_the_sandbox_does_not_run(start, scripted, outside_dir, tmp_path,
                                                                        mechanism):
    marker = outside_dir / "marker"
    scripted.add(_call("terminal", command=WAITER.format(name="deploy.sh"), background=True),
                 _call("terminal", command="./deploy.sh", sandbox=False, reason="deploying needs the ssh agent"),
                 {"content": "finished"})
    work = tmp_path / "work"
    script = _scripts(work, "deploy.sh", f"echo deployed > {marker}", f"echo PWNED > {marker}")
    repl = start(f"sandbox:\n  mechanism: {mechanism}\n")
    repl.send("deploy the docs")
    _swap_during_question(repl, work, script)
    repl.expect("finished")
    assert not marker.exists()  # neither version ran outside the sandbox
    result = wait_requests(scripted, 3)[2]["messages"][-1]["content"]
    assert "BLOCKED" in result and "changed between the approval check and the run" in result


def test_leaving_the_sandbox_to_run_a_workspace_script_is_refused_while_confined_processes_live(
        start, scripted, outside_dir, tmp_path):
    marker = outside_dir / "marker"
    unsandboxed = _call("terminal", command="./deploy.sh", sandbox=False, reason="deploying needs the ssh agent")
    scripted.add(unsandboxed, _call("terminal", command="sleep 60", background=True), unsandboxed,
                 {"content": "finished"})
    script = _scripts(tmp_path / "work", "deploy.sh", f"echo deployed >> {marker}", "true")
    repl = start("")
    repl.send("deploy the docs twice")
    repl.expect(r"Choice \[o/")
    repl.send("o")  # nothing confined alive yet: the judged script runs outside the sandbox (control)
    assert wait_for(marker.exists, 15)
    repl.expect(r"Choice \[o/")
    repl.send("o")
    repl.expect("finished")
    assert marker.read_text() == "deployed\n"  # the second run was refused: a background process could swap it
    result = wait_requests(scripted, 4)[3]["messages"][-1]["content"]
    assert "was not run outside the sandbox" in result and "deploy.sh" in result
    assert script.read_text().endswith("deployed >> " + str(marker) + "\n")


def test_a_script_swapped_while_a_flagged_sandboxed_command_is_asked_does_not_run(start, scripted, tmp_path):
    scripted.add(_call("terminal", command=WAITER.format(name="run.sh"), background=True),
                 _call("terminal", command="bash run.sh && git reset --hard"),
                 {"content": "finished"})
    work = tmp_path / "work"
    subprocess.run(f"cd {work} && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m i",
                   shell=True, check=True)
    script = _scripts(work, "run.sh", "echo fine", "echo PWNED > pwned.txt")
    repl = start("")
    repl.send("run it")
    _swap_during_question(repl, work, script)
    repl.expect("finished")
    assert not (work / "pwned.txt").exists()
    result = wait_requests(scripted, 3)[2]["messages"][-1]["content"]
    assert "BLOCKED" in result and "run.sh" in result and "changed between the approval check" in result


def test_an_idle_confined_mcp_server_keeps_workspace_scripts_inside_the_sandbox(start, scripted, outside_dir,
                                                                                 tmp_path):
    """b29's writer is a configured MCP server the model never calls: while it lives, `./deploy.sh` does not
    leave the sandbox (it could rewrite the script right after any re-check); a command running no workspace
    file still may."""
    marker = outside_dir / "marker"
    server = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_described_server.py"
    _scripts(tmp_path / "work", "deploy.sh", f"echo deployed >> {marker}", "true")
    scripted.add(_call("terminal", command="./deploy.sh", sandbox=False, reason="deploying needs the ssh agent"),
                 _call("terminal", command=f"echo plain >> {marker}", sandbox=False, reason="the user asked"),
                 {"content": "finished"})
    repl = start(f"mcp_discovery_timeout: 30\nmcp_servers:\n  docs:\n    command: {sys.executable}\n"
                 f"    args: [{server}]\n")
    repl.send("deploy the docs")
    repl.expect(r"Choice \[o/")
    repl.send("o")
    repl.expect(r"Choice \[o/")
    repl.send("o")
    repl.expect("finished")
    assert marker.read_text() == "plain\n"
    result = wait_requests(scripted, 2)[1]["messages"][-1]["content"]
    assert "was not run outside the sandbox" in result and "MCP server" in result
