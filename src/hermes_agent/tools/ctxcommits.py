"""Context files planted through git (red-team round 9 a36): confined code can write a repository's objects
and refs (commits are ordinary work), so `git hash-object` + `commit-tree` + `update-ref` can put an AGENTS.md
into HEAD without any file in the work tree, where the context watch looks. It lands later, unconfined: the
user's next checkout or `hermes -w`. At the session's first confined call the repositories' ref tips are noted;
at its end, the watched names (and SKILL.md) that commits made meanwhile add or change are recorded in the context-file
ledger as content nobody vouched for (unless the same content is vouched for at some path), and the loader
holds such a file back wherever it appears (memory/ctxledger.py `held`). git runs with gitsafe's config.
Every name git resolves to a commit is compared, not only ref tips (issue 19 ctx11): the pseudo-refs a later
`git reset --hard ORIG_HEAD` / `git merge FETCH_HEAD` / `git cherry-pick --continue` reads, every commit a reflog
names (`HEAD@{1}`, `stash@{2}`), the extra parents of stash-shaped commits (the index and untracked-files commits
`git stash pop` restores), refs/notes, refs/stash and refs/replace (compared with replacements off)."""

from __future__ import annotations

import logging
import os

from hermes_agent.tools.ctxguard import WATCHED

log = logging.getLogger(__name__)
MAX_FILES = 32
# context files, and skills (a repository's folder listed in skills.external_dirs: red-team round 9 a37)
_NAMES = frozenset({*(w.rsplit("/", 1)[-1] for w in WATCHED), "SKILL.md"})


# pseudo-refs: files in the git directory that later commands resolve (ORIG_HEAD after a reset, FETCH_HEAD...)
PSEUDO = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "BISECT_HEAD",
          "AUTO_MERGE")
_GIT = ("--no-replace-objects",)  # compare real commits: a refs/replace/X entry is itself a name to compare


def tips(root: str) -> dict[str, str] | None:
    """name -> commit of every name git resolves in the repository at work tree `root` (None: not one): refs and
    HEAD, the pseudo-refs, `reflog:SHA` for each commit a reflog names and `parent:SHA` for the second and later
    parents of those (a stash's index and untracked-files commits)."""
    from hermes_agent.gitsafe import run_git

    try:
        out = run_git(["show-ref", "--head"], cwd=root, prefix=_GIT, timeout=10)
        pseudo = run_git(["cat-file", "--batch-check"], cwd=root, prefix=_GIT, timeout=10,
                         input="".join(f"{p}^{{commit}}\n" for p in PSEUDO))
        logged = run_git(["rev-list", "--reflog", "--no-walk=unsorted", "--parents"], cwd=root, prefix=_GIT,
                         timeout=20)
    except (OSError, ValueError) as exc:
        log.debug("git show-ref in %s: %s", root, exc)
        return None
    if out.returncode not in (0, 1) or (out.returncode == 1 and out.stdout):
        return None
    found = {}
    for line in out.stdout.splitlines():
        sha, _, ref = line.partition(" ")
        if ref:
            found[ref] = sha
    for name, line in zip(PSEUDO, pseudo.stdout.splitlines(), strict=False):
        sha, _, kind = line.partition(" ")
        if kind.startswith("commit "):
            found[name] = sha
    for line in logged.stdout.splitlines() if logged.returncode == 0 else ():
        sha, *parents = line.split()
        found[f"reflog:{sha}"] = sha
        found.update((f"parent:{p}", p) for p in parents[1:])
    return found


def _watched(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in _NAMES


def _pairs(before: dict[str, str], after: dict[str, str]) -> list[tuple[str | None, str]]:
    """(old, new) commit pairs to compare: each name whose commit is new to the repository (not resolved by any
    name before), against the name's old commit or, for a name that is new, the old HEAD."""
    known = set(before.values())
    pairs: dict[tuple[str | None, str], None] = {}
    for ref, new in after.items():
        if new in known:
            continue
        old = before.get(ref) or before.get("HEAD")
        pairs[(old, new)] = None
    return list(pairs)


def committed(root: str, before: dict[str, str], after: dict[str, str]) -> list[tuple[str, bytes]]:
    """(path, content) of the watched names that the commits new in `after` add or change."""
    from hermes_agent.gitsafe import run_git

    out: list[tuple[str, bytes]] = []
    seen: set[tuple[str, bytes]] = set()
    for old, new in _pairs(before, after):
        if len(out) >= MAX_FILES:
            break
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=AMT", old, new] if old else \
            ["ls-tree", "-r", "-z", "--name-only", new]
        listed = run_git(args, cwd=root, prefix=_GIT, timeout=20)
        for path in [p for p in listed.stdout.split("\0") if p and _watched(p)][:MAX_FILES]:
            blob = run_git(["cat-file", "blob", f"{new}:{path}"], cwd=root, prefix=_GIT, timeout=10, text=False)
            if blob.returncode == 0 and (path, blob.stdout) not in seen:
                seen.add((path, blob.stdout))
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
