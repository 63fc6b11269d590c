"""Red-team round 7 a33, through the real `hermes chat -q`: a developer runs hermes with the project's venv
activated (`.venv/bin` first on PATH) or direnv's `PATH_add bin`. A confined command drops `bwrap`,
`slirp4netns`, `unshare` and `git` wrappers there; the next session must not start them outside the sandbox,
while the commands inside still get the user's PATH (the venv's tools first)."""

from __future__ import annotations

import json
import os

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.helpers import model_config, run_hermes

TOOLS = ("bwrap", "slirp4netns", "unshare", "git")


@pytest.mark.skipif(bwrap_problem() is not None and landlock_problem() is not None, reason="no OS sandbox")
@pytest.mark.parametrize("bindir", [".venv/bin", "bin"])
def test_programs_planted_on_the_users_path_in_the_workspace_never_run_unconfined(scripted, hermes_home, tmp_path,
                                                                                    bindir):
    work, home, marks = tmp_path / "work", tmp_path / "home", tmp_path / "ran-unconfined"
    (work / bindir).mkdir(parents=True)
    home.mkdir()
    marks.mkdir()
    model_config(hermes_home, scripted.url, "checkpoints:\n  enabled: true\n")
    plant = "; ".join(
        f"printf '#!/bin/sh\\ntouch {marks}/{t}\\nexec /usr/bin/{t} \"$@\"\\n' > {bindir}/{t} && chmod +x {bindir}/{t}"
        for t in TOOLS)
    env = {"HOME": str(home), "PATH": f"{work / bindir}:{os.environ['PATH']}"}
    for command in (plant + "; echo planted", "echo second session; echo PATH=$PATH"):
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "ok"})
        out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, env=env, cwd=str(work), timeout=180)
        assert out.returncode == 0, out.stderr
    result = json.loads(next(m["content"] for m in reversed(scripted.requests[-1]["body"]["messages"])
                             if m["role"] == "tool"))
    assert "second session" in result["output"], result
    assert f"PATH={work / bindir}:" in result["output"], "the commands lost the user's PATH"
    assert sorted(p.name for p in marks.iterdir()) == [], "hermes ran a planted program outside the sandbox"


@pytest.mark.skipif(bwrap_problem() is not None, reason="bwrap not installed here")
def test_a_trusted_path_directory_linking_into_the_workspace_gives_nothing(scripted, hermes_home, tmp_path):
    """Red-team round 8 hp1: `~/bin/bwrap -> ~/proj/.tools/bwrap` (npm link, a hand-made link): the directory is
    trusted, the program it leads to is not; the command rewrites it and the next session must not run it."""
    work, home, marks = tmp_path / "work", tmp_path / "home", tmp_path / "ran-unconfined"
    for d in (work / ".tools", home / "bin", marks):
        d.mkdir(parents=True)
    for tool in ("bwrap", "unshare", "slirp4netns"):
        real = f"/usr/bin/{tool}"
        (work / ".tools" / tool).write_text(f"#!/bin/sh\nexec {real} \"$@\"\n")
        (work / ".tools" / tool).chmod(0o755)
        (home / "bin" / tool).symlink_to(work / ".tools" / tool)
    model_config(hermes_home, scripted.url)
    env = {"HOME": str(home), "PATH": f"{home / 'bin'}:{os.environ['PATH']}"}
    plant = "; ".join(f"printf '#!/bin/sh\\ntouch {marks}/{t}\\nexec /usr/bin/{t} \"$@\"\\n' > .tools/{t}"
                      for t in ("bwrap", "unshare", "slirp4netns"))
    for command in (plant + "; echo planted", "echo second session"):
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "ok"})
        out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, env=env, cwd=str(work), timeout=180)
        assert out.returncode == 0, out.stderr
    result = json.loads(next(m["content"] for m in reversed(scripted.requests[-1]["body"]["messages"])
                             if m["role"] == "tool"))
    assert "second session" in result["output"], result
    assert sorted(p.name for p in marks.iterdir()) == [], "hermes ran a planted program outside the sandbox"
