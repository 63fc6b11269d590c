"""Keep what a put-back displaces (issue 19, rt13 a69): every place where hermes puts a file back as it was
(the sandbox guard's repairs, the context-file watch, the run-later and by-hand checks) first copies what it is
about to replace or remove into the session's quarantine directory ($HERMES_HOME/quarantine/<time>-<pid>/<the
absolute path>), outside the sandbox's reach, so an edit hermes mistook for a command's (the user's own, in their
editor, while a command ran) is never lost: the message that says it was put back names the copy.

`keep_bytes(path, data)` keeps bytes already read; `keep_at(dir_fd, name, path)` reads what is at `name` now
(relative to a directory fd, no symlink followed: a file's bytes, a link as a `.symlink` file holding its target,
a directory's tree) just before the caller replaces it. Copies are written with no symlink followed and capped
(`MAX_KEEP_BYTES` per put-back); what is past the cap is said, not silently dropped."""

from __future__ import annotations

import datetime
import os
import stat
import threading

MAX_KEEP_BYTES = 256 << 20


class Quarantine:
    """One session's quarantine directory under `root` (made on the first copy). `kept`: every copy made."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = ""
        self.kept: list[str] = []
        self.skipped: list[str] = []
        self._lock = threading.Lock()

    def _target(self, path: str) -> str:
        if not self.dir:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
            self.dir = os.path.join(os.path.realpath(self.root), f"{stamp}-{os.getpid()}")
        target = os.path.join(self.dir, path.lstrip("/"))
        n = 1
        while os.path.lexists(target):  # the same path put back twice in a session: both versions kept
            n += 1
            target = os.path.join(self.dir, path.lstrip("/") + f".{n}")
        return target

    def keep_bytes(self, path: str, data: bytes | None, suffix: str = "") -> str:
        """Save `data` (what was at `path`); where ("" when there is nothing to keep or it could not be saved)."""
        from hermes_agent.nofollow import write_nofollow

        if data is None or not self.root:
            return ""
        with self._lock:
            target = self._target(path) + suffix
            try:
                write_nofollow(target, data, mode=0o600)
            except OSError:
                return ""
            self.kept.append(target)
        return target

    def keep_at(self, dir_fd: int, name: str, path: str) -> str:
        """Copy what is at `name` in `dir_fd` now (see the module doc); where ("" when absent or not kept)."""
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return ""
        if stat.S_ISLNK(st.st_mode):
            return self.keep_bytes(path, os.fsencode(os.readlink(name, dir_fd=dir_fd)), ".symlink")
        if stat.S_ISREG(st.st_mode):
            if st.st_size > MAX_KEEP_BYTES:
                self.skipped.append(path)
                return ""
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                return self.keep_bytes(path, _read(fd, MAX_KEEP_BYTES))
            finally:
                os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            budget = [MAX_KEEP_BYTES]
            self._keep_tree(dir_fd, name, path, budget)
            return os.path.join(self.dir, path.lstrip("/")) if self.dir else ""
        return ""

    def _keep_tree(self, dir_fd: int, name: str, path: str, budget: list[int]) -> None:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return
        try:
            for entry in os.listdir(fd):
                sub = os.path.join(path, entry)
                try:
                    st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    self._keep_tree(fd, entry, sub, budget)
                elif st.st_size > budget[0]:
                    self.skipped.append(sub)
                else:
                    budget[0] -= st.st_size
                    self.keep_at(fd, entry, sub)
        finally:
            os.close(fd)


def _read(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total <= limit and (chunk := os.read(fd, 1 << 20)):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)[:limit]


_SESSION: dict[str, Quarantine] = {}
_SESSION_LOCK = threading.Lock()


def session_quarantine(root: str) -> Quarantine:
    """The one quarantine of this process for `root` ($HERMES_HOME/quarantine): the sandbox guard and the
    context-file watch of a session keep their copies side by side."""
    key = os.path.realpath(root) if root else ""
    with _SESSION_LOCK:
        q = _SESSION.get(key)
        if q is None:
            q = _SESSION[key] = Quarantine(root)
        return q
