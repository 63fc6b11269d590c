"""Where a conversation goes on: forward from a session through the continuations compression (and ours,
/undo) made, as Hermes follows them when a session is resumed by an id the user kept (its exit summary, a note)."""

from __future__ import annotations

import sqlite3

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
