"""SQLite connection setup (WAL, busy timeout) and the retry that keeps "database is locked" away from users."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from hermes_agent.errors import StorageError

log = logging.getLogger(__name__)

T = TypeVar("T")
BUSY_TIMEOUT_MS = 10_000
RETRY_DEADLINE_S = 60.0


def is_busy(exc: sqlite3.Error) -> bool:
    """True for the transient lock errors another process can cause."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


RESERVE_BYTES = 4 << 20  # the spare room state.db keeps beside itself for when the disk fills (red-team round 6 a06)
SQLITE_FULL = 13


class DiskFull(StorageError):
    """The disk holding state.db is full (its reserve already spent): the caller keeps what it could not write."""


def is_full(exc: BaseException) -> bool:
    """True for SQLite's "database or disk is full" (and the OS's ENOSPC under it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and (code == SQLITE_FULL or "disk is full" in str(exc).lower())


def reserve_path(path: Path) -> Path:
    return path.with_name(path.name + ".reserve")


def ensure_reserve(path: Path) -> None:
    """Keep a preallocated spare file of RESERVE_BYTES beside the database (one stat when it is there): when
    a command fills the disk, freeing it lets the turn's writes land (release_reserve). Best effort."""
    spare = reserve_path(path)
    try:
        if spare.stat().st_size >= RESERVE_BYTES:
            return
    except OSError:
        pass
    try:
        fd = os.open(spare, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        os.posix_fallocate(fd, 0, RESERVE_BYTES)
    except OSError:  # no room even for the spare: leave none (a half one only takes space)
        os.close(fd)
        fd = -1
        spare.unlink(missing_ok=True)
    finally:
        if fd >= 0:
            os.close(fd)


def release_reserve(path: Path) -> bool:
    """Free the spare room (True when there was some): the disk is full and a write must land."""
    try:
        reserve_path(path).unlink()
    except OSError:
        return False
    log.warning("the disk holding %s is full: hermes freed its reserve to save the session", path)
    return True


def retry_busy(fn: Callable[[], T], deadline_s: float = RETRY_DEADLINE_S) -> T:
    """Run `fn`, retrying with jittered backoff while SQLite reports a lock held elsewhere."""
    end = time.monotonic() + deadline_s
    delay = 0.005
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > end:
                raise
            log.debug("state.db busy, retrying: %s", exc)
            import random  # only when busy: not on every run's import

            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 0.25)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database file with the pragmas the store relies on."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    existing = path.exists() and path.stat().st_size > 0
    try:
        # Conversations are private: create the file owner-only (SQLite gives -wal/-shm the same mode).
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot open session database {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        retry_busy(lambda: _configure(conn, existing))
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StorageError(f"{path} is not a usable session database: {exc}") from exc
    return conn


CACHE_KIB = 16_384  # page cache per connection, filled only as pages are read: SQLite's 2 MB default re-reads a
# search's index pages from the OS every time (~220 reads, 0.3 ms of a 2 ms search on a 360 MB file; 16 MB: ~0.15 ms).
# Not mmap: another process's checkpoint truncating the file under a live map kills the reader with SIGBUS.


def _configure(conn: sqlite3.Connection, existing: bool = False) -> None:
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    # Only takes effect on a new, empty file: lets prune give pages back to the OS.
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    # A file Hermes keeps in another journal mode (its `database.journal_mode`, e.g. delete on a network
    # filesystem) stays in it; a new file, or one already in WAL, is WAL.
    current = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    if existing and current not in ("wal", "memory"):
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        log.warning("state.db journal mode is %s (WAL unavailable on this filesystem)", mode)
    # In WAL mode NORMAL still survives a killed process; only a power cut can lose the last commits.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")


def split_statements(sql: str) -> Iterator[str]:
    """Split a script into complete statements (trigger bodies keep their inner semicolons)."""
    buf = ""
    for piece in sql.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            stmt = buf.strip()
            buf = ""
            if stmt != ";":
                yield stmt
    if buf.strip(" \n\t;"):
        raise ValueError(f"incomplete SQL statement: {buf.strip()[:80]}")


def run_in_transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """One write transaction taken with BEGIN IMMEDIATE (so it never deadlocks on upgrade), retried when busy."""

    def attempt() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    return retry_busy(attempt)
