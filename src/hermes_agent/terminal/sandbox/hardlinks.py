"""Hard links that existed before the session (issue 19, red-team round 11 a43/a47): a regular file in a writable
root may share its inode with a name OUTSIDE every writable root — uv and pnpm hard-link package files from their
store (~/.cache/uv, the pnpm store) into each project's venv / node_modules, `git clone ~/upstream` hard-links
.git/objects. Neither mechanism can refuse a write by inode: appending to the workspace's name writes the store and
every other project using it, run unconfined.

So before the first confined command the unconfined side walks the writable roots once, counting the names it
finds for each inode with st_nlink > 1: an inode with fewer names inside the writable roots than links has a name
elsewhere, and each of its names inside is **copied apart** — same bytes, mode, owner, times, in the same
directory under a temporary name, then renamed over the original (atomic: a reader sees the old or the new file);
several names of one inode inside stay linked to each other (the copy is linked, not copied again). A file linked
twice only INSIDE the writable roots is left alone. What lies under a read-only carve-out or a hidden path inside
a root counts as outside (the sandbox cannot write it); a carve-out only bwrap keeps read-only (Landlock without a
mount namespace writes it, the guard puts it back) is walked too, and its names are copied apart as a group of
their own when the inode also has a name outside. New links cannot be made later: `link()` from a read-only
place into a writable one fails with EXDEV under both mechanisms (bwrap: another mount; Landlock: REFER), and the
sandbox's environment asks uv and pnpm/npm to copy (`COPY_ENV`), so they do not even try.

Why copying and not a read-only bind per file: `uv sync` / `pip install -U` replace package files by rename or
unlink, which fails with EBUSY on a mount point, a venv has thousands of files (one mount each) and Landlock
without a mount namespace has no binds at all. The cost is disk (the copy) and one walk per session start:
`bench/bench_hardlinks.py`. Directories are opened with no symlink followed; a file is copied from the fd whose
(dev, ino) was counted. Bounded: past `BUDGET` entries the rest is not looked at and the line says where.
Stdlib only; nothing happens at import."""

from __future__ import annotations

import errno
import fcntl
import os
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

BUDGET = 500_000  # directory entries looked at per session start (~5 s on a loaded machine)
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")  # approval/policy.py's: never walked (`plan`)
COPY_ENV = {"UV_LINK_MODE": "copy", "npm_config_package_import_method": "copy"}
_FICLONE = 0x40049409
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOATIME", 0)


@dataclass
class Result:
    """What one walk did: files copied apart (paths), their bytes, failures (path, reason), unwalked dirs."""

    copied: list[str] = field(default_factory=list)
    size: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    entries: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = []
        if self.copied:
            out.append(f"hermes copied {len(self.copied)} file(s) ({_size(self.size)}) of the writable folders apart from "
                       f"hard links outside them (a package store, another checkout), so a command writing them "
                       f"cannot change those: {_few(self.copied)}")
        if self.failed:
            path, why = self.failed[0]
            out.append(f"{len(self.failed)} file(s) share their data with a file outside the writable folders and "
                       f"could not be copied apart ({path}: {why}); a command writing them changes that file too")
        if self.unchecked:
            out.append(f"too many files to look for hard links outside the writable folders (over {BUDGET:,}): "
                       f"not checked: {_few(self.unchecked)}")
        return out


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _few(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


class Stopped(Exception):
    """The walk was called off (`stop()` said so): nothing was copied, nothing is noted as done."""


def separate(roots: Iterable[str], keep_out: Iterable[str] = (), budget: int = BUDGET,
             loose: Iterable[str] = (), stop: Callable[[], bool] | None = None) -> Result:
    """Walk `roots` (the sandbox's writable roots; `keep_out`: paths inside them it cannot write) and copy apart
    every regular file that shares its inode with a name outside them. `loose`: those of `keep_out` that only
    one mechanism keeps read-only (bwrap's binds; Landlock without a mount namespace writes them and the guard
    puts them back): walked too, their names copied apart as a group of their own when the inode has a name
    outside both — and a writable name of an inode that also has one there is copied apart from it. `stop`:
    asked every 64 directories; True raises Stopped (the session is closing). See the module doc."""
    start = time.perf_counter()
    tops = tuple(dict.fromkeys(os.path.realpath(r) for r in roots))
    skip = frozenset(os.path.realpath(p) for p in keep_out)
    res = Result()
    found: dict[tuple[int, int], list] = {}  # (dev, ino) -> [st_nlink, size, writable names, loose names]
    left = [budget]
    walk = _Walk(frozenset(tops), skip, frozenset(os.path.realpath(p) for p in loose), found, left, res, stop)
    for top in tops:  # a root inside a read-only carve-out is writable all the same (bound deeper)
        if top not in skip:
            walk.run(top)
    res.entries = budget - left[0]
    apart = []  # (dev, ino, size, names to copy apart as one group)
    for (dev, ino), (nlink, size, inside, kept) in found.items():
        if len(inside) + len(kept) < nlink:  # a name outside every root
            apart += [(dev, ino, size, group) for group in (inside, kept) if group]
        elif inside and kept:  # a writable name of a file the sandbox must not change
            apart.append((dev, ino, size, inside))
    if apart:
        _copy_apart(apart, res)
    res.seconds = time.perf_counter() - start
    return res


@dataclass
class _Walk:
    """Every directory below a root, no symlink followed; names of regular files with st_nlink > 1 noted in
    `found` (index 2: writable, 3: in a `loose` carve-out). Other roots are walked on their own; `skip` paths
    are not entered unless `loose`."""

    roots: frozenset[str]
    skip: frozenset[str]
    loose: frozenset[str]
    found: dict
    left: list[int]
    res: Result
    stop: Callable[[], bool] | None = None

    def run(self, top: str) -> None:
        from hermes_agent.nofollow import open_nofollow

        skip_names = frozenset(os.path.basename(p) for p in self.skip)
        pending = [(top, 2)]
        seen = 0
        while pending:
            path, group = pending.pop()
            seen += 1
            if self.stop is not None and seen % 64 == 0 and self.stop():
                raise Stopped
            if self.left[0] <= 0:
                self.res.unchecked.append(path)
                continue
            try:
                fd = open_nofollow(path, _OPEN_DIR)
            except OSError:
                continue
            try:
                with os.scandir(fd) as it:
                    for e in it:
                        self.left[0] -= 1
                        at = group
                        sub = f"{path}/{e.name}" if path != "/" else f"/{e.name}"
                        if e.name in skip_names and sub in self.skip:
                            if sub not in self.loose:
                                continue  # hidden or read-only under every mechanism: counted as outside
                            at = 3
                        if e.is_dir(follow_symlinks=False):
                            if sub not in self.roots:
                                pending.append((sub, at))
                        elif e.is_file(follow_symlinks=False):
                            self._note(e, path, at)
            except OSError:
                pass
            finally:
                os.close(fd)

    def _note(self, e: os.DirEntry, path: str, group: int) -> None:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            return
        if st.st_nlink > 1:
            entry = self.found.setdefault((st.st_dev, st.st_ino), [st.st_nlink, st.st_size, [], []])
            entry[group].append((path, e.name))


def _copy_apart(apart: list[tuple[int, int, int, list[tuple[str, str]]]], res: Result) -> None:
    room: dict[int, int] = {}
    for dev, ino, size, names in sorted(apart, key=lambda item: item[3][0]):
        first = f"{names[0][0]}/{names[0][1]}"
        if dev not in room:
            try:
                vfs = os.statvfs(names[0][0])
                room[dev] = vfs.f_bavail * vfs.f_frsize - (vfs.f_blocks * vfs.f_frsize) // 50  # keep 2 % free
            except OSError:
                room[dev] = 0
        if size > room[dev]:
            res.failed.append((first, "not enough free disk space for the copy"))
            continue
        try:
            made = _copy_group(dev, ino, names)
        except OSError as exc:
            res.failed.append((first, exc.strerror or str(exc)))
            continue
        room[dev] -= size
        res.size += size
        res.copied += made


def _copy_group(dev: int, ino: int, names: list[tuple[str, str]]) -> list[str]:
    """Copy the first name of inode (dev, ino) apart, then link its other names inside to that copy."""
    from hermes_agent.nofollow import open_nofollow

    done: list[str] = []
    fresh: tuple[int, str] | None = None  # (dir fd, name) of the copy made for this inode
    fds: list[int] = []
    try:
        for dpath, name in names:
            dfd = open_nofollow(dpath, _OPEN_DIR)
            fds.append(dfd)
            tmp = f".{name[:180]}.hermes-apart-{os.getpid()}-{threading.get_ident() % 100000}"
            if fresh is None:
                _copy_one(dfd, name, tmp, dev, ino)
            else:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) != (dev, ino):
                    continue  # changed since the walk: not the shared inode any more
                os.link(fresh[1], tmp, src_dir_fd=fresh[0], dst_dir_fd=dfd, follow_symlinks=False)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            if fresh is None:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                with _APART_LOCK:
                    _APART[(st.st_dev, st.st_ino)] = (dev, ino)
            fresh = fresh or (dfd, name)
            done.append(f"{dpath}/{name}")
    finally:
        for fd in fds:
            os.close(fd)
    return done


def _copy_one(dfd: int, name: str, tmp: str, dev: int, ino: int) -> None:
    src = os.open(name, _OPEN_FILE, dir_fd=dfd)
    try:
        st = os.fstat(src)
        if not stat_mod.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (dev, ino):
            raise OSError(errno.ESTALE, "the file changed while it was looked at")
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            _copy_bytes(src, out, st.st_size)
            if os.geteuid() == 0 or st.st_gid != os.getegid():
                try:
                    os.fchown(out, st.st_uid, st.st_gid)
                except PermissionError:
                    pass  # a normal user cannot give a file away: it stays theirs
            os.fchmod(out, stat_mod.S_IMODE(st.st_mode))
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            os.close(out)
            os.unlink(tmp, dir_fd=dfd)
            raise
        os.close(out)
    finally:
        os.close(src)


def _copy_bytes(src: int, out: int, size: int) -> None:
    try:  # a reflink (btrfs, xfs): the copy shares no writes and costs no data
        fcntl.ioctl(out, _FICLONE, src)
        return
    except OSError:
        pass
    done = 0
    while done < size:
        try:
            n = os.copy_file_range(src, out, size - done)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            n = _plain_copy(src, out)
        if n == 0:
            break
        done += n


def _plain_copy(src: int, out: int) -> int:
    n = 0
    while chunk := os.read(src, 1 << 20):
        os.write(out, chunk)
        n += len(chunk)
    return n


def plan(spec) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:  # noqa: ANN001 - SandboxSpec
    """(roots to walk, paths inside them counted as outside) of a sandbox spec: its writable roots but the
    session's own fresh temp dirs and an MCP server's state dir holding its temp dir (hermes made them; so a
    server and the terminal of one workspace share one walk) and the shared ones (`sandbox.shared_tmp:
    true`: every local process writes there anyway, and a machine's /tmp may hold millions of entries; a
    workspace inside one is a root of its own and walked), its read-only carve-outs and hidden paths."""
    own = os.path.dirname(spec.private_tmp) if spec.private_tmp else ""  # an MCP server's state dir holds its tmp
    fresh = {os.path.realpath(p) for p in (*spec.extra, spec.private_tmp, own, *SHARED_TMP) if p}
    fresh -= {os.path.realpath(w) for w in spec.workspaces}
    roots = tuple(r for r in spec.writable if os.path.realpath(r) not in fresh)
    sealed, hidden = set(spec.sealed), set(spec.secrets)
    loose = tuple(p for p in spec.readonly if p not in sealed and p not in hidden)
    return roots, (*spec.readonly, *spec.sealed, *spec.secrets), loose


_LOCK = threading.Lock()  # one walk at a time
_DONE: set[tuple[str, ...]] = set()
_APART_LOCK = threading.Lock()  # the file tools look copies up while a walk runs
_APART: dict[tuple[int, int], tuple[int, int]] = {}  # (dev, ino) of a copy made apart -> the inode it was


def origin(st: os.stat_result) -> tuple[int, int] | None:
    """The (dev, ino) a file was a hard link of before this process copied it apart, or None. The file tools
    keep refusing a copy made apart from a private file (tools/builtin/_linkguard.py) in this process."""
    with _APART_LOCK:
        return _APART.get((st.st_dev, st.st_ino)) if _APART else None


def former_inodes() -> frozenset[tuple[int, int]]:
    with _APART_LOCK:
        return frozenset(_APART.values())


def once(roots: Iterable[str], keep_out: Iterable[str] = (), loose: Iterable[str] = (),
         stop: Callable[[], bool] | None = None) -> list[str] | None:
    """`separate` the first time this process meets this set of writable roots (a later set walks again: a link
    may join an old root and a new one); its lines, [] when done before, None when `stop` called it off."""
    key = tuple(sorted(dict.fromkeys(os.path.realpath(r) for r in roots)))
    with _LOCK:
        if not key or key in _DONE:
            return []
        try:
            lines = separate(key, keep_out, loose=loose, stop=stop).lines()
        except Stopped:
            return None
        _DONE.add(key)
        return lines
