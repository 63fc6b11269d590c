"""Where a conversation goes on: forward from a session through the continuations compression made, as Hermes
follows them when a session is resumed by an id the user kept (its exit summary, a note); and what /undo takes
back, kept in the session as Hermes keeps it. ('rewound' parents: continuations older versions of ours made.)"""

from __future__ import annotations

import sqlite3

from hermes_agent.storage.records import SESSION_COLUMNS, SessionInfo

_NOT_SET = "(CASE WHEN json_valid(child.model_config) THEN json_extract(child.model_config, '$.{}') END) IS NULL"
# Hermes's own chain step: a child of a parent that ended for compression, not a branch, subagent run, reset or
# tool session; a child that itself went on (compressed again) or is still open first, then the newest.
_STEP = ("SELECT child.id FROM sessions parent JOIN sessions child ON child.parent_session_id = parent.id "
         "WHERE parent.id = ? AND parent.end_reason IN ('compression', 'rewound') "
         f"AND {_NOT_SET.format('_branched_from')} AND {_NOT_SET.format('_delegate_from')} "
         f"AND {_NOT_SET.format('_reset_from')} AND COALESCE(child.source, '') != 'tool' "
         "ORDER BY CASE WHEN child.end_reason IN ('compression', 'rewound') THEN 0 "
         "WHEN child.ended_at IS NULL THEN 1 ELSE 2 END, child.started_at DESC, child.id DESC LIMIT 1")


def continuation_tip(c: sqlite3.Connection, session_id: str) -> str:
    """The live end of `session_id`'s continuation chain (itself when nothing continued it)."""
    current, seen = session_id, {session_id}
    while (row := c.execute(_STEP, (current,)).fetchone()) is not None and row[0] not in seen:
        current = row[0]
        seen.add(current)
    return current


def take_back(c: sqlite3.Connection, session_id: str, first_id: int) -> None:
    """/undo, /retry as Hermes writes them: the session's live messages from `first_id` on stay on disk with
    active = 0 (taken back), its counters follow what is left, and its rewind_count goes up."""
    c.execute("UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1 AND id >= ?", (session_id, first_id))
    c.execute("UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1, message_count = (SELECT COUNT(*) "
              "FROM messages WHERE session_id = sessions.id AND active = 1), tool_call_count = (SELECT COALESCE(SUM("
              "CASE WHEN json_valid(tool_calls) THEN json_array_length(tool_calls) ELSE 0 END), 0) FROM messages "
              "WHERE session_id = sessions.id AND active = 1) WHERE id = ?", (session_id,))


def latest_in(c: sqlite3.Connection, sources: str | tuple[str, ...] | None, workspace: str) -> SessionInfo | None:
    """The most recently active session of `sources` in `workspace` (its git repository root, else a directory):
    recorded with that repository root, or (no root recorded) a working directory at or under it."""
    names = (sources,) if isinstance(sources, str) else tuple(sources or ())
    prefix = workspace.rstrip("/") or workspace
    like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
    where = f"source IN ({','.join('?' * len(names))}) AND " if names else ""
    row = c.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {where}COALESCE(archived, 0) = 0 AND "
                    "(git_repo_root = ? OR (COALESCE(git_repo_root, '') = '' AND (cwd = ? OR cwd LIKE ? ESCAPE '\\')))"
                    " ORDER BY last_active_at DESC, id DESC LIMIT 1", (*names, prefix, prefix, like)).fetchone()
    return SessionInfo.from_row(row) if row is not None else None
