"""Context files judged by outcome: once a conversation has taken in untrusted content, a call that runs
confined code (terminal, process, execute_code, an MCP tool) must not leave a planted AGENTS.md & co. for
the next session. The files the next prompt would load are snapshotted before the call (stat + bytes,
read with O_NOFOLLOW under a directory fd) and compared after; anything created, changed or removed is
put back the way it was (old bytes restored, a new entry unlinked), whatever the command text looked
like: a computed name, a script, a fetch hidden in `f.py`, an MCP server writing the file itself. In a
conversation that is not tainted (a fetch can hide where provenance does not see it), only a change whose
added text reads as an injected instruction (hermes_agent.intent) is undone."""

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
# Content this process has undone: a parallel call whose "before" caught it must not put it back.
_undone: set[bytes] = set()
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


def snapshot(dirs: list[str]) -> dict[tuple[str, str], Entry]:
    """Every watched name in `dirs`, as it is now. Unreadable entries are kept as "other" (fail closed:
    any later difference in their stat is undone too)."""
    snap: dict[tuple[str, str], Entry] = {}
    for d in dirs:
        for rel in WATCHED:
            sub, name = os.path.split(rel)
            fd = _open_dir(os.path.join(d, sub) if sub else d)
            if fd is None:
                snap[(d, rel)] = Entry("absent")
                continue
            try:
                snap[(d, rel)] = _read_entry(fd, name)
            except OSError:
                snap[(d, rel)] = Entry("other")
            finally:
                os.close(fd)
    return snap


def _same(a: Entry, b: Entry) -> bool:
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
    tmp = f".{name}.hermes-restore.{os.getpid()}"
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


def changes(before: dict[tuple[str, str], Entry]) -> list[tuple[tuple[str, str], Entry, Entry]]:
    """(key, old, new) for every watched name that differs from `before`."""
    after = snapshot(sorted({d for d, _ in before}))
    return [(key, old, after.get(key, Entry("absent"))) for key, old in before.items()
            if not _same(old, after.get(key, Entry("absent")))]


def planted(old: Entry, new: Entry) -> list[str]:
    """The injected-instruction intents (hermes_agent.intent) in what a change added to a context file."""
    from hermes_agent.intent import scan

    if new.kind != "file":
        return ["not a plain file any more"] if new.kind != "absent" else []
    text = new.data.decode("utf-8", "replace")
    gone = set(old.data.decode("utf-8", "replace").splitlines()) if old.kind == "file" else set()
    added = "\n".join(line for line in text.splitlines() if line not in gone)
    return [i.kind for i in scan(added)]


def undo_changes(before: dict[tuple[str, str], Entry],
                 found: list[tuple[tuple[str, str], Entry, Entry]] | None = None) -> list[tuple[str, bool]]:
    """Put back every watched file of `found` (default: all that differ from `before`): [(path, undone?)]."""
    out: list[tuple[str, bool]] = []
    for key, old, new in changes(before) if found is None else found:
        if old.kind in ("file", "link") and _digest(old) in _undone:
            continue  # another call's planted content, already undone by that call
        d, rel = key
        sub, name = os.path.split(rel)
        path = os.path.join(d, rel)
        fd = _open_dir(os.path.join(d, sub) if sub else d)
        try:
            if fd is None:
                out.append((path, old.kind == "absent"))
                continue
            _restore(fd, name, old)
            if new.kind in ("file", "link") and new.data:
                _undone.add(_digest(new))
            out.append((path, True))
        except OSError:
            out.append((path, False))
        finally:
            if fd is not None:
                os.close(fd)
    return out


def _digest(entry: Entry) -> bytes:
    import hashlib

    return hashlib.sha256(entry.kind.encode() + b"\0" + entry.data).digest()


def note(undone: list[tuple[str, bool]], source: str, why: str = "") -> str:
    """One line per changed file, for the model and for the user."""
    lines = []
    for path, ok in undone:
        what = "undone" if ok else "COULD NOT BE UNDONE, check it before the next session"
        if why:
            lines.append(f"{path} changed by a command to hold what reads as planted instructions ({why}): {what}; "
                         "the user can write that into the file themselves")
        else:
            lines.append(f"{path} changed by a command after untrusted content was read ({source}): {what}; "
                         "the user can make that change in a session that read nothing untrusted")
    return "\n".join(lines)
