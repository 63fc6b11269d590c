"""Issue 19, through the real `hermes chat -q`: the programs hermes runs outside the sandbox (git for the
checkpoints here) come from the one resolver, which passes over a program whose chain of links touches a
place the sandbox can write: `~/bin/git -> ~/proj/.tools/git` (the target in the workspace) and
`~/bin/git -> ~/proj/.tools/g -> /usr/bin/git` (a link on the way in the workspace, which a command repoints).
Under bubblewrap and under Landlock."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.helpers import model_config, run_hermes

MECHANISMS = [pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
              pytest.param("landlock", marks=pytest.mark.skipif(landlock_problem() is not None, reason="no Landlock"))]


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("shape", ["target", "hop"])
def test_git_reached_through_a_link_into_the_workspace_never_runs_unconfined(scripted, hermes_home, tmp_path,
                                                                              mechanism, shape):
    work, home, marks = tmp_path / "work", tmp_path / "home", tmp_path / "ran-unconfined"
    for d in (work / ".tools", home / "bin", marks):
        d.mkdir(parents=True)
    if shape == "target":  # the program itself lies in the workspace (npm link, a hand-made wrapper)
        (work / ".tools" / "git").write_text('#!/bin/sh\nexec /usr/bin/git "$@"\n')
        (work / ".tools" / "git").chmod(0o755)
        (home / "bin" / "git").symlink_to(work / ".tools" / "git")
        plant = "cp payload .tools/git"
    else:  # only a link on the way does; it ends at the real git
        (work / ".tools" / "g").symlink_to("/usr/bin/git")
        (home / "bin" / "git").symlink_to(work / ".tools" / "g")
        plant = "cp payload .tools/evil && ln -sfn evil .tools/g"
    (work / "payload").write_text(f'#!/bin/sh\necho "$(tr "\\0" " " < /proc/$PPID/cmdline) :: $*" >> {marks}/git\n'
                                  'exec /usr/bin/git "$@"\n')
    (work / "payload").chmod(0o755)
    (work / "f.txt").write_text("x\n")
    git = ["/usr/bin/git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "f.txt"], ["commit", "-qm", "one"]):
        subprocess.run(git + args, check=True)
    (work / "f.txt").write_text("y\n")  # uncommitted: kept (git, outside the sandbox) before each command
    model_config(hermes_home, scripted.url, f"checkpoints:\n  enabled: true\nsandbox:\n  mechanism: {mechanism}\n")
    env = {"HOME": str(home), "PATH": f"{home / 'bin'}:{os.environ['PATH']}"}
    for command in (plant + "; echo planted", "echo second session > f.txt; echo second session"):
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "ok"})
        out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, env=env, cwd=str(work), timeout=180)
        assert out.returncode == 0, out.stderr
    result = json.loads(next(m["content"] for m in reversed(scripted.requests[-1]["body"]["messages"])
                             if m["role"] == "tool"))
    assert "second session" in result["output"], result
    ran = [(p.name, p.read_text()) for p in marks.iterdir()]
    assert ran == [], "hermes ran a planted git outside the sandbox"
    assert list((hermes_home / "checkpoints").rglob("HEAD")), "the checkpoints ran no git at all (no trusted git?)"
