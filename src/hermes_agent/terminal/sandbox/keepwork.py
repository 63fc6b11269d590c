"""Keep the user's uncommitted and untracked work before ANY confined work may touch it (issue 19, rt14b c01).

The sandbox guard's `enter()` (guard.py) is where every confined writer starts: terminal, background and PTY
commands, execute_code, an MCP stdio server's start, and (through `Guard.keep`) each MCP tool call; skill
scripts, subagents' tools and plugin subprocesses run through those. There it calls the keeper the session
registered (`offer`: bootstrap/stores.py wires storage/dirtyguard.py's `DirtyGuard.before`), once per workspace
and per repository the guard knows in it. The keeper skips a tree that did not change since its last snapshot
(size, mtime, inode), so a steady workspace costs a stat walk. Stdlib only, nothing imported: the registry is
loaded at start-up by sessions that keep uncommitted work."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)
Keeper = Callable[[str, str], object]
_KEEPERS: list[Keeper] = []


def offer(keeper: Keeper) -> Callable[[], None]:
    """Register the session's keeper (the first one offered serves the process: a subagent's session shares
    the parent's store); returns the call that withdraws it (the session's close)."""
    if not _KEEPERS:
        _KEEPERS.append(keeper)

    def withdraw() -> None:
        if keeper in _KEEPERS:
            _KEEPERS.remove(keeper)
    return withdraw


def keep(paths: Iterable[str], why: str) -> None:
    """Snapshot the repository holding each path when it holds work no snapshot has yet. Never raises."""
    for keeper in list(_KEEPERS):
        for path in dict.fromkeys(paths):
            try:
                keeper(path, why)
            except Exception as exc:  # noqa: BLE001 - a safety net must never stop the work it guards
                log.warning("keeping uncommitted work of %s failed: %s", path, exc)
