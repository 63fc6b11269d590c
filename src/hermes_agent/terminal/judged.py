"""Run the bytes that were judged (issue 19). The approval gate reads the workspace files a command runs
(approval/scriptfiles.py) and the backend then runs them by name; anything confined that is alive meanwhile (a
background process, an MCP server, an earlier pipeline stage) can swap them in between. The tool passes what
the gate read (host path -> sha256 of its bytes, ABSENT for no file) to `expecting`; the local backend calls
`check` right before the spawn:
- any judged file that changed since: refused (the next call is judged, and asked about, on the new bytes);
- a call let out of the sandbox (`sandbox=false`) that runs a judged file while a confined process is alive
  (`alive`: the terminal's strays, a confined MCP server) is refused outright: a re-check cannot close the
  window between it and the unconfined exec (inotify sees the read), and that run is the worst case.
Stdlib only; costs nothing for a call that runs no workspace file (an empty map)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hermes_agent.errors import HermesError
from hermes_agent.nofollow import open_nofollow

ABSENT = "absent"
UNJUDGED = "unreadable"  # a file the gate could not read (over 64 KB, a symlink): asked about as such, not re-checked
LIMIT = 64 * 1024  # scriptfiles.MAX_BYTES: a larger file is never judged (reported not inspectable)
_local = threading.local()
_lock = threading.Lock()
_confined: dict[int, Callable[[], bool]] = {}  # id -> "still alive?" of confined processes outside the terminal


class JudgedChanged(HermesError):
    """A file the approval gate judged is not what would run: the command was not run."""


def digest(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


def current(path: str) -> str | None:
    """The digest of the regular file at `path` now (no symlink followed); None when it cannot be read."""
    try:
        fd = open_nofollow(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return ABSENT
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, LIMIT + 1)
        return None if len(data) > LIMIT else digest(data)
    finally:
        os.close(fd)


@contextmanager
def expecting(files: dict[str, str], command: str) -> Iterator[None]:
    """The backend calls of this thread run `command`, whose judged files are `files`."""
    old = getattr(_local, "files", None)
    _local.files = (dict(files), command) if files else None
    try:
        yield
    finally:
        _local.files = old


def add_confined(key: int, alive: Callable[[], bool]) -> None:
    """A confined process outside the terminal's launchers (an MCP stdio server) that may write the workspace."""
    with _lock:
        _confined[key] = alive


def drop_confined(key: int) -> None:
    with _lock:
        _confined.pop(key, None)


def confined_alive(strays: Callable[[], bool]) -> bool:
    with _lock:
        others = list(_confined.values())
    return strays() or any(alive() for alive in others)


def check(sandbox: bool, strays: Callable[[], bool]) -> None:
    """Right before a spawn: raise JudgedChanged when a judged file changed, or when an unconfined call runs
    one while a confined process could still change it."""
    pending = getattr(_local, "files", None)
    if not pending:
        return
    files, command = pending
    shown = command if len(command) <= 80 else command[:77] + "..."
    names = ", ".join(os.path.basename(p) for p in files)
    changed = [p for p, d in files.items() if d != UNJUDGED and current(p) != d]
    if changed:
        raise JudgedChanged(
            f"BLOCKED: `{shown}` was not run: {', '.join(changed)} changed between the approval check and the run "
            "(a process still running in the sandbox may be rewriting it). Run it again to have the current "
            "version judged.")
    if not sandbox and confined_alive(strays):
        raise JudgedChanged(
            f"BLOCKED: `{shown}` was not run outside the sandbox: it runs {names}, which confined processes still "
            "alive (a background process, an MCP server) can rewrite after it was judged. Run it inside the "
            "sandbox, or stop those processes first.")
