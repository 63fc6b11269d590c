"""Run one local command under a pseudo-terminal (stdlib pty), for programs that insist on a TTY."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable

_DRAIN_S = 0.1


def run_in_pty(argv: list[str], *, popen: Callable[[list[str], int], subprocess.Popen], stdin: str | None,
               timeout: float | None, interrupt: threading.Event | None,
               limit: int = 2_000_000) -> tuple[bytes, int, bool, bool]:
    """(output, exit code, timed_out, interrupted); the process group is killed on timeout/interrupt.
    `popen(argv, slave_fd)` starts the command in its own session with the pty as controlling terminal
    (TERM, COLUMNS and LINES are set by the caller's environment)."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = popen(argv, slave)
    finally:
        os.close(slave)
    if stdin:
        os.write(master, stdin.encode("utf-8"))
    deadline = None if not timeout or timeout <= 0 else time.monotonic() + timeout
    try:
        data, timed_out, interrupted = _read_until_done(master, proc, deadline, interrupt, limit)
    finally:
        os.close(master)
    if timed_out or interrupted:
        kill_process_group(proc)
    return data, proc.wait(), timed_out, interrupted


def _read_until_done(master: int, proc: subprocess.Popen, deadline: float | None,
                     interrupt: threading.Event | None, limit: int) -> tuple[bytes, bool, bool]:
    """Read the pty until the command is done; (output, timed_out, interrupted)."""
    chunks: list[bytes] = []
    size = 0
    exited_at: float | None = None
    while True:
        ready, _, _ = select.select([master], [], [], 0.02)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the slave side is gone
                data = b""
            if not data:
                break
            if size < limit:
                chunks.append(data)
            size += len(data)
            continue
        if proc.poll() is not None:
            # Background children may keep the slave open: stop once it has been quiet briefly.
            exited_at = exited_at or time.monotonic()
            if time.monotonic() - exited_at > _DRAIN_S:
                break
        if interrupt is not None and interrupt.is_set():
            return b"".join(chunks), False, True
        if deadline is not None and time.monotonic() >= deadline:
            return b"".join(chunks), True, False
    return b"".join(chunks), False, False


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal the process group `proc` leads: through the sandbox launcher for a sandboxed process (its
    pid is the sandbox's own), else os.killpg."""
    if hasattr(proc, "signal_group"):
        proc.signal_group(sig)
    else:
        os.killpg(proc.pid, sig)


def kill_process_group(proc: subprocess.Popen, grace: float = 0.5) -> None:
    """SIGTERM the process group, SIGKILL what is left after `grace`, then reap the leader."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            signal_group(proc, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=grace)
            if sig == signal.SIGTERM:  # the leader is gone; children that ignored TERM still get KILL
                signal_group(proc, signal.SIGKILL)
            break
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            break
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
