"""The files git ignores that a user still wrote by hand (notes/ or .env listed in .gitignore, a scratch.md
under `*.md` in info/exclude): the dirty guard (dirtyguard.py) keeps them in its snapshots too (issue 19, rt14b
c20), since a confined command empties them as easily as a tracked file. What is generated is told apart
without reading it: directories of dependencies, environments, caches and build output (paths.GENERATED_DIRS,
the sandbox guard's list) are not entered; a file over `FILE_MAX` or an ignored directory holding more than
`DIR_MAX` files is output, not notes; logs, object files, editors' swap files (`_OUTPUT`) and compiled and OS
files (checkpoints.BASE_EXCLUDES' file patterns) are left out. Budgets per session: `FILES` new copies, `BYTES` bytes, `WALK_S` seconds per look; when one stops
the copying the user is told once, in one line. A steady tree costs one lstat per kept file and per directory.
Links are never followed."""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Callable

from hermes_agent.paths import GENERATED_DIRS
from hermes_agent.storage.checkpoints import BASE_EXCLUDES

FILE_MAX = 1 << 20  # bytes: a larger ignored file is data or output (a database, a log, an archive)
DIR_MAX = 500  # files below one ignored directory past which it is taken as generated (a cache, a build)
FILES = 5_000  # new or changed copies per session
BYTES = 64 << 20  # their bytes per session
WALK_S = 0.25  # seconds one look may take
_NOT_NOTES = tuple(p for p in BASE_EXCLUDES if not p.endswith("/") and not p.startswith(".env"))  # *.pyc, .DS_Store...
_DIRS = GENERATED_DIRS | {p.rstrip("/") for p in BASE_EXCLUDES if p.endswith("/")} | {"out"}  # + depwatch's BUILD
# what compilers, linkers, loggers and editors write (a program's log, an object file, a swap file)
_OUTPUT = (".log", ".o", ".obj", ".a", ".so", ".dylib", ".dll", ".exe", ".class", ".pyo", ".tmp", ".swp", ".pid")

Found = tuple[str, int, int, int]  # (path relative to the root, size, mtime ns, inode)


class HandKept:
    """`files(root, ignored)`: the hand-written files among what git ignores below `root` (`ignored`: git's
    `ls-files --others --ignored --directory` names, directories with a trailing "/"), within the budgets."""

    def __init__(self, notice: Callable[[str], None] | None = None) -> None:
        self.notice = notice
        self.spent_files = 0
        self.spent_bytes = 0
        self._seen: dict[str, tuple[int, int]] = {}  # absolute path -> (size, mtime) counted against the budget
        self._told: set[str] = set()
        self.cut = False  # the last look was cut short by its time budget
        self._generated: dict[str, int] = {}  # ignored directory -> its ctime when it was found to hold output

    def files(self, root: str, ignored: set[str], seen: Callable[[str], None] = lambda _d: None) -> list[Found]:
        """`seen(dir)`: each directory listed, before its files are stat'ed (treewatch.py); `cut` says after
        whether a budget of time stopped the look."""
        deadline = time.monotonic() + WALK_S
        self.cut = False
        out: list[Found] = []
        for name in sorted(ignored):
            if _DIRS.intersection(name.rstrip("/").split("/")):
                continue
            if time.monotonic() > deadline:
                break
            found = self._walk(root, name.rstrip("/"), deadline, seen) if name.endswith("/") else _one(root, name)
            out.extend(f for f in found if self._within_budget(root, f))
        if time.monotonic() > deadline:
            self.cut = True
            self._tell("time", root, f"looking took more than {WALK_S:g} s")
        out.sort()
        return out

    def _walk(self, root: str, top: str, deadline: float, seen: Callable[[str], None]) -> list[Found]:
        """The files below ignored directory `top`; [] when it holds more than DIR_MAX (generated output) or
        a repository of its own (kept by its own snapshots)."""
        where = os.path.join(root, top)
        try:
            ctime = os.lstat(where).st_ctime_ns
        except OSError:
            return []
        if self._generated.get(where) == ctime:
            return []
        out: list[Found] = []
        stack = [top]
        while stack:
            rel = stack.pop()
            seen(os.path.join(root, rel))
            try:
                with os.scandir(os.path.join(root, rel)) as it:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            except OSError:
                continue
            for entry, is_dir in entries:
                if is_dir:
                    if entry in (".git", ".hg", ".svn"):
                        return []
                    if entry not in _DIRS:
                        stack.append(f"{rel}/{entry}")
                else:
                    out.extend(_one(root, f"{rel}/{entry}"))
            if len(out) > DIR_MAX:
                self._generated[where] = ctime
                return []
            if time.monotonic() > deadline:
                return []
        return out

    def _within_budget(self, root: str, found: Found) -> bool:
        path, size, mtime, _ino = found
        key = f"{root}/{path}"
        if self._seen.get(key) == (size, mtime):
            return True
        if self.spent_files >= FILES or self.spent_bytes + size > BYTES:
            self._tell("budget", root, f"this session's budget of {FILES} files / {BYTES >> 20} MB is spent")
            return False
        self._seen[key] = (size, mtime)
        self.spent_files += 1
        self.spent_bytes += size
        return True

    def _tell(self, kind: str, root: str, why: str) -> None:
        if kind in self._told or self.notice is None:
            return
        from hermes_agent.termsafe import one_line

        self._told.add(kind)
        self.notice(f"stopped keeping copies of files git ignores or no repository holds in {one_line(root)}: "
                    f"{why} (commit them, or keep a copy yourself)")


def _one(root: str, rel: str) -> list[Found]:
    base = rel.rsplit("/", 1)[-1]
    if base.endswith(_OUTPUT) or any(fnmatch.fnmatchcase(base, p) for p in _NOT_NOTES):
        return []
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_size > FILE_MAX:
        return []
    return [(rel, st.st_size, st.st_mtime_ns, st.st_ino)]
