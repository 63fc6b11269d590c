"""The TerminalBackend seam. Contract: a failing command is data (exit code, timed_out), never an
exception; a timeout kills the whole process group; file primitives act inside the same machine
the commands run on (host, container or remote)."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ExecResult:
    """Outcome of one command: combined stdout+stderr text, exit code, and whether it timed out."""

    output: str
    exit_code: int
    timed_out: bool = False
    interrupted: bool = False
    cwd: str | None = None


@runtime_checkable
class TerminalBackend(Protocol):
    """Runs shell commands for one task. `kind` names the backend ("local", "docker", ...);
    `isolated` is True when commands cannot touch the host (container without host mounts)."""

    kind: str
    isolated: bool

    def execute(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                stdin: str | None = None, interrupt: threading.Event | None = None) -> ExecResult:
        """Run `command` with bash; cwd/exported variables persist between calls of this backend."""
        ...

    def cwd(self) -> str:
        """The current working directory inside the backend."""
        ...

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """Bytes of a file (at most `limit`); raises FileNotFoundError / IsADirectoryError / PermissionError."""
        ...

    def write_bytes(self, path: str, data: bytes) -> None:
        """Atomically replace a file, creating parent directories."""
        ...

    def stat(self, path: str) -> dict | None:
        """{"size": int, "is_dir": bool, "mtime": float} or None when missing."""
        ...

    def close(self) -> None:
        """Release processes/containers/connections held for this task."""
        ...


def append_note(text: str, note: str) -> str:
    """`note` on a line of its own after a command's output `text`."""
    return f"{text.rstrip(chr(10))}\n{note}" if text else note


def timeout_note(limit: float) -> str:
    return f"[command timed out after {limit:g}s; its process group was killed]"


def run_later_lines() -> list[str]:
    """One line per file the user runs by hand (package.json scripts, Makefile...) that this process's sessions
    changed since last told (terminal/sandbox/byhand.py), safe to print; [] and nothing imported when no session
    took a baseline. Every door shows them after a turn: the CLI on stderr, the gateway under its reply, cron
    under the job's output, the API server in its log."""
    mod = sys.modules.get("hermes_agent.terminal.sandbox.byhand")
    if mod is None:
        return []
    from hermes_agent.termsafe import visible

    return [visible(line) for line in mod.session_lines()]
