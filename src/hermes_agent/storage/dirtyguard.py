"""Keep uncommitted work before a confined command can destroy it (issue 19, rt7 a10): approval rules decide
when to ask, but `rm f`, `mv other f`, `os.unlink('f')` are ordinary commands. Before each terminal command
on the local backend, the git repository holding its working directory is checked for tracked files that
may hold uncommitted changes (gitindex.py: the index read as data and one lstat per tracked file, no
process); only when there are some, and they changed since the last snapshot, the work tree is checkpointed
into the shadow store (checkpoints.py), so `hermes checkpoints rollback` / `restore ID [PATH]` and /rollback
bring it back. A clean tree costs the stat walk; nothing is ever written into the user's repository."""

from __future__ import annotations

import logging
import os
import threading

from hermes_agent.storage.checkpoints import CheckpointStore
from hermes_agent.storage.gitindex import IndexCache, modified, repo_root

log = logging.getLogger(__name__)
REASON = "uncommitted changes kept before: "


class DirtyGuard:
    """`before(cwd)` snapshots the repository holding `cwd` when it has uncommitted tracked changes that no
    snapshot of ours holds yet. Never raises: a guard that fails leaves the command to run as before."""

    def __init__(self, store: CheckpointStore, *, stop: str | None = None, max_files: int = 50_000) -> None:
        self.store = store
        self.stop = stop if stop is not None else os.path.expanduser("~")
        self.max_files = max_files
        self._index = IndexCache()
        self._kept: dict[str, tuple] = {}
        self._lock = threading.Lock()

    def before(self, cwd: str, command: str = "") -> str | None:
        """The checkpoint id taken, or None (clean tree, already kept, not a repository, or a failure)."""
        try:
            return self._before(cwd, command)
        except Exception as exc:  # noqa: BLE001 - a safety net must never stop the command it guards
            log.warning("uncommitted-work snapshot of %s failed: %s", cwd, exc)
            return None

    def _before(self, cwd: str, command: str) -> str | None:
        found = repo_root(cwd, self.stop)
        if found is None:
            return None
        root, git_dir = found
        if root in ("/", os.path.realpath(self.stop)):
            return None
        parsed = self._index.entries(git_dir)
        if parsed is None or len(parsed[0]) > self.max_files:
            return None
        dirty = modified(root, *parsed)
        if not dirty:
            return None
        mark = tuple(dirty)
        with self._lock:
            if self._kept.get(root) == mark:
                return None
            line = " ".join(command.split())
            cid = self.store.snapshot(root, REASON + (line if len(line) <= 80 else line[:77] + "..."))
            self._kept[root] = mark
        return cid
