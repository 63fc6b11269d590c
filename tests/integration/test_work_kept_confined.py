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


def _chat(scripted, home: Path, mechanism: str, steps: list, *args: str, extra: str = "") -> subprocess.CompletedProcess:
    server = (f"mcp_servers:\n  wreck:\n    command: {sys.executable}\n    args: [{WRECKER}{''.join(', ' + a for a in args)}]\n"
              if "none" not in args else "")
    model_config(home / ".hermes", scripted.url, extra +
                 f"sandbox:\n  mechanism: {mechanism}\nmcp_single_query_discovery_timeout: 60\n" + server)
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "tidy the project", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "proj"), timeout=180)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out


def _restore(home: Path, out: subprocess.CompletedProcess, before: str, only: Path | None = None) -> None:
    """What the end lines say to run, run as said in each repository named (or `only` that one), with the
    snapshot kept `before` what destroyed the work: the work comes back."""
    said = re.findall(r"uncommitted work in (\S+) was kept .*`hermes checkpoints restore ID \[--path FILE\]`.*", out.stderr)
    assert said, out.stderr
    for line in (ln for ln in out.stderr.splitlines() if "was kept this session before" in ln):
        where = line.split("uncommitted work in ", 1)[1].split(" ", 1)[0]
        if only is not None and where != str(only):
            continue
        cid = re.search(rf"(\w+) \(before {re.escape(before)}\)", line)
        assert cid is not None, line
        back = run_hermes("checkpoints", "restore", cid.group(1), home=home / ".hermes", env={"HOME": str(home)},
                          cwd=where)
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
    _restore(home, out, "MCP server wreck starts")
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
    _restore(home, out, "MCP wreck: tidy")
    assert (ws / "main.py").read_text() == EDIT and (ws / "plan.txt").read_text() == "the plan\n"


def test_a_server_that_destroys_work_when_the_session_ends(scripted, home, mechanism):
    """Its exit handler runs after the last call: what was written since is kept at the session's close."""
    ws = home / "proj"
    steps = [{"tool_calls": [{"name": "mcp__wreck__tidy", "arguments": {}}]},
             {"tool_calls": [{"name": "write_file", "arguments": {"path": "plan.txt", "content": "the plan\n"}}]}]
    out = _chat(scripted, home, mechanism, steps, "exit")
    assert not (ws / "plan.txt").exists(), out.stderr  # destroyed as the server stopped
    _restore(home, out, "the session ends")
    assert (ws / "plan.txt").read_text() == "the plan\n"


def test_a_repository_nested_in_the_workspace_is_kept_too(scripted, home):
    app = home / "proj" / "app"
    app.mkdir()
    (app / "mod.py").write_text("Y = 2\n")
    _git(app, "init", "-q")
    _git(app, "add", "-A")
    _git(app, "commit", "-qm", "init")
    (app / "mod.py").write_text(EDIT)
    (app / "todo.txt").write_text("todo\n")
    out = _chat(scripted, home, "auto", [], "start")
    assert (app / "mod.py").read_text() == "" and not (app / "todo.txt").exists(), out.stderr
    _restore(home, out, "MCP server wreck starts", only=app)
    assert (app / "mod.py").read_text() == EDIT and (app / "todo.txt").read_text() == "todo\n"


def test_a_flood_of_snapshots_does_not_push_out_the_user_s_work(scripted, home):
    """rt14b c03: confined work makes one unique snapshot per command; past the hard cap (10 x max_snapshots)
    the oldest went first, and with them the only copy of the user's edits. The session's first snapshot (the
    user's work before any confined work) is kept past the flood."""
    ws = home / "proj"
    (ws / "main.py").write_text(EDIT)
    flood = [{"tool_calls": [{"name": "terminal", "arguments": {"command": f"echo v{i} > scratch.log"}}]}
             for i in range(24)]
    out = _chat(scripted, home, "auto", flood, "start", extra="checkpoints:\n  max_snapshots: 2\n")
    assert (ws / "main.py").read_text() == "" and (ws / "scratch.log").read_text() == "v23\n", out.stderr
    listed = run_hermes("checkpoints", "list", home=home / ".hermes", env={"HOME": str(home)}, cwd=str(ws))
    assert listed.stdout.count("uncommitted changes kept before: echo") >= 15, listed.stdout  # the flood is kept too
    first = next(ln for ln in listed.stdout.splitlines() if "kept before: MCP server wreck starts" in ln)
    cid = re.search(r"\b[0-9a-f]{7,40}\b", first)
    assert cid is not None, first
    back = run_hermes("checkpoints", "restore", cid.group(0), home=home / ".hermes", env={"HOME": str(home)},
                      cwd=str(ws))
    assert back.returncode == 0, back.stdout + back.stderr
    assert (ws / "main.py").read_text() == EDIT


def test_hermes_s_own_file_tools_keep_the_work_they_replace(scripted, home):
    """rt14b c14: write_file and patch as the first calls, over uncommitted edits (checkpoints.enabled is off)."""
    ws = home / "proj"
    (ws / "main.py").write_text(EDIT)
    (ws / "src" / "lib.py").write_text("X = 1\n# UNCOMMITTED LIB\n")
    steps = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "main.py", "content": "print('new')\n"}}]},
             {"tool_calls": [{"name": "patch", "arguments": {"path": "src/lib.py", "old_string": "# UNCOMMITTED LIB\n",
                                                             "new_string": ""}}]}]
    out = _chat(scripted, home, "auto", steps, "none")  # no MCP server: the file tools are the first writers
    assert (ws / "main.py").read_text() == "print('new')\n" and (ws / "src" / "lib.py").read_text() == "X = 1\n"
    _restore(home, out, "a file tool writes main.py")
    assert (ws / "main.py").read_text() == EDIT and "UNCOMMITTED LIB" in (ws / "src" / "lib.py").read_text()


def test_a_clean_tree_costs_no_snapshot_and_no_line(scripted, home):
    """Control: ordinary confined work on a committed tree (the server started, a command ran)."""
    out = _chat(scripted, home, "auto", [{"tool_calls": [{"name": "terminal", "arguments": {"command": "git status"}}]}])
    assert "hermes checkpoints restore" not in out.stderr, out.stderr
    listed = run_hermes("checkpoints", "list", home=home / ".hermes", env={"HOME": str(home)}, cwd=str(home / "proj"))
    assert "uncommitted changes kept" not in listed.stdout, listed.stdout
