"""Did anything change in a tree since the dirty guard last looked? (storage/dirtyguard.py). The guard's look is a
stat per file: ~30 ms per command on a folder of 10,000 files. The kernel's inotify says it in one non-blocking
read: each directory the look walked is watched (added as the look lists it, before it stats the files there,
so nothing changes unseen between the two) for any entry written, made, removed, renamed or re-permissioned;
no event since the last look means the look would find what it found then. Events come from the kernel for the
inode, whoever wrote it (a bwrap mount namespace, a Landlock domain); the confined side can neither read nor
forge the queue (hermes's own fd, close-on-exec). Fail open to the look, never to "unchanged": no inotify, a
watch the kernel refused, more than `MAX_DIRS` directories, a queue overflow — then `quiet()` is False."""

from __future__ import annotations

import ctypes
import os

MAX_DIRS = 5_000  # watches per tree (the kernel's per-user limit is shared with the user's own tools)
# IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
# | IN_MOVE_SELF, on directories only, never through a link
_MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x01000000 | 0x02000000
_NONBLOCK_CLOEXEC = 0o4000 | 0o2000000
_LIBC: list = []


def _libc():  # noqa: ANN202 - ctypes.CDLL
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


class TreeWatch:
    """One tree's watches. `begin()` before a look, `add(dir)` for each directory it lists, `end()` after it;
    `quiet()` before the next look: True only when the look may be skipped."""

    def __init__(self) -> None:
        try:
            self.fd = _libc().inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            self.fd = -1
        self.count = 0
        self.whole = False  # this look's directories are all watched so far
        self.valid = False  # the last look ended with all of them watched

    def begin(self) -> None:
        self._drain()  # what the look is about to see anyway
        self.count, self.whole, self.valid = 0, self.fd >= 0, False

    def add(self, path: str) -> None:
        if not self.whole:
            return
        self.count += 1
        if self.count > MAX_DIRS or _libc().inotify_add_watch(self.fd, os.fsencode(path), _MASK) < 0:
            self.whole = False

    def end(self, complete: bool) -> None:
        """The look ended; `complete`: it walked every directory it keeps (no budget cut it short)."""
        self.valid = self.whole and complete

    def quiet(self) -> bool:
        return self.valid and not self._drain()

    def _drain(self) -> bool:
        """Read the queue empty; whether anything was in it."""
        if self.fd < 0:
            return True
        seen = False
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return seen
            except OSError:
                self.valid = False
                return True
            if not chunk:
                return seen
            seen = True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
