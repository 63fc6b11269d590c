"""Issue 19 (rt13 a69-a72), never lose the user's work, through the real `hermes chat -q`: a `-w` session's ignored
outputs keep its worktree (a70)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import model_config, run_hermes


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
