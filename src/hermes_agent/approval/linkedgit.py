"""The git directory of a workspace that lives OUTSIDE it (layer 2, stdlib + nofollow): a `git worktree add`
checkout (`.git` is a file naming <main>/.git/worktrees/<name>, whose objects and refs are in the main
repository's common dir) or a submodule checkout (`.git` names <super>/.git/modules/<name>). Without these, git
fails inside the sandbox (`fatal: not a git repository`, rt14b c26b). Granted: the worktree's own git directory
and the common dir's objects/, refs/ and logs/ writable, the common dir readable; hooks, info, config stay
read-only as in any repository (terminal/sandbox/views.git_paths), loose objects are judged (gitobjects.py),
nothing of the main checkout's files is opened.

The `.git` file lies in the workspace, which confined work can write (boundary rule): a git directory is only
granted when a file OUTSIDE the workspace names this checkout back: the worktree's `gitdir` file, or the
submodule's `core.worktree`."""

from __future__ import annotations

import os

from hermes_agent.nofollow import read_regular_or_none
from hermes_agent.paths import is_under

COMMON_WRITABLE = ("objects", "refs", "logs")


def _text(path: str) -> str:
    data = read_regular_or_none(path, 4096)
    return os.fsdecode(data).strip() if data else ""


def _target(base: str, text: str) -> str:
    return os.path.realpath(os.path.join(base, os.path.expanduser(text)))


def outside_gitdir(workspace: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(readable, writable) paths for the git directory of `workspace` when it lies outside the workspace and
    names the workspace back; ((), ()) otherwise."""
    ws = os.path.realpath(workspace)
    dot = os.path.join(ws, ".git")
    text = _text(dot)
    if not text.lower().startswith("gitdir:"):
        return (), ()
    gd = _target(ws, text.split(":", 1)[1].strip())
    if is_under(gd, ws) or not os.path.isdir(gd) or os.path.islink(gd):
        return (), ()
    common_text = _text(os.path.join(gd, "commondir"))
    if common_text:  # a linked worktree: <common>/worktrees/<name>, whose `gitdir` names <ws>/.git
        common = _target(gd, common_text)
        back = _text(os.path.join(gd, "gitdir"))
        if os.path.dirname(gd) != os.path.join(common, "worktrees") or not back or _target(gd, back) != dot:
            return (), ()
        writable = [os.path.join(common, n) for n in COMMON_WRITABLE]
        return (common,), (gd, *(p for p in writable if os.path.isdir(p) and not os.path.islink(p)))
    named = [_target(gd, value) for value in _worktree_values(os.path.join(gd, "config"))]
    if "/modules/" not in gd + "/" or not named or named[-1] != ws:  # a submodule: core.worktree names <ws>
        return (), ()
    return (), (gd,)


def _worktree_values(config: str) -> list[str]:
    """The `worktree = ...` values of a git config file (core.worktree of a submodule's git directory)."""
    data = os.fsdecode(read_regular_or_none(config, 65536) or b"")
    out = []
    for line in data.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() == "worktree":
            out.append(value.strip().strip('"'))
    return out
