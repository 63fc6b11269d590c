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


SHADOWED = ("yaml", "dotenv", "openai", "httpx", "json", "sqlite3", "rich", "pip")


def test_python_m_hermes_in_a_workspace_never_imports_the_workspaces_modules(scripted, hermes_home, tmp_path):
    """Red-team round 9 a04: `python -m hermes_agent` started in a workspace where a command wrote `dotenv.py`
    (and friends) ran it unconfined. The reply still arrives; nothing of the workspace is imported."""
    import subprocess

    from tests.helpers import HERMES

    work, marks = tmp_path / "work", tmp_path / "imported"
    work.mkdir()
    marks.mkdir()
    for name in SHADOWED:
        (work / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "the reply"})
    python = os.path.join(os.path.dirname(HERMES), "python")  # the interpreter of the `hermes` under test
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(hermes_home)
    out = subprocess.run([python, "-m", "hermes_agent", "chat", "-q", "hi"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "the reply" in out.stdout
    assert sorted(p.name for p in marks.iterdir()) == []


def test_every_python_helper_hermes_starts_ignores_its_working_directory():
    """Round 9 a05: `rl_start_training` started `python -m ...` with the workspace as its working directory, so a
    planted `hermes_agent/` package there ran unconfined. Every `python -m` hermes starts goes through
    `paths.python_module` (`-P`); a new spawn that bypasses it fails here."""
    import pathlib
    import re

    from hermes_agent import paths

    assert paths.python_module("pip", "list")[1:] == ["-P", "-m", "pip", "list"]
    src = pathlib.Path(paths.SRC_ROOT) / "hermes_agent"
    bare = re.compile(r"""sys\.executable\s*,\s*["']-m["']|sys\.executable\}\s+-m\b""")
    found = [f"{p.relative_to(src)}:{n}" for p in src.rglob("*.py")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if bare.search(line)]
    assert found == []
