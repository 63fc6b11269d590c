"""Keep what a put-back displaces (issue 19, rt13 a69): every place where hermes puts a file back as it was
(the sandbox guard's repairs, the context-file watch, the run-later and by-hand checks) first copies what it is
about to replace or remove into the session's quarantine directory ($HERMES_HOME/quarantine/<time>-<pid>/<the
absolute path>), outside the sandbox's reach, so an edit hermes mistook for a command's (the user's own, in their
editor, while a command ran) is never lost: the message that says it was put back names the copy.

`keep_bytes(path, data)` keeps bytes already read; `keep_at(dir_fd, name, path)` reads what is at `name` now
(relative to a directory fd, no symlink followed: a file's bytes, a link as a `.symlink` file holding its target,
a directory's tree) just before the caller replaces it. Copies are written with no symlink followed and capped
by the bytes they hold on disk: `MAX_KEEP_BYTES` a put-back, `SESSION_KEEP_BYTES` a session; a file's holes stay
holes (SEEK_DATA), so a sparse file costs what it costs inside (rt14b c18: three sparse 200 MB files, no disk on
the confined side, made 601 MB here). What is past a cap is not copied but said: a `<path>.not-kept.txt` note
in its place names its size and why. A user's own big file is rarely what a put-back displaces (those are hooks,
configs, run-later files, git's objects, the command's own files); a big one past the cap is the price of the
cap."""

from __future__ import annotations

import datetime
import errno
import os
import stat
import threading

MAX_KEEP_BYTES = 256 << 20
SESSION_KEEP_BYTES = 1 << 30
_NOT_KEPT = ".not-kept.txt"


class Quarantine:
    """One session's quarantine directory under `root` (made on the first copy). `kept`: every copy made."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = ""
        self.kept: list[str] = []
        self.skipped: list[str] = []
        self.used = 0  # bytes on disk of the copies made this session
        self._lock = threading.Lock()

    def _target(self, path: str) -> str:
        if not self.dir:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
            self.dir = os.path.join(os.path.realpath(self.root), f"{stamp}-{os.getpid()}")
        target = os.path.join(self.dir, path.lstrip("/"))
        n = 1
        while os.path.lexists(target):  # the same path put back twice in a session: both versions kept
            n += 1
            target = os.path.join(self.dir, path.lstrip("/") + f".{n}")
        return target

    def keep_bytes(self, path: str, data: bytes | None, suffix: str = "") -> str:
        """Save `data` (what was at `path`); where ("" when there is nothing to keep or it could not be saved)."""
        from hermes_agent.nofollow import write_nofollow

        if data is None or not self.root:
            return ""
        if not self._charge(path, len(data), len(data)):
            return ""
        with self._lock:
            target = self._target(path) + suffix
            try:
                write_nofollow(target, data, mode=0o600)
            except OSError:
                return ""
            self.kept.append(target)
        return target

    def _charge(self, path: str, size: int, on_disk: int) -> bool:
        """Whether a copy holding `on_disk` bytes fits the caps (then they are counted); else the note is left."""
        from hermes_agent.nofollow import write_nofollow

        with self._lock:
            if on_disk <= MAX_KEEP_BYTES and self.used + on_disk <= SESSION_KEEP_BYTES:
                self.used += on_disk
                return True
            self.skipped.append(path)
            if not self.root:
                return False
            note = (f"not kept: {path} ({size} bytes, {on_disk} on disk) is past the quarantine's cap "
                    f"({MAX_KEEP_BYTES >> 20} MB a file, {SESSION_KEEP_BYTES >> 20} MB a session, "
                    f"{self.used >> 20} MB used)\n")
            try:
                write_nofollow(self._target(path) + _NOT_KEPT, note.encode(), mode=0o600)
            except OSError:
                pass
        return False

    def keep_at(self, dir_fd: int, name: str, path: str) -> str:
        """Copy what is at `name` in `dir_fd` now (see the module doc); where ("" when absent or not kept)."""
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return ""
        if stat.S_ISLNK(st.st_mode):
            return self.keep_bytes(path, os.fsencode(os.readlink(name, dir_fd=dir_fd)), ".symlink")
        if stat.S_ISREG(st.st_mode):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                return self._keep_file(fd, path)
            finally:
                os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            budget = [MAX_KEEP_BYTES]
            self._keep_tree(dir_fd, name, path, budget)
            return os.path.join(self.dir, path.lstrip("/")) if self.dir else ""
        return ""

    def _keep_tree(self, dir_fd: int, name: str, path: str, budget: list[int]) -> None:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return
        try:
            for entry in os.listdir(fd):
                sub = os.path.join(path, entry)
                try:
                    st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    self._keep_tree(fd, entry, sub, budget)
                elif min(st.st_size, st.st_blocks * 512) > budget[0]:
                    self._charge(sub, st.st_size, MAX_KEEP_BYTES + 1)  # the tree's cap: the note is left
                else:
                    budget[0] -= min(st.st_size, st.st_blocks * 512)
                    self.keep_at(fd, entry, sub)
        finally:
            os.close(fd)


    def _keep_file(self, fd: int, path: str) -> str:
        """A copy of the plain file open at `fd`, its holes kept as holes, within the caps; where, or ""."""
        from hermes_agent.nofollow import open_dir

        if not self.root:
            return ""
        s = os.fstat(fd)
        spans = _data_spans(fd, s.st_size)
        if not self._charge(path, s.st_size, sum(end - start for start, end in spans)):
            return ""
        with self._lock:
            target = self._target(path)
            try:
                parent = open_dir(os.path.dirname(target), create=True)
            except OSError:
                return ""
            try:
                out = os.open(os.path.basename(target), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, 0o600, dir_fd=parent)
            except OSError:
                return ""
            finally:
                os.close(parent)
            try:
                for start, end in spans:
                    while start < end and (chunk := os.pread(fd, min(1 << 20, end - start), start)):
                        os.pwrite(out, chunk, start)
                        start += len(chunk)
                os.ftruncate(out, s.st_size)
            except OSError:
                return ""
            finally:
                os.close(out)
            self.kept.append(target)
        return target


def _data_spans(fd: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of the parts of the file that hold data (SEEK_DATA/SEEK_HOLE; all of it where the file
    system cannot say)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    try:
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no data past pos
                    break
                raise
            pos = min(os.lseek(fd, start, os.SEEK_HOLE), size)
            spans.append((start, pos))
    except OSError:
        return [(0, size)]
    return spans


_SESSION: dict[str, Quarantine] = {}
_SESSION_LOCK = threading.Lock()


def session_quarantine(root: str) -> Quarantine:
    """The one quarantine of this process for `root` ($HERMES_HOME/quarantine): the sandbox guard and the
    context-file watch of a session keep their copies side by side."""
    key = os.path.realpath(root) if root else ""
    with _SESSION_LOCK:
        q = _SESSION.get(key)
        if q is None:
            q = _SESSION[key] = Quarantine(root)
        return q
