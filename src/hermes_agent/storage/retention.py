"""A state.db that stays small: tool outputs stored capped (the full text in a file only when asked),
retention by age and by total size in short chunked transactions, incremental vacuum after a prune,
and the size of the file by kind of content (`hermes sessions stats`, `hermes doctor`)."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from hermes_agent import lazyre
from hermes_agent.messages import SUMMARY_PREFIXES
from hermes_agent.storage import layout as L
from hermes_agent.storage.db import retry_busy

log = logging.getLogger(__name__)

CHUNK_SESSIONS = 200  # sessions deleted per transaction by age (small ones); by size at most SIZE_CHUNK
SIZE_CHUNK = 20  # the size pass deletes the biggest, oldest sessions: fewer per transaction keeps the lock short
_PAUSE_S = 0.05  # between chunks, so a live conversation's writes get the lock
_DAY = 86400.0
_MERGE_STEPS = 80  # FTS5 'merge' steps after a prune, each ~_MERGE_PAGES pages: no single long lock
_MERGE_PAGES = 500


class Retention:
    """What the store keeps. `tool_output_chars` 0 stores tool outputs whole; `full_dir` (with
    keep_full) receives each capped output's full text, named by its SHA-256. A plain class, not a
    dataclass: the store builds one at start-up, which must stay cheap."""

    __slots__ = ("full_dir", "keep_full", "max_db_bytes", "old_output_chars", "retention_days", "shrink_after_days",
                 "tool_output_chars", "vacuum_after_prune")

    def __init__(self, tool_output_chars: int = 16_000, keep_full: bool = False, full_dir: Path | None = None,
                 retention_days: float = 90.0, max_db_bytes: int = 400 * 1024 * 1024,
                 vacuum_after_prune: bool = True, shrink_after_days: float = 3.0,
                 old_output_chars: int = 1_000) -> None:
        self.tool_output_chars, self.keep_full, self.full_dir = tool_output_chars, keep_full, full_dir
        self.retention_days, self.max_db_bytes = retention_days, max_db_bytes
        self.vacuum_after_prune = vacuum_after_prune
        self.shrink_after_days, self.old_output_chars = shrink_after_days, old_output_chars

    def cap(self, content: str | None, limit: int | None = None) -> str | None:
        """A tool output as stored: head and tail of a long one around a marker saying what was left out.
        An output capped before keeps its original length (and file) in the new marker."""
        limit = self.tool_output_chars if limit is None else limit
        if content is None or limit <= 0 or len(content) <= limit:
            return content
        where, total = "", len(content)
        earlier = _MARKER.search(content) if limit != self.tool_output_chars else None
        if earlier is not None:  # shrinking a stored output: what is left out counts from the original
            total, where = int(earlier.group(1).replace(",", "")), earlier.group(2) or ""
        elif self.keep_full and self.full_dir is not None:
            where = f"; full text in {_save_full(self.full_dir, content)}"
        head = limit * 3 // 4
        tail = limit - head
        return (f"{content[:head]}\n[... {total - limit:,} of {total:,} chars not stored{where} ...]\n"
                f"{content[-tail:]}")


_MARKER = lazyre.compile(r"\n\[\.\.\. [\d,]+ of ([\d,]+) chars not stored(; full text in [^\n]*?)? \.\.\.\]\n")


def _save_full(folder: Path, content: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    import hashlib

    data = content.encode("utf-8", "surrogatepass")
    path = folder / f"{hashlib.sha256(data).hexdigest()[:32]}.txt"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


# ---- size ----------------------------------------------------------------------------------------

def file_bytes(path: Path) -> int:
    """state.db and its WAL on disk."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def used_bytes(conn: sqlite3.Connection) -> int:
    """Bytes in use inside the file (pages minus free pages): what a size limit should measure."""
    page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    count = int(conn.execute("PRAGMA page_count").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return page * (count - free)


def size_by_kind(conn: sqlite3.Connection) -> dict[str, int]:
    """Bytes of content by kind: tool outputs, conversation text, tool calls, reasoning, the search index
    (dbstat when SQLite has it), and free pages."""
    row = conn.execute(
        "SELECT COALESCE(SUM(CASE WHEN role = 'tool' THEN LENGTH(CAST(content AS BLOB)) END), 0), "
        "COALESCE(SUM(CASE WHEN role != 'tool' THEN LENGTH(CAST(content AS BLOB)) END), 0), "
        "COALESCE(SUM(LENGTH(tool_calls)), 0), COALESCE(SUM(LENGTH(reasoning)), 0) FROM messages").fetchone()
    out = {"tool outputs": int(row[0]), "conversation text": int(row[1]), "tool calls": int(row[2]),
           "reasoning": int(row[3])}
    try:
        # One pass over the pages: the search index, and the room left inside pages where rows shrank or went
        # (given back only by `sessions optimize-storage`).
        fts, unused = conn.execute(
            "SELECT COALESCE(SUM(CASE WHEN name LIKE 'messages_fts%' OR name LIKE 'hermes_agent_retired_messages_fts%' "
            "THEN pgsize END), 0), COALESCE(SUM(unused), 0) FROM dbstat").fetchone()
        out["search index"], out["unused in pages"] = int(fts), int(unused)
    except sqlite3.Error:  # SQLite built without dbstat
        pass
    page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    out["free pages"] = page * int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return out


# ---- prune ---------------------------------------------------------------------------------------

def _delete_chunk(conn: sqlite3.Connection, ids: list[str]) -> int:
    marks = ",".join("?" * len(ids))
    conn.execute("BEGIN IMMEDIATE")
    try:
        n = conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", ids).rowcount
        conn.execute(f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({marks})", ids)
        conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", ids)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return n


def _oldest(conn: sqlite3.Connection, before: float | None, n: int) -> list[str]:
    """Ended sessions idle the longest (open ones are a live conversation and stay)."""
    where = "ended_at IS NOT NULL" + (" AND last_active_at < ?" if before is not None else "")
    params: list[object] = [before] if before is not None else []
    rows = conn.execute(f"SELECT id FROM sessions WHERE {where} ORDER BY last_active_at LIMIT ?", [*params, n])
    return [r[0] for r in rows]


def _chunk_for(conn: sqlite3.Connection, excess: int) -> int:
    """About as many sessions as hold `excess` bytes on average (at least 1, at most CHUNK_SESSIONS)."""
    n = int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]) or 1
    per = max(1, used_bytes(conn) // n)
    return max(1, min(SIZE_CHUNK, -(-excess // per)))


_SHRUNK_UPTO = "hermes_agent_shrunk_upto"  # state_meta: message ids up to here were looked at by the shrink pass
SHRINK_CHUNK = 200  # messages looked at per transaction (the tool outputs among them shrunk)


_OUR_MESSAGE_TRIGGERS = frozenset({*L.FTS_TRIGGERS, "hermes_agent_touch_session"})


def rewritable(conn: sqlite3.Connection) -> bool:
    """True when the triggers on `messages` are exactly ours (search index sync, activity clock): a row deleted and
    inserted again then leaves the index and its session as an update would. A later Hermes's file (triggers of its
    own that mint ids or order) is only ever updated in place."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'")}
    return names == _OUR_MESSAGE_TRIGGERS


def _rewrite(conn: sqlite3.Connection, new_content: dict[int, str]) -> None:
    """Store shorter contents by deleting the rows and inserting them again, every column as it was (same id)
    but content. An UPDATE that shrinks a row leaves its b-tree page as sparse as the row got (SQLite rebalances
    pages only on insert overflow and on delete): 3-day-old tool outputs cut from 16,000 to 1,000 characters left
    the 90-day file ~45% empty space inside pages. A delete merges the sparse pages with their neighbours."""
    ids = list(new_content)
    marks = ",".join("?" * len(ids))
    cols = [r[1] for r in conn.execute("PRAGMA table_info(messages)")]
    at = cols.index("content")
    rows = conn.execute(f"SELECT {', '.join(cols)} FROM messages WHERE id IN ({marks}) ORDER BY id", ids).fetchall()
    active = conn.execute(f"SELECT id, last_active_at FROM sessions WHERE id IN (SELECT session_id FROM messages "
                          f"WHERE id IN ({marks}))", ids).fetchall()
    conn.execute(f"DELETE FROM messages WHERE id IN ({marks})", ids)
    conn.executemany(f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                     [(*r[:at], new_content[r[0]], *r[at + 1:]) for r in rows])
    # the activity-clock trigger recomputed last_active_at from the messages: keep what it was
    conn.executemany("UPDATE sessions SET last_active_at = ? WHERE id = ?", [(t, sid) for sid, t in active])


def _shrink_chunk(conn: sqlite3.Connection, policy: Retention, cutoff: float, rewrite: bool = False) -> int | None:
    """Shrink the next tool outputs older than `cutoff` to old_output_chars (head and tail); None when the
    pass has reached `cutoff`, else how many rows it shrank. `rewrite`: by delete and insert (see _rewrite)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (_SHRUNK_UPTO,)).fetchone()
        after = int(row[0]) if row else 0
        rows = conn.execute("SELECT id, timestamp, CASE WHEN role = 'tool' AND length(content) > ? THEN content END "
                            "FROM messages WHERE id > ? ORDER BY id LIMIT ?",
                            (policy.old_output_chars, after, SHRINK_CHUNK)).fetchall()
        done, shrunk = after, {}
        for mid, ts, content in rows:
            if ts >= cutoff:
                break
            done = mid
            if content is not None:
                shrunk[mid] = policy.cap(content, policy.old_output_chars)
        if shrunk and rewrite:
            _rewrite(conn, shrunk)
        elif shrunk:
            conn.executemany("UPDATE messages SET content = ? WHERE id = ?", [(v, k) for k, v in shrunk.items()])
        conn.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)", (_SHRUNK_UPTO, str(done)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return None if done == after else len(shrunk)


def shrink_old_outputs(conn: sqlite3.Connection, policy: Retention, now: float) -> int:
    """Tool outputs older than shrink_after_days keep only old_output_chars (head and tail around a marker);
    conversation text is never touched. Resumable: the pass remembers how far it got."""
    if policy.shrink_after_days <= 0 or policy.old_output_chars <= 0:
        return 0
    cutoff, total = now - policy.shrink_after_days * _DAY, 0
    rewrite = rewritable(conn)
    began = time.monotonic()
    while (n := _shrink_chunk(conn, policy, cutoff, rewrite)) is not None:
        total += n
        if n:  # the lock stays free at least as long as it was held
            time.sleep(max(_PAUSE_S, time.monotonic() - began))
        began = time.monotonic()
    return total


# Tool outputs an earlier version shrank in place (UPDATE) left their pages sparse: repacked once, a chunk at a time
# (same content, delete and insert), up to where that version's shrink pass had got, at most _REPACK_BUDGET_S a prune.
_REPACK_UPTO, _REPACK_TARGET = "hermes_agent_repacked_upto", "hermes_agent_repack_target"
_REPACK_BUDGET_S = 15.0


def _meta_int(conn: sqlite3.Connection, key: str) -> int | None:
    row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row is not None and str(row[0]).isdigit() else None


def _repack_chunk(conn: sqlite3.Connection, policy: Retention) -> int | None:
    """Repack the next shrunk outputs below the target: how many, None when none are left."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        upto, target = _meta_int(conn, _REPACK_UPTO) or 0, _meta_int(conn, _REPACK_TARGET) or 0
        if upto >= target:
            conn.execute("COMMIT")
            return None
        rows = conn.execute("SELECT id, role = 'tool' AND length(content) <= ? AND instr(content, ' chars not stored') "
                            "> 0, content FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                            (policy.old_output_chars + 300, upto, target, SHRINK_CHUNK)).fetchall()
        shrunk = {mid: content for mid, was_shrunk, content in rows if was_shrunk}
        if shrunk:
            _rewrite(conn, shrunk)
        conn.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)",
                     (_REPACK_UPTO, str(rows[-1][0] if rows else target)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(shrunk)


def repack_shrunk(conn: sqlite3.Connection, policy: Retention) -> int:
    """Pages an earlier version left sparse when it shrank tool outputs in place, packed again online (before
    this, only `sessions optimize-storage` gave that room back). The target is where the shrink pass stood the
    first time this version pruned the file; from then on shrinking rewrites rows itself. Returns rows repacked."""
    if _meta_int(conn, _REPACK_TARGET) is None:
        reached = _meta_int(conn, _SHRUNK_UPTO) or 0
        conn.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)", (_REPACK_TARGET, str(reached)))
    if not rewritable(conn):
        return 0
    start, total = time.monotonic(), 0
    while time.monotonic() - start < _REPACK_BUDGET_S:
        began = time.monotonic()
        if (n := _repack_chunk(conn, policy)) is None:
            break
        total += n
        time.sleep(max(_PAUSE_S, time.monotonic() - began))
    return total


TRIM_CHUNK = 2000  # messages of an open conversation deleted per transaction


def _open_with_old_turns(conn: sqlite3.Connection, cutoff: float) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT s.id FROM sessions s WHERE s.ended_at IS NULL AND "
        "(SELECT MIN(m.timestamp) FROM messages m WHERE m.session_id = s.id) < ?", (cutoff,))]


def _newest_summary(conn: sqlite3.Connection, sid: str) -> int:
    """The id of the conversation's newest compaction summary (ours or Hermes's), or -1."""
    return conn.execute(
        "SELECT COALESCE(MAX(id), -1) FROM messages WHERE session_id = ? AND role = 'user' AND ("
        + " OR ".join("substr(content, 1, ?) = ?" for _ in SUMMARY_PREFIXES) + ")",
        (sid, *[v for p in SUMMARY_PREFIXES for v in (len(p), p)])).fetchone()[0]


def _trim_session(conn: sqlite3.Connection, sid: str, cutoff: float) -> int:
    """Delete one open conversation's turns older than `cutoff`, cut at a user message so no tool result
    loses its call; its latest turn always stays, and so does its newest compaction summary (what the model
    knows of the turns before: a resumed chat replays it ahead of the kept turns). Chunked; returns the
    messages deleted."""
    first_kept = conn.execute(
        "SELECT COALESCE((SELECT MIN(id) FROM messages WHERE session_id = ? AND role = 'user' AND timestamp >= ?), "
        "(SELECT MAX(id) FROM messages WHERE session_id = ? AND role = 'user'))", (sid, cutoff, sid)).fetchone()[0]
    if first_kept is None:
        return 0
    summary = _newest_summary(conn, sid)
    if conn.execute("SELECT 1 FROM messages WHERE session_id = ? AND id < ? AND id != ? LIMIT 1",
                    (sid, first_kept, summary)).fetchone() is None:
        return 0  # only the kept summary is that old
    deleted = 0
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            n = conn.execute("DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE session_id = ? AND "
                             "id < ? AND id != ? LIMIT ?)", (sid, first_kept, summary, TRIM_CHUNK)).rowcount
            conn.execute("UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages WHERE session_id = ?) "
                         "WHERE id = ?", (sid, sid))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        deleted += n
        if n < TRIM_CHUNK:
            return deleted
        time.sleep(_PAUSE_S)


def trim_open(conn: sqlite3.Connection, cutoff: float) -> int:
    """Conversations still open (a gateway chat) lose their turns older than retention too; the session and
    its recent turns stay. Returns the messages deleted."""
    return sum(_trim_session(conn, sid, cutoff) for sid in _open_with_old_turns(conn, cutoff))


class PruneReport(NamedTuple):
    sessions: int
    messages: int
    bytes_before: int
    bytes_after: int
    seconds: float
    shrunk: int = 0  # tool outputs cut to old_output_chars


def prune(conn: sqlite3.Connection, policy: Retention, path: Path, now: float | None = None) -> PruneReport:
    """Delete ended sessions older than retention_days, then the oldest ones while the data in use exceeds
    max_db_bytes; CHUNK_SESSIONS per transaction so other writers get the lock in between. Then give the
    freed pages back (incremental vacuum) and fold the WAL in. `conn` must be in autocommit mode."""
    start = time.monotonic()
    before = file_bytes(path)
    now = time.time() if now is None else now
    sessions = messages = trimmed = 0
    if policy.retention_days > 0:
        cutoff = now - policy.retention_days * _DAY
        while ids := _oldest(conn, cutoff, CHUNK_SESSIONS):
            messages += _delete_chunk(conn, ids)
            sessions += len(ids)
        trimmed = trim_open(conn, cutoff)
        messages += trimmed
    repacked = repack_shrunk(conn, policy)
    shrunk = shrink_old_outputs(conn, policy, now)
    if policy.max_db_bytes > 0:
        while (excess := used_bytes(conn) - policy.max_db_bytes) > 0:
            ids = _oldest(conn, None, _chunk_for(conn, excess))
            if not ids:
                break
            messages += _delete_chunk(conn, ids)
            sessions += len(ids)
            time.sleep(_PAUSE_S)
    if (sessions or shrunk or trimmed or repacked) and policy.vacuum_after_prune:
        vacuum(conn)
    ensure_time_index(conn)
    return PruneReport(sessions, messages, before, file_bytes(path), time.monotonic() - start, shrunk)


def ensure_time_index(conn: sqlite3.Connection) -> None:
    """The messages-by-time index a big file did not get at its migration (migrations._messages_time_index): one
    statement under the write lock (~1.4 s on the 214 MB 90-day file at load 8), once, on the background prune's
    connection; a conversation's write waits for it in the busy handler. A newer layout's file is left alone."""
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (L.TIME_INDEX,)).fetchone():
            return
        retry_busy(lambda: conn.execute(L.TIME_INDEX_SQL))
    except sqlite3.Error as exc:
        log.info("no messages time index: %s", exc)


def _segments(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT COUNT(DISTINCT segid) FROM {table}_idx").fetchone()[0])


def _merge(conn: sqlite3.Connection, table: str) -> None:
    """Fold the index's segments together in bounded steps (each its own short transaction): a deleted or
    shrunk row leaves tombstones that free space only once merged with the segment holding its tokens."""
    try:
        for _ in range(_MERGE_STEPS):
            if _segments(conn, table) <= 1:
                return
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', -{_MERGE_PAGES})")
            time.sleep(_PAUSE_S / 2)
    except sqlite3.Error:
        return  # no such index here, or a newer layout owns it


_VACUUM_TARGET_S = 0.05  # an incremental-vacuum step holds the write lock about this long


def free_pages(conn: sqlite3.Connection, step: int = 500) -> int:
    """Give an auto_vacuum=INCREMENTAL file's free pages back to the OS in steps, each its own write transaction
    sized to ~50 ms (the first `step` pages), the lock left free at least as long as it was held (writers get in
    between). Returns the pages
    given back; 0 for a file in another auto_vacuum mode (`sessions optimize-storage` converts it)."""
    if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:
        return 0
    freed = 0
    left = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    while left > 0:
        began = time.monotonic()
        # Python's execute() steps a statement once, and incremental_vacuum frees one page per step (its result
        # rows have no columns, so the cursor stops after the first): executescript runs it to the end.
        retry_busy(lambda n=min(step, left): conn.executescript(f"PRAGMA incremental_vacuum({n})"))
        took = time.monotonic() - began
        now_left = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        if now_left >= left:  # another process frees pages as fast: leave the rest to a later pass
            break
        freed, left = freed + left - now_left, now_left
        step = max(50, min(50_000, int(step * _VACUUM_TARGET_S / max(took, 0.001))))
        if left:
            time.sleep(max(_PAUSE_S, took))
    return freed


def vacuum(conn: sqlite3.Connection) -> None:
    """Free pages back to the OS: the search index merged in bounded steps, then incremental vacuum in steps
    (free_pages); the WAL truncated. `sessions optimize-storage` comes here: the time index too."""
    ensure_time_index(conn)
    for table in ("messages_fts", "messages_fts_trigram"):
        _merge(conn, table)
    free_pages(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def due(marker: Path, min_interval_hours: float, now: float | None = None) -> bool:
    """True when the last automatic prune (the marker's mtime) is older than min_interval_hours."""
    now = time.time() if now is None else now
    try:
        return now - marker.stat().st_mtime >= min_interval_hours * 3600
    except OSError:
        return True


def touch(marker: Path) -> None:
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()


def warn_size(path: Path, limit_bytes: int) -> str | None:
    """A `hermes doctor` warning once the file passes 80% of the configured size limit."""
    size = file_bytes(path)
    if limit_bytes > 0 and size >= limit_bytes * 0.8:
        return (f"state.db is {size / 1e6:.0f} MB (limit sessions.max_db_mb {limit_bytes / 1e6:.0f} MB): "
                "run `hermes sessions prune` or lower sessions.retention_days")
    return None
