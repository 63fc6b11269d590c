"""The search index rebuilt online: migration 7 (layout 3) leaves `fts_rebuild_high_water` H and
`fts_rebuild_progress` P in state_meta; each step indexes the next CHUNK messages with ids in (P, H] in
one short transaction and moves P, so conversations keep writing in between and a killed process loses
at most one chunk (the next one resumes from P). When P reaches H the markers go, the layout version is
stamped, and the inline tables migration 7 set aside are emptied in chunks and dropped."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import NamedTuple

from hermes_agent.storage import layout as L
from hermes_agent.storage.migrations import inspect, newer_hermes, retired

CHUNK = 200  # messages in the first transaction; later ones are sized to take about _TARGET_S
_TARGET_S = 0.05
_DROP_ROWS = 200  # shadow-table rows of a retired index deleted per transaction
_PAUSE_S = 0.05  # at least this long between chunks (and twice as long as the chunk took): a live
# conversation's writes, waiting in SQLite's busy handler, find the lock free two thirds of the time


class Progress(NamedTuple):
    done: int  # P: ids up to here are indexed
    high_water: int  # H


def _meta(c: sqlite3.Connection, key: str) -> int | None:
    row = c.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row is not None and str(row[0]).lstrip("-").isdigit() else None


def progress(c: sqlite3.Connection) -> Progress | None:
    """The rebuild in flight, or None."""
    try:
        high = _meta(c, L.HIGH_WATER)
    except sqlite3.OperationalError:  # no state_meta: nothing of ours pending
        return None
    return None if high is None else Progress(_meta(c, L.PROGRESS) or 0, high)


def _retired_left(c: sqlite3.Connection) -> list[str]:
    names = [retired(t) for t in (L.WORDS, L.TRIGRAM)]
    return [n for n in names if c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (n,)).fetchone()]


def pending(c: sqlite3.Connection) -> bool:
    """True while there is rebuild work of ours left (indexing, or a retired index to drop). A later Hermes's
    file may carry the same markers for a rebuild of its own: that one is left to it."""
    if newer_hermes(inspect(c)):
        return False
    return progress(c) is not None or bool(_retired_left(c))


def _index_chunk(c: sqlite3.Connection, rows: int) -> bool:
    """Index the next chunk under the write lock; False when nothing was left."""
    c.execute("BEGIN IMMEDIATE")
    try:
        now = progress(c)  # re-read under the lock: another process may be rebuilding too
        if now is None:
            c.execute("COMMIT")
            return False
        upto = min(now.done + rows, now.high_water)
        for table in (L.WORDS, L.TRIGRAM):
            c.execute(L.backfill_sql(table), (now.done, upto))
        if upto >= now.high_water:
            c.execute("DELETE FROM state_meta WHERE key IN (?, ?)", (L.HIGH_WATER, L.PROGRESS))
            c.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)",
                      (L.STORAGE_KEY, str(L.FTS_STORAGE_VERSION)))
        else:
            c.execute("UPDATE state_meta SET value = ? WHERE key = ?", (str(upto), L.PROGRESS))
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise
    return True


def _drop_chunk(c: sqlite3.Connection, name: str) -> None:
    """Empty a retired FTS5 table's shadow tables a few rows at a time, then drop the (now small) table."""
    shadows = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                                       "(?, ?, ?)", (f"{name}_data", f"{name}_content", f"{name}_docsize"))]
    c.execute("BEGIN IMMEDIATE")
    try:
        left = 0
        for shadow in shadows:
            keep = "rowid > 10 AND " if shadow.endswith("_data") else ""  # 1, 10: FTS5's own bookkeeping
            left += c.execute(f'DELETE FROM "{shadow}" WHERE rowid IN (SELECT rowid FROM "{shadow}" '
                              f"WHERE {keep}1 LIMIT {_DROP_ROWS})").rowcount
        if not left:
            c.execute(f'DROP TABLE IF EXISTS "{name}"')
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise


def run(c: sqlite3.Connection, stop: threading.Event | None = None, budget_s: float | None = None,
        rows: int = CHUNK) -> bool:
    """Work through the pending rebuild in chunks until done, `stop` is set or `budget_s` spent.
    True when nothing is left. `c` must be in autocommit mode."""
    if not pending(c):
        return True
    start = time.monotonic()
    while not (stop is not None and stop.is_set()):
        if budget_s is not None and time.monotonic() - start > budget_s:
            return False
        began = time.monotonic()
        if _index_chunk(c, rows):
            took = time.monotonic() - began
            rows = max(20, min(2000, int(rows * _TARGET_S / max(took, 0.001))))
            time.sleep(max(_PAUSE_S, 2 * took))
            continue
        left = _retired_left(c)
        if not left:
            return True
        _drop_chunk(c, left[0])
        time.sleep(max(_PAUSE_S, 2 * (time.monotonic() - began)))
    return not pending(c)
