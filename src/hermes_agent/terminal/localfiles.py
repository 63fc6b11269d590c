"""The local backend's file primitives (read, atomic write, stat) on the host side of its sandbox: paths as the
commands see them, mapped by `host_path` (bwrap's private /tmp). A mixin of LocalBackend (local.py)."""

from __future__ import annotations

import contextlib
import os
import stat as stat_mod
import tempfile
from typing import BinaryIO


class HostFiles:
    """Needs `host_path(path)`, `_abs(path)`, `guard()` and `_runner` from the backend it is mixed into."""

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """Bytes of a file (at most `limit`)."""
        with open(self.host_path(self._abs(path)), "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)

    def open_bytes(self, path: str) -> BinaryIO:
        """A file opened for reading in binary (for chunked reads of files of any size)."""
        return open(self.host_path(self._abs(path)), "rb")  # noqa: SIM115 - the caller closes it

    def write_bytes(self, path: str, data: bytes) -> None:
        """Atomically replace a file (temp file + rename), creating parent directories. A write of hermes's own
        (file tools) is never put back by the run-later guard."""
        from hermes_agent.terminal.base import keep_work

        keep_work([os.path.dirname(self.host_path(self._abs(path)))], f"a file tool writes {os.path.basename(path)}")  # rt14b c14
        guard = self.guard() if self._runner is not None else None
        with guard.trusted() if guard is not None else contextlib.nullcontext():
            self._write(path, data)

    def _write(self, path: str, data: bytes) -> None:
        target = self.host_path(self._abs(path))
        parent = os.path.dirname(target) or "."
        os.makedirs(parent, exist_ok=True)
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(prefix=".hermes-", dir=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())  # new files as `open()` makes them
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def stat(self, path: str) -> dict | None:
        """{"size", "is_dir", "mtime"} or None when missing."""
        try:
            st = os.stat(self.host_path(self._abs(path)))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return {"size": st.st_size, "is_dir": stat_mod.S_ISDIR(st.st_mode), "mtime": st.st_mtime}


def _umask() -> int:
    """The process umask, read without changing it (os.umask would race with other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old
