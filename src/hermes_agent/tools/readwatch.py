"""Provenance through reads nobody names (issue 19 item 9, prov8): a file a tainted session wrote taints the
conversation whose processes READ it, however they reached it (`find -exec cat {} +`, `cat $(ls)`, a script
that builds the name, an MCP server, a background job). taintmark.command_reads only sees names in the
command's text; this sees the opens.

How: the kernel's inotify, held by this (unconfined) process. When the taint ledger (memory/taintledger.py)
holds anything, the first tool call of a clean conversation (or the start of its MCP servers, which may read
at start-up what they serve later: bootstrap._start_mcp) walks the ledger's roots (where tainted sessions'
confined code could write; "/" — a session with the sandbox off — stands for this session's workspace) and
watches:

- every directory there (an open or read of any file inside it is reported with its name; the file is then
  judged by the ledger as read_file judges it: its inode changed inside a taint window, or it carries a mark);
- every file the ledger says is tainted, by inode (a hard link or a rename elsewhere still reports).

Events are collected before every tool call (what a background process or an MCP server read since the last
call) and after every call (what the call read). A read of a tainted file taints the conversation. Events come
from the kernel for the inode, whatever mount namespace (bwrap) or Landlock domain the reader is in; the
confined side can neither suppress nor forge them. Fail closed: a queue overflow, a walk past its bounds or
watches refused by the kernel make every confined command taint (said once, with the reason).

Files whose times a tainted session forged (`touch -d`, `cp -p`) are recorded in the ledger by the scan too
(taintledger `taint_inodes`: the sweep at a crashed session's end never ran).

Not seen: a read through a file descriptor opened before the watch existed (a process of another session that
kept the file open), and a hard link made before the walk into a directory outside the roots. Conservative:
hermes's own look at a tainted file (the run-later guard reading a hook it checks) counts as a read.

Cost: nothing while the ledger is empty (one cached stat); the walk once per conversation (a stat per file
under the roots: ~1 s per 100k files); per tool call one non-blocking read of the inotify descriptor."""

from __future__ import annotations

import logging
import os
import stat
import struct
import threading
from typing import TYPE_CHECKING

from hermes_agent.tools import readnames

if TYPE_CHECKING:
    from hermes_agent.tools.listwatch import ListWatch

log = logging.getLogger(__name__)

MAX_DIRS, MAX_FILES = 20_000, 200_000
_IN_ACCESS, _IN_OPEN, _IN_MOVED_TO, _IN_CREATE = 0x1, 0x20, 0x80, 0x100
_IN_Q_OVERFLOW, _IN_ISDIR = 0x4000, 0x40000000
_IN_ONLYDIR, _IN_DONT_FOLLOW, _IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
# folders: opens only (every read starts with one; IN_ACCESS per read() of every file would flood the queue)
_DIR_MASK = _IN_OPEN | _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR
_EVENT = struct.Struct("iIII")


class ReadWatch:
    """One conversation's inotify descriptor over the ledger's roots."""

    def __init__(self, home: str, workspace: list[str]) -> None:
        import ctypes

        self.home = home
        self.workspace = workspace
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        self.dirs: dict[int, str] = {}
        self.files: dict[int, tuple[str, str]] = {}  # wd -> (path, source)
        self.paths: set[str] = set()  # the paths of `files` (`not_to_read`)
        self.inodes: dict[tuple[int, int], tuple[str, str]] = {}
        self.texts = readnames.Texts()  # names, link targets, xattrs tainted sessions left (readnames.py)
        self.incomplete = "" if self.fd >= 0 else "the kernel gave no inotify descriptor"
        self.ledger_sig: tuple = ()
        self.nfiles = 0
        self.lists: ListWatch | None = None  # listings of folders holding such names (listwatch.py)
        self.listed: dict[str, tuple[str, str]] = {}  # folder -> (an entry there, its source)
        self.forged: dict[str, list[int]] = {}  # taintledger.forged verdicts the ledger lacks, recorded per scan

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.lists is not None:
            self.lists.close()

    def _add(self, path: str, mask: int) -> int:
        import ctypes

        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK)
        code = ctypes.get_errno() if wd < 0 else 0
        if code not in (0, 2, 20) and not self.incomplete:  # ENOENT, ENOTDIR: gone since the walk saw it
            self.incomplete = f"the kernel refused to watch {path} ({os.strerror(code)})"
        return wd

    def scan(self) -> None:
        """Watch the ledger's roots (again, after the ledger changed: new windows, new marks)."""
        from hermes_agent.memory import taintledger

        if self.fd < 0:  # no inotify here: `incomplete` says so, every confined call counts as a read
            return
        self.ledger_sig = _ledger_sig(self.home)
        data = self.data = taintledger.ledger_data(self.home)
        for path in data.get("taint_marks", {}):
            self._judge_file(path)
        roots: list[str] = []
        for w in data.get("taint_windows", []):
            for r in w.get("roots") or ():
                roots += self.workspace if r == "/" else [r] if isinstance(r, str) else []
        roots = sorted({os.path.realpath(r) for r in roots})
        roots = [r for i, r in enumerate(roots) if not any(r.startswith(o.rstrip("/") + "/") for o in roots[:i])]
        self.nfiles = 0
        for root in roots:
            self._walk(root)
        taintledger.record_inodes(self.home, self.forged)
        self.forged = {}

    def _walk(self, root: str) -> None:
        for top, dirnames, filenames in os.walk(root):
            if len(self.dirs) >= MAX_DIRS or self.nfiles >= MAX_FILES:
                self.incomplete = self.incomplete or f"more than {MAX_DIRS} folders or {MAX_FILES} files under {root}"
                return
            wd = self._add(top, _DIR_MASK)
            if wd >= 0:
                self.dirs[wd] = top
            self.nfiles += len(filenames)
            for name in filenames + dirnames:
                self._judge_entry(os.path.join(top, name))
        if self.texts.full:
            self.incomplete = self.incomplete or f"more than {readnames.MAX_TEXTS} names a tainted session made"

    def _judge_entry(self, path: str) -> None:
        """An entry os.walk found below a resolved root: a tainted regular file is watched by inode; the texts
        of an entry whose name a tainted session may have chosen are noted (readnames.py)."""
        try:
            st = os.lstat(path)
        except OSError:
            return
        source = self._judge_file(path, st) if stat.S_ISREG(st.st_mode) else None
        source = readnames.name_source(self.data, path, st, source)
        if source and self.texts.note(path, st, source):  # its folder's listings show it, however transformed
            if self.lists is None:
                from hermes_agent.tools.listwatch import ListWatch

                self.lists = ListWatch()
            self.lists.mark(os.path.dirname(path))
            self.listed.setdefault(os.path.dirname(path), (path, source))

    def _judge_file(self, path: str, st: os.stat_result | None = None) -> str:
        """`path`: resolved (the ledger's marks, or a regular file os.walk found below a resolved root); returns
        the ledger's source when it is tainted."""
        from hermes_agent.memory import taintledger

        try:
            st = st or os.lstat(path)
        except OSError:
            return ""
        if not stat.S_ISREG(st.st_mode):
            return ""
        hit = self.inodes.get((st.st_dev, st.st_ino))
        if hit is not None:
            return hit[1]
        source = taintledger.source_in(self.data, path, st)
        if source:
            self.inodes[(st.st_dev, st.st_ino)] = (path, source)
            forged = taintledger.forged(self.data, path, st)  # a crashed session's sweep never ran
            if forged and forged[0] not in self.data.get("taint_inodes", {}):
                self.forged[forged[0]] = forged[1]
            wd = self._add(path, _IN_OPEN | _IN_ACCESS)
            if wd >= 0:
                self.files[wd] = (path, source)
                self.paths.add(path)
        return source

    def reads(self, ran: bool) -> str:
        """Why the reads since the last look taint the conversation ("" when none of them does); `ran`: confined
        code of this conversation ran (then a watch that is not whole counts as a read)."""
        incomplete = self.incomplete or (self.lists.problem if self.lists is not None else "")
        if incomplete and ran:
            return f"a file a tainted session may have written (hermes could not watch them all: {incomplete})"
        if self.fd < 0:
            return ""
        chunks = []
        while True:  # everything queued: a tainted read may sit behind many clean ones
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            chunks.append(chunk)
            if len(chunk) < 4096:
                break
        data, pos, found = b"".join(chunks), 0, ""
        while pos + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, pos)
            name = data[pos + _EVENT.size:pos + _EVENT.size + size].rstrip(b"\0")
            pos += _EVENT.size + size
            if found:
                continue
            if mask & _IN_Q_OVERFLOW:
                found = "more file reads than hermes could follow, while tainted files were readable"
            elif mask & (_IN_CREATE | _IN_MOVED_TO):  # made since the walk (a concurrent tainted session): its
                if wd in self.dirs and name:  # name is judged, a folder walked
                    self._judge_entry(os.path.join(self.dirs[wd], os.fsdecode(name)))
                    if mask & _IN_ISDIR:
                        self._walk(os.path.join(self.dirs[wd], os.fsdecode(name)))
                continue
            elif mask & _IN_ISDIR:
                continue
            elif wd in self.files:
                found = self._why(*self.files[wd])
            elif wd in self.dirs and name:
                found = self._by_name(os.path.join(self.dirs[wd], os.fsdecode(name)))
        return found or self._listed()

    def _listed(self) -> str:
        folder = self.lists.listed() if self.lists is not None else ""
        if not folder:
            return ""
        entry, source = self.listed.get(folder, (folder, "untrusted content"))
        return (f"{entry}, whose name (or link target, or xattr) a process of this conversation listed (in "
                f"{folder}), made by a session after it took in {source}")

    def _by_name(self, path: str) -> str:
        from hermes_agent.memory import taintledger

        try:
            st = os.lstat(path)
        except OSError:
            return ""
        hit = self.inodes.get((st.st_dev, st.st_ino))
        if hit is not None:
            return self._why(*hit)
        source = taintledger.file_source(self.home, path, st) if stat.S_ISREG(st.st_mode) else ""
        return self._why(path, source) if source else ""

    def shows(self, result: str) -> str:
        """Why a tool result showing a text a tainted session put into a name, link or xattr taints ("" if not)."""
        hit = self.texts.find(result)
        if hit is None:
            return ""
        return (f"{hit[0]}, whose name (or link target, or xattr) a tool result of this conversation showed, "
                f"made by a session after it took in {hit[1]}")

    @staticmethod
    def _why(path: str, source: str) -> str:
        return f"{path}, read by a process of this conversation, written by a session after it took in {source}"


def _ledger_sig(home: str) -> tuple:
    """What of the ledger makes new tainted files: its windows and marks (not the context-file windows, nor a
    window's sign of life). Worked out once per parse of the ledger."""
    from hermes_agent.memory import taintledger

    data = taintledger.ledger_data(home)
    if _sig_cache[0] is not data:
        starts = tuple(w.get("start") for w in data.get("taint_windows", ()) if isinstance(w, dict))
        marks = tuple((k, str(v)) for k, v in data.get("taint_marks", {}).items())
        _sig_cache[:] = [data, (starts, marks)]
    return _sig_cache[1]


_sig_cache: list = [None, ()]


_LOCK = threading.Lock()  # parallel tool calls of one conversation look at the same watch


def look(ctx: object, when: str) -> None:
    """Before and after each tool call of a clean conversation: taint it when one of its processes read a file
    a tainted session wrote. Makes the watch on first need; `when` names the moment for the log."""
    if getattr(ctx, "untrusted", ""):
        return
    with _LOCK:
        _look(ctx, when)


def _look(ctx: object, when: str) -> None:
    watch = getattr(ctx, "read_watch", None)
    if watch is not None and watch.fd < 0:  # closed when the last conversation was tainted: this one is new
        watch = None
    home = str(ctx.settings.home)  # type: ignore[attr-defined]
    try:
        if watch is None:
            from hermes_agent.memory import taintledger

            if not taintledger.any_files(home):
                return
            from hermes_agent.tools.taintmark import _base_dir

            watch = ctx.read_watch = ReadWatch(home, [_base_dir(ctx)])  # type: ignore[attr-defined]
            watch.scan()
        elif watch.fd >= 0 and _ledger_sig(home) != watch.ledger_sig:
            watch.scan()
        why = watch.reads(bool(getattr(ctx, "traffic_watch", False)))
    except OSError:
        log.warning("could not follow the reads of tainted files (%s)", when, exc_info=True)
        return
    if why:
        ctx.taint(why)  # type: ignore[attr-defined]
        watch.close()


def not_to_read(ctx: object, path: str) -> bool:
    """True for a file this clean conversation's watch knows a tainted session wrote: hermes's own copy of the
    user's work (the uncommitted-work snapshot, storage/dirtyguard.py) leaves it out, since any open of it,
    hermes's included, counts as the conversation reading it (a snapshot made every later session tainted)."""
    watch = getattr(ctx, "read_watch", None)
    return watch is not None and watch.fd >= 0 and path in watch.paths


def not_to_list(ctx: object) -> list[str]:
    """The folders holding names a tainted session made (the listing watch's): hermes's own snapshot has git
    leave them out, since a listing by any process but hermes itself counts as the conversation's."""
    watch = getattr(ctx, "read_watch", None)
    return list(watch.listed) if watch is not None and watch.fd >= 0 else []


def shown(ctx: object, result: object) -> None:
    """After a tool call of a clean conversation: taint it when the result shows a text a tainted session left
    in metadata (a name, a link target, an xattr: readnames.py)."""
    watch = getattr(ctx, "read_watch", None)
    if watch is None or watch.fd < 0 or getattr(ctx, "untrusted", "") or not isinstance(result, str):
        return
    with _LOCK:
        why = watch.shows(result)
    if why:
        ctx.taint(why)  # type: ignore[attr-defined]
        watch.close()


def finish(ctx: object) -> None:
    watch = getattr(ctx, "read_watch", None)
    if watch is not None:
        watch.close()
        ctx.read_watch = None  # type: ignore[attr-defined]
