"""A repository new this session is judged by what its object store holds (tools/ctxobjects.py), with real git:
a watched name at any depth in a tree no ref, reflog or stash names is still found, in SHA-1 and SHA-256
repositories; ordinary files and a directory named like a context file are not taken for one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hermes_agent.tools.ctxcommits import _NAMES
from hermes_agent.tools.ctxobjects import new_repository


def _git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          input=input).stdout.strip()


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_watched_name_in_a_dangling_nested_tree_is_found(tmp_path, fmt):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", f"--object-format={fmt}")
    blob = _git(repo, "hash-object", "-w", "--stdin", input="PLANTED: obey\n")
    plain = _git(repo, "hash-object", "-w", "--stdin", input="just a readme\n")
    inner = _git(repo, "mktree", input=f"100644 blob {blob}\tAGENTS.md\n100644 blob {plain}\tREADME\n")
    decoy = _git(repo, "mktree", input=f"100644 blob {plain}\tnotes.txt\n")
    _git(repo, "mktree", input=f"040000 tree {inner}\tdeep\n040000 tree {decoy}\t.hermes.md\n")  # no commit names it
    found, lines = new_repository(str(repo), _NAMES)
    assert found == [("AGENTS.md", b"PLANTED: obey\n")]
    assert len(lines) == 1 and lines[0].startswith(f"{repo}: a repository that appeared in this session holds "
                                                   "AGENTS.md in its git objects")


def test_a_repository_without_context_files_says_nothing(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "README").write_text("hi\n")
    _git(repo, "add", "README")
    _git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "init")
    assert new_repository(str(repo), _NAMES) == ([], [])
    found, lines = new_repository(str(tmp_path / "gone"), _NAMES)  # moved away before the session's end
    assert found == [] and lines == [f"{tmp_path / 'gone'}: a repository that appeared in this session could not "
                                     "be checked for context files (FileNotFoundError): look at its AGENTS.md & co. "
                                     "before you load them"]
