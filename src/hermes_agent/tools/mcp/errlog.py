"""A stdio MCP server's stderr, stored terminal-safe in logs/mcp/<name>.log (the file hermes's warnings name and
`hermes logs mcp` shows). The server writes into a pipe; a daemon thread of hermes copies it through
`termsafe.visible`, so `cat` of the log never runs the server's escape sequences (OSC 52 clipboard writes,
titles, clears: red-team round 12 a50). hermes opens the file itself (no symlink followed, 0600) and stops
storing at MAX_BYTES (one note says so) while still draining the pipe, so the server never blocks on it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

MAX_BYTES = 20 * 1024 * 1024  # per log file; beyond, the server's stderr is read and dropped
_CHUNK = 65536


class StderrRelay:
    """`fd` is the pipe's write end for the server's stderr (close it in hermes once the server is spawned);
    `wait` lets the copy catch up after the server exited (its last words, for the error line)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        read_fd, self.fd = os.pipe()
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), name="mcp-stderr", daemon=True)
        self._thread.start()

    def close_writer(self) -> None:
        """hermes's copy of the write end; the server keeps its own."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def wait(self, timeout: float = 1.0) -> None:
        self._thread.join(timeout)

    def _open(self) -> tuple[int, int]:
        if self.path is None:
            return -1, 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            return fd, os.fstat(fd).st_size
        except OSError:
            return -1, 0

    def _copy(self, read_fd: int) -> None:
        import codecs

        from hermes_agent.termsafe import visible

        out, size = self._open()
        decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        held, full = "", False
        try:
            while chunk := _read(read_fd):
                text = held + decode(chunk)
                held = "\r" if text.endswith("\r") else ""  # a CRLF split between two reads stays one newline
                data = visible(text[:len(text) - len(held)]).encode("utf-8")
                if out < 0 or full:
                    continue
                if size + len(data) > MAX_BYTES:
                    full = True
                    data = f"\n[hermes: this log reached {MAX_BYTES // 2**20} MB; further output dropped]\n".encode()
                size += _write(out, data)
        finally:
            os.close(read_fd)
            if out >= 0:
                os.close(out)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


def _write(fd: int, data: bytes) -> int:
    try:
        return os.write(fd, data)
    except OSError:
        return 0
