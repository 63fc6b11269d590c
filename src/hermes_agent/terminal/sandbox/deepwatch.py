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
from collections.abc import Iterable

from hermes_agent.terminal.sandbox import byvalue
from hermes_agent.terminal.sandbox.guarditem import _exists as exists_at

log = logging.getLogger(__name__)

WATCH_BUDGET = 20_000  # directories watched per guard (the kernel's per-user limit is shared with the user's tools)
NEW_BUDGET = 5_000  # directories walked in one check because they appeared; past it: a full look
FULL_BUDGET = 50_000  # directories of a full look; past it the rest is reported unchecked
_IN_CREATE, _IN_MOVED_TO, _IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x100, 0x80, 0x4000, 0x8000, 0x40000000
_IN_ONLYDIR, _IN_NONBLOCK, _IN_CLOEXEC = 0x01000000, 0o4000, 0o2000000
_MASK = _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name
_VCS = frozenset({".git", ".hg", ".svn"})
_VENV_INSIDE = frozenset({"lib", "lib64", "include", "share"})
_FDS = 64  # directories held open at once by a walk
_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _names() -> frozenset[str]:
    """Entry names that make a directory worth the guard's look (guardscan.SPOT_SLOTS, first components)."""
    from hermes_agent.terminal.sandbox import pathbins
    from hermes_agent.terminal.sandbox.guardscan import SPOT_SLOTS

    spots = frozenset(sub.split("/", 1)[0] if sub != "." else name for sub, name in SPOT_SLOTS)
    return spots | pathbins.spot_names()  # `bin` on the user's PATH: a `bin` at any depth (rt12 a05)


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
        self.partial = False  # no inotify: every check looks in full
        self.big = False  # past WATCH_BUDGET / FULL_BUDGET: what is not watched is looked at by `full` (session end)
        self.unchecked: list[str] = []  # what the last full look could not reach
        self.budget = WATCH_BUDGET  # directories walked by `start` (the rest is left to the session end's look)

    def start(self) -> set[str]:
        """Watch every directory; returns those holding a spotted name now."""
        self.names = _names()
        self._close()
        try:
            self.fd = _libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            self.fd = -1
        if self.fd < 0:
            log.warning("inotify unavailable: every check looks at the whole workspace for new repositories")
        spots = self.full(self.budget)
        self.unchecked = []  # the baseline's: past the budget `big` leaves them to the session end's look
        return spots

    def drain(self) -> set[str]:
        """Directories to look into since the last call: where a spotted name appeared, at any depth (after
        a full look when the watch could not follow: then `unchecked` says what was out of reach)."""
        if self.fd < 0 and not self.names:
            return set()
        events, overflow = self._events()
        if overflow or self.partial:
            return self.full()
        spots: set[str] = set()
        walk: list[str] = []
        named: list[tuple[int, str]] = []
        for wd, mask, name in events:
            parent = self.wds.get(wd)
            if mask & _IN_IGNORED:
                self.wds.pop(wd, None)
            elif parent is not None:
                if mask & _IN_ISDIR and name not in _VCS:
                    walk.append(os.path.join(parent, name))
                if name in self.names or (not mask & _IN_ISDIR and _shaped(parent, name, self.workspaces + self.within)):
                    named.append((wd, name))
        left = [NEW_BUDGET]
        for d in walk:  # before the names: a moved directory's watches are renamed by the walk (same wd)
            self._walk(d, spots, left)
        if left[0] < 0:
            return self.full()
        spots.update(self.wds[wd] for wd, _ in named if wd in self.wds)
        return spots

    def report(self) -> str:
        """One line for the user about `unchecked` (then forgotten)."""
        shown = ", ".join(sorted(self.unchecked)[:5]) + (", ..." if len(self.unchecked) > 5 else "")
        self.unchecked = []
        return (f"too many directories to look into for new git repositories and run-by-hand files (over "
                f"{FULL_BUDGET}): not checked: {shown} — run git, make, npm... there only after looking at "
                ".git/hooks, .git/config and the Makefile / package.json / justfile it would run")

    def close(self) -> None:
        self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd, self.wds = -1, {}

    def full(self, budget: int = FULL_BUDGET) -> set[str]:
        """Walk everything again, `budget` directories (watches renewed): the directories holding a spotted
        name; past the budget `big` is set and `unchecked` names what was not reached."""
        self.partial, self.unchecked = self.fd < 0, []
        if self.fd >= 0:
            self._events()  # what is queued now is covered by the walk below
        spots: set[str] = set()
        left = [budget]
        for ws in self.workspaces:
            self._walk(ws, spots, left)
        if left[0] < 0:
            self.big = True
        return spots

    def _events(self) -> tuple[list[tuple[int, int, str]], bool]:
        return read_events(self.fd)

    def _walk(self, top: str, spots: set[str], left: list[int]) -> None:
        """Watch `top` and every directory below it (depth first, `left[0]` directories at most: negative
        when the budget ran out), adding to `spots` those holding a spotted name. At most _FDS directories
        are open at once (deeper ones are walked afresh from their path, no link followed either way)."""
        from hermes_agent.nofollow import open_nofollow

        pending = [top]
        while pending:
            path = pending.pop()
            try:
                fd = open_nofollow(path, _OPEN)
            except OSError:
                continue
            frames = [(path, fd, iter(self._list(path, fd, spots, left)))]
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
                frames.append((sub, cfd, iter(self._list(sub, cfd, spots, left))))

    def _list(self, path: str, fd: int, spots: set[str], left: list[int]) -> list[str]:
        """Watch directory `fd`, note it in `spots` when it holds a spotted name; its subdirectories to walk."""
        left[0] -= 1
        if left[0] < 0:
            self.unchecked.append(path)
            return []
        self._add(path, fd)
        spot, dirs, names = False, [], self.names
        skip = byvalue.skipped(path, self.workspaces + self.within)  # configs by shape (byvalue.py): not in packages
        tails = byvalue.TAILS
        try:
            with os.scandir(fd) as it:
                for e in it:
                    spot = spot or e.name in names
                    if e.is_dir(follow_symlinks=False):
                        if e.name not in _VCS:
                            dirs.append(e.name)
                    elif not skip and not spot and (e.name[0] == "." or e.name.endswith(tails)) \
                            and byvalue.kind(path, e.name, True):
                        spot = True
        except OSError:
            return []
        if spot:
            spots.add(path)
        if "lib" in dirs and exists_at(fd, "pyvenv.cfg"):  # a venv: its installed files are not entered
            dirs = [n for n in dirs if n not in _VENV_INSIDE]
        if self.within:
            dirs = [n for n in dirs if self._reachable(f"{path}/{n}")]
        return dirs

    def _reachable(self, path: str) -> bool:
        return not self.within or any(path == r or path.startswith(r.rstrip("/") + "/") or r.startswith(path + "/")
                                      for r in self.within)

    def _add(self, path: str, fd: int) -> None:
        if self.fd < 0:
            return
        if len(self.wds) >= WATCH_BUDGET:
            self.big = True
            return
        wd = _libc().inotify_add_watch(self.fd, f"/proc/self/fd/{fd}".encode(), _MASK)  # the inode listed
        if wd < 0:
            if ctypes.get_errno() == errno.ENOSPC:
                log.warning("inotify watch limit reached: part of the workspace is looked at only at session end")
            self.big = True
            return
        self.wds[wd] = path


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


def _libc():  # noqa: ANN202 - ctypes.CDLL
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC
