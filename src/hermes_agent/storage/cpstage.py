"""A checkpoint's tree built without git reading the work tree: `git add` opens each file by a path string,
so a directory the sandbox swapped for a symlink to ~/.ssh mid-snapshot put the user's private key into the
store (and a restore then wrote it into the workspace). Here git only lists names (`ls-files --others`, which
honours the excludes); each directory is opened once by hermes_agent.nofollow.open_dir (a walk of O_NOFOLLOW
opens) and its files are fstatat/openat'd relative to that fd, never followed; their bytes become loose
objects of the store (HERMES_HOME, hidden from the sandbox) and the tree is made by `update-index
--index-info` + `write-tree`. A name reached through a link is left out of the snapshot. Unchanged files are
not read again: a stat cache beside the index keys each name by (device, inode, size, mtime, ctime)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat as stat_mod
import zlib
from collections.abc import Callable
from pathlib import Path

from hermes_agent.nofollow import open_dir


def stage_tree(git: Callable[..., str], wd: str, store: Path, index: str, names: list[str],
               max_file_bytes: int) -> str:
    """The tree id of `names` (files below `wd`, as git listed them) read without following any link;
    `index` is left holding it (for `git diff --cached`)."""
    cache_path = Path(index + ".stat")
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    fresh: dict[str, list] = {}
    dirs: dict[str, int | None] = {}
    try:
        for name in names:
            head, _, base = name.rpartition("/")
            if head not in dirs:  # each directory opened once, by the no-follow walk
                try:
                    dirs[head] = open_dir(os.path.join(wd, head), create=False)
                except OSError:
                    dirs[head] = None
            fd = dirs[head]
            entry = None if fd is None else _entry(fd, base, store, cache.get(name), max_file_bytes)
            if entry is not None:
                fresh[name] = entry
    finally:
        for fd in dirs.values():
            if fd is not None:
                os.close(fd)
    for name in [n for n in fresh if _under_an_entry(n, fresh)]:  # a link and files below its name: the
        del fresh[name]  # listing raced a swap; the files were read through their own directory's fd
    records = "".join(f"{e[0]} {e[1]}\t{name}\0" for name, e in fresh.items())
    with contextlib.suppress(FileNotFoundError):
        os.unlink(index)
    git("update-index", "-z", "--index-info", index=index, stdin=records.encode("utf-8", "surrogateescape"))
    tree = git("write-tree", index=index).strip()
    with contextlib.suppress(OSError):
        cache_path.write_text(json.dumps(fresh), encoding="utf-8")
    return tree


def _under_an_entry(name: str, entries: dict[str, list]) -> bool:
    head = name.rpartition("/")[0]
    while head:
        if head in entries:
            return True
        head = head.rpartition("/")[0]
    return False


def _entry(parent: int, name: str, store: Path, cached: list | None, limit: int) -> list | None:
    """[mode, sha, dev, ino, size, mtime_ns, ctime_ns] of `name` in directory fd `parent`; None when it is
    gone, too large, or not a file or link."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        if stat_mod.S_ISLNK(st.st_mode):
            mode = "120000"
        elif stat_mod.S_ISREG(st.st_mode) and st.st_size <= limit:
            mode = "100755" if st.st_mode & 0o100 else "100644"
        else:
            return None
        if cached is not None and cached[0] == mode and cached[2:] == key:
            return cached
        data = os.readlink(name, dir_fd=parent).encode("utf-8", "surrogateescape") if mode == "120000" \
            else _read(parent, name)
    except OSError:
        return None
    return [mode, _put_blob(store, data), *key]


def _read(parent: int, name: str) -> bytes:
    """The bytes of regular file `name` in `parent` (O_NOFOLLOW; a FIFO swapped in is not waited on)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _put_blob(store: Path, data: bytes) -> str:
    """Write `data` as a loose blob of the store (if missing); its id."""
    raw = b"blob %d\0" % len(data) + data
    sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    folder = store / "objects" / sha[:2]
    final = folder / sha[2:]
    if final.exists():
        return sha
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"tmp_obj_hermes_{os.urandom(6).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zlib.compress(raw, 1))
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sha
