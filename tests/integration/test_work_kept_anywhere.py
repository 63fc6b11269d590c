"""Issue 19 (rt14b c20), never lose the user's work, wherever it lies: files git ignores that the user wrote by
hand (notes/ and .env listed in .gitignore), a workspace that is no git repository at all (a thesis folder), a
repository nested in the workspace, one made with `git init` and never committed. Confined commands empty them;
the copy taken before is in $HERMES_HOME and the session's end line says how to bring it back. Controls: build
output, dependencies and large ignored data are not copied, and ordinary commands print no line about it.
Through the real `hermes chat -q`, HOME outside /tmp."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

NOTES = "THE PLAN, WRITTEN BY HAND\n"
THESIS = "chapter 1..5, two months of work\n"


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                          capture_output=True, text=True).stdout


def _repo(ws: Path, ignore: str) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "main.py").write_text("print('hi')\n")
    (ws / ".gitignore").write_text(ignore)
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "init")


@pytest.fixture
def home():
    home = home_outside_tmp("kept15")
    (home / ".hermes").mkdir(parents=True)
    (home / "proj").mkdir()
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _chat(scripted, home: Path, commands: list[str]) -> subprocess.CompletedProcess:
    model_config(home / ".hermes", scripted.url, "sandbox:\n  mechanism: auto\n")
    scripted.add(*({"tool_calls": [{"name": "terminal", "arguments": {"command": c}}]} for c in commands),
                 {"content": "done"})
    out = run_hermes("chat", "-q", "tidy the project", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "proj"), timeout=180)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out


def _restore(home: Path, out: subprocess.CompletedProcess, where: Path, *paths: str) -> None:
    """Run what the end line says, in `where`, with the first snapshot it names: the session's first copy."""
    line = next((ln for ln in out.stderr.splitlines() if f"work in {where} was kept" in ln), "")
    assert "`hermes checkpoints restore ID [--path FILE]` there" in line, out.stderr
    cid = re.search(r"ID one of: (\w+) ", line)
    assert cid is not None, line
    for path in paths or ("",):
        back = run_hermes("checkpoints", "restore", cid.group(1), *(["--path", path] if path else []), home=home / ".hermes",
                          env={"HOME": str(home)}, cwd=str(where))
        assert back.returncode == 0, back.stdout + back.stderr


def _kept(home: Path) -> str:
    """Every file name held by any snapshot of the store."""
    store = home / ".hermes" / "checkpoints" / "store"
    if not store.exists():
        return ""
    refs = subprocess.run(["git", f"--git-dir={store}", "for-each-ref", "--format=%(refname)"], capture_output=True,
                          text=True, check=True).stdout.split()
    return "".join(subprocess.run(["git", f"--git-dir={store}", "log", "--name-only", "--format=", ref],
                                  capture_output=True, text=True, check=True).stdout for ref in refs)


def test_ignored_notes_and_env_written_by_hand_come_back(scripted, home):
    ws = home / "proj"
    _repo(ws, "notes/\n.env\n*.scratch\n")
    (ws / "notes").mkdir()
    (ws / "notes" / "plan.md").write_text(NOTES)
    (ws / ".env").write_text("STRIPE_KEY=local-only\n")
    (ws / "ideas.scratch").write_text("idea\n")
    (ws / ".git" / "info" / "exclude").write_text("todo.md\n")  # ignored by the repository's own exclude file
    (ws / "todo.md").write_text("todo\n")
    out = _chat(scripted, home, ["dd of=notes/plan.md count=0 status=none", "truncate --reference=/dev/null .env",
                                 "rm -f ideas.scratch", "cp /dev/null todo.md"])
    assert (ws / "notes/plan.md").read_text() == "" and (ws / ".env").read_text() == "", out.stderr
    _restore(home, out, ws, "notes/plan.md", ".env", "ideas.scratch", "todo.md")
    assert (ws / "notes/plan.md").read_text() == NOTES and (ws / ".env").read_text() == "STRIPE_KEY=local-only\n"
    assert (ws / "ideas.scratch").read_text() == "idea\n" and (ws / "todo.md").read_text() == "todo\n"
    assert "refs/hermes" not in _git(ws, "for-each-ref")  # nothing written into the user's repository


def test_hermes_s_own_file_tools_keep_the_ignored_notes_they_replace(scripted, home):
    ws = home / "proj"
    _repo(ws, "notes/\n")
    (ws / "notes").mkdir()
    (ws / "notes" / "plan.md").write_text(NOTES)
    model_config(home / ".hermes", scripted.url, "sandbox:\n  mechanism: auto\n")
    scripted.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "notes/plan.md", "content": "new\n"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "rewrite the plan", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(ws), timeout=180)
    assert out.returncode == 0 and (ws / "notes" / "plan.md").read_text() == "new\n", out.stderr
    _restore(home, out, ws, "notes/plan.md")
    assert (ws / "notes" / "plan.md").read_text() == NOTES


def test_a_folder_with_no_repository_comes_back(scripted, home):
    ws = home / "proj"
    (ws / "chapters").mkdir()
    (ws / "thesis.md").write_text(THESIS)
    (ws / "chapters" / "two.md").write_text("chapter two\n")
    for rel in ("build/index.html", "node_modules/x/index.js", "target/debug/app"):  # output: not copied
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("generated\n")
    out = _chat(scripted, home, ["dd of=thesis.md count=0 status=none", "rm -rf chapters"])
    kept = _kept(home)
    assert "thesis.md" in kept and not any(n in kept for n in ("index.html", "index.js", "debug/app")), kept
    assert (ws / "thesis.md").read_text() == "" and not (ws / "chapters").exists(), out.stderr
    _restore(home, out, ws)
    assert (ws / "thesis.md").read_text() == THESIS and (ws / "chapters" / "two.md").read_text() == "chapter two\n"
    assert not (ws / ".git").exists()  # still no repository


def test_a_nested_repository_s_ignored_notes_and_a_fresh_git_init_come_back(scripted, home):
    ws = home / "proj"
    _repo(ws, "")
    app = ws / "app"
    _repo(app, "notes.md\n")
    (app / "notes.md").write_text(NOTES)
    fresh = ws / "fresh"  # `git init`, nothing added yet: no index at all
    fresh.mkdir()
    _git(fresh, "init", "-q")
    (fresh / "draft.md").write_text("draft\n")
    out = _chat(scripted, home, ["truncate -s0 app/notes.md fresh/draft.md"])
    assert (app / "notes.md").read_text() == "" and (fresh / "draft.md").read_text() == "", out.stderr
    _restore(home, out, app)
    _restore(home, out, fresh)
    assert (app / "notes.md").read_text() == NOTES and (fresh / "draft.md").read_text() == "draft\n"


def test_build_output_dependencies_and_big_data_are_not_copied_and_no_line_is_said(scripted, home):
    ws = home / "proj"
    _repo(ws, "dist/\nbuild/\nnode_modules/\n*.db\ncoverage/\n")
    for rel in ("dist/app.js", "build/lib/x.o", "node_modules/left-pad/index.js"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("generated\n")
    (ws / "data.db").write_bytes(b"\0" * (2 << 20))  # ignored data larger than a hand-written file
    (ws / "coverage").mkdir()
    for i in range(600):  # an ignored directory of many files: a tool's output
        (ws / "coverage" / f"f{i}.html").write_text("x\n")
    out = _chat(scripted, home, ["ls", "git status --short", "rm -rf dist build coverage"])
    kept = _kept(home)
    for name in ("app.js", "x.o", "left-pad", "data.db", "f1.html"):
        assert name not in kept, (name, kept)
    assert "was kept this session" not in out.stderr and "stopped keeping" not in out.stderr, out.stderr


def test_a_plain_folder_of_ordinary_commands_says_nothing(scripted, home):
    ws = home / "proj"
    (ws / "thesis.md").write_text(THESIS)
    out = _chat(scripted, home, ["ls", "wc -l thesis.md", "grep -c chapter thesis.md"])
    assert "was kept this session" not in out.stderr and "stopped keeping" not in out.stderr, out.stderr
    assert (ws / "thesis.md").read_text() == THESIS
