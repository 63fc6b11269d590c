"""A checkpoint restore's writes into the working directory (storage/checkpoints.py), through directory fds that
follow no symlink: the directory may be a sandbox's workspace, and a confined process (a background one still
running at `/rollback`) can swap a directory for a link to `~/.ssh` between any two steps. `git checkout` and a
remove by path would follow such a link out of the tree; here every step is relative to an fd of the directory
above it: a link found where the checkpoint has a directory is removed and the directory made (as git itself does
for a link it meets at checkout), a link at a file's place is replaced, never written through, and a file to
remove is unlinked in the directory it was found in. Every file of the checkpoint is written anew, as `git
checkout` into a fresh index did (the context-file ledger dates what a restore wrote by it). Stdlib only."""

from __future__ import annotations

import contextlib
import errno
import os
import stat as st
from collections.abc import Iterable

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Tree:
    """The working directory `wd` (resolved) opened once; `close()` when done."""

    def __init__(self, wd: str) -> None:
        from hermes_agent.nofollow import open_dir

        path_fd = open_dir(wd, create=False)  # O_PATH: walk from it only
        try:
            self.fd = os.open(".", _DIR, dir_fd=path_fd)
        finally:
            os.close(path_fd)
        self.problems: list[str] = []

    def close(self) -> None:
        os.close(self.fd)

    def parent(self, rel: str, make: bool) -> int | None:
        """An fd of the directory holding `rel` (a path relative to wd); None when it is not a directory of the
        tree (without `make`), or could not be made. With `make`, a link or file in the way is removed first."""
        fd = os.dup(self.fd)
        for name in [p for p in os.path.dirname(rel).split("/") if p]:
            try:
                nfd = os.open(name, _DIR, dir_fd=fd)
            except OSError as exc:
                nfd = self._made(fd, name, rel) if make and exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR) \
                    else None
            os.close(fd)
            if nfd is None:
                return None
            fd = nfd
        return fd

    def _made(self, fd: int, name: str, rel: str) -> int | None:
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)  # a link or a file where the checkpoint has a directory
            os.mkdir(name, 0o777, dir_fd=fd)
            return os.open(name, _DIR, dir_fd=fd)
        except OSError as exc:
            self.problems.append(f"{rel}: {exc.strerror}")
            return None

    def remove(self, names: Iterable[str]) -> list[str]:
        """Unlink each file (not a directory) of `names`, then the directories left empty on its way; the names
        removed."""
        removed = []
        for rel in names:
            fd = self.parent(rel, make=False)
            if fd is None:
                continue  # a link or nothing on the way: nothing of the tree's lies there
            try:
                if not st.S_ISDIR(os.stat(os.path.basename(rel), dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(os.path.basename(rel), dir_fd=fd)
                    removed.append(rel)
            except OSError:
                pass
            finally:
                os.close(fd)
            self._prune(os.path.dirname(rel))
        return removed

    def _prune(self, rel: str) -> None:
        while rel:
            fd = self.parent(rel, make=False)
            if fd is None:
                return
            try:
                os.rmdir(os.path.basename(rel), dir_fd=fd)
            except OSError:
                return
            finally:
                os.close(fd)
            rel = os.path.dirname(rel)

    def write(self, rel: str, mode: str, data: bytes) -> None:
        """Put the checkpoint's entry `rel` (git `mode`: 100644, 100755 or 120000, a link) with `data` in place."""
        fd = self.parent(rel, make=True)
        if fd is None:
            return
        name = os.path.basename(rel)
        try:
            try:
                cur = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                cur = None
            if cur is not None and st.S_ISDIR(cur.st_mode):
                self.problems.append(f"{rel}: a directory is in its place")
                return
            tmp = f".hermes-restore-{os.urandom(6).hex()}"
            if mode == "120000":
                os.symlink(data, tmp, dir_fd=fd)
            else:
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                              0o777 if mode == "100755" else 0o666, dir_fd=fd)  # the umask applies, as for git
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as exc:
            self.problems.append(f"{rel}: {exc.strerror}")
        finally:
            os.close(fd)


def blobs(batch: bytes, entries: list[tuple[str, str, str]]) -> list[tuple[str, str, bytes]]:
    """(path, mode, content) of `entries` ((mode, oid, path)) from the output of `git cat-file --batch` fed
    their oids in order; stops at the first object missing or malformed."""
    out, pos = [], 0
    for mode, _oid, path in entries:
        end = batch.find(b"\n", pos)
        head = batch[pos:end].split(b" ") if end >= 0 else []
        if len(head) != 3 or head[1] != b"blob" or not head[2].isdigit():
            break
        size = int(head[2])
        out.append((path, mode, batch[end + 1:end + 1 + size]))
        pos = end + 2 + size
    return out
