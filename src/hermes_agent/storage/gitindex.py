"""Does a git work tree hold uncommitted changes to tracked files? Answered without running git: the
repository's index file (read as data: regular file, no symlink followed, size-capped; cached by its
stat) lists each tracked file's size and mtime, and one lstat per file says which no longer match.
The answer is "may be modified" (git itself would then compare contents); a file deleted from the work tree
loses nothing (its content is committed or staged) and is not counted. Index versions 2-4, SHA-1 and SHA-256.

The repository is the sandbox's workspace: a forged index can only make this say "clean" for a tree that
the confined side could destroy anyway, and parsing never runs anything."""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass

from hermes_agent.nofollow import read_regular, read_regular_text

MAX_INDEX_BYTES = 64 << 20
MAX_ENTRIES = 100_000
_HEAD = struct.Struct(">4sII")
_STAT = struct.Struct(">10I")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size
_GITLINK = 0o160000


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    mtime_s: int
    mtime_ns: int
    size: int


class IndexError_(ValueError):
    """The index is not one this parser reads (bad magic, version, truncated)."""


def repo_root(start: str, stop: str | None = None) -> tuple[str, str] | None:
    """(work tree root, git dir) of the repository holding `start`, walking up to `stop` or /. A `.git` file
    (worktrees, submodules) names its git dir ("gitdir: PATH")."""
    probe = os.path.realpath(start)
    stop_at = os.path.realpath(stop) if stop else None
    while True:
        dot = os.path.join(probe, ".git")
        try:
            st = os.lstat(dot)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            return probe, dot
        if st is not None and stat.S_ISREG(st.st_mode):
            try:
                line = read_regular_text(dot, limit=4096).strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            target = line[len("gitdir:"):].strip()
            return probe, os.path.normpath(os.path.join(probe, target))
        parent = os.path.dirname(probe)
        if parent == probe or probe == stop_at:
            return None
        probe = parent


def parse_index(data: bytes, hash_len: int = 20) -> list[Entry]:
    """The stage-0 entries of an index file's bytes (gitlinks and skip-worktree entries left out)."""
    if len(data) < _HEAD.size:
        raise IndexError_("index too short")
    magic, version, count = _HEAD.unpack_from(data, 0)
    if magic != b"DIRC" or version not in (2, 3, 4) or count > MAX_ENTRIES:
        raise IndexError_(f"unsupported index (magic {magic!r}, version {version}, {count} entries)")
    out: list[Entry] = []
    pos, prev = _HEAD.size, b""
    fixed = _STAT.size + hash_len + 2
    for _ in range(count):
        if pos + fixed > len(data):
            raise IndexError_("index truncated")
        fields = _STAT.unpack_from(data, pos)
        flags = int.from_bytes(data[pos + fixed - 2:pos + fixed], "big")
        head = fixed + (2 if flags & 0x4000 and version >= 3 else 0)
        skip_worktree = head > fixed and bool(int.from_bytes(data[pos + fixed:pos + head], "big") & 0x4000)
        start = pos + head
        if version == 4:
            strip, start = _varint(data, start)
            end = data.index(b"\0", start)
            if strip > len(prev):
                raise IndexError_("index path prefix out of range")
            name = prev[:len(prev) - strip] + data[start:end]
            pos = end + 1
        else:
            end = data.index(b"\0", start)
            name = data[start:end]
            pos += ((head + len(name)) // 8 + 1) * 8
        prev = name
        if (flags >> 12) & 3 == 0 and not skip_worktree and fields[6] & 0o170000 != _GITLINK:
            out.append(Entry(name.decode("utf-8", "surrogateescape"), fields[2], fields[3], fields[9]))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    c = data[pos]
    pos += 1
    val = c & 127
    while c & 128:
        c = data[pos]
        pos += 1
        val = ((val + 1) << 7) | (c & 127)
    return val, pos


class IndexCache:
    """Parsed indexes, kept while the index file's (inode, size, mtime) stays the same."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple, list[Entry], int]] = {}

    def entries(self, git_dir: str) -> tuple[list[Entry], int] | None:
        """(entries, index mtime in ns) of the repository at `git_dir`; None when it has no readable index."""
        path = os.path.join(git_dir, "index")
        try:
            st = os.lstat(path)
        except OSError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self._cache.get(git_dir)
        if hit is not None and hit[0] == key:
            return hit[1], hit[2]
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_INDEX_BYTES:
            return None
        try:
            entries = parse_index(read_regular(path, limit=MAX_INDEX_BYTES), _hash_len(git_dir))
        except (OSError, ValueError, IndexError):
            return None
        self._cache[git_dir] = (key, entries, st.st_mtime_ns)
        return entries, st.st_mtime_ns


def _hash_len(git_dir: str) -> int:
    try:
        config = read_regular_text(os.path.join(git_dir, "config"), limit=1 << 20).lower()
    except OSError:
        config = ""
    return 32 if "objectformat = sha256" in config or "objectformat=sha256" in config else 20


def modified(root: str, entries: list[Entry], index_mtime_ns: int) -> list[tuple[str, int, int]]:
    """(path, size, mtime ns) of tracked files whose size or mtime no longer matches the index, or whose mtime
    is not older than the index itself (git's "racily clean" case: a same-second change is invisible to stat)."""
    out = []
    prefix, lstat = root.rstrip("/") + "/", os.lstat
    for e in entries:
        try:
            st = lstat(prefix + e.path)
        except OSError:
            continue  # deleted: nothing uncommitted is lost
        ns = st.st_mtime_ns
        if (st.st_size & 0xFFFFFFFF) != e.size or ns // 1_000_000_000 != e.mtime_s \
                or (e.mtime_ns and ns % 1_000_000_000 != e.mtime_ns) or ns >= index_mtime_ns:
            out.append((e.path, st.st_size, ns))
    return out
