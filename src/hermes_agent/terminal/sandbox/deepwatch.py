"""Every directory of the workspaces, at any depth, watched for what the run-later guard spots (a `.git`, a
bare repository's HEAD, `.envrc`, a tool config...): inotify(7) watches, so a check after each confined call
costs one read of the kernel's queue however large the tree (the guard's own `guardscan.Tree` looks at only
4 levels and 200 directories; rt11 a17: `mkdir -p b/c/d/e/f/g && git init` there kept its hook).

The kernel reports every entry created or moved into a watched directory, whoever made it, through bind
mounts and Landlock alike; the confined side can neither read nor forge the queue (the fd is hermes's,
close-on-exec). A directory that appears is walked (its whole subtree is new: made before its watch existed)
and watched too. What the watch could not follow is looked at again in full, never assumed clean: a queue
overflow, more new directories in one check than `NEW_BUDGET` (at that check); no inotify at all (at
every check). A tree past `WATCH_BUDGET` directories (or the kernel's per-user watch limit) is `big`: what is
not watched is looked at by the guard's full look when the session ends (`FULL_BUDGET` directories), and
what even that could not reach is listed (`unchecked`) for the guard to say so. Directories are opened one level at a time relative to their parent with O_NOFOLLOW: a
symlink swapped in is never walked. Version-control internals and a venv's installed files are not entered
(as views.nested_scan). Stdlib only; nothing happens at import."""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import threading
from collections.abc import Iterable

from hermes_agent.terminal.sandbox import byvalue
from hermes_agent.terminal.sandbox.guarditem import _exists as exists_at

log = logging.getLogger(__name__)

WATCH_BUDGET = 20_000  # directories watched per guard (the kernel's per-user limit is shared with the user's tools)
PYC_BUDGET = 20_000  # directories inside workspace venvs watched for compiled copies only (guardpyc.py)
NEW_BUDGET = 5_000  # directories walked in one check because they appeared; past it: a full look
FULL_BUDGET = 50_000  # directories of a full look; past it the rest is reported unchecked
_IN_CREATE, _IN_MOVED_TO, _IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x100, 0x80, 0x4000, 0x8000, 0x40000000
_IN_CLOSE_WRITE = 0x08
_IN_ONLYDIR, _IN_NONBLOCK, _IN_CLOEXEC = 0x01000000, 0o4000, 0o2000000
_MASK = _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR
_PYC_MASK = _MASK | _IN_CLOSE_WRITE  # a __pycache__ (or a folder of .pyc files): a copy written in place too
_CTIME_SLACK = 50_000_000  # ns: file ctimes come from the kernel's coarse clock
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name
_VCS = frozenset({".git", ".hg", ".svn"})
_VENV_INSIDE = frozenset({"lib", "lib64", "include", "share"})
_FDS = 64  # directories held open at once by a walk
_MOD_SUFFIXES = (".py", ".pyc", ".pyw", ".so")
_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _names() -> frozenset[str]:
    """Entry names that make a directory worth the guard's look (guardscan.SPOT_SLOTS, first components)."""
    from hermes_agent.terminal.sandbox import pathbins
    from hermes_agent.terminal.sandbox.guardscan import SPOT_SLOTS

    spots = frozenset(sub.split("/", 1)[0] if sub != "." else name for sub, name in SPOT_SLOTS)
    return spots | pathbins.spot_names()  # `bin` on the user's PATH: a `bin` at any depth (rt12 a05)


def _module(name: str, mods: frozenset[str], isdir: bool) -> bool:
    """A module or package named like one the user's Pythons import (a shadow beside a script: rt13 a58)."""
    return (isdir or name.endswith(_MOD_SUFFIXES)) and name.split(".", 1)[0] in mods


def _shaped(d: str, name: str, roots: tuple[str, ...]) -> bool:
    """A file of a config shape (byvalue.kind) outside installed packages: worth the guard's look."""
    return bool(byvalue.kind(d, name, True)) and not byvalue.skipped(d, roots)


class DeepWatch:
    """See the module doc. `workspaces`: the trees watched; `within`: the sandbox's writable roots (a
    directory outside and above none of them is not entered: nothing could be planted there)."""

    def __init__(self, workspaces: Iterable[str], within: Iterable[str] = ()) -> None:
        self.workspaces = tuple(workspaces)
        self.within = tuple(within)
        self.fd = -1
        self.wds: dict[int, str] = {}
        self.names: frozenset[str] = frozenset()
        self.mods: frozenset[str] = frozenset()  # module names a new file there would stand in for (guardpy)
        self.partial = False  # no inotify: every check looks in full
        self.big = False  # past WATCH_BUDGET / FULL_BUDGET: what is not watched is looked at by `full` (session end)
        self.unchecked: list[str] = []  # what the last full look could not reach
        self.budget = WATCH_BUDGET  # directories walked by `start` (the rest is left to the session end's look)
        self.pycs: set[str] = set()  # compiled copies created, written or moved in since `since` (guardpyc.py)
        self.since: int | None = None  # when the last drain or look ended (None: taking the baseline)
        self.venv_libs: set[str] = set()  # a venv's lib/: walked for compiled copies only
        self.pycwds: set[int] = set()
        self.pyc_inodes: dict[int, str] = {}  # inode -> path of each compiled copy walked or kept
        self.linked: set[str] = set()  # compiled copies that got a second name (`_second_names`)
        self.modspots: set[str] = set()  # directories where a module named like an importable one appeared
        self._pending: list[str] = []  # venv lib/ directories the baseline leaves to `_libwalk`
        self._libwalk: threading.Thread | None = None

    def start(self) -> set[str]:
        """Watch every directory; returns those holding a spotted name now."""
        from hermes_agent.terminal.sandbox import guardpy

        self.names, self.mods = _names(), guardpy.shadowed()
        self._close()
        try:
            self.fd = _libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            self.fd = -1
        if self.fd < 0:
            log.warning("inotify unavailable: every check looks at the whole workspace for new repositories")
        self.join()
        self.since, started = None, _now()
        spots = self.full(self.budget)
        self.unchecked = []
        if self._pending and self.fd >= 0:  # thousands of directories: walked while the first command runs
            libs, self._pending = self._pending, []
            self._libwalk = threading.Thread(target=self._libs, args=(libs, started), daemon=True,
                                             name="hermes-pyc-watch")
            self._libwalk.start()  # the baseline's: past the budget `big` leaves them to the session end's look
        return spots

    def join(self) -> None:
        """Wait for the background walk of the baseline's venv lib/ directories (`start`), if under way."""
        walk, self._libwalk = self._libwalk, None
        if walk is not None:
            walk.join()

    def _libs(self, libs: list[str], since: int) -> None:
        """The baseline's venv lib/ directories, in the background: a compiled copy made there since `since`
        (while the first command ran) joins `pycs`."""
        try:
            for lib in libs:
                self._walk(lib, set(), [PYC_BUDGET], since)
        except Exception:  # noqa: BLE001 - an fd closed under the walk (close): nothing more to watch
            log.debug("venv walk stopped", exc_info=True)

    def drain(self) -> set[str]:
        """Directories to look into since the last call: where a spotted name appeared, at any depth (after
        a full look when the watch could not follow: then `unchecked` says what was out of reach)."""
        self.join()
        if self.fd < 0 and not self.names:
            return set()
        events, overflow = self._events()
        if overflow or self.partial:
            return self.full()
        spots: set[str] = set()
        walk: list[str] = []
        named: list[tuple[int, str]] = []
        made: list[str] = []
        for wd, mask, name in events:
            parent = self.wds.get(wd)
            if mask & _IN_IGNORED:
                self.wds.pop(wd, None)
                self.pycwds.discard(wd)
            elif parent is not None:
                if mask & _IN_ISDIR and name not in _VCS:
                    walk.append(os.path.join(parent, name))
                elif name.endswith(".pyc"):
                    self.pycs.add(os.path.join(parent, name))
                elif mask & (_IN_CREATE | _IN_MOVED_TO) and self.pyc_inodes:
                    made.append(os.path.join(parent, name))
                if wd in self.pycwds:
                    continue  # inside a venv's lib/: compiled copies only
                if _module(name, self.mods, bool(mask & _IN_ISDIR)):
                    self.modspots.add(parent)  # a module shadow (guardscan.scripts): always looked at
                    named.append((wd, name))
                elif name in self.names or (not mask & _IN_ISDIR and _shaped(parent, name, self.workspaces + self.within)):
                    named.append((wd, name))
        self._second_names(made)
        left = [NEW_BUDGET]
        for d in walk:  # before the names: a moved directory's watches are renamed by the walk (same wd)
            self._walk(d, spots, left, since=0)
        if left[0] < 0:
            return self.full()
        self.since = _now()
        spots.update(self.wds[wd] for wd, _ in named if wd in self.wds)
        return spots

    def _second_names(self, made: list[str]) -> None:
        """A file made that is a hard link to a compiled copy: a write through it changes the copy unseen by
        the copy's directory watch, so the copy joins `linked` (removed: python compiles the source again)."""
        for path in made:
            try:
                s = os.lstat(path)
            except OSError:
                continue
            if s.st_nlink > 1 and s.st_ino in self.pyc_inodes:
                self.linked.add(self.pyc_inodes[s.st_ino])

    def report(self) -> str:
        """One line for the user about `unchecked` (then forgotten)."""
        shown = ", ".join(sorted(self.unchecked)[:5]) + (", ..." if len(self.unchecked) > 5 else "")
        self.unchecked = []
        return (f"too many directories to look into for new git repositories and run-by-hand files (over "
                f"{FULL_BUDGET}): not checked: {shown} — run git, make, npm... there only after looking at "
                ".git/hooks, .git/config and the Makefile / package.json / justfile it would run")

    def close(self) -> None:
        self.join()
        self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd, self.wds = -1, {}

    def full(self, budget: int = FULL_BUDGET) -> set[str]:
        """Walk everything again, `budget` directories (watches renewed): the directories holding a spotted
        name; past the budget `big` is set and `unchecked` names what was not reached."""
        self.join()
        self.partial, self.unchecked = self.fd < 0, []
        if self.fd >= 0:
            self._events()  # what is queued now is covered by the walk below
        spots: set[str] = set()
        left = [budget]
        for ws in self.workspaces:
            self._walk(ws, spots, left)
        if left[0] < 0:
            self.big = True
        if self.since is not None:  # not the baseline: what the watch missed may hold a new module shadow
            self.modspots |= spots
        self.since = _now()
        return spots

    def _events(self) -> tuple[list[tuple[int, int, str]], bool]:
        return read_events(self.fd)

    def _walk(self, top: str, spots: set[str], left: list[int], since: int | None = -1) -> None:
        """Watch `top` and every directory below it (depth first, `left[0]` directories at most: negative
        when the budget ran out), adding to `spots` those holding a spotted name. At most _FDS directories
        are open at once (deeper ones are walked afresh from their path, no link followed either way). `since`:
        what counts as new among compiled copies (`_copies`; -1: `self.since`)."""
        since = self.since if since == -1 else since
        from hermes_agent.nofollow import open_nofollow

        pending = [top]
        while pending:
            path = pending.pop()
            try:
                fd = open_nofollow(path, _OPEN)
            except OSError:
                continue
            frames = [(path, fd, iter(self._list(path, fd, spots, left, since)))]
            while frames:
                path, fd, children = frames[-1]
                name = next(children, None)
                if name is None:
                    os.close(fd)
                    frames.pop()
                    continue
                sub = f"{path}/{name}"
                if len(frames) >= _FDS:
                    pending.append(sub)
                    continue
                try:  # relative to the directory just listed, no link followed: a swapped-in link is skipped
                    cfd = os.open(name, _OPEN, dir_fd=fd)
                except OSError:
                    continue
                frames.append((sub, cfd, iter(self._list(sub, cfd, spots, left, since))))

    def _list(self, path: str, fd: int, spots: set[str], left: list[int], since: int | None) -> list[str]:
        """Watch directory `fd`, note it in `spots` when it holds a spotted name; its subdirectories to walk.
        Inside a venv's lib/ only compiled copies are looked for (`_lib`)."""
        lib = any(path == v or path.startswith(v + "/") for v in self.venv_libs)
        if lib and len(self.pycwds) >= PYC_BUDGET:
            return []
        if not lib:
            left[0] -= 1
            if left[0] < 0:
                self.unchecked.append(path)
                return []
        self._add(path, fd, lib, _PYC_MASK if path.endswith("/__pycache__") else _MASK)
        if lib:
            return self._lib(path, fd, since)
        spot, dirs, names, mods = False, [], self.names, self.mods
        skip = byvalue.skipped(path, self.workspaces + self.within)  # configs by shape (byvalue.py): not in packages
        tails = byvalue.TAILS
        pycs: list[os.DirEntry] = []
        try:
            with os.scandir(fd) as it:
                for e in it:
                    isdir = e.is_dir(follow_symlinks=False)
                    if isdir:
                        if e.name not in _VCS:
                            dirs.append(e.name)
                    elif e.name.endswith(".pyc"):
                        pycs.append(e)
                    spot = spot or e.name in names or _module(e.name, mods, isdir)
                    if not isdir and not skip and not spot and (e.name[0] == "." or e.name.endswith(tails)) \
                            and byvalue.kind(path, e.name, True):
                        spot = True
        except OSError:
            return []
        if pycs:
            self._copies(path, fd, pycs, since, False)
        if spot:
            spots.add(path)
        if "lib" in dirs and exists_at(fd, "pyvenv.cfg"):  # a venv: its installed files are not entered, but
            self.venv_libs.add(f"{path}/lib")  # for compiled copies (at the baseline: in the background)
            dirs = [n for n in dirs if n not in _VENV_INSIDE or (n == "lib" and since is not None)]
            if since is None:
                self._pending.append(f"{path}/lib")
        if self.within:
            dirs = [n for n in dirs if self._reachable(f"{path}/{n}")]
        return dirs

    def _lib(self, path: str, fd: int, since: int | None) -> list[str]:
        """A directory inside a venv's lib/: its subdirectories, and its compiled copies (`_copies`)."""
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            return []
        pycs = [e for e in entries if e.name.endswith(".pyc")]
        if pycs:
            self._copies(path, fd, [e for e in pycs if not e.is_dir(follow_symlinks=False)], since, True)
        return [e.name for e in entries if e.is_dir(follow_symlinks=False)]

    def _copies(self, path: str, fd: int, pycs: list[os.DirEntry], since: int | None, lib: bool) -> None:
        """Compiled copies listed in `path`: each one new since the last check joins `pycs` (all of them in a
        fresh tree, `since` 0; else by ctime, which a command cannot set, or its directory's: moved in whole). A folder
        holding copies outside __pycache__ is watched for one written in place too."""
        if not path.endswith("/__pycache__"):
            self._add(path, fd, lib, _PYC_MASK)
        self.pyc_inodes.update((e.inode(), f"{path}/{e.name}") for e in pycs)
        if since is None:
            return  # the baseline
        try:
            moved = os.fstat(fd).st_ctime_ns >= since
        except OSError:
            moved = True
        for e in pycs:
            try:
                new = moved or e.stat(follow_symlinks=False).st_ctime_ns >= since
            except OSError:
                new = True
            if new:
                self.pycs.add(f"{path}/{e.name}")

    def _reachable(self, path: str) -> bool:
        return not self.within or any(path == r or path.startswith(r.rstrip("/") + "/") or r.startswith(path + "/")
                                      for r in self.within)

    def _add(self, path: str, fd: int, lib: bool = False, mask: int = _MASK) -> None:
        """Watch `fd`; `lib`: inside a venv's lib/ (its own budget: no part of the workspace goes unwatched)."""
        if self.fd < 0:
            return
        if not lib and len(self.wds) - len(self.pycwds) >= WATCH_BUDGET:
            self.big = True
            return
        wd = _libc().inotify_add_watch(self.fd, f"/proc/self/fd/{fd}".encode(), mask)  # the inode listed
        if wd < 0:
            if ctypes.get_errno() == errno.ENOSPC:
                log.warning("inotify watch limit reached: part of the workspace is looked at only at session end")
            self.big = self.big or not lib
            return
        self.wds[wd] = path
        if lib:
            self.pycwds.add(wd)


def read_events(fd: int) -> tuple[list[tuple[int, int, str]], bool]:
    """(wd, mask, name) of every event queued on the inotify `fd` (non-blocking), and whether it overflowed."""
    out: list[tuple[int, int, str]] = []
    overflow = False
    while fd >= 0:
        try:
            buf = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        except OSError:
            return out, True
        pos = 0
        while pos + _EVENT.size <= len(buf):
            wd, mask, _cookie, size = _EVENT.unpack_from(buf, pos)
            raw = buf[pos + _EVENT.size:pos + _EVENT.size + size].split(b"\0", 1)[0]
            pos += _EVENT.size + size
            overflow |= bool(mask & _IN_Q_OVERFLOW)
            out.append((wd, mask, os.fsdecode(raw)))
    return out, overflow


_LIBC = None


def _now() -> int:
    import time

    return time.time_ns() - _CTIME_SLACK


def _libc():  # noqa: ANN202 - ctypes.CDLL
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC
