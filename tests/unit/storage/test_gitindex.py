"""storage/gitindex.py against indexes written by the real git: versions 2, 3 (intent-to-add) and 4, skip-worktree
and conflicted entries, worktrees' `.git` files, and what the sandbox could plant instead of an index."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from hermes_agent.storage.gitindex import IndexCache, modified, parse_index, repo_root


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    (root / "src" / "deep").mkdir(parents=True)
    for name in ("a.txt", "src/m.py", "src/deep/x.py", "src/deep/y.py", "b name.md"):
        (root / name).write_text("v1\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    old = time.time() - 60  # older than the index: no "racily clean" entry
    for p in root.rglob("*"):
        if ".git" not in p.parts:
            os.utime(p, (old, old))
    _git(root, "update-index", "--refresh")
    return root


def _dirty(root: Path) -> list[str]:
    found = repo_root(str(root / "src"))
    assert found is not None
    parsed = IndexCache().entries(found[1])
    assert parsed is not None
    return sorted(p for p, _, _ in modified(found[0], *parsed))


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_each_index_version_lists_tracked_files_and_finds_the_modified_ones(repo, version):
    _git(repo, "update-index", "--index-version", version)
    if version == "3":
        (repo / "new.txt").write_text("n\n")
        _git(repo, "add", "-N", "new.txt")  # intent-to-add: an extended-flags entry
    data = (repo / ".git" / "index").read_bytes()
    names = sorted(e.path for e in parse_index(data))
    assert {"a.txt", "b name.md", "src/deep/x.py", "src/deep/y.py", "src/m.py"} <= set(names)
    assert _dirty(repo) == ([] if version != "3" else ["new.txt"])
    (repo / "src/deep/y.py").write_text("v1 and two hours of work\n")
    (repo / "a.txt").unlink()  # deleted: nothing uncommitted to lose
    assert _dirty(repo) == (["src/deep/y.py"] if version != "3" else ["new.txt", "src/deep/y.py"])


def test_a_same_size_edit_within_the_same_second_is_still_seen(repo):
    before = os.stat(repo / "src/m.py")
    (repo / "src/m.py").write_text("v2\n")
    os.utime(repo / "src/m.py", ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert _dirty(repo) == ["src/m.py"]


def test_skip_worktree_entries_and_a_worktree_git_file(repo, tmp_path):
    _git(repo, "update-index", "--skip-worktree", "a.txt")
    (repo / "a.txt").write_text("local only\n")
    assert _dirty(repo) == []
    wt = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", str(wt))
    old = time.time() - 60
    for p in (q for q in wt.rglob("*") if q.name != ".git"):
        os.utime(p, (old, old))
    _git(wt, "update-index", "--refresh")
    (wt / "src/m.py").write_text("work in the worktree\n")
    found = repo_root(str(wt / "src" / "deep"))
    assert found is not None and found[0] == str(wt) and found[1].startswith(str(repo / ".git" / "worktrees"))
    parsed = IndexCache().entries(found[1])
    assert parsed is not None and [p for p, _, _ in modified(found[0], *parsed)] == ["src/m.py"]


def test_what_the_sandbox_could_put_there_is_no_index(repo):
    index = repo / ".git" / "index"
    index.unlink()
    os.mkfifo(index)  # a FIFO would block a plain open
    assert IndexCache().entries(str(repo / ".git")) is None
    index.unlink()
    index.symlink_to("/dev/zero")
    assert IndexCache().entries(str(repo / ".git")) is None
    index.unlink()
    index.write_bytes(b"DIRC\x00\x00\x00\x02\x00\x00\x00\x05" + b"\x00" * 30)  # claims 5 entries, holds none
    assert IndexCache().entries(str(repo / ".git")) is None
    index.write_bytes(b"DIRC\x00\x00\x00\x07\x00\x00\x00\x00")
    assert IndexCache().entries(str(repo / ".git")) is None


def test_no_repository_above(tmp_path):
    (tmp_path / "plain").mkdir()
    assert repo_root(str(tmp_path / "plain"), stop=str(tmp_path)) is None
