"""The TerminalBackend seam. Contract: a failing command is data (exit code, timed_out), never an
exception; a timeout kills the whole process group; file primitives act inside the same machine
the commands run on (host, container or remote)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hermes_agent.lazylog import get_logger


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


# -- keeping the user's uncommitted work before ANY confined work may touch it (issue 19, rt14b c01) ---------
# The sandbox guard's `enter()` (sandbox/guard.py) is where every confined writer starts: terminal, background and
# PTY commands, execute_code, an MCP stdio server's start, and (through `Guard.keep`) each MCP tool call; skill
# scripts, subagents' tools and plugin subprocesses run through those. There it calls the keeper the session
# registered (`offer_keeper`: bootstrap/stores.py wires storage/dirtyguard.py's `DirtyGuard.before`), once per
# workspace and per repository its first baseline found in them. The keeper skips a tree that did not change
# since its last snapshot (size, mtime, inode), so a steady workspace costs a stat walk. Here, in a module every
# session loads anyway: registering costs no import at start-up.

log = get_logger(__name__)
Keeper = Callable[[str, str], object]
KEEPERS: list[Keeper] = []


def offer_keeper(keeper: Keeper) -> Callable[[], None]:
    """Register the session's keeper (the oldest one still registered serves the process: a subagent's session
    shares the parent's store; when a gateway's first session closes, the next one's takes over); returns the
    call that withdraws it (the session's close)."""
    KEEPERS.append(keeper)

    def withdraw() -> None:
        if keeper in KEEPERS:
            KEEPERS.remove(keeper)
    return withdraw


def keep_work(paths: Iterable[str], why: str) -> None:
    """Snapshot the repository holding each path when it holds work no snapshot has yet. Never raises."""
    for keeper in KEEPERS[:1]:
        for path in dict.fromkeys(paths):
            try:
                keeper(path, why)
            except Exception as exc:  # noqa: BLE001 - a safety net must never stop the work it guards
                log.warning("keeping uncommitted work of %s failed: %s", path, exc)
