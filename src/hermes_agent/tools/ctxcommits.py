"""Context files planted through git (red-team round 9 a36): confined code can write a repository's objects
and refs (commits are ordinary work), so `git hash-object` + `commit-tree` + `update-ref` can put an AGENTS.md
into HEAD without any file in the work tree, where the context watch looks. It lands later, unconfined: the
user's next checkout or `hermes -w`. At the session's first confined call the repositories' ref tips are noted;
at its end, the watched names (and SKILL.md) that commits made meanwhile add or change are recorded in the context-file
ledger as content nobody vouched for (unless the same content is vouched for at some path), and the loader
holds such a file back wherever it appears (memory/ctxledger.py `held`). git runs with gitsafe's config."""

from __future__ import annotations

import logging
import os

from hermes_agent.tools.ctxguard import WATCHED

log = logging.getLogger(__name__)
MAX_FILES = 32
# context files, and skills (a repository's folder listed in skills.external_dirs: red-team round 9 a37)
_NAMES = frozenset({*(w.rsplit("/", 1)[-1] for w in WATCHED), "SKILL.md"})


def tips(root: str) -> dict[str, str] | None:
    """ref name -> commit of every ref and HEAD of the repository at work tree `root` (None: not one)."""
    from hermes_agent.gitsafe import run_git

    try:
        out = run_git(["show-ref", "--head"], cwd=root, timeout=10)
    except (OSError, ValueError) as exc:
        log.debug("git show-ref in %s: %s", root, exc)
        return None
    found = {}
    for line in out.stdout.splitlines():
        sha, _, ref = line.partition(" ")
        if ref:
            found[ref] = sha
    return found


def _watched(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in _NAMES


def committed(root: str, before: dict[str, str], after: dict[str, str]) -> list[tuple[str, bytes]]:
    """(path, content) of the watched names that the commits new in `after` add or change."""
    from hermes_agent.gitsafe import run_git

    out: list[tuple[str, bytes]] = []
    for ref, new in after.items():
        old = before.get(ref) or before.get("HEAD")
        if new == old or len(out) >= MAX_FILES:
            continue
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=AMT", old, new] if old else \
            ["ls-tree", "-r", "-z", "--name-only", new]
        listed = run_git(args, cwd=root, timeout=20)
        for path in [p for p in listed.stdout.split("\0") if p and _watched(p)][:MAX_FILES]:
            blob = run_git(["cat-file", "blob", f"{new}:{path}"], cwd=root, timeout=10, text=False)
            if blob.returncode == 0:
                out.append((path, blob.stdout))
    return out


def record(home: str, roots_before: dict[str, dict[str, str]]) -> list[str]:
    """At session end: note in the ledger what commits of this session planted; lines for the user."""
    from hermes_agent.memory.ctxledger import digest, note_committed

    lines, items = [], []
    for root, before in roots_before.items():
        after = tips(root)
        if not after or after == before:
            continue
        for path, data in committed(root, before, after):
            items.append(digest(data))
            lines.append(f"{os.path.join(root, path)}: a commit of this session's commands adds or changes it; "
                         "it will not be loaded into a prompt until you save it yourself after checking it out")
    if items:
        note_committed(home, items)
    return lines
