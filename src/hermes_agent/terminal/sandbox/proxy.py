"""What hermes holds for a command the launcher started (split from launcher.py): a Popen-like proxy whose exit
status the launcher reports and which it signals; no wait on it outlives an unresponsive launcher."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.terminal.sandbox.launcher import Launcher

_HEARTBEAT_S = 1.0  # how often a waiter pings the launcher (at most)


class SandboxedProcess:
    """A Popen-like view of a process the launcher started. `pid` is the sandbox's own (bwrap gives it a
    pid namespace): signals go through the launcher, never os.kill from here."""

    def __init__(self, pid: int, args: object, stdin=None, stdout=None, launcher: Launcher | None = None) -> None:
        self.pid = pid
        self._launcher = launcher
        self.args = args
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = None
        self.returncode: int | None = None
        self._done = threading.Event()
        self._lost = False

    def _finish(self, code: int) -> None:
        self.returncode = code
        self._done.set()

    def _orphan(self) -> None:
        """The launcher died, and with it everything it started (pid namespace, or the keeper)."""
        self._lost = True
        if self.returncode is None:
            self._finish(-signal.SIGKILL)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit report; meanwhile the launcher must keep answering its heartbeat: one that a
        command stopped (SIGSTOP) or that hangs is killed with everything it ran, and this process counts as
        killed (`lost_why` says why), so no wait here outlives an unresponsive launcher."""
        end = None if timeout is None else time.monotonic() + timeout
        while not self._done.wait(_HEARTBEAT_S if end is None else max(0.0, min(_HEARTBEAT_S, end - time.monotonic()))):
            if self._launcher is not None and not self._lost:
                self._launcher.check()
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode  # type: ignore[return-value]

    @property
    def lost_why(self) -> str:
        """Why the launcher went away under this process ("" when it did not, or simply exited)."""
        return self._launcher.lost_why if self._lost and self._launcher is not None else ""

    @property
    def sandbox_note(self) -> str:
        """Set once the sandbox was re-planned after this process started and later commands run in a pid namespace
        of their own: they cannot see it (ps, pgrep, pkill), the `process` tool still can."""
        launcher = self._launcher
        if launcher is None or not launcher.retired or not (launcher.mechanism == "bwrap" or launcher.pidns):
            return ""
        return ("started before the sandbox was re-planned: later commands cannot see it (ps, pgrep, pkill); "
                "use this tool to poll, kill or write to it")

    def signal_group(self, sig: int) -> None:
        """Signal the process group this process leads (its own session), through the launcher."""
        if self._launcher is not None and not self._lost:
            self._launcher.signal(self.pid, sig)

    def send_signal(self, sig: int) -> None:
        self.signal_group(sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)
