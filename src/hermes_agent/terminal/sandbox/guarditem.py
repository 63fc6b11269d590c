"""The run-later guard's view of one directory entry (guardscan.py): an `Item` (its signature and, for a
regular file or a link, its bytes), read through directory fds that follow no symlink (`Fds`). Stdlib only."""

from __future__ import annotations

import os
import stat as st
from dataclasses import dataclass

_LIMIT = 1 << 20  # contents kept for restoring; larger protected files are only reported
Slot = tuple[str, str]  # (directory, name)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY  # readable: os.listdir(fd) needs it (O_PATH cannot list)


@dataclass(frozen=True, slots=True)
class Item:
    """One directory entry: `sig` (mode, inode, size, mtime, ctime); a regular file's bytes to _LIMIT (a link: its target)."""

    sig: tuple
    data: bytes | None
    mode: int

    @property
    def kind(self) -> int:
        return st.S_IFMT(self.sig[0])


def _sig(path: str) -> tuple | None:
    try:
        s = os.lstat(path)
    except OSError:
        return None
    return (s.st_mode, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


class Fds:
    """Directory fds of one check, opened without following a symlink anywhere on the path."""

    def __init__(self) -> None:
        self._fds: dict[str, int | None] = {}

    def get(self, path: str) -> int | None:
        if path not in self._fds:
            from hermes_agent.nofollow import open_nofollow

            try:
                self._fds[path] = open_nofollow(path, _DIR_FLAGS)
            except OSError:
                self._fds[path] = None
        return self._fds[path]

    def forget(self, path: str) -> None:
        """Drop `path` and everything below it (a directory that was replaced or re-made)."""
        for p in [p for p in self._fds if p == path or p.startswith(path + "/")]:
            fd = self._fds.pop(p)
            if fd is not None:
                os.close(fd)

    def close(self) -> None:
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()


def item_at(fd: int, name: str, old: Item | None, budget: list[int] | None = None) -> Item | None:
    """The entry `name` in directory `fd` (no symlink followed); bytes re-read only when it changed, and
    only while `budget` (bytes left, shared by a scan) lasts."""
    try:
        s = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    sig = (s.st_mode, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    if old is not None and old.sig == sig:
        return old
    data = None
    if st.S_ISLNK(s.st_mode):
        try:
            data = os.fsencode(os.readlink(name, dir_fd=fd))
        except OSError:
            pass
    elif st.S_ISREG(s.st_mode) and s.st_size <= _LIMIT and (budget is None or budget[0] >= s.st_size):
        data = read_at(fd, name)
        if budget is not None:
            budget[0] -= s.st_size
    return Item(sig, data, st.S_IMODE(s.st_mode))


def read_at(fd: int, name: str) -> bytes | None:
    """The bytes of regular file `name` in directory `fd` (O_NOFOLLOW, at most _LIMIT)."""
    try:
        f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    try:
        if not st.S_ISREG(os.fstat(f).st_mode):
            return None
        data = b""
        while len(data) <= _LIMIT and (chunk := os.read(f, 65536)):
            data += chunk
        return data[:_LIMIT]
    finally:
        os.close(f)


def same(a: Item | None, b: Item | None) -> bool:
    """The same entry as far as the guard cares: equal signatures, both directories, or the same type,
    bytes and mode (a `touch`, a rewrite with the same text)."""
    if a is None or b is None:
        return a is b
    if a.sig == b.sig or (a.kind == st.S_IFDIR and b.kind == st.S_IFDIR):
        return True
    return a.kind == b.kind and a.data is not None and a.data == b.data and a.mode == b.mode


def _exists(fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return True


EXEC_PER_DIR = 64  # executables watched per directory (a `bin/` of many tools: the first ones by name)
_INSTALLED = frozenset({"node_modules", "site-packages", "dist-packages", "__pycache__", "vendor", "third_party"})


def exec_dir(d: str, roots: tuple[str, ...]) -> bool:
    """Does directory `d` hold scripts a user runs by hand (not a dependency or build directory below the
    sandbox's roots)?"""
    from hermes_agent.terminal.sandbox.views import SKIP_DIRS

    top = next((r for r in roots if d == r or d.startswith(r.rstrip("/") + "/")), "")
    return not (SKIP_DIRS | _INSTALLED).intersection(d[len(top):].split("/"))


def executables(fd: int, d: str, roots: tuple[str, ...]) -> list[str]:
    """Names of the files in directory `fd` (at `d`) a user runs by hand: regular files with an execute bit, and
    `*.sh` (run as `bash x.sh`), in a directory `exec_dir` accepts; EXEC_PER_DIR at most (a venv's bin/ is
    start-up code: guardscan's "start" class takes it)."""
    if not exec_dir(d, roots):
        return []
    out = []
    try:
        with os.scandir(fd) as it:
            for e in it:
                if e.is_file(follow_symlinks=False) and (e.name.endswith(".sh")
                                                        or e.stat(follow_symlinks=False).st_mode & 0o111):
                    out.append(e.name)
    except OSError:
        return []
    return sorted(out)[:EXEC_PER_DIR]
