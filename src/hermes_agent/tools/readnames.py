"""Provenance through metadata (issue 19, red-team rt11 a34): a tainted session can put text where no file is
opened to read it back: a file or folder NAME, a symlink's TARGET, a user xattr's VALUE. `ls`, `find -printf
%l`, `getfattr -R`, `git status`, `tree` show it with getdents/readlink/getxattr, which inotify does not
report as a read of the file (readwatch.py), and inotify cannot tell a listing by a confined process from
hermes's own many listings of the workspace (the run-later guard, the context watch, the sandbox's views).

Rules: **a clean conversation is tainted when a tool result shows a text that a tainted session put into
metadata**, and when a process other than hermes lists a folder holding such a text (listwatch.py: fanotify
tells who listed). The read watch's walk over the ledger's roots (readwatch.py) collects, for every entry whose name a
tainted session may have chosen, the entry's name, its link target and its user xattr values (`carriers`); after
each tool call the result is searched for them, as written and as JSON writes them (`Texts.find`).

An entry's name counts when the entry changed inside a taint window: a file or link by its ctime (made,
renamed, linked, written: the kernel sets it, confined code cannot put it back); a folder by its birth time
(statx; a folder's ctime moves whenever an entry inside it changes, and its name did not change then) or, when
it was renamed in the window (ctime in the window, its entries not: mtime before it), by its ctime.

Not counted: a plain name (letters, digits, `._+-/`, at most PLAIN_MAX characters: `notes.txt`, a link to
`../lib/libz.so.1`; of any length in the folders tools fill: object ids, `.pyc` names), which a listing of what a tainted session made shows all the time and which cannot carry a
sentence (a message spelled by many plain names, one word each, is not followed). A text shown transformed
(`ls | base64`, a cut of it) is not searched for: the listing of its folder by any process but hermes taints
(listwatch.py). Not seen: a folder renamed together with a change of its entries inside one
window on a file system without birth times. Past MAX_TEXTS texts the watch counts as incomplete (readwatch:
every confined call taints). Stdlib only; cost: one lstat per entry is the walk's already; per tool call one
substring search per text in the result."""

from __future__ import annotations

import json
import os
import stat

MIN_TEXT, PLAIN_MAX, MAX_TEXTS = 4, 32, 20_000
_TOOL_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", "venv", "site-packages", ".tox", ".nox",
                        ".pytest_cache", ".mypy_cache", ".ruff_cache", ".cache", "target", "dist", "build"})
_STATX_BTIME, _AT_SYMLINK_NOFOLLOW, _AT_FDCWD = 0x800, 0x100, -100
_libc: list = []


def birth_ns(path: str) -> int:
    """The entry's birth time (ns since the epoch) from statx, 0 when the file system or libc has none."""
    import ctypes

    if not _libc:
        _libc.append(ctypes.CDLL(None, use_errno=True))
    statx = getattr(_libc[0], "statx", None)
    if statx is None:
        return 0
    buf = ctypes.create_string_buffer(256)
    if statx(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return 0
    mask = int.from_bytes(buf.raw[0:4], "little")
    if not mask & _STATX_BTIME:
        return 0
    return int.from_bytes(buf.raw[80:88], "little", signed=True) * 1_000_000_000 + \
        int.from_bytes(buf.raw[88:92], "little")


class _When:
    """A stat-like view for taintledger.source_in: the inode and the moment to judge."""

    def __init__(self, st: os.stat_result, ns: int) -> None:
        self.st_ino, self.st_ctime_ns = st.st_ino, ns


def name_source(data: dict, path: str, st: os.stat_result, file_source: str | None = None) -> str:
    """Why the name at `path` (resolved, lstat `st`) may carry a tainted session's text ("" when nothing says so);
    `file_source`: the ledger's verdict on a regular file's ctime, already worked out by the caller."""
    from hermes_agent.memory import taintledger

    if not stat.S_ISDIR(st.st_mode):
        return file_source if file_source is not None else taintledger.source_in(data, path, st)
    born = birth_ns(path)
    if born:
        source = taintledger.source_in(data, path, _When(st, born))
        if source:
            return source
    elif taintledger.source_in(data, path, st):  # no birth time here: the folder changed in a window at all
        return taintledger.source_in(data, path, st)
    if st.st_mtime_ns < st.st_ctime_ns and not taintledger.source_in(data, path, _When(st, st.st_mtime_ns)):
        return taintledger.source_in(data, path, st)  # renamed (or chmod'ed) in a window, its entries were not
    return ""


def carriers(path: str, st: os.stat_result) -> list[str]:
    """The texts an entry shows without being opened: its name, a symlink's target, its user xattr values."""
    texts = [os.path.basename(path)]
    if stat.S_ISLNK(st.st_mode):
        try:
            texts.append(os.readlink(path))
        except OSError:
            pass
    try:
        for key in os.listxattr(path, follow_symlinks=False):
            if key.startswith("user."):
                texts.append(os.getxattr(path, key, follow_symlinks=False).decode("utf-8", "replace"))
    except OSError:
        pass
    made_by_tools = not _TOOL_DIRS.isdisjoint(path.split("/"))
    return [t for t in (_printable(t) for t in texts) if _carries(t, made_by_tools)]


def _printable(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8").strip()


def _carries(text: str, made_by_tools: bool = False) -> bool:
    """Can the text carry an instruction: a space or punctuation beyond a file name's, or longer than PLAIN_MAX
    (`notes.txt`, `build_2024-01.log`, `../lib/libz.so.1` cannot; `ALWAYS deploy with --force` can). In the
    folders tools fill (`made_by_tools`: git objects, `__pycache__`, caches, venvs) long plain names are theirs
    (`mod.cpython-311-pytest-8.3.2.pyc`, object ids)."""
    if len(text) < MIN_TEXT:
        return False
    plain = all(c.isalnum() or c in "._+-/" for c in text)
    return not plain or (len(text) > PLAIN_MAX and not made_by_tools)


class Texts:
    """The metadata texts tainted sessions left under the watched roots: text -> (the entry, the source)."""

    def __init__(self) -> None:
        self.texts: dict[str, tuple[str, str]] = {}
        self.full = False

    def note(self, path: str, st: os.stat_result, source: str) -> bool:
        """Note the entry's carriers; True when it has any (its folder's listings then count: listwatch.py)."""
        texts = carriers(path, st)
        for text in texts:
            if len(self.texts) >= MAX_TEXTS:
                self.full = True
                return True
            for shown in {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}:
                self.texts.setdefault(shown, (path, source))
        return bool(texts)

    def find(self, result: str) -> tuple[str, str] | None:
        """(entry, source) of the first text `result` shows (as written, or as JSON writes it); None when none."""
        if not self.texts or not isinstance(result, str):
            return None
        return next((hit for text, hit in self.texts.items() if text in result), None)
