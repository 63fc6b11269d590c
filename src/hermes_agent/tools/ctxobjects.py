"""Context files in a repository that appeared mid-session, judged by content (red-team round 12 a26): confined
code can `git init` a repository at any depth (or move one in, or make a bare one and `git worktree add` it) and
put an AGENTS.md into its objects by plumbing, nothing in the work tree. Nothing in it was there at the session's
start, so every watched name in every tree its object store holds (reachable or not: no ref, reflog, stash or
pseudo-ref walk can miss one) is content nobody vouched for. Two git processes list the store's trees and read
them (each tree once, however many commits share it); a tree is parsed only when a watched name occurs in it.
Cheaper than walking every name's commit on a large store (bench/bench_ctxcommits.py)."""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)
MAX_TREES = 500_000  # past it the rest is not read: the user is told
CHUNK = 20_000  # trees read per git process (bounds memory)
MAX_BLOBS = 256
_GIT = ("--no-replace-objects",)


def new_repository(root: str, names: frozenset[str]) -> tuple[list[tuple[str, bytes]], list[str]]:
    """(name, content) of every watched name in the trees of the repository at `root` (a work tree, or a bare
    repository's git directory), and lines for the user. Gone or unreadable: nothing (its files went with it)."""
    import subprocess

    try:
        return _scan(root, names)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        log.warning("could not look into the new repository %s: %s", root, exc)
        return [], [f"{root}: a repository that appeared in this session could not be checked for context files "
                    f"({exc.__class__.__name__}): look at its AGENTS.md & co. before you load them"]


def _scan(root: str, names: frozenset[str]) -> tuple[list[tuple[str, bytes]], list[str]]:
    from hermes_agent.gitsafe import run_git

    listing = run_git(["cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objecttype) %(objectname)"],
                      cwd=root, prefix=_GIT, timeout=120)
    if listing.returncode != 0:
        log.debug("git cat-file in %s: %s", root, listing.stderr.strip())
        return [], []
    trees = [ln[5:] for ln in listing.stdout.splitlines() if ln.startswith("tree ")]
    lines = []
    if len(trees) > MAX_TREES:
        lines.append(f"{root}: a repository that appeared in this session holds {len(trees)} trees; the first "
                     f"{MAX_TREES} were checked for context files: look at its AGENTS.md & co. before you load them")
    wanted = re.compile(b" (" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + b")\0")
    blobs: dict[str, str] = {}
    width = len(trees[0]) // 2 if trees else 20  # the object format: 40 hex digits (SHA-1) or 64
    for start in range(0, min(len(trees), MAX_TREES), CHUNK):
        for data in _contents(root, trees[start:start + CHUNK], "tree"):
            if wanted.search(data):
                blobs.update((oid, name) for oid, name in _entries(data, names, width) if len(blobs) < MAX_BLOBS)
    found = list(zip(blobs.values(), _contents(root, list(blobs), "blob"), strict=False))
    shown = sorted({name for name, _ in found})
    if shown:
        lines.append(f"{root}: a repository that appeared in this session holds {', '.join(shown)} in its git "
                     "objects; that content will not be loaded into a prompt until you save it yourself after "
                     "checking it out")
    return found, lines


def _contents(root: str, oids: list[str], kind: str) -> list[bytes]:
    """The content of each object in `oids` (of type `kind`), read by one git process; stops at the first that
    is missing or of another type."""
    if not oids:
        return []
    from hermes_agent.gitsafe import run_git

    raw = run_git(["cat-file", "--batch"], cwd=root, prefix=_GIT, timeout=120, text=False,
                  input="".join(f"{o}\n" for o in oids).encode()).stdout
    out, pos = [], 0
    for _ in oids:
        end = raw.find(b"\n", pos)
        head = raw[pos:end].split(b" ") if end >= 0 else []
        if len(head) != 3 or head[1] != kind.encode() or not head[2].isdigit():
            break
        size = int(head[2])
        out.append(raw[end + 1:end + 1 + size])
        pos = end + 2 + size
    return out


def _entries(tree: bytes, names: frozenset[str], width: int) -> list[tuple[str, str]]:
    """(blob id, name) of the regular-file entries of raw tree `tree` whose name is in `names`. Entries are
    `<mode> <name>\\0<id>`, the id `width` bytes (20: SHA-1, 32: SHA-256)."""
    out, pos, size = [], 0, len(tree)
    while pos < size:
        space = tree.find(b" ", pos)
        nul = tree.find(b"\0", space)
        if space < 0 or nul < 0:
            break
        mode, name = tree[pos:space], tree[space + 1:nul].decode("utf-8", "surrogateescape")
        if mode.startswith(b"100") and name in names:
            out.append((tree[nul + 1:nul + 1 + width].hex(), name))
        pos = nul + 1 + width
    return out
