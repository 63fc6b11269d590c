"""The context-file ledger (issue 19 item 9): when confined code could write where (windows: a session's
first confined call to its end, with the roots its sandbox writes) and which contents of AGENTS.md & co. a
person or hermes vouched for (hashes). The loader holds back a file whose inode changed (ctime) inside a
window covering it unless its content is vouched for: whatever the guard around the calls missed (a
directory past its walk, a crash) does not become instructions unseen. ctime is set by the kernel: confined
code cannot put it back. The ledger lives in the Hermes root, which the sandbox cannot see. Stdlib only."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

MAX_WINDOWS = 1000  # oldest dropped past this (a file from before then loads like any other)
MAX_PATHS, MAX_HASHES = 2000, 8
_cache: dict[str, tuple[tuple, dict]] = {}


def ledger_path(home: Path | str) -> Path:
    """`<Hermes root>/cache/context_ledger.json` for a HERMES_HOME (profiles share their root's ledger; cache/ is
    hidden from commands except its work parts, and Hermes keeps no file of that name). Remembered per home: it
    is asked before and after every tool call."""
    hit = _ledger_paths.get(str(home))
    if hit is None:
        path = Path(home)
        root = path.parent.parent if path.parent.name == "profiles" else path
        hit = _ledger_paths[str(home)] = root / "cache" / "context_ledger.json"
    return hit


_ledger_paths: dict[str, Path] = {}


def digest(data: bytes) -> str:
    """What a vouch is for: the file's text as the prompt would see it (undecodable bytes replaced)."""
    return hashlib.sha256(data.decode("utf-8", "replace").encode("utf-8")).hexdigest()


def _proc_start(pid: int) -> str:
    """The kernel's start time of `pid` ("" when it is gone): a pid reused later does not match."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def _read(path: Path) -> dict:
    try:
        st = os.stat(path)
    except OSError:
        return {}
    sig = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _cache.get(str(path))
    if hit is not None and hit[0] == sig:
        return hit[1]
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    _cache[str(path)] = (sig, data)
    return data


@contextlib.contextmanager
def _update(home: Path | str) -> Iterator[dict]:
    """The ledger under its lock, written back atomically when the block ends."""
    import fcntl

    path = ledger_path(home)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _cache.pop(str(path), None)
        data = dict(_read(path))
        yield data
        data["windows"] = data.get("windows", [])[-MAX_WINDOWS:]
        vouched = data.get("vouched", {})
        data["vouched"] = dict(list(vouched.items())[-MAX_PATHS:])
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)


# The kernel stamps a change (a write, rename, chmod or link) with its coarse clock: the last tick, up to a jiffy
# (4-10 ms) behind time.time_ns(). A window starts at that clock's reading, which no later change can be stamped
# before (fine-grained stamps are never earlier); where it cannot be read, CLOCK_SLACK_NS before time.time_ns().
CLOCK_SLACK_NS = 20_000_000
_COARSE = 5  # CLOCK_REALTIME_COARSE (Linux; the time module does not name it)


def stamp_now_ns() -> int:
    """Now, on the clock the kernel stamps ctimes and mtimes with: every change made after this call carries a
    stamp at least this (a change made in the same tick just before it carries this stamp too)."""
    try:
        return time.clock_gettime_ns(_COARSE)
    except (OSError, AttributeError):
        return time.time_ns() - CLOCK_SLACK_NS


def open_window(home: Path | str, roots: Iterable[str], why: str = "") -> int:
    """Record that confined code may write under `roots` from now on; returns the window's start (its id).
    Windows of dead processes left open (a crash) are closed now: their end is not known, so it is now.
    `why`: what else writes there unseen (a restore from a checkpoint), for the held file's note."""
    start = stamp_now_ns()
    with _update(home) as data:
        windows = data.setdefault("windows", [])
        for w in windows:
            if w.get("end") is None and not _alive(w):
                w["end"] = start
        window = {"start": start, "end": None, "pid": os.getpid(), "pstart": _proc_start(os.getpid()),
                  "roots": sorted({os.path.realpath(r) for r in roots})}
        windows.append({**window, "why": why} if why else window)
    return start


@contextlib.contextmanager
def restoring(home: Path | str, workdir: str) -> Iterator[None]:
    """A restore from a checkpoint (`hermes checkpoints restore|rollback`, /rollback) is a window over `workdir`:
    a checkpoint may have recorded what confined code planted (red-team round 6 a12: a background process
    wrote AGENTS.md, the next file-tool write's checkpoint took it, a rollback put it back with a new ctime).
    A context file it writes loads only when its content was vouched for, else it is held back like any other."""
    start = open_window(home, [workdir], why="restored from a checkpoint")
    try:
        yield
    finally:
        close_window(home, start)


def close_window(home: Path | str, start: int) -> None:
    """Confined code of this session can write no more (its processes are gone)."""
    with _update(home) as data:
        for w in data.get("windows", []):
            if w.get("start") == start and w.get("pid") == os.getpid():
                w["end"] = time.time_ns()


def vouch(home: Path | str, items: Iterable[tuple[str, str]]) -> None:
    """Record (path, digest) pairs as content a person or hermes itself stands behind."""
    items = list(items)
    if not items:
        return
    with _update(home) as data:
        vouched = data.setdefault("vouched", {})
        for path, dig in items:
            hashes = [h for h in vouched.pop(path, []) if h != dig]
            vouched[path] = [*hashes, dig][-MAX_HASHES:]


def note_committed(home: Path | str, digests: Iterable[str]) -> None:
    """Contents a session's commands committed into a context-file name (tools/ctxcommits.py): held back wherever
    they appear, unless the same content is vouched for at some path."""
    with _update(home) as data:
        vouched = {h for hashes in data.get("vouched", {}).values() for h in hashes}
        committed = [h for h in data.get("committed", []) if h not in digests]
        data["committed"] = [*committed, *(d for d in dict.fromkeys(digests) if d not in vouched)][-MAX_PATHS:]


def _alive(w: dict) -> bool:
    pid = w.get("pid")
    return isinstance(pid, int) and bool(w.get("pstart")) and _proc_start(pid) == w.get("pstart")


def _under(path: str, roots: list) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots if isinstance(r, str))


def held(home: Path | str, path: str, ctime_ns: int, data: bytes, mtime_ns: int | None = None,
         st: os.stat_result | None = None) -> str:
    """Why the context file at `path` (inode changed at `ctime_ns`, content `data`) must not be loaded
    unasked ("" when it may): it changed while confined code could write there and nobody vouched for it.
    `mtime_ns`: its content's last change, judged too when earlier than the ctime (a chmod or chown alone
    afterwards says nothing about the content: taintledger.source_in). `st`: its stat, judged by the taint
    ledger too (a tainted session's write whose times it forged before a chmod moved its ctime: prov13)."""
    ledger = _read(ledger_path(home))
    if not ledger:
        return ""
    if st is not None and ledger.get("taint_inodes"):
        from hermes_agent.memory.taintledger import source_in

        source = source_in(ledger, os.path.realpath(path), st)
        if source and digest(data) not in ledger.get("vouched", {}).get(path, ()):
            return f"a hermes session's commands changed it after that session took in {source}, and nobody " \
                   "approved that content"
    if ledger.get("committed") and (dig := digest(data)) in ledger["committed"] and \
            dig not in ledger.get("vouched", {}).get(path, ()):
        return "a hermes session's commands committed this content into the repository (not through the " \
               "work tree), and nobody approved it"
    now = time.time_ns()
    for w in ledger.get("windows", []):
        start, end = w.get("start"), w.get("end")
        if not isinstance(start, int) or not _under(path, w.get("roots") or []):
            continue
        if end is None:
            end = now
        if start <= ctime_ns <= end or (mtime_ns is not None and mtime_ns < ctime_ns and start <= mtime_ns <= end):
            if digest(data) in ledger.get("vouched", {}).get(path, ()):
                return ""
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(start / 1e9))
            if w.get("why"):
                return f"it was {w['why']} ({when}), which may hold what a session's commands wrote, " \
                       "and nobody approved that content"
            return f"it changed while commands of a hermes session (started {when}) could write there, " \
                   "and nobody approved that content"
    return ""
