"""Keep uncommitted work before a confined command can destroy it (issue 19, rt7 a10, rt13 a72): approval
rules decide when to ask, but `rm f`, `mv other f`, `cat f > f`, `os.unlink('f')` are ordinary commands.
Before each terminal command on the local backend and wherever confined work enters (the sandbox guard's
`enter()` and each MCP tool call: terminal/base.py `keep_work`), the git repository holding the directory is
checked for work that no commit holds: tracked files that may hold uncommitted changes (gitindex.py: the
index read as data and one lstat per tracked file, no process) and untracked files that are not ignored
(one directory walk that lstats only the untracked names, pruning .git, ignored directories and the
store's own excludes). Only when some changed since the last snapshot (size, mtime, inode) is the work tree
checkpointed into the shadow store (checkpoints.py), so `hermes checkpoints rollback` / `restore ID [--path FILE]`
and /rollback bring it back. What is ignored is asked of git (one process) only when untracked names appear that
it has not judged yet. A file larger than the store's per-file cap is not kept, and the user is told once which. A
clean tree costs the stat walk; nothing is ever written into the user's repository."""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes_agent.storage.checkpoints import BASE_EXCLUDES, CheckpointStore
from hermes_agent.storage.gitindex import Entry, IndexCache, modified, repo_root

if TYPE_CHECKING:
    from hermes_agent.storage.treewatch import TreeWatch

log = logging.getLogger(__name__)
REASON = "uncommitted changes kept before: "
_PRUNED = frozenset(x.rstrip("/") for x in BASE_EXCLUDES if x.endswith("/"))


class DirtyGuard:
    """`before(cwd)` snapshots the repository holding `cwd` when it has uncommitted tracked changes or
    untracked (not ignored) files that no snapshot of ours holds yet. Never raises: a guard that fails leaves
    the command to run as before. `notice`: tells the user what was too large to keep."""

    def __init__(self, store: CheckpointStore, *, stop: str | None = None, max_files: int = 50_000,
                 notice: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.stop = stop if stop is not None else os.path.expanduser("~")
        self.max_files = max_files
        self.notice = notice
        self._index = IndexCache()
        self._kept: dict[str, tuple] = {}
        self._ignored: dict[str, set[str]] = {}
        self._asked: dict[str, set[str]] = {}  # the untracked names left after git was last asked what is ignored
        self._tracked: dict[str, tuple[list[Entry], frozenset[str]]] = {}
        self._told: set[str] = set()
        from hermes_agent.storage.handkept import HandKept

        self._hand = HandKept(notice)
        self._watches: dict[str, TreeWatch] = {}  # root -> its directories' inotify watches (treewatch.py)
        self._dirs: dict[str, tuple[int, tuple[list[str], list[str], int] | None]] = {}
        self._lock = threading.Lock()

    def before(self, cwd: str, command: str = "") -> str | None:
        """The checkpoint id taken, or None (nothing new to keep, not a repository, or a failure)."""
        try:
            with self._lock:  # one look at a time: a look and its watches (treewatch.py) go together
                return self._before(cwd, command)
        except Exception as exc:  # noqa: BLE001 - a safety net must never stop the command it guards
            log.warning("uncommitted-work snapshot of %s failed: %s", cwd, exc)
            return None

    def close(self) -> None:
        """The session ends: its watches go (treewatch.py)."""
        with self._lock:
            for watch in self._watches.values():
                watch.close()
            self._watches.clear()

    def root_of(self, cwd: str) -> str | None:
        """The work tree of the repository holding `cwd` (what `before` snapshots), or None."""
        found = repo_root(cwd, self.stop)
        return found[0] if found is not None else None

    def _before(self, cwd: str, command: str) -> str | None:
        found = repo_root(cwd, self.stop)
        root, git_dir = found if found is not None else (self._plain_root(cwd), "")  # no repository: all of it (c20)
        home = os.path.realpath(self.stop)
        if root == "/" or home == root or home.startswith(root.rstrip("/") + "/") or not os.path.isdir(root):
            return None
        if not git_dir and _holds(root, str(self.store.root)):  # a folder holding hermes's own home: not the user's
            return None
        watch = self._watches.get(root)
        if watch is not None and watch.quiet():  # nothing in the tree changed since the last look (treewatch.py)
            return None
        parsed = self._index.entries(git_dir) if git_dir else None
        parsed = parsed if parsed is not None else ([], 0)  # no index yet (`git init`, nothing added): all untracked
        if len(parsed[0]) > self.max_files:
            return None
        if watch is None:
            from hermes_agent.storage.treewatch import TreeWatch

            watch = self._watches[root] = TreeWatch()
        watch.begin()
        for folder in sorted({root, *(os.path.dirname(f"{root}/{e.path}") for e in parsed[0])}):
            watch.add(folder)  # before their files are stat'ed: what changes after is in the queue
        dirty = modified(root, *parsed)
        tracked = self._names(root, parsed[0])
        untracked = self._untracked(root, tracked)
        if untracked and {u[0] for u in untracked} != self._asked.get(root):  # names git has not judged yet
            self._ignored[root] = self.store.ignored(root)
            self._dirs.clear()
            untracked = self._untracked(root, tracked)
            self._asked[root] = {u[0] for u in untracked or ()}
        if untracked is None:
            self._tell_once(root, f"not kept: {root} holds more than {self.max_files} files")
            return None
        hand = self._hand.files(root, self._ignored.get(root, set()), watch.add)  # ignored, by hand (handkept.py)
        watch.end(not self._hand.cut)
        if not dirty and not untracked and not hand:
            return None
        mark = (tuple(dirty), tuple(untracked), tuple(hand))
        if self._kept.get(root) == mark:
            return None
        line = " ".join(command.split())
        cid = self.store.snapshot(root, REASON + (line if len(line) <= 80 else line[:77] + "..."), exact=True,
                                  pin=root not in self._kept, extra=[h[0] for h in hand])  # first: the user's
        self._kept[root] = mark
        self._tell_skipped(untracked)
        return cid

    def _plain_root(self, cwd: str) -> str:
        """The directory to keep when no repository holds `cwd`: the one kept before that holds it (a file
        tool's folder inside the workspace), else `cwd` itself. Its path as given: `snapshot(exact=True)` refuses
        it when a link lies on it (a folder the sandbox swapped for a link to ~/.ssh is never copied)."""
        path = os.path.abspath(cwd)
        for kept in self._kept:
            if path == kept or path.startswith(kept.rstrip("/") + "/"):
                return kept
        return path

    def _names(self, root: str, entries: list[Entry]) -> frozenset[str]:
        """The tracked names (kept while the parsed index is the same object: IndexCache's)."""
        hit = self._tracked.get(root)
        if hit is None or hit[0] is not entries:
            hit = self._tracked[root] = (entries, frozenset(e.path for e in entries))
            self._dirs.clear()  # listings were filtered by the old names
        return hit[1]

    def _untracked(self, root: str, tracked: frozenset[str]) -> list[tuple[str, int, int, int]] | None:
        """(path, size, mtime ns, inode) of each untracked, not ignored file or link below `root`, sorted; None
        past max_files names. Links are not followed; .git, nested repositories and ignored directories are
        not entered. A directory is read again only when its own stat changed (an entry added, removed or
        renamed) or the tracked or ignored names did, so a steady tree costs one lstat per directory and one
        per untracked file."""
        ignored = self._ignored.get(root, set())
        watch = self._watches[root]
        out: list[tuple[str, int, int, int]] = []
        stack, seen = [""], 0
        cache, lstat = self._dirs, os.lstat
        while stack:
            rel = stack.pop()
            where = f"{root}/{rel}" if rel else root
            try:
                key = lstat(where).st_ctime_ns  # any entry added, removed or renamed changes it
            except OSError:
                continue
            watch.add(where)
            hit = cache.get(where)
            found = hit[1] if hit is not None and hit[0] == key else self._listing(where, rel, key, tracked, ignored)
            if found is None:
                continue
            files, subdirs, count = found
            seen += count
            if seen > self.max_files:
                return None
            stack.extend(subdirs)
            for name in files:
                try:
                    st = lstat(f"{root}/{name}")
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        out.sort()
        return out

    def _listing(self, where: str, rel: str, key: int, tracked: frozenset[str],
                 ignored: set[str]) -> tuple[list[str], list[str], int] | None:
        """(untracked not ignored names, subdirectories to enter, entries) of directory `rel` (at `where`); None
        when it is gone or a nested repository / submodule (its own work). Cached under `key`, its ctime (the
        cache is cleared when the tracked or ignored names change)."""
        try:
            with os.scandir(where) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except OSError:
            return None
        files, subdirs = [], []
        for entry, is_dir in entries:
            name = f"{rel}/{entry}" if rel else entry
            if is_dir:
                if entry != ".git" and entry not in _PRUNED and name + "/" not in ignored:
                    subdirs.append(name)
            elif name not in tracked and name not in ignored:
                files.append(name)
        nested = bool(rel) and any(entry == ".git" for entry, _ in entries)
        result = None if nested else (files, subdirs, len(entries))
        self._dirs[where] = (key, result)
        return result

    def _tell_once(self, key: str, line: str) -> None:
        if key not in self._told and self.notice is not None:
            from hermes_agent.termsafe import one_line

            self._told.add(key)
            self.notice(one_line(line))

    def _tell_skipped(self, untracked: list[tuple[str, int, int, int]]) -> None:
        """Name, once a session, each untracked file the snapshot could not keep (over the per-file cap)."""
        cap = self.store.max_file_bytes
        big = [n for n, size, _m, _i in untracked if size > cap and n not in self._told]
        if not big or self.notice is None:
            return
        from hermes_agent.termsafe import one_line

        self._told.update(big)
        shown = ", ".join(one_line(n) for n in big[:5]) + (f" (+{len(big) - 5} more)" if len(big) > 5 else "")
        self.notice(f"not kept in the uncommitted-work checkpoint (larger than {cap // (1 << 20)} MB): {shown}")


def _holds(root: str, path: str) -> bool:
    path = os.path.realpath(path)
    return path == root or path.startswith(root.rstrip("/") + "/")
