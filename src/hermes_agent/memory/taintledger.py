"""Provenance that travels with the data (issue 19, red-team rt7 a05): what a conversation wrote while it had
taken in untrusted content taints whoever reads it later. Kept beside the context-file ledger (ctxledger.py,
same file, same lock) under three keys:

- `taint_windows`: while a tainted session's confined code could write under `roots` (from the call before the
  taint was seen to the session's end). A file whose inode changed (ctime, set by the kernel: confined code
  cannot put it back) inside a window covering it was possibly written from untrusted content.
- `taint_marks`: hermes's own file-tool writes in a tainted conversation, wherever they went: path -> [inode,
  ctime_ns, source, mtime_ns]; the mark holds while the file keeps that inode and its ctime or its mtime (a
  chmod or chown afterwards moves only the ctime: outside the windows' roots nothing else kept the taint).
- `taint_sessions`: session id -> [epoch seconds of the taint, source]: their stored messages (tool results,
  untrusted users' words) taint a session_search that returns them.
- `taint_inodes`: "dev:ino" -> [mtime_ns, window start] of files changed inside a window whose mtime says
  otherwise (`touch -d`, `cp -p`, `tar x`, `rsync -t`: set back or forward), recorded while their ctime still
  shows the window (the session's end sweeps its roots: `sweep`; a clean session's read watch records what it
  finds): a chmod or chown afterwards moves the ctime past the window and the forged mtime would launder the
  content (prov13). Such a file stays tainted while its mtime is the recorded one: a later write moves it (the
  later writer vouches for the content), a chmod does not.

Stdlib only; a read is one stat of the ledger (parsed once per change)."""

from __future__ import annotations

import bisect
import os
import time
from pathlib import Path

from hermes_agent.memory.ctxledger import (
    MAX_PATHS,
    MAX_WINDOWS,
    _alive,
    _proc_start,
    _read,
    _under,
    _update,
    ledger_path,
)

MAX_SESSIONS, MAX_INODES, MAX_SWEEP = 5000, 50_000, 200_000
SLACK_NS = 30_000_000_000  # a crashed session's window: 30 s past its last sign of life (touched at most so often)


def open_window(home: Path | str, roots: list[str], source: str, start_ns: int) -> int:
    """A tainted session's confined code may write under `roots` from `start_ns` on (ctxledger.stamp_now_ns's
    clock, read when that call started); returns the window id. Windows of dead processes left open (a crash) end at
    their last sign of life."""
    with _update(home) as data:
        windows = data.setdefault("taint_windows", [])
        for w in windows:
            if w.get("end") is None and not _alive(w):
                w["end"] = w.get("last") or w.get("start")
        windows.append({"start": start_ns, "end": None, "last": time.time_ns(), "pid": os.getpid(),
                        "pstart": _proc_start(os.getpid()), "source": source[:200],
                        "roots": sorted({os.path.realpath(r) for r in roots})})
        data["taint_windows"] = windows[-MAX_WINDOWS:]
    return start_ns


def touch_window(home: Path | str, start: int, end: bool = False) -> None:
    """The window's session is alive now (`end`: its confined code can write no more)."""
    with _update(home) as data:
        for w in data.get("taint_windows", []):
            if w.get("start") == start and w.get("pid") == os.getpid():
                w["last" if not end else "end"] = time.time_ns()


def mark_files(home: Path | str, paths: list[str], source: str) -> None:
    """hermes wrote these files (file tools) in a tainted conversation."""
    marks = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        marks.append((os.path.realpath(path), [st.st_ino, st.st_ctime_ns, source[:200], st.st_mtime_ns]))
    if not marks:
        return
    with _update(home) as data:
        table = data.setdefault("taint_marks", {})
        for path, mark in marks:
            table.pop(path, None)
            table[path] = mark
        data["taint_marks"] = dict(list(table.items())[-MAX_PATHS:])


def mark_session(home: Path | str, session_id: str, source: str, since: float) -> None:
    """The stored messages of `session_id` from `since` on came after untrusted content."""
    with _update(home) as data:
        table = data.setdefault("taint_sessions", {})
        if session_id not in table:
            table[session_id] = [since, source[:200]]
        data["taint_sessions"] = dict(list(table.items())[-MAX_SESSIONS:])


def any_files(home: Path | str) -> bool:
    """Is there anything a file read could be tainted by (a cheap early out)?"""
    data = _read(ledger_path(home))
    return bool(data.get("taint_windows") or data.get("taint_marks"))


def ledger_data(home: Path | str) -> dict:
    """The ledger as last parsed (read-only: callers must not change it)."""
    return _read(ledger_path(home))


def file_source(home: Path | str, path: str, st: os.stat_result) -> str:
    """Why the file at `path` (its stat `st`) carries untrusted content ("" when nothing says so)."""
    return source_in(_read(ledger_path(home)), os.path.realpath(path), st)


def source_in(data: dict, real: str, st: os.stat_result) -> str:
    """file_source against the parsed ledger `data`, for a path already resolved (`real`): a walk's many files.
    The inode's ctime inside a window covering it, or its mtime: a change of metadata alone afterwards (a chmod
    or chown by the user, a backup tool, `chown -R` of a tree) moves the ctime past the window but says nothing
    about the content, which a later write (its mtime moves too) would (rt11 a33/a34 as a normal user)."""
    if not data:
        return ""
    mark = data.get("taint_marks", {}).get(real)
    if isinstance(mark, list) and len(mark) >= 3 and mark[0] == st.st_ino and \
            (mark[1] == st.st_ctime_ns or mark[3:] == [getattr(st, "st_mtime_ns", None)]):
        return str(mark[2])  # a chmod since (a new ctime, the same mtime) says nothing about the content
    i = _in_window(data, real, st.st_ctime_ns)
    mtime = getattr(st, "st_mtime_ns", None)
    if i < 0 and isinstance(mtime, int) and mtime < st.st_ctime_ns:
        i = _in_window(data, real, mtime)
    starts, rows, _reach, unswept = _windows(data)
    if i < 0 and unswept and isinstance(mtime, int):  # a window not swept whole (sweep): anything changed under its
        i = next((k for k in unswept if starts[k] <= st.st_ctime_ns and _under(real, rows[k][1]) and  # roots since
                  not (rows[k][0] or 0) < mtime <= time.time_ns()), -1)  # it began, unless written after its end
    if i < 0 and data.get("taint_inodes"):  # forged times, recorded while the ctime still showed the window
        rec = data["taint_inodes"].get(f"{getattr(st, 'st_dev', '')}:{st.st_ino}")
        if isinstance(rec, list) and len(rec) == 2 and rec[0] == mtime:
            i = bisect.bisect_left(starts, rec[1])
            return rows[i][2] if i < len(starts) and starts[i] == rec[1] else "untrusted content"
    return rows[i][2] if i >= 0 else ""


def forged(data: dict, real: str, st: os.stat_result) -> tuple[str, list[int]] | None:
    """("dev:ino", [mtime_ns, window start]) for `taint_inodes` when the file changed inside a taint window (its
    ctime) while its mtime lies in none (set back or forward, or kept by a copy); None otherwise."""
    i = _in_window(data, real, st.st_ctime_ns)
    if i < 0 or _in_window(data, real, st.st_mtime_ns) >= 0:
        return None
    return f"{st.st_dev}:{st.st_ino}", [st.st_mtime_ns, _windows(data)[0][i]]


def record_inodes(home: Path | str, found: dict[str, list[int]], unswept: int | None = None) -> None:
    """Keep `forged` verdicts past a later chmod (the newest MAX_INODES); `unswept`: this process's window that
    started then was not swept whole."""
    if not found and unswept is None:
        return
    with _update(home) as data:
        for w in data.get("taint_windows", []) if unswept is not None else ():
            if w.get("start") == unswept and w.get("pid") == os.getpid():
                w["unswept"] = True
        table = data.setdefault("taint_inodes", {})
        for key, rec in found.items():
            table.pop(key, None)
            table[key] = rec
        data["taint_inodes"] = dict(list(table.items())[-MAX_INODES:])


def sweep(home: Path | str, roots: list[str], start: int | None = None) -> int:
    """At a tainted session's end: record the files and links under `roots` whose times were forged inside a
    window (`forged`), looking at MAX_SWEEP entries at most; returns how many it looked at. Past that the
    session's window (`start`) is marked unswept: fail closed, whatever changed under its roots since it began
    counts as tainted (`source_in`), as the read watch counts every confined call past its own bounds."""
    import stat

    data, found, seen = _read(ledger_path(home)), {}, 0
    walks = (os.walk(root) for root in sorted({os.path.realpath(r) for r in roots}))
    for top, dirnames, filenames in (step for walk in walks for step in walk):
        if seen >= MAX_SWEEP:
            break
        seen += len(filenames) + len(dirnames)
        for name in filenames + dirnames:
            try:
                st = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            hit = None if stat.S_ISDIR(st.st_mode) else forged(data, os.path.join(top, name), st)
            if hit:
                found[hit[0]] = hit[1]
    record_inodes(home, found, start if seen >= MAX_SWEEP else None)
    return seen


def _in_window(data: dict, real: str, ctime: int) -> int:
    """The index (in `_windows`) of a taint window covering `real` at the moment `ctime` (-1 when none does)."""
    starts, rows, reach, _ = _windows(data)
    i = bisect.bisect_right(starts, ctime)  # windows that started before the change, latest first
    while i > 0 and reach[i - 1] >= ctime:  # ... while one of them may still have been open then
        i -= 1
        end, roots, _source, w = rows[i]
        if end is None:  # open: its session runs, or crashed (then it ended at its last sign of life)
            end = time.time_ns() if _alive(w) else (w.get("last") or starts[i]) + SLACK_NS
        if ctime <= end and _under(real, roots):
            return i
    return -1


Parsed = tuple[list[int], list[tuple], list[float], list[int]]
_last: list = [None, None]  # the ledger dict last parsed, and its windows


def _windows(data: dict) -> Parsed:
    """The ledger's taint windows sorted by start, with the latest end reached up to each (an open window reaches
    forever) and the indexes of those not swept whole: parsed once per ledger read."""
    if _last[0] is data:
        return _last[1]
    ws = sorted((w for w in data.get("taint_windows", []) if isinstance(w.get("start"), int)), key=lambda w: w["start"])
    starts = [w["start"] for w in ws]
    rows = [(w.get("end"), w.get("roots") or [], str(w.get("source") or "untrusted content"), w) for w in ws]
    reach, top = [], 0.0
    for end, *_ in rows:
        top = max(top, float("inf") if end is None else end)
        reach.append(top)
    unswept = [k for k, row in enumerate(rows) if row[3].get("unswept")]
    _last[:] = [data, (starts, rows, reach, unswept)]
    return starts, rows, reach, unswept


def session_source(home: Path | str, session_id: str) -> tuple[float, str] | None:
    """(since, source) when the session `session_id` had taken in untrusted content, else None."""
    row = _read(ledger_path(home)).get("taint_sessions", {}).get(session_id)
    return (float(row[0]), str(row[1])) if isinstance(row, list) and len(row) == 2 else None
