"""Dependency and build directories in a tainted turn (rt14 b06, b13; issue 19): the code in a workspace venv's
site-packages, in node_modules and in build outputs (build/, dist/, target/, out/) is what the user's next
`pytest`, `node app.js` or `make run` loads, but the run-later guard's name-based looks skip those trees
(they are huge, and installs rewrite them). While the conversation has taken in untrusted content, a file
there that a command changes and no package manager vouches for is moved to the quarantine:

- site-packages: kept when a RECORD of that site-packages lists it with its sha256 (pip, uv, poetry write it
  so); `__pycache__` and `*.dist-info` metadata are not judged here (entry points: depcode.py);
- node_modules: kept when the package manager's own state file of that node_modules changed in the same
  command (`.package-lock.json`, `.modules.yaml`, `.yarn-state.yml`, `.yarn-integrity`: npm, pnpm, yarn ran);
  `.cache/` is left to the tools that write it;
- build outputs: never (the build makes them again; "which tool wrote it" cannot be told after the fact).
A removed file means a reinstall or a rebuild, said in the line; that cost falls on tainted turns only.

Cost: the trees are walked once, when the session is first tainted (inotify(7) watches, `BUDGET` directories;
the rest is said once); after that a check is one read of the kernel's queue. Stdlib only."""

from __future__ import annotations

import os
import stat as st
from collections.abc import Callable, Iterable

from hermes_agent.terminal.sandbox import depcode
from hermes_agent.terminal.sandbox.deepwatch import _IN_CLOEXEC, _IN_NONBLOCK, _libc, read_events

BUDGET = 20_000  # directories watched
BUILD = frozenset({"build", "dist", "target", "out"})
_MASK = 0x2 | 0x4 | 0x8 | 0x80 | 0x100  # IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE
_ISDIR, _IGNORED = 0x40000000, 0x8000
_PLAIN = 0x80 | 0x100 | 0x01000000  # IN_MOVED_TO, IN_CREATE, IN_ONLYDIR: a directory on the way
_NPM_STATE = (".package-lock.json", ".modules.yaml", ".yarn-state.yml", ".yarn-integrity")
_NOT_ENTERED = frozenset({".git", ".hg", ".svn", "site-packages", "dist-packages", "__pycache__", ".tox", ".nox"})
_DEPTH = 4  # how deep below a workspace node_modules/ and build outputs are looked for
_LIMIT = 1 << 20  # bytes of a removed file saved in the quarantine
Stash = Callable[[str, "bytes | None"], str]


class DepWatch:
    """See the module doc. `arm` once the session is tainted (before the command runs), `check` after each."""

    def __init__(self) -> None:
        self.fd = -1
        self.wds: dict[int, str] = {}
        self.tops: dict[str, str] = {}  # watched top directory -> "site" | "node" | "build"
        self.unwatched: list[str] = []  # tops past the budget (said once)
        self.plain: set[int] = set()  # watches of directories on the way to them
        self.within: tuple[str, ...] = ()

    @property
    def armed(self) -> bool:
        return bool(self.tops) or self.fd >= 0

    def arm(self, workspaces: Iterable[str], venvs: Iterable[str], within: tuple[str, ...]) -> None:
        if self.armed:
            return
        self.fd = _libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        for v in venvs:
            for py in _dirs(os.path.join(v, "lib")):
                if os.path.basename(py).startswith("python"):
                    self.tops[os.path.join(py, "site-packages")] = "site"
        self.within = within
        for ws in workspaces:
            if self._writable(ws) and (wd := self._add(ws, _PLAIN)) >= 0:
                self.plain.add(wd)
            self._find(ws, 0)
        for top in list(self.tops):
            if self._writable(top):
                self._watch(top, None)

    def check(self, stash: Stash) -> list[str]:
        """After a command of a tainted turn: what it changed there that nothing vouches for, quarantined."""
        if self.fd < 0:
            return []
        events, overflow = read_events(self.fd)
        changed: set[str] = set()
        for wd, mask, name in events:
            d = self.wds.get(wd)
            if mask & _IGNORED:
                self.wds.pop(wd, None)
                self.plain.discard(wd)
            if d is None or not name:
                continue
            path = os.path.join(d, name)
            if wd in self.plain:  # a directory on the way: a dependency or build directory made there is new
                if mask & _ISDIR and mask & 0x180:
                    for top in self._find(d, 0, path):
                        self._watch(top, changed)
                continue
            if mask & _ISDIR:
                if mask & 0x180:  # a directory made or moved in: all it holds is new
                    self._watch(path, changed)
                continue
            changed.add(path)
        lines = [f"[warning: too many changes in {', '.join(sorted(self.tops))} to follow after untrusted content; "
                 "reinstall dependencies and rebuild before running the project's tools]"] * overflow
        if self.unwatched:
            lines.append(f"[warning: {', '.join(self.unwatched[:3])} too large to watch for changes after untrusted "
                         "content; reinstall dependencies and rebuild before running the project's tools]")
            self.unwatched = []
        records: dict[str, dict[str, str]] = {}
        for path in sorted(changed):
            why = self._risky(path, changed, records)
            if why:
                lines.append(_quarantine(path, why, stash))
        return [line for line in lines if line]

    def accept(self) -> None:
        """What changed while nothing confined ran is the user's: the queue is emptied, new directories watched."""
        for wd, mask, name in read_events(self.fd)[0] if self.fd >= 0 else ():
            d = self.wds.get(wd)
            if mask & _IGNORED:
                self.wds.pop(wd, None)
            elif d is not None and name and mask & _ISDIR and mask & 0x180:
                self._watch(os.path.join(d, name), None)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _risky(self, path: str, changed: set[str], records: dict[str, dict[str, str]]) -> str:
        top = max((t for t in self.tops if path.startswith(t + "/")), key=len, default="")
        kind, rel = self.tops.get(top, ""), os.path.relpath(path, top)
        parts = rel.split("/")
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return ""  # removed again: nothing runs
        if not (st.S_ISREG(mode) or st.S_ISLNK(mode)):
            return ""
        if kind == "site":
            if "__pycache__" in parts or parts[0].endswith((".dist-info", ".egg-info")):
                return ""
            if top not in records:
                records[top] = {}
                for name in os.listdir(top):
                    if name.endswith(".dist-info"):
                        records[top].update(depcode._record(os.path.join(top, name, "RECORD")))
            if records[top].get(rel) == depcode._digest(depcode._read(path)):
                return ""
            return "no installer's RECORD lists it as it is now; python imports it; reinstall its package"
        if kind == "node":
            if ".cache" in parts or any(os.path.join(top, s) in changed for s in _NPM_STATE):
                return ""
            return ("no package manager wrote it (node_modules' install state did not change); node requires it; "
                    "`npm ci` installs it again")
        if kind == "build":
            return "a build output the project's tools run; the build makes it again"
        return ""

    def _find(self, d: str, depth: int, only: str = "") -> list[str]:
        """Dependency and build directories below `d` (`only`: that one entry of it), the directories on the
        way watched for new ones (a `build/` made later). Returns the new ones."""
        found: list[str] = []
        for path in [only] if only else _dirs(d):
            name = os.path.basename(path)
            if name in _NOT_ENTERED or path in self.tops or not os.path.isdir(path) \
                    or os.path.islink(path) or not self._writable(path):
                continue
            if name == "node_modules" or name in BUILD:
                self.tops[path] = "node" if name == "node_modules" else "build"
                found.append(path)
            elif depth < _DEPTH and not os.path.exists(os.path.join(path, "pyvenv.cfg")):
                wd = self._add(path, _PLAIN)
                if wd >= 0:
                    self.plain.add(wd)
                found += self._find(path, depth + 1)
        return found

    def _writable(self, path: str) -> bool:
        return not self.within or any(path == r or path.startswith(r.rstrip("/") + "/") for r in self.within)

    def _add(self, d: str, mask: int) -> int:
        if len(self.wds) >= BUDGET:
            return -1
        try:
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return -1
        try:
            wd = _libc().inotify_add_watch(self.fd, f"/proc/self/fd/{fd}".encode(), mask)
        finally:
            os.close(fd)
        if wd >= 0:
            self.wds[wd] = d
        return wd

    def _watch(self, top: str, new: set[str] | None) -> None:
        """Watch `top` and every directory below it; with `new`, every file found is added to it (made after
        the watch, or moved in)."""
        stack = [top]
        while stack:
            d = stack.pop()
            if len(self.wds) >= BUDGET:
                self.unwatched.append(top)
                return
            self._add(d, _MASK)
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                path = os.path.join(d, e.name)
                if e.is_dir(follow_symlinks=False):
                    if e.name not in ("__pycache__", ".cache"):
                        stack.append(path)
                elif new is not None:
                    new.add(path)


def _dirs(d: str) -> list[str]:
    try:
        return [os.path.join(d, e.name) for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _quarantine(path: str, why: str, stash: Stash) -> str:
    from hermes_agent.nofollow import read_regular, remove_nofollow

    try:
        data = read_regular(path, _LIMIT) if os.path.isfile(path) and not os.path.islink(path) else None
    except (OSError, ValueError):
        data = None
    if data is None and os.path.islink(path):
        data = os.fsencode(os.readlink(path))
    saved = stash(path, data)
    if not remove_nofollow(path):
        return f"[warning: {path} was changed after untrusted content ({why}) and could not be removed; check it]"
    where = f"; the command's version is saved as {saved}" if saved else ""
    return f"[the sandbox removed {path}: a command changed it after the turn took in untrusted content ({why}){where}]"
