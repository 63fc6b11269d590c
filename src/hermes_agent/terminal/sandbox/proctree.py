"""The processes below one process, read from the kernel's /proc/<pid>/task/<tid>/children (world-readable,
a non-dumpable launcher's too): what the run-later guard asks to know whether confined work outlived its
call (guard.py `watch`). Confined code cannot leave the tree: under bwrap its pid namespace's init, under
Landlock the keeper (a subreaper) adopts every orphan (setsid, double fork, `env -i`). Stdlib only."""

from __future__ import annotations

import os

LIMIT = 4096


def descendants(root: int) -> set[int] | None:
    """Every process below `root` (None: the kernel does not say, e.g. no CONFIG_PROC_CHILDREN)."""
    found: set[int] = set()
    todo = [root]
    while todo and len(found) < LIMIT:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                    kids = fh.read().split()
            except FileNotFoundError:
                if pid == root and tid == str(root) and os.path.isdir(f"/proc/{pid}"):
                    return None  # the file itself is missing: the kernel cannot tell
                continue
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


class Tree:
    """The processes below a launcher when it became ready (its own helpers); `grown()` says whether more live
    below it now: confined processes that outlived the call that started them."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.base = descendants(root) or set()

    def grown(self) -> bool:
        now = descendants(self.root)
        return now is None or bool(now - self.base)
