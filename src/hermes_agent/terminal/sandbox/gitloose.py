"""Loose objects of a git repository judged after confined work (gitobjects.py watches; this reads): each file
named like an object is inflated and hashed, and what is not the object its name says is removed (a copy kept
in the quarantine) and, when the work tree still holds the content, written again from it.

Never the user's own: an object is known by its inode, size, mtime and ctime (`ident`, taken while nothing
confined ran, and after each check); one that is still that file is not read at all, whatever happened to its
directory (rt15 d10: every `objects/??` moved away and back made all of them "new"). A known object that was
written to is read whole (no budget: its size is the user's, not the attacker's). Only what confined work
wrote shares the read budget, smallest first; what the budget does not reach is neither trusted nor deleted:
it is renamed `<id>.unverified` in its directory (git does not see it; nothing copied, nothing lost) and one
line per repository says so. Stdlib only; nothing happens at import."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat as st
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hermes_agent.nofollow import read_regular, write_at

Stash = Callable[[str, bytes | None], str]
Ident = tuple[int, int, int, int, int]
_LOOSE = {38: "sha1", 62: "sha256"}  # hex digits after the fan-out directory's two
VERIFY_BUDGET = 512 << 20  # bytes of new loose objects read per check, smallest first; past it: set aside
_FIRST = 4096  # the first read of each object: a pad that is no zlib stream costs this much, whatever its size
_ASIDE = ".unverified"
KEEP_PER_CHECK = 64 << 20  # bytes of removed objects copied to the quarantine in one check (rt15 d10: 514 MB)
_SHOWN = 20  # lines of removed objects shown in one check; past it, half of them and a count
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def ident(path: str) -> Ident | None:
    """(device, inode, size, mtime, ctime) of a plain file, None otherwise: a write or chmod changes the ctime,
    which no call can set back; a rename of its directory changes none of them."""
    try:
        s = os.lstat(path)
    except OSError:
        return None
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns) if st.S_ISREG(s.st_mode) else None


def idents(d: str) -> dict[str, Ident]:
    """`ident` of each file named like a loose object in fan-out directory `d` (read through one open
    directory: about half the cost of an lstat by path each)."""
    out: dict[str, Ident] = {}
    try:
        fd = os.open(d, _DIR)
    except OSError:
        return out
    try:
        with os.scandir(fd) as entries:
            for e in entries:
                try:
                    s = e.stat(follow_symlinks=False) if len(e.name) in _LOOSE else None
                except OSError:
                    continue
                if s is not None and st.S_ISREG(s.st_mode):
                    out[os.path.join(d, e.name)] = (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    finally:
        os.close(fd)
    return out


@dataclass
class _Pass:
    """One check's state: what is left of the read budget and of the quarantine's share, what was set aside."""
    stash: Stash
    budget: list[int] = field(default_factory=lambda: [VERIFY_BUDGET])
    keep: int = KEEP_PER_CHECK
    unkept: int = 0
    aside: dict[str, int] = field(default_factory=dict)  # objects directory -> object files set aside unread


def judge_all(todo: Iterable[tuple[str, str, str]], stash: Stash, known: Mapping[str, Ident]) -> list[str]:
    """Each (fan-out directory, name, work tree) judged: a known object still the same file is skipped; a known
    one written to (not grown) is read whole; the rest, what confined work wrote, within `VERIFY_BUDGET`,
    the smallest first (by apparent size: a sparse pad sorts last). One line per action (past `_SHOWN`, a
    count), one per repository for what was set aside unread, one for forgeries not copied."""
    mine: list[tuple[str, str, str]] = []
    new: list[tuple[int, str, str, str]] = []
    for d, n, wt in set(todo):
        path, was = os.path.join(d, n), known.get(os.path.join(d, n))
        now = ident(path)
        if was is not None and now == was:
            continue
        if was is not None and now is not None and now[2] <= was[2]:
            mine.append((d, n, wt))
        else:
            new.append((now[2] if now else 0, d, n, wt))
    p = _Pass(stash)
    lines = [ln for d, n, wt in sorted(mine) if (ln := _judge_loose(d, n, p, [1 << 62], wt))]
    lines += [ln for _s, d, n, wt in sorted(new) if (ln := _judge_loose(d, n, p, p.budget, wt))]
    if len(lines) > _SHOWN:
        lines[_SHOWN // 2:] = [f"... and {len(lines) - _SHOWN // 2} more loose objects removed or put back the "
                               "same way"]
    if p.unkept:
        lines.append(f"{p.unkept} of them not copied to the quarantine (past {KEEP_PER_CHECK >> 20} MB in one check)")
    return lines + [f"{objects}: hermes could not check {count} object file(s) this command wrote (past "
                    f"{VERIFY_BUDGET >> 20} MB read in one check): each is renamed <id>{_ASIDE} in its directory, "
                    "so git does not use it (nothing deleted); `git fsck` names what is now missing"
                    for objects, count in sorted(p.aside.items())]


def _set_aside(dfd: int, name: str) -> bool:
    """`name` renamed `name.unverified` (another suffix when that exists) in the same directory: no copy."""
    for n in range(1, 100):
        target = name + _ASIDE + (f".{n}" if n > 1 else "")
        try:
            os.stat(target, dir_fd=dfd, follow_symlinks=False)
            continue
        except FileNotFoundError:
            pass
        except OSError:
            continue
        try:
            os.rename(name, target, src_dir_fd=dfd, dst_dir_fd=dfd)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    return False


def _judge_loose(d: str, name: str, p: _Pass, budget: list[int], worktree: str) -> str:
    """'' when `d/name` is absent, not an object's name (git's temporary files) or hashes to its name; else
    it is removed (saved to the quarantine first) and, when a file of the work tree the index lists under
    that id still has the content, the object is written again from it: the line says which. One the budget
    left unread is set aside (`_set_aside`), counted by its objects directory; where that rename fails, it is
    removed as a forgery would be (fail closed). What was read of a removed one is copied within `p.keep`."""
    algo = _LOOSE.get(len(name))
    if algo is None or not all(c in "0123456789abcdef" for c in name):
        return ""
    try:
        dfd = os.open(d, _DIR)
    except OSError:
        return ""
    try:
        ok, data = _verify(dfd, name, os.path.basename(d) + name, algo, budget)
        if ok:
            return ""
        if ok is None and _set_aside(dfd, name):
            p.aside[os.path.dirname(d)] = p.aside.get(os.path.dirname(d), 0) + 1
            return ""
        path = os.path.join(d, name)
        saved = ""
        if data is not None and len(data) <= p.keep:  # what was read of it (at most 8 MB: a forgery's head)
            p.keep -= len(data)
            saved = p.stash(path, data)
        elif data:
            p.unkept += 1
        elif os.path.islink(path):  # where it pointed (a directory named like an object: not copied)
            saved = p.stash(path, None)
        moved = False
        try:
            if st.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):  # renamed, not copied
                moved = _set_aside(dfd, name)
                if not moved:
                    shutil.rmtree(name, dir_fd=dfd)
            else:
                os.unlink(name, dir_fd=dfd)
        except FileNotFoundError:
            pass
        source = _restore(dfd, name, os.path.basename(d) + name, algo, worktree)
        done = (f"put back from {source}" if source else f"a directory: renamed {name}{_ASIDE}" if moved else
                "removed (`git fsck` names what is now missing; a fetch or re-add restores it)")
        why = ("its content is not the git object it names (git would hand it out in place of the committed one)"
               if ok is False else "not verified (past the check's budget) and it could not be set aside")
        return f"{path}: {why}: {done}{_at(saved)}"
    finally:
        os.close(dfd)


def _restore(dfd: int, name: str, oid: str, algo: str, worktree: str) -> str:
    """Write object `oid` again from a work-tree file the index lists under that id, if it still hashes to it;
    the file's path, or "" (no index, a version 4 index, no such file)."""
    if not worktree:
        return ""
    for rel in _index_paths(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(
            f"/proc/self/fd/{dfd}"))), "index"), oid, algo):
        path = os.path.join(worktree, rel)
        data = _read(path)
        if data is None:
            continue
        body = b"blob %d\0" % len(data) + data
        if hashlib.new(algo, body).hexdigest() != oid:
            continue
        try:
            write_at(dfd, name, zlib.compress(body), mode=0o444)
        except OSError:
            return ""
        return path
    return ""


def _index_paths(index: str, oid: str, algo: str) -> list[str]:
    """Paths the index (version 2 or 3) lists with object id `oid`."""
    data = _read(index) or b""
    size, want = hashlib.new(algo).digest_size, bytes.fromhex(oid)
    return [path for pos, path, _flags in index_entries(data, size) if data[pos + 40:pos + 40 + size] == want]


def index_entries(data: bytes, size: int) -> Iterable[tuple[int, str, int]]:
    """(offset, path, offset of its 16-bit flags) of each entry of an index of version 2 or 3 (`size`: the
    object id's length): the flags hold assume-unchanged (0x8000); extended (0x4000) means two more bytes
    follow, with skip-worktree (0x4000). Nothing for another version (4 compresses paths)."""
    if data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
        return
    pos = 12
    for _ in range(int.from_bytes(data[8:12], "big")):
        flags = int.from_bytes(data[pos + 40 + size:pos + 42 + size], "big")
        start = pos + 42 + size + (2 if flags & 0x4000 else 0)
        end = data.find(b"\0", start)
        if end < 0:
            return
        yield pos, os.fsdecode(data[start:end]), pos + 40 + size
        pos += (end - pos + 8) & ~7


def _verify(dfd: int, name: str, oid: str, algo: str, budget: list[int]) -> tuple[bool | None, bytes | None]:
    """(content hashes to `oid`, the raw bytes when small enough to keep); gone counts as fine. The budget is
    charged by the bytes read, as they are read: a file that is no zlib stream (a pad of zeros, sparse or
    not) fails on its first read, of 4 KB, at that cost; past the budget the answer is None (not known)."""
    try:
        fd = os.open(name, _OPEN, dir_fd=dfd)
    except FileNotFoundError:
        return True, None
    except OSError:
        return False, None  # a link or worse: git would follow it
    try:
        s = os.fstat(fd)
        if not st.S_ISREG(s.st_mode):
            return False, None
        kept: list[bytes] = []
        inflate, digest = zlib.decompressobj(), hashlib.new(algo)
        while chunk := os.read(fd, 1 << 20 if kept else _FIRST):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                return None, b"".join(kept)  # not verified: the caller does not keep it
            if len(kept) < 8:
                kept.append(chunk)
            try:
                digest.update(inflate.decompress(chunk))
            except zlib.error:
                return False, b"".join(kept)
        try:
            tail = inflate.flush()
        except zlib.error:
            return False, b"".join(kept)
        digest.update(tail)
        ok = inflate.eof and not inflate.unused_data and digest.hexdigest() == oid
        if ok and s.st_mode & 0o222:
            os.fchmod(fd, st.S_IMODE(s.st_mode) & ~0o222)  # a write in place needs a chmod: reported
        return ok, b"".join(kept)
    finally:
        os.close(fd)



def _read(path: str) -> bytes | None:
    """The file's bytes; None when absent or not a plain file (a link, a FIFO: `_sig` still sees it)."""
    try:
        return read_regular(path)
    except OSError:
        return None


def _at(saved: str) -> str:
    return f"; saved to {saved}" if saved else ""
