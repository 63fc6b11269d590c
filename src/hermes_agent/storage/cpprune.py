"""Which checkpoints a directory's chain keeps when it grows past `max_snapshots` (issue 19, rt13 a71): by
content, not only by count. The newest `max_snapshots` are kept, and so is every older one that holds a file
version no later checkpoint holds (an edit a command destroyed, kept by the dirty guard), for
`KEEP_UNIQUE_DAYS` after it was taken and up to `HARD_CAP_FACTOR` x `max_snapshots` in all. A version that a
later one holds grown (a log appended to: the old bytes are a prefix of the new) counts as held. Git stores each
distinct file content once (blobs are content-addressed), so keeping more checkpoints of a mostly unchanged
tree costs little. One `git log --raw` reads the chain; `cat-file` reads only the blobs a prefix check needs."""

from __future__ import annotations

import time
from collections.abc import Callable

KEEP_UNIQUE_DAYS = 7
HARD_CAP_FACTOR = 10
_PREFIX_CHECK_BYTES = 1 << 20
_ZERO = "0" * 40


def chain(git: Callable[..., str], ref: str) -> list[tuple[str, str, str, list[tuple[str, str, str, str]]]]:
    """(id, tree, author time, [(status, path, old blob, new blob)]) of each commit, newest first. Messages
    are not read here: a message is text a command can choose, and must never read as a change."""
    out = git("log", ref, "--raw", "--no-renames", "--no-abbrev", "--format=%x1e%H %T %at")
    items = []
    for record in out.split("\x1e")[1:]:
        head, _, raw = record.partition("\n")
        cid, tree, when = head.split()
        changes = []
        for line in raw.splitlines():
            if line.startswith(":") and "\t" in line:
                meta, path = line[1:].split("\t", 1)
                fields = meta.split()
                if len(fields) >= 5:
                    changes.append((fields[4][:1], path, fields[2], fields[3]))
        items.append((cid, tree, when, changes))
    return items


def keep(git: Callable[..., str], commits: list, max_snapshots: int, now: float | None = None,
         pinned: frozenset[str] | set[str] = frozenset()) -> list[int]:
    """Indices (newest first) of `commits` (from `chain`) to keep. A commit holds a version no later one
    holds when its child changed or removed a file and that content (at any path: a move keeps it) is not
    brought back by a newer commit. Past the hard cap the oldest go first, except a commit whose tree is
    `pinned` (the user's work before a session's confined work: confined work cannot flood those out, rt14b
    c03)."""
    now = time.time() if now is None else now
    kept = list(range(min(len(commits), max_snapshots)))
    introduced: set[str] = set()  # contents that commits newer than the child brought in
    candidates: list[tuple[int, list[tuple[str, str]]]] = []
    for i in range(1, len(commits)):
        if i >= 2:
            introduced.update(new for _s, _p, _old, new in commits[i - 2][3] if new != _ZERO)
        child = commits[i - 1][3]
        moved = {new for _s, _p, _old, new in child}
        lost = [(old, new) for status, _path, old, new in child
                if status in ("M", "D", "T") and old != _ZERO and old not in introduced and old not in moved]
        if i >= max_snapshots and lost and now - float(commits[i][2] or 0) <= KEEP_UNIQUE_DAYS * 86400:
            candidates.append((i, lost))
    grown = _grown(git, [pair for _i, lost in candidates for pair in lost])
    for i, lost in candidates:
        if any(pair not in grown for pair in lost):
            kept.append(i)
    kept.sort()
    first = [i for i in kept if commits[i][1] in pinned][:max_snapshots * HARD_CAP_FACTOR]
    rest = [i for i in kept if commits[i][1] not in pinned]
    return sorted(first + rest[:max_snapshots * HARD_CAP_FACTOR - len(first)])


def _grown(git: Callable[..., str], pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (old, new) blob pairs where the old bytes are a prefix of the new ones (both small)."""
    wanted = sorted({b for old, new in pairs if new != _ZERO for b in (old, new)})
    if not wanted:
        return set()
    sizes = {}
    for line in git("cat-file", "--batch-check", stdin="\n".join(wanted).encode() + b"\n").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and int(parts[2]) <= _PREFIX_CHECK_BYTES:
            sizes[parts[0]] = int(parts[2])
    small = [(old, new) for old, new in pairs if old in sizes and new in sizes and sizes[old] <= sizes[new]]
    if not small:
        return set()
    need = sorted({x for pair in small for x in pair})
    raw = git("cat-file", "--batch", stdin="\n".join(need).encode() + b"\n").encode("utf-8", "surrogateescape")
    data, pos = {}, 0
    for blob in need:  # "<id> blob <size>\n<bytes>\n", in the order asked
        end = raw.index(b"\n", pos)
        size = int(raw[pos:end].split()[2])
        data[blob] = raw[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return {(old, new) for old, new in small if data[new].startswith(data[old])}
