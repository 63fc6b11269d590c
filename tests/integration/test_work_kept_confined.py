"""Issue 19 (rt14b c01), never lose the user's work to ANY confined writer, through the real `hermes chat -q`
with HOME outside /tmp and a real MCP stdio server (confined, the workspace writable) that destroys work: at its
start, before the model said anything, and on its first call, when no terminal command ran. The user's
uncommitted edits and untracked files are snapshotted where the sandbox guard lets confined work in
(terminal/base.py keep_work), and the session's end line says how to bring them back."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import mechanism

__all__ = ["mechanism"]  # fixture
WRECKER = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_wrecker_server.py"
EDIT = "print('hello')\n# THREE HOURS OF UNCOMMITTED WORK\n"


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def home():
    home = home_outside_tmp("kept14")
    ws = home / "proj"
    (ws / "src").mkdir(parents=True)
    (home / ".hermes").mkdir()
    (ws / "main.py").write_text("print('hello')\n")
    (ws / "src" / "lib.py").write_text("X = 1\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "init")
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _chat(scripted, home: Path, mechanism: str, steps: list, *args: str) -> subprocess.CompletedProcess:
    model_config(home / ".hermes", scripted.url,
                 f"sandbox:\n  mechanism: {mechanism}\nmcp_single_query_discovery_timeout: 60\n"
                 f"mcp_servers:\n  wreck:\n    command: {sys.executable}\n    args: [{WRECKER}{''.join(', ' + a for a in args)}]\n")
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "tidy the project", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "proj"), timeout=180)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out


def _restore(home: Path, out: subprocess.CompletedProcess) -> None:
    """What the end line says to run, run as said: the work comes back."""
    said = re.search(r"`hermes checkpoints restore (\w+) \[PATH\]`", out.stderr)
    assert said is not None, out.stderr
    back = run_hermes("checkpoints", "restore", said.group(1), home=home / ".hermes", env={"HOME": str(home)},
                      cwd=str(home / "proj"))
    assert back.returncode == 0, back.stdout + back.stderr


def test_a_server_that_destroys_work_at_its_start(scripted, home, mechanism):
    ws = home / "proj"
    (ws / "main.py").write_text(EDIT)
    (ws / "notes.txt").write_text("design notes\n")
    (ws / "src" / "draft.txt").write_text("draft\n")
    out = _chat(scripted, home, mechanism, [], "start")
    assert (ws / "main.py").read_text() == "" and not (ws / "notes.txt").exists()  # it did destroy them
    listed = run_hermes("checkpoints", "list", home=home / ".hermes", env={"HOME": str(home)}, cwd=str(ws))
    assert "uncommitted changes kept before: MCP server wreck starts" in listed.stdout, listed.stdout + out.stderr
    _restore(home, out)
    assert (ws / "main.py").read_text() == EDIT and (ws / "notes.txt").read_text() == "design notes\n"
    assert (ws / "src" / "draft.txt").read_text() == "draft\n"
    assert "refs/hermes" not in _git(ws, "for-each-ref")  # nothing written into the user's repository


def test_a_server_that_destroys_work_on_its_first_call(scripted, home, mechanism):
    """The work written after the server started (here by hermes's own file tool) is kept before the call."""
    ws = home / "proj"
    (ws / "main.py").write_text(EDIT)
    steps = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "plan.txt", "content": "the plan\n"}}]},
             {"tool_calls": [{"name": "mcp__wreck__tidy", "arguments": {}}]}]
    out = _chat(scripted, home, mechanism, steps)
    assert not (ws / "plan.txt").exists() and (ws / "main.py").read_text() == "", out.stderr  # destroyed
    _restore(home, out)
    assert (ws / "main.py").read_text() == EDIT and (ws / "plan.txt").read_text() == "the plan\n"


def test_a_clean_tree_costs_no_snapshot_and_no_line(scripted, home):
    out = _chat(scripted, home, "auto", [{"tool_calls": [{"name": "mcp__wreck__tidy", "arguments": {}}]}])
    assert "hermes checkpoints restore" not in out.stderr, out.stderr
    listed = run_hermes("checkpoints", "list", home=home / ".hermes", env={"HOME": str(home)}, cwd=str(home / "proj"))
    assert "uncommitted changes kept" not in listed.stdout, listed.stdout
