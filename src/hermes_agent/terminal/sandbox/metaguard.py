"""Metadata changes on the Landlock path, decided by path (stdlib only: the keeper imports it).

Landlock checks no chmod, chown or utime, and seccomp sees registers, never the file a path names. So the
sandbox's seccomp filter hands chmod/fchmod/fchmodat/fchmodat2, chown/lchown/fchown/fchownat and
utime/utimes/futimesat/utimensat to the keeper (SECCOMP_RET_USER_NOTIF, a34). The keeper, outside the
commands' Landlock domain, finds the file the call names exactly as the kernel would for that process (its
cwd or dirfd through /proc/<tid>, the path read from its memory, `/proc/self` meaning the caller), and then:
- the file lies in a tree the sandbox may create files in (found by device+inode walking `..` from its
  directory, not by name), or it has no name at all (memfd, unlinked temp file, a pipe): the keeper does the change
  itself on the file it resolved (`/proc/self/fd/N`, AT_EMPTY_PATH), so a path swapped after the check
  changes nothing; as root it allows only what the capability-less command could do (owner only);
- anything else (a hidden key, `/etc/shadow` as root, the user's read-only files): EPERM.
The command is blocked while the keeper decides: 65-180 us per call on a loaded 2-core machine (directories
found inside a writable tree are remembered); commands that change no metadata pay nothing. Not decided
here: link/rename (Landlock's REFER right refuses a hard link to a hidden file: EXDEV) and xattrs (seccomp
refuses them outright)."""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import threading

AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
_RECV, _SEND, _ID_VALID = 0xC0502100, 0xC0182101, 0x40082102  # SECCOMP_IOCTL_NOTIF_*
_NOTIF, _RESP = struct.Struct("=QIIiIQ6Q"), struct.Struct("=QqiI")
_UTIME_NOW = (1 << 30) - 1
_O_PATH_NOFOLLOW = os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW
_NOBODY = 0xFFFFFFFF  # (uid_t)-1: leave unchanged

# per system call: (kind, layout, follow); layout letters name the arguments in order: "p" path, "d" dirfd,
# "f" fd, "m" mode, "u" uid, "g" gid, "U" utimbuf*, "V" timeval[2]*, "T" timespec[2]*, "F" flags; follow: what a
# trailing symlink does by default
SPECS = {
    "chmod": ("mode", "pm", True), "fchmod": ("mode", "fm", True), "fchmodat": ("mode", "dpm", True),
    "fchmodat2": ("mode", "dpmF", True), "chown": ("owner", "pug", True), "lchown": ("owner", "pug", False),
    "fchown": ("owner", "fug", True), "fchownat": ("owner", "dpugF", True), "utime": ("times", "pU", True),
    "utimes": ("times", "pV", True), "futimesat": ("times", "dpV", True), "utimensat": ("times", "dpTF", True),
}
_X86_64 = {"chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93, "lchown": 94,
           "fchownat": 260, "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280}
_AARCH64 = {"fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchownat": 54, "fchown": 55, "utimensat": 88}
NUMBERS = {"x86_64": _X86_64, "aarch64": _AARCH64}
_SYS = {"x86_64": {"fchownat": 260, "utimensat": 280}, "aarch64": {"fchownat": 54, "utimensat": 88}}


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _machine() -> str:
    return os.uname().machine


def writable_ids(rules: list[tuple[str, int]], make_reg: int, write_file: int) -> frozenset[tuple[int, int]]:
    """(dev, inode) of every directory the Landlock plan lets the sandbox create files in, and of every
    single file it may write (not the devices): the keeper's test of "writable", taken before any command runs."""
    from hermes_agent.terminal.sandbox.landlock import DEVICES, open_rule_path

    ids = set()
    for path, rights in rules:
        if not rights & (make_reg | write_file) or path in DEVICES or path.startswith("/dev/"):
            continue
        fd = open_rule_path(path)  # as the rule itself: no link followed (landlock.open_rule_path)
        if fd is None:
            continue
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if stat.S_ISDIR(st.st_mode) and rights & make_reg or stat.S_ISREG(st.st_mode) and rights & write_file:
            ids.add((st.st_dev, st.st_ino))
    return frozenset(ids)


class Supervisor:
    """Answers the seccomp notifications of one sandbox (one listener fd) until the listener closes."""

    def __init__(self, listener: int, writable: frozenset[tuple[int, int]]) -> None:
        self.listener = listener
        self.writable = writable
        self.names = {nr: name for name, nr in NUMBERS.get(_machine(), {}).items()}
        self.sys = _SYS.get(_machine(), {})
        self.libc = _libc()
        self.root = os.geteuid() == 0
        self.groups = {os.getegid(), *os.getgroups()}
        self.known: dict[tuple[int, int], None] = {}  # directories found inside a writable tree (bounded)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve, name="hermes-metaguard", daemon=True)
        thread.start()
        return thread

    def serve(self) -> None:
        import fcntl

        while True:
            buf = bytearray(_NOTIF.size)
            try:
                fcntl.ioctl(self.listener, _RECV, buf, True)
            except InterruptedError:
                continue
            except OSError as exc:
                if exc.errno == errno.ENOENT:  # the caller died before we read it
                    continue
                return  # the listener is gone: every filtered process has ended
            nid, pid, _, nr, _, _, *args = _NOTIF.unpack(buf)
            try:
                err = self.handle(nid, pid, self.names.get(nr, ""), args)
            except _Refuse as refused:
                err = refused.err
            except Exception:  # never leave a command blocked: any surprise refuses the call
                err = errno.EPERM
            try:
                fcntl.ioctl(self.listener, _SEND, bytearray(_RESP.pack(nid, 0, -err if err else 0, 0)), True)
            except OSError:
                pass  # the caller died meanwhile

    # -- one call ---------------------------------------------------------------------------------

    def handle(self, nid: int, pid: int, name: str, args: list[int]) -> int:
        """0 when done (by the keeper, on the resolved file), else the errno the caller gets."""
        if name not in SPECS:
            return errno.ENOSYS
        kind, layout, follow = SPECS[name]
        vals = dict(zip(layout, args, strict=False))
        flags = vals.get("F", 0)
        follow = follow and not flags & AT_SYMLINK_NOFOLLOW
        times = self._times(pid, layout, vals) if kind == "times" else None
        if kind == "times" and name == "utimensat" and not vals.get("p"):
            target = self._open_fd(pid, vals["d"] & 0xFFFFFFFF)  # futimens(fd, ...)
        elif "f" in vals:
            target = self._open_fd(pid, vals["f"] & 0xFFFFFFFF)
        else:
            target = self._open_path(pid, vals.get("d", AT_FDCWD), vals["p"], follow, bool(flags & AT_EMPTY_PATH))
        try:
            if not self._still_there(nid):
                return errno.ESRCH
            st = os.fstat(target)
            if not self._writable(target, st):
                return errno.EPERM
            return self._apply(kind, target, st, vals, times)
        finally:
            os.close(target)

    def _still_there(self, nid: int) -> bool:
        import fcntl

        try:
            fcntl.ioctl(self.listener, _ID_VALID, bytearray(struct.pack("=Q", nid)), True)
        except OSError:
            return False
        return True

    def _apply(self, kind: str, fd: int, st: os.stat_result, vals: dict, times: bytes | None) -> int:
        if self.root and st.st_uid != 0:  # the command has no CAP_FOWNER/CAP_CHOWN: owner only
            return errno.EPERM
        if kind == "mode":
            if stat.S_ISLNK(st.st_mode):
                return errno.EOPNOTSUPP
            return _errno_of(lambda: os.chmod(f"/proc/self/fd/{fd}", vals["m"] & 0o7777))
        if kind == "owner":
            uid, gid = vals["u"] & 0xFFFFFFFF, vals["g"] & 0xFFFFFFFF
            if self.root and (uid not in (_NOBODY, st.st_uid) or gid not in (_NOBODY, st.st_gid, *self.groups)):
                return errno.EPERM
            res = self.libc.syscall(self.sys["fchownat"], fd, b"", ctypes.c_uint32(uid), ctypes.c_uint32(gid),
                                    AT_EMPTY_PATH)
            return ctypes.get_errno() if res != 0 else 0
        spec = ctypes.create_string_buffer(times, len(times)) if times else None
        res = self.libc.syscall(self.sys["utimensat"], fd, b"", spec, AT_EMPTY_PATH)
        return ctypes.get_errno() if res != 0 else 0

    def _writable(self, fd: int, st: os.stat_result) -> bool:
        """The file has no name (memfd, unlinked), or it or a directory above it is one the sandbox may
        create files in (or it is a file the sandbox may write): walked by `..`, never by name."""
        if st.st_nlink == 0 and not stat.S_ISDIR(st.st_mode):
            return True
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):  # a pipe or socket of its own has no path
            try:
                return not os.readlink(f"/proc/self/fd/{fd}").startswith("/")
            except OSError:
                return False
        if (st.st_dev, st.st_ino) in self.writable:
            return True
        if stat.S_ISDIR(st.st_mode):
            cur = os.open("..", os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY, dir_fd=fd)
        else:
            cur = self._parent_of(fd, st)
            if cur is None:
                return False
        seen: list[tuple[int, int]] = []
        try:
            for _ in range(256):
                here = os.fstat(cur)
                if (here.st_dev, here.st_ino) in self.writable or (here.st_dev, here.st_ino) in self.known:
                    self._remember(seen)
                    return True
                seen.append((here.st_dev, here.st_ino))
                up = os.open("..", os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY, dir_fd=cur)
                top = os.fstat(up)
                if (top.st_dev, top.st_ino) == (here.st_dev, here.st_ino):
                    os.close(up)
                    return False  # reached /
                os.close(cur)
                cur = up
            return False
        finally:
            os.close(cur)

    def _remember(self, dirs: list[tuple[int, int]]) -> None:
        """Directories inside a writable tree stay there as far as the sandbox goes (Landlock lets it move
        them only between places it may write), so the walk up is done once per directory."""
        if len(self.known) + len(dirs) > 4096:
            self.known.clear()
        self.known.update(dict.fromkeys(dirs))

    @staticmethod
    def _parent_of(fd: int, st: os.stat_result) -> int | None:
        """The directory holding this file's name (kernel's path of the fd, checked by inode), or None."""
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        head, _, tail = path.rpartition("/")
        if not path.startswith("/") or not tail:
            return None
        try:
            parent = os.open(head or "/", os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            again = os.stat(tail, dir_fd=parent, follow_symlinks=False)
        except OSError:
            again = None
        if again is None or (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
            os.close(parent)
            return None  # renamed meanwhile: refuse rather than guess
        return parent

    # -- reading the caller ------------------------------------------------------------------------

    def _open_fd(self, pid: int, fd: int) -> int:
        try:
            return os.open(f"/proc/{pid}/fd/{fd}", os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            raise _Refuse(errno.EBADF) from exc

    def _open_path(self, pid: int, dirfd: int, ptr: int, follow: bool, empty_ok: bool) -> int:
        path = self._read_str(pid, ptr)
        dirfd = ctypes.c_int32(dirfd & 0xFFFFFFFF).value
        base = f"/proc/{pid}/cwd" if dirfd == AT_FDCWD else f"/proc/{pid}/fd/{dirfd}"
        if not path:
            if not empty_ok or dirfd == AT_FDCWD:
                raise _Refuse(errno.ENOENT)
            return self._open_fd(pid, dirfd)
        try:
            basefd = os.open(base, os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            raise _Refuse(errno.EBADF if dirfd != AT_FDCWD else errno.EPERM) from exc
        try:
            return self._openat(basefd, _as_caller(path, pid), follow)
        finally:
            os.close(basefd)

    @staticmethod
    def _openat(base: int, path: bytes, follow: bool) -> int:
        try:
            return os.open(path, _O_PATH_NOFOLLOW if not follow else os.O_PATH | os.O_CLOEXEC, dir_fd=base)
        except OSError as exc:
            raise _Refuse(exc.errno or errno.EPERM) from exc

    def _read_str(self, pid: int, ptr: int, limit: int = 4096) -> bytes:
        data = b""
        while len(data) < limit:
            chunk = 4096 - (ptr + len(data)) % 4096  # never cross a page we may not read
            got = self._read_mem(pid, ptr + len(data), min(chunk, limit - len(data)))
            end = got.find(b"\0")
            if end >= 0:
                return data + got[:end]
            data += got
        raise _Refuse(errno.ENAMETOOLONG)

    def _read_mem(self, pid: int, addr: int, size: int) -> bytes:
        if not addr:
            raise _Refuse(errno.EFAULT)
        buf = ctypes.create_string_buffer(size)
        local = struct.pack("=QQ", ctypes.addressof(buf), size)
        remote = struct.pack("=QQ", addr, size)
        lbuf, rbuf = ctypes.create_string_buffer(local, 16), ctypes.create_string_buffer(remote, 16)
        got = self.libc.process_vm_readv(ctypes.c_int(pid), lbuf, ctypes.c_ulong(1), rbuf, ctypes.c_ulong(1),
                                         ctypes.c_ulong(0))
        if got != size:
            raise _Refuse(errno.EFAULT if got >= 0 or ctypes.get_errno() == errno.EFAULT else errno.EPERM)
        return buf.raw[:size]

    def _times(self, pid: int, layout: str, vals: dict) -> bytes | None:
        """The two timespecs the kernel would apply (None: both now)."""
        for key in ("U", "V", "T"):
            if key in vals:
                ptr = vals[key]
                break
        else:
            return None
        if not ptr:
            return None
        if key == "U":  # struct utimbuf {actime, modtime}
            a, m = struct.unpack("=qq", self._read_mem(pid, ptr, 16))
            return struct.pack("=qqqq", a, 0, m, 0)
        if key == "V":  # struct timeval[2]
            a, au, m, mu = struct.unpack("=qqqq", self._read_mem(pid, ptr, 32))
            if not (0 <= au < 1_000_000 and 0 <= mu < 1_000_000):
                raise _Refuse(errno.EINVAL)
            return struct.pack("=qqqq", a, au * 1000, m, mu * 1000)
        return self._read_mem(pid, ptr, 32)


def _as_caller(path: bytes, tid: int) -> bytes:
    """`/proc/self/...` and `/proc/thread-self/...` as the caller means them (glibc's lchmod and
    fchmodat(AT_SYMLINK_NOFOLLOW) chmod `/proc/self/fd/N` of an O_PATH fd). Any other way into /proc
    resolves as the keeper: whatever it reaches still has to pass the writable test."""
    for prefix, real in ((b"/proc/self", b"/proc/%d" % _tgid(tid)), (b"/proc/thread-self", b"/proc/%d/task/%d" % (
            _tgid(tid), tid))):
        if path == prefix or path.startswith(prefix + b"/"):
            return real + path[len(prefix):]
    return path


def _tgid(tid: int) -> int:
    try:
        with open(f"/proc/{tid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    raise _Refuse(errno.ESRCH)


class _Refuse(Exception):
    def __init__(self, err: int) -> None:
        super().__init__(err)
        self.err = err


def _errno_of(action) -> int:  # type: ignore[no-untyped-def]
    try:
        action()
    except OSError as exc:
        return exc.errno or errno.EPERM
    return 0
