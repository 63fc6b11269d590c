"""Opening files without following symlinks: the one fail-closed opener of the unconfined process for any
name the sandbox could have written (workspace, HOME). Every component is opened with openat2(2)
RESOLVE_NO_SYMLINKS where the kernel has it, else by a walk of O_NOFOLLOW|O_DIRECTORY opens; there is no
fallback to a plain open(). `read_regular` adds the check that the file is a regular file."""

from __future__ import annotations

import errno
import functools
import os
import stat as stat_mod
import struct

_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW


def open_dir(path: str, *, create: bool) -> int:
    """An fd for directory `path` (absolute, already resolved), walked from / with O_NOFOLLOW; missing
    directories are created when `create`. A symlink anywhere on the way raises PermissionError."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in [p for p in path.split("/") if p]:
            try:
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, name):
                    raise PermissionError(errno.EACCES, "a symlink appeared in the path after it was checked",
                                          path) from exc
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat_mod.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_nofollow(path: str, flags: int) -> int:
    """Open a resolved path with no symlink followed on the way or at the end: openat2(2) with
    RESOLVE_NO_SYMLINKS where the kernel has it, else a walk of O_NOFOLLOW|O_DIRECTORY opens."""
    fd = _openat2(path, flags | os.O_CLOEXEC)
    if fd is not None:
        return fd
    if not os.path.basename(path):  # "/" itself (no link can be there): the walk below would open ""
        return os.open(path, flags | os.O_CLOEXEC)
    parent = open_dir(os.path.dirname(path), create=False)
    try:
        return os.open(os.path.basename(path), flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PermissionError(errno.EACCES, "a symlink appeared in the path after it was checked", path) from exc
        raise
    finally:
        os.close(parent)


_SYS_OPENAT2 = 437  # one number on every architecture (added after the syscall tables were unified)
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
_openat2_ok: list[bool] = []


@functools.cache
def _libc():  # noqa: ANN202 - ctypes.CDLL
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _openat2(path: str, flags: int) -> int | None:
    """fd of `path` (absolute) opened beneath / with RESOLVE_NO_SYMLINKS|NO_MAGICLINKS|BENEATH; None when
    the kernel (or seccomp) has no openat2; PermissionError when a symlink is on the path."""
    if _openat2_ok == [False]:
        return None
    import ctypes

    libc = _libc()
    how = ctypes.create_string_buffer(struct.pack("QQQ", flags, 0, _RESOLVE), 24)
    root = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = libc.syscall(_SYS_OPENAT2, ctypes.c_int(root), os.fsencode(path.lstrip("/") or "."), how,
                          ctypes.c_size_t(24))
        err = ctypes.get_errno()
    finally:
        os.close(root)
    if fd >= 0:
        _openat2_ok[:] = [True]
        return fd
    if err == errno.ENOSYS or (err == errno.EPERM and not _openat2_ok):  # ENOSYS also after a seccomp filter
        _openat2_ok[:] = [False]  # came into force in this process (the sandbox launcher's own, read5)
        return None
    if err in (errno.ELOOP, errno.EXDEV):
        raise PermissionError(errno.EACCES, "a symlink appeared in the path after it was checked", path)
    raise OSError(err, os.strerror(err), path)


def write_nofollow(path: str, data: bytes, *, create_parents: bool = True, mode: int | None = None) -> None:
    """Atomically replace the file at resolved `path` (temp file + rename inside the same directory fd),
    keeping its mode (or giving it `mode`, less the umask); parent directories are created (FileNotFoundError
    instead without `create_parents`)."""
    parent = open_dir(os.path.dirname(path), create=create_parents)
    try:
        write_at(parent, os.path.basename(path), data, mode=mode)
    finally:
        os.close(parent)


def write_at(parent: int, name: str, data: bytes, *, mode: int | None = None) -> None:
    """`write_nofollow` of `name` in directory fd `parent` (a symlink or file at `name` is replaced, never
    followed; the temp file is created O_EXCL|O_NOFOLLOW there and removed by unlinkat on failure)."""
    tmp = f".hermes-{os.urandom(6).hex()}"
    keep = None
    if mode is None:
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            keep = stat_mod.S_IMODE(st.st_mode) if stat_mod.S_ISREG(st.st_mode) else None
        except FileNotFoundError:
            pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666 if mode is None else mode, dir_fd=parent)  # a given mode: less the umask, like open()
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if keep is not None:
                os.fchmod(fh.fileno(), keep)
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=parent)
        except OSError:
            pass
        raise


def remove_nofollow(path: str, *, stop: str | None = None) -> bool:
    """Remove the file or symlink at resolved `path` by unlinkat(2) in its parent opened by the no-follow
    walk (a symlink on the way raises PermissionError; a directory IsADirectoryError); then, up to `stop`
    (excluded), each parent left empty. False when nothing was there."""
    parent = open_dir(os.path.dirname(path), create=False)
    try:
        os.unlink(os.path.basename(path), dir_fd=parent)
    except FileNotFoundError:
        return False
    finally:
        os.close(parent)
    if stop is not None:
        remove_empty_dirs(os.path.dirname(path), stop)
    return True


def remove_empty_dirs(directory: str, stop: str) -> None:
    """rmdir `directory` and its parents while they are empty and below `stop` (each by unlinkat from a
    no-follow walk: a swapped-in link is never followed)."""
    while directory != stop and directory.startswith(stop.rstrip("/") + "/"):
        try:
            parent = open_dir(os.path.dirname(directory), create=False)
        except OSError:
            return
        try:
            os.rmdir(os.path.basename(directory), dir_fd=parent)
        except OSError:
            return
        finally:
            os.close(parent)
        directory = os.path.dirname(directory)


def trusted_real(path: str | os.PathLike[str]) -> str:
    """`path` made absolute for the writers below: the user's own symlinks above the current directory (or
    above the file's directory, elsewhere) are resolved; anything below the current directory - where the
    sandbox writes - is left for the no-follow walk, which refuses a symlink there."""
    path = os.path.abspath(os.fspath(path))
    cwd = os.getcwd()
    if path.startswith(cwd.rstrip("/") + "/"):
        return os.path.join(os.path.realpath(cwd), path[len(cwd.rstrip("/")) + 1:])
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def write_text_nofollow(path: str | os.PathLike[str], text: str) -> None:
    """`write_nofollow` of UTF-8 text at a path named by the user or hermes (see `trusted_real`); the
    directory must exist."""
    write_nofollow(trusted_real(path), text.encode("utf-8"), create_parents=False)


def append_nofollow(path: str | os.PathLike[str], data: bytes | str, *, sync: bool = False) -> None:
    """Append to the file at `path` (created 0666 & umask when missing; parents made), refusing a symlink
    anywhere below the trusted part (`trusted_real`), a FIFO/device/directory (`NotRegularFile`) and a file
    with a second hard link (it may be a link the sandbox made to a file outside)."""
    real = trusted_real(path)
    parent = open_dir(os.path.dirname(real), create=True)
    try:
        try:
            fd = os.open(os.path.basename(real), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_NONBLOCK | os.O_CLOEXEC, 0o666, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PermissionError(errno.EACCES, "the file is a symlink; not written", real) from exc
            if exc.errno == errno.ENXIO:
                raise NotRegularFile(errno.EINVAL, "not a regular file", real) from exc
            raise
    finally:
        os.close(parent)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", real)
        if st.st_nlink != 1:
            raise PermissionError(errno.EACCES, "the file has another hard link; not written", real)
        os.set_blocking(fd, True)
        view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


class NotRegularFile(OSError):
    """The name is a device, FIFO, socket or directory: not read."""


# Kernel pseudo filesystems (statfs f_type): their "regular" files block (/proc/kmsg), never end or drain
# kernel state. No file tool reads them; the terminal can.
_PSEUDO_FS = {0x9FA0: "procfs", 0x62656572: "sysfs", 0x64626720: "debugfs", 0x74726163: "tracefs",
              0x73636673: "securityfs", 0x27E0EB: "cgroupfs", 0x63677270: "cgroup2", 0xCAFE4A11: "bpffs",
              0x62656570: "configfs", 0xDE5E81E4: "efivarfs", 0x6165676C: "pstore", 0x1CD1: "devpts",
              0x65735543: "fusectl", 0x42494E4D: "binfmt_misc", 0x67596969: "rpc_pipefs"}


def pseudo_fs(fd: int) -> str | None:
    """The name of the kernel pseudo filesystem `fd` lies on (procfs, sysfs, ...), else None."""
    import ctypes

    buf = ctypes.create_string_buffer(256)  # struct statfs: f_type (a C long) comes first
    if _libc().fstatfs(ctypes.c_int(fd), buf) != 0:
        return None
    return _PSEUDO_FS.get(struct.unpack_from("l", buf.raw)[0] & 0xFFFFFFFF)


def check_plain(fd: int, path: str) -> None:
    """NotRegularFile unless `fd` is a regular file outside the kernel's pseudo filesystems."""
    if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
        raise NotRegularFile(errno.EINVAL, "not a regular file", path)
    fs = pseudo_fs(fd)
    if fs:
        raise NotRegularFile(errno.EINVAL, f"a kernel {fs} file (it may block or never end)", path)


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (at most `limit`). The directory part is resolved first
    (the user's own symlinks above the file are fine); from there on no symlink is followed, so a name
    the sandbox swapped for a link raises PermissionError and a FIFO or device raises NotRegularFile."""
    path = os.fspath(path)
    real = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    fd = open_nofollow(real, os.O_RDONLY | os.O_NONBLOCK)
    try:
        check_plain(fd, path)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read() if limit is None else fh.read(limit)
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike[str], limit: int | None = None) -> str:
    """`read_regular` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_regular(path, limit).decode("utf-8", errors="replace")


def read_regular_or_none(path: str | os.PathLike[str], limit: int | None = None) -> bytes | None:
    """`read_regular`, or None when the file is missing, a link, not a regular file or unreadable."""
    try:
        return read_regular(path, limit)
    except (OSError, ValueError):
        return None


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True when `path` names a regular file itself (lstat: a symlink is not one)."""
    try:
        return stat_mod.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
