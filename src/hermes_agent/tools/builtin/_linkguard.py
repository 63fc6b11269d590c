"""Hard links to private files (issue 19): a regular file in the workspace with more than one link may be the
same inode as `$HERMES_HOME/.env` or `~/.ssh/id_rsa` (a link the user or an earlier tool made; a confined
command cannot make one, it has no access to the target). The file tools refuse such a file: its
(st_dev, st_ino) is looked up in the set of inodes of the private places the sandbox hides (every Hermes home
root, the dot-entries of HOME the policy denies, the secret paths), built lazily on the first read of a file
with st_nlink > 1 and kept a minute. Only files that themselves have more than one link are kept in the set.
Package stores (pnpm's content-addressed store hard-links into node_modules) are not walked: their files are
what node_modules legitimately shares. Stdlib only."""

from __future__ import annotations

import logging
import os
import stat as stat_mod
import threading
import time

from hermes_agent.approval.policy import PathPolicy

log = logging.getLogger(__name__)

# directories of package managers' stores and caches (outside the Hermes home): their files are linked into
# projects on purpose (pnpm, uv and pip caches, cargo's registry) and hold no secret of the user's
STORES = frozenset({"node_modules", "store", ".pnpm-store", "pnpm", "_cacache", ".cache", "cache", "Cache",
                    "registry", "uv", "pip", "wheels", "toolchains", ".rustup", ".npm", ".cargo", ".yarn"})
BUDGET = 50_000  # entries looked at per build; past it the rest is not walked (logged)
TTL_S = 60.0
_BUILT: dict[PathPolicy, tuple[float, dict[tuple[int, int], str]]] = {}
_LOCK = threading.Lock()


def linked_secret(policy: PathPolicy, st: os.stat_result) -> str | None:
    """The private file a regular file with stat `st` is a hard link of, or None. Free for st_nlink == 1."""
    if not stat_mod.S_ISREG(st.st_mode):
        return None
    key: tuple[int, int] | None = (st.st_dev, st.st_ino)
    if st.st_nlink < 2:  # a copy the sandbox's hard-link walk made apart (terminal/sandbox/hardlinks.py)?
        from hermes_agent.terminal.sandbox.hardlinks import origin

        key = origin(st)
        if key is None:
            return None
    return _inodes(policy).get(key)


def _inodes(policy: PathPolicy) -> dict[tuple[int, int], str]:
    with _LOCK:
        hit = _BUILT.get(policy)
        if hit is None or time.monotonic() - hit[0] > TTL_S:
            hit = _BUILT[policy] = (time.monotonic(), _build(policy))
        return hit[1]


def _private_roots(policy: PathPolicy) -> list[tuple[str, bool]]:
    """(place, is a Hermes home root): the secret paths, the Hermes home roots, HOME's denied dot-entries."""
    out = [(p, False) for p in policy.secrets if not any(c in p for c in "*?[")]
    out += [(r, i < 2) for i, r in enumerate(policy.hermes_roots)]
    try:
        names = sorted(os.listdir(policy.home))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(policy.home, name)
        if name.startswith(".") and name not in STORES and not policy.check_read(path).allowed:
            out.append((path, False))
    return out


def _build(policy: PathPolicy) -> dict[tuple[int, int], str]:
    from hermes_agent.terminal.sandbox.hardlinks import former_inodes

    found: dict[tuple[int, int], str] = {}
    budget = [BUDGET]
    former = former_inodes()  # private files a workspace copy was made apart from: one link left now
    seen: set[str] = set()
    for root, hermes in _private_roots(policy):
        if root in seen:
            continue
        seen.add(root)
        _walk(root, hermes, found, budget, 0, former)
        if budget[0] <= 0:
            log.warning("hard-link check: more than %d private entries; the rest is not looked at", BUDGET)
            break
    return found


def _walk(path: str, hermes: bool, found: dict[tuple[int, int], str], budget: list[int], depth: int,
          former: frozenset[tuple[int, int]]) -> None:
    budget[0] -= 1
    if budget[0] <= 0 or depth > 12:
        return
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat_mod.S_ISREG(st.st_mode):
        if st.st_nlink > 1 or (st.st_dev, st.st_ino) in former:
            found.setdefault((st.st_dev, st.st_ino), path)
        return
    if not stat_mod.S_ISDIR(st.st_mode):
        return
    try:
        with os.scandir(path) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError:
        return
    for name, is_dir in entries:
        if is_dir and not hermes and name in STORES:
            continue
        _walk(os.path.join(path, name), hermes, found, budget, depth + 1, former)
