"""Issue 19 (rt13 a69-a72), never lose the user's work, through the real `hermes chat -q`: a `-w` session's ignored
outputs keep its worktree (a70)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import chat_tool_results, model_config, run_hermes


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                          capture_output=True, text=True).stdout


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _worktree_run(scripted, home: Path, repo: Path, command: str) -> tuple[str, str]:
    """One `hermes -w chat -q` whose model runs `command` in the new worktree: (its path, hermes's stderr)."""
    model_config(home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
    out = run_hermes("-w", "chat", "-q", "build it", "--yolo", "-t", "terminal", home=home, cwd=str(repo), timeout=180)
    assert out.returncode == 0, out.stderr
    created = next(ln for ln in out.stderr.splitlines() if ln.startswith("✓ Worktree created: "))
    return created.split(": ", 1)[1], out.stderr


def test_a_worktree_session_s_ignored_outputs_keep_the_worktree(scripted, hermes_home, tmp_path):
    repo = _repo(tmp_path / "repo", {".gitignore": "*.db\nmodels/\n.env\nbuild/\n", "README": "hi\n", ".env": "K=1\n"})
    (repo / ".worktreeinclude").write_text(".env\n")
    cases = {  # what the session leaves -> is the worktree kept?
        "echo 42 > results.db": ["results.db"],
        "mkdir -p models && echo W > models/m.bin": ["models/m.bin"],
        "mkdir -p build/x && echo o > build/x/out.o": ["build/x/out.o"],
        "echo K=2 > .env": [".env"],  # the copy .worktreeinclude made, changed
        "mkdir -p __pycache__ && echo c > __pycache__/m.cpython-311.pyc; cat .env": [],  # caches and the copy as made
    }
    for command, left in cases.items():
        path, err = _worktree_run(scripted, hermes_home, repo, command)
        if left:
            assert "worktree kept (it has changes)" in err and all(n in err for n in left), (command, err)
            assert all((Path(path) / n).exists() for n in left), command
            assert f"git worktree remove --force {path}" in err
        else:
            assert "worktree removed (nothing changed)" in err and not Path(path).exists(), (command, err)


UNTRACKED = {"notes.md": "my notes\n", "draft.py": "print('draft')\n", "plan.txt": "the plan\n", "todo.txt": "todo\n",
             "docs/idea.md": "an idea\n", "bin/run": "#!/bin/sh\n"}
DESTROY = ["mv -f empty.txt notes.md", "cat draft.py > draft.py", "uniq /dev/null plan.txt",
           "sed -n 'w todo.txt' /dev/null", "rm -rf docs", "python3 -c \"open('bin/run','w')\""]


def test_untracked_work_destroyed_by_ordinary_commands_comes_back(scripted, hermes_home, tmp_path):
    ws = _repo(tmp_path / "proj", {"README": "hi\n", ".gitignore": "*.log\nout/\n"})
    for name, text in UNTRACKED.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "empty.txt").write_text("")
    (ws / "run.log").write_text("ignored\n")  # ignored: not kept, not a reason for a snapshot
    (ws / "out").mkdir()
    (ws / "out" / "a.o").write_text("ignored\n")
    with open(ws / "big.iso", "wb") as fh:  # over the per-file cap: named, not kept
        fh.truncate(11 << 20)
    results = chat_tool_results(scripted, hermes_home, ws, DESTROY, extra="approvals:\n  mode: off\n")
    assert [r.get("exit_code") for r in results] == [0] * len(DESTROY), results
    assert all((ws / n).read_text() != t for n, t in UNTRACKED.items() if (ws / n).exists())
    listed = run_hermes("checkpoints", "list", home=hermes_home, cwd=str(ws)).stdout
    first = next(ln for ln in listed.splitlines() if "kept before: mv -f empty.txt notes.md" in ln)
    back = run_hermes("checkpoints", "restore", first.split()[0], home=hermes_home, cwd=str(ws))
    assert back.returncode == 0, back.stderr
    assert {n: (ws / n).read_text() for n in UNTRACKED} == UNTRACKED
    assert (ws / "run.log").read_text() == "ignored\n" and (ws / "big.iso").stat().st_size == 11 << 20
    shown = run_hermes("checkpoints", "diff", first.split()[0], home=hermes_home, cwd=str(ws)).stdout
    assert "run.log" not in shown and "a.o" not in shown


def test_a_too_large_untracked_file_is_named(scripted, hermes_home, tmp_path):
    ws = _repo(tmp_path / "proj", {"README": "hi\n"})
    with open(ws / "big.iso", "wb") as fh:
        fh.truncate(11 << 20)
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "true"}}]}, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "-t", "terminal", home=hermes_home, input="", cwd=str(ws), timeout=180)
    assert out.returncode == 0, out.stderr
    assert "not kept in the uncommitted-work checkpoint (larger than 10 MB): big.iso" in out.stderr + out.stdout


def test_destroyed_work_outlives_many_later_checkpoints(scripted, hermes_home, tmp_path):
    ws = _repo(tmp_path / "proj", {"f.py": "print(1)\n", "g.py": "x=1\n", "log.txt": "0\n", "stamp.txt": "0\n"})
    (ws / "f.py").write_text("print(1)  # three hours of edits\n")
    (ws / "notes.md").write_text("untracked notes\n")
    later = [f"echo {i} >> log.txt" if i % 2 else f"echo {i} > stamp.txt" for i in range(25)]
    results = chat_tool_results(scripted, hermes_home, ws, ["mv -f g.py f.py", "rm notes.md", *later],
                                extra="approvals:\n  mode: off\ncheckpoints:\n  max_snapshots: 20\n", timeout=400)
    assert all(r.get("exit_code") == 0 for r in results), results
    listed = run_hermes("checkpoints", "list", home=hermes_home, cwd=str(ws)).stdout
    for command, path in (("mv -f g.py f.py", "f.py"), ("rm notes.md", "notes.md")):
        line = next(ln for ln in listed.splitlines() if f"kept before: {command}" in ln)
        back = run_hermes("checkpoints", "restore", line.split()[0], "--path", path, home=hermes_home, cwd=str(ws))
        assert back.returncode == 0, back.stderr
    assert (ws / "f.py").read_text() == "print(1)  # three hours of edits\n"
    assert (ws / "notes.md").read_text() == "untracked notes\n"


def test_the_user_s_own_edits_put_back_by_the_watch_are_kept(scripted, hermes_home, tmp_path):
    """a69: while a command runs (a background process alive), the user edits AGENTS.md, writes a new CLAUDE.md
    and rewrites .hermes.md in their editor; the watch cannot tell them from the command's and puts the files
    back, but every displaced version is kept in the quarantine, named in the line and the session's end."""
    import threading
    import time

    ws = _repo(tmp_path / "proj", {"AGENTS.md": "# Agents\nUse pytest.\n", ".hermes.md": "old\n", "README": "x\n"})
    edits = {"AGENTS.md": "# Agents\nUse pytest.\nUSER EDIT: never push to main.\n", "CLAUDE.md": "USER NEW FILE\n",
             ".hermes.md": "USER REWRITE\n"}

    def user_edits() -> None:  # while `sleep 5` runs (its flag made), whatever the machine's load
        deadline = time.monotonic() + 150
        while not (ws / "started.flag").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1)
        for name, text in edits.items():
            (ws / name).write_text(text)

    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 30", "background": True}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "touch started.flag && sleep 5"}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo after"}}]}, {"content": "done"})
    editor = threading.Thread(target=user_edits)
    editor.start()
    out = run_hermes("chat", "-q", "go", "-t", "terminal", home=hermes_home, cwd=str(ws), timeout=180)
    editor.join()
    assert out.returncode == 0, out.stderr
    said = out.stderr + out.stdout
    copies = {p.name: p.read_text() for p in (hermes_home / "quarantine").rglob("*") if p.is_file()}
    for name, text in edits.items():
        if (ws / name).exists() and (ws / name).read_text() == text:
            continue  # not put back (the watch saw it as the user's): nothing to keep
        assert copies.get(name) == text, (name, copies, said)
        line = next(ln for ln in said.splitlines() if f"{name} was" in ln and "put back" in ln)
        assert "the version it replaced is kept as " + str(hermes_home / "quarantine") in line, line
    assert copies, said  # the case this test is about happened
    assert "version(s) displaced by put-backs this session are kept in " + str(hermes_home / "quarantine") in said


def test_ignored_outputs_and_nested_repositories_take_no_snapshot(scripted, hermes_home, tmp_path):
    """Controls: a clean tree whose commands write ignored outputs, or work in a nested repository of its own,
    has nothing of this repository's to keep: no checkpoint is taken."""
    ws = _repo(tmp_path / "proj", {"README": "hi\n", ".gitignore": "*.log\nbuild/\nvendor/\n"})
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git(nested, "init", "-q")
    (nested / "scratch.txt").write_text("theirs\n")
    results = chat_tool_results(scripted, hermes_home, ws, ["echo run >> run.log", "mkdir -p build && echo o > build/a.o",
                                                            "echo x >> run.log"])
    assert [r.get("exit_code") for r in results] == [0, 0, 0], results
    listed = run_hermes("checkpoints", "list", home=hermes_home, cwd=str(ws))
    assert "uncommitted changes kept" not in listed.stdout, listed.stdout
