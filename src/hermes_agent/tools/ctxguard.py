"""Context files as the next session loads them, read and put back without following a link: a snapshot of
named entries (stat + bytes, O_NOFOLLOW under directory fds) and the restore of an earlier state (old bytes
written to a temp name and renamed over, a new entry unlinked). The session's watch around confined calls
is tools/ctxwatch.py."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

# What the next session loads (memory/context_files.py) and what other agents read from a workspace.
WATCHED = ("AGENTS.md", "CLAUDE.md", ".hermes.md", "HERMES.md", "SOUL.md", ".cursorrules", ".windsurfrules",
           ".github/copilot-instructions.md")
_READ_CAP = 4 << 20  # bigger than any prompt cap: a larger file is kept by its stat alone
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Entry:
    """One watched name as it was: kind "absent", "file" (bytes + mode), "link" (target) or "other"."""

    kind: str
    data: bytes = b""
    mode: int = 0o644
    sig: tuple = ()


def runs_confined_code(approval: str) -> bool:
    """By the registry trait: tools approved as a "command" (shell, code, background processes) or as an
    "external" server (MCP tools, whose servers write to the workspace themselves)."""
    return approval in ("command", "external")


def watched_dirs(cwds: list[str]) -> list[str]:
    """The directories whose context files the next session loads: each cwd, then its parents up to the
    git root (memory/context_files.search_dirs)."""
    from hermes_agent.memory.context_files import search_dirs

    seen: list[str] = []
    for cwd in cwds:
        try:
            dirs = search_dirs(Path(cwd).resolve())
        except OSError:
            continue
        seen.extend(str(d) for d in dirs if str(d) not in seen)
    return seen


def _open_dir(path: str) -> int | None:
    """A directory fd for an absolute path, walked from / without following any symlink (None: absent)."""
    fd = os.open("/", _DIR_FLAGS)
    for part in [p for p in path.split("/") if p]:
        try:
            nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = nfd
    return fd


def _read_entry(dir_fd: int, name: str) -> Entry:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return Entry("absent")
    sig = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if stat.S_ISLNK(st.st_mode):
        return Entry("link", os.fsencode(os.readlink(name, dir_fd=dir_fd)), sig=sig)
    if not stat.S_ISREG(st.st_mode):
        return Entry("other", sig=sig)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        data = os.read(fd, _READ_CAP + 1) if st.st_size <= _READ_CAP else b""
        return Entry("file", data, stat.S_IMODE(st.st_mode), sig)
    finally:
        os.close(fd)


def snapshot_keys(keys: list[tuple[str, str]]) -> dict[tuple[str, str], Entry]:
    """Each (directory, relative name) as it is now, one directory fd per directory (opened with no symlink
    followed). Unreadable entries are kept as "other" (fail closed: any later difference is a change)."""
    from hermes_agent.nofollow import open_nofollow

    snap: dict[tuple[str, str], Entry] = {}
    fds: dict[str, int | None] = {}
    try:
        for d, rel in keys:
            sub, name = os.path.split(rel)
            where = os.path.join(d, sub) if sub else d
            if where not in fds:
                try:
                    fds[where] = open_nofollow(where, _DIR_FLAGS)
                except OSError:
                    fds[where] = None
            fd = fds[where]
            if fd is None:
                snap[(d, rel)] = Entry("absent")
                continue
            try:
                snap[(d, rel)] = _read_entry(fd, name)
            except OSError:
                snap[(d, rel)] = Entry("other")
    finally:
        for fd in fds.values():
            if fd is not None:
                os.close(fd)
    return snap


def snapshot(dirs: list[str]) -> dict[tuple[str, str], Entry]:
    """Every watched name in `dirs`, as it is now."""
    return snapshot_keys([(d, rel) for d in dirs for rel in WATCHED])


def same(a: Entry, b: Entry) -> bool:
    """The same entry for the next prompt: same kind and bytes (a file), same target (a link)."""
    if a.kind != b.kind:
        return False
    if a.kind == "file":
        return a.data == b.data and (a.data or a.sig == b.sig)
    return a.kind == "absent" or (a.data == b.data and a.sig[:3] == b.sig[:3])


def _remove(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except IsADirectoryError:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT,):
            if exc.errno in (errno.EISDIR, errno.EPERM) and stat.S_ISDIR(
                    os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                os.rmdir(name, dir_fd=dir_fd)
            else:
                raise


def _restore(dir_fd: int, name: str, old: Entry) -> None:
    if old.kind == "absent":
        _remove(dir_fd, name)
        return
    tmp = f".{name}.hermes-restore.{os.urandom(6).hex()}"  # a name the confined side cannot have made ready
    if old.kind == "link":
        os.symlink(os.fsdecode(old.data), tmp, dir_fd=dir_fd)
    elif old.kind == "file" and (old.data or not old.sig or old.sig[2] == 0):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, old.mode,
                     dir_fd=dir_fd)
        try:
            os.write(fd, old.data)
        finally:
            os.close(fd)
    else:
        raise OSError(errno.EPERM, "the earlier content is not known")
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def undo_changes(found: list[tuple[tuple[str, str], Entry, Entry]],
                 keep: object = None) -> list[tuple[str, bool, str]]:
    """Put back each (key, old, new) of `found` as `old`: [(path, put back?, where the displaced version was
    kept)]. `keep`: a hermes_agent.quarantine.Quarantine; what is at the name is copied there first (read at
    the moment it is displaced: the user's own edit mistaken for a command's is never lost)."""
    out: list[tuple[str, bool, str]] = []
    for key, old, _new in found:
        d, rel = key
        sub, name = os.path.split(rel)
        path = os.path.join(d, rel)
        fd = _open_dir(os.path.join(d, sub) if sub else d)
        saved = ""
        try:
            if fd is None:
                out.append((path, old.kind == "absent", ""))
                continue
            saved = keep.keep_at(fd, name, path) if keep is not None else ""  # type: ignore[attr-defined]
            _restore(fd, name, old)
            out.append((path, True, saved))
        except OSError:
            out.append((path, False, saved))
        finally:
            if fd is not None:
                os.close(fd)
    return out
