"""Namespaces and mounts the launcher makes for itself before it confines itself (stdlib only, run inside the
sandbox's own process; split from server.py): a network namespace as root or in user namespaces of its own
(slirp4netns joins it, netns.py), and as root a mount namespace with its own /proc and the spec's carve-outs
bound read-only (Landlock cannot mount once applied); without privileges those binds in a mount namespace of a
user namespace of its own (`user_binds`)."""

from __future__ import annotations

import os
import signal
import socket

_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


_CLONE_NEWNS, _CLONE_NEWPID, _CLONE_NEWNET, _CLONE_NEWUSER = 0x00020000, 0x20000000, 0x40000000, 0x10000000


def _own_user_netns(resolv: str = "") -> bool:
    """Without privileges (bwrap's way): an outer user namespace where we are root (uid 0 = our uid), holding
    the network namespace (slirp4netns joins it as root there to make its tap device), then an inner one
    mapping our uid back (files keep their owners; commands, not root there, have no capabilities after
    execve). The caller is single-threaded (just forked). The outer one is what hermes gets (`_OUTER`)."""
    uid, gid = os.getuid(), os.getgid()
    if not _unshare(_CLONE_NEWUSER | _CLONE_NEWNET):
        return False
    _prctl(_PR_SET_DUMPABLE, 1)  # a non-dumpable process's /proc/self files are root's; no command runs yet
    try:
        _write_maps(f"0 {uid} 1", f"0 {gid} 1", deny=True)
        _loopback_up()  # root of the outer namespace may; nobody in the inner one can
        reject_routes()
        if resolv:
            bind_resolv(resolv)
        _OUTER.append(os.open("/proc/self/ns/user", os.O_RDONLY | os.O_CLOEXEC))
        if not _unshare(_CLONE_NEWUSER):
            raise OSError("cannot make the inner user namespace")
        _write_maps(f"{uid} 0 1", f"{gid} 0 1", deny=False)
    finally:
        _prctl(_PR_SET_DUMPABLE, 0)
    return True


def _join_user_netns(user: int, net: int, resolv: str = "") -> None:
    """The unprivileged Landlock launcher's way into its predecessor's network namespace (a re-plan): enter the
    outer user namespace owning it (root there) and the namespace, then an inner user namespace mapping the
    user's uid back, as `_own_user_netns` does. Single-threaded caller (just forked)."""
    uid, gid = os.getuid(), os.getgid()
    try:
        enter(user, net)
    finally:
        os.close(user)
        os.close(net)
    if resolv:
        bind_resolv(resolv)
    _prctl(_PR_SET_DUMPABLE, 1)
    try:
        if not _unshare(_CLONE_NEWUSER):
            raise OSError("cannot make the inner user namespace")
        _write_maps(f"{uid} 0 1", f"{gid} 0 1", deny=False)
    finally:
        _prctl(_PR_SET_DUMPABLE, 0)


_OUTER: list[int] = []  # the user namespace owning the sandbox's network namespace (unprivileged Landlock)


def _write_maps(uid_map: str, gid_map: str, deny: bool) -> None:
    names = (("setgroups", "deny"),) if deny else ()
    for name, text in (*names, ("uid_map", uid_map), ("gid_map", gid_map)):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as fh:
            fh.write(text)


def _loopback_up() -> None:
    """`ip link set lo up` in a fresh network namespace (SIOCGIFFLAGS / SIOCSIFFLAGS with IFF_UP)."""
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, struct.pack("16sH14x", b"lo", 0))[:18])[1]
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))


# Where no command may connect from a sandbox's own network namespace, whatever slirp4netns would route: the
# link-local range (the cloud metadata service 169.254.169.254 of AWS, GCP, Azure, OpenStack; Alibaba's
# 100.100.100.200). IPv6 needs nothing: slirp4netns runs without --enable-ipv6, so the namespace has no IPv6
# route at all (fd00:ec2::254 is unreachable too).
# The host's own addresses too (red-team round 7 a04/a11: a service bound to 0.0.0.0 or to the host's LAN
# address, a dev server, a database, a port docker published, was reached through slirp4netns as the host):
# read while still in the host's namespace (`remember_host`), a /32 reject route each. A granted port
# (`sandbox.loopback_ports`) is still reached, through the relay to 127.0.0.1.
BLOCKED_ROUTES = ("169.254.0.0/16", "100.100.100.200/32")
_SIOCADDRT, _RTF_UP, _RTF_HOST, _RTF_REJECT = 0x890B, 0x0001, 0x0004, 0x0200
_HOST: list[str] = []


def host_addresses() -> tuple[str, ...]:
    """This network namespace's own IPv4 addresses but loopback ones (/proc/self/net/fib_trie: "/32 host
    LOCAL")."""
    try:
        with open("/proc/self/net/fib_trie", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return ()
    found, last = [], ""
    for line in lines:
        text = line.strip()
        if text.startswith("|--"):
            last = text[3:].strip()
        elif text.startswith("/32 host LOCAL") and last and not last.startswith("127."):
            found.append(last)
    return tuple(dict.fromkeys(found))


def remember_host() -> None:
    """Note the host's addresses while this process is still in the host's network namespace."""
    if not _HOST:
        _HOST.extend(f"{a}/32" for a in host_addresses())


def reject_routes(cidrs: tuple[str, ...] | list[str] | None = None) -> None:
    """`ip route add unreachable CIDR` for each, in this process's network namespace (needs CAP_NET_ADMIN
    there: root of it): a connect() to such an address fails at once with EHOSTUNREACH ("No route to host").
    The legacy routing ioctl (SIOCADDRT, struct rtentry with RTF_REJECT): stdlib only, no device needed."""
    import ctypes
    import fcntl
    import ipaddress
    import struct

    class RtEntry(ctypes.Structure):
        _fields_ = [("pad1", ctypes.c_ulong), ("dst", ctypes.c_ubyte * 16), ("gateway", ctypes.c_ubyte * 16),
                    ("genmask", ctypes.c_ubyte * 16), ("flags", ctypes.c_ushort), ("pad2", ctypes.c_short),
                    ("pad3", ctypes.c_ulong), ("pad4", ctypes.c_void_p), ("metric", ctypes.c_short),
                    ("dev", ctypes.c_char_p), ("mtu", ctypes.c_ulong), ("window", ctypes.c_ulong),
                    ("irtt", ctypes.c_ushort)]

    def sockaddr(addr: ipaddress.IPv4Address):  # type: ignore[no-untyped-def]
        return (ctypes.c_ubyte * 16).from_buffer_copy(struct.pack("=HH4s8x", socket.AF_INET, 0, addr.packed))

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for cidr in (*BLOCKED_ROUTES, *_HOST) if cidrs is None else cidrs:
            net = ipaddress.IPv4Network(cidr)
            entry = RtEntry(dst=sockaddr(net.network_address), genmask=sockaddr(net.netmask),
                            flags=_RTF_UP | _RTF_REJECT | (_RTF_HOST if net.prefixlen == 32 else 0))
            try:
                fcntl.ioctl(sock, _SIOCADDRT, bytes(entry))
            except FileExistsError:
                pass  # a joined namespace already has it


def enter(user: int, net: int) -> None:
    """Join the network namespace `net` through the user namespace `user` owning it (when that is not ours):
    root there, so its routes may be changed. The caller is single-threaded (a helper process)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if os.fstat(user).st_ino != os.stat("/proc/self/ns/user").st_ino and libc.setns(user, _CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "cannot enter the sandbox's user namespace")
    if libc.setns(net, _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "cannot enter the sandbox's network namespace")
_MS_REC, _MS_PRIVATE, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x4000, 0x40000, 2, 4, 8
_MS_RDONLY, _MS_REMOUNT, _MS_BIND = 1, 32, 4096


def bind_resolv(text: str) -> None:
    """The network namespace's resolv.conf (bwrap's --ro-bind-data, for the Landlock launcher): in a mount
    namespace of its own, a file holding `text` on a small tmpfs (mounted on /tmp for the moment, detached right
    after: only the file's bind stays) bound read-only over the host's /etc/resolv.conf (its target when a
    link). Root of the namespace (root, or the outer user namespace), single-threaded, before any command."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if not _unshare(_CLONE_NEWNS) or libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "no mount namespace for the sandbox's resolv.conf")
    scratch, target = os.path.realpath("/tmp").encode(), os.path.realpath("/etc/resolv.conf").encode()
    if libc.mount(b"tmpfs", scratch, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=16k,mode=700") != 0:
        raise OSError(ctypes.get_errno(), "no scratch tmpfs for the sandbox's resolv.conf")
    try:
        fd = os.open(scratch + b"/resolv.conf", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if libc.mount(scratch + b"/resolv.conf", target, None, _MS_BIND, None) != 0 or libc.mount(
                None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None) != 0:
            raise OSError(ctypes.get_errno(), "cannot put the sandbox's resolv.conf in place")
    finally:
        libc.umount2(scratch, 2)  # MNT_DETACH: /tmp is the host's again; the bound file stays


def _unshare(flags: int) -> bool:
    """unshare(2); False when not allowed (not root and no user namespace for us)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True).unshare(flags) == 0


def _own_proc(binds: list, copies: list | None = None) -> bool:
    """In pid 1 of the new pid namespace: a mount namespace of its own with a /proc that shows only this
    namespace (hermes, the keeper and the user's other processes are not there: no /proc/<pid>/cmdline of
    theirs) and the spec's carve-outs bound read-only as bwrap binds them (`binds`: [path, read_only] by
    depth: a hook or `.git/config` cannot even be written, instead of being put back afterwards), then fork:
    this process stays as the namespace's init and reaps orphans; the child serves. When the init ends (the
    server ended, or the keeper killed it), the kernel ends the whole namespace. Without a mount namespace
    the host's /proc stays (the pid namespace still ends everything) and the run-later guard alone holds."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    done = False
    if _unshare(_CLONE_NEWNS) and libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0:
        # a path already read-only on the host stays so (its mount's flag, read before any bind of ours)
        flags = [(str(p), bool(ro) or _host_read_only(str(p))) for p, ro in binds]
        done = all([_bind(libc, path, read_only) for path, read_only in flags])
        done = all([_bind(libc, str(dst), True, str(src)) for src, dst in copies or []]) and done
        libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    server = os.fork()
    if server == 0:
        return done
    os.closerange(0, os.sysconf("SC_OPEN_MAX"))  # the socket to hermes and the keeper's channel are the server's
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the keeper gone: the namespace goes with it
    os._exit(_reap_until(server))


def user_binds(binds: list, copies: list | None) -> bool:
    """Without privileges and without a pid namespace (issue 19, run as a normal user): the spec's carve-outs
    bound read-only all the same, as bwrap binds them unprivileged, in a mount namespace owned by the user
    namespace of our own the caller is in (`own_user`, or the one `_own_user_netns` / `_join_user_netns` left
    us in). Landlock alone cannot make a path inside a writable root read-only (its rights add up), so hermes's
    own venv in the workspace, `.git/hooks` and the like stayed writable there.
    Single-threaded caller, before Landlock and before any command (commands, not root there, keep no
    capability after execve). False when any bind failed (the caller keeps Landlock's own carve-outs)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if not _unshare(_CLONE_NEWNS) or libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    flags = [(str(p), bool(ro) or _host_read_only(str(p))) for p, ro in binds]
    done = all([_bind(libc, path, read_only) for path, read_only in flags])
    return all([_bind(libc, str(dst), True, str(src)) for src, dst in copies or []]) and done


def own_user() -> bool:
    """A user namespace of our own mapping our uid and gid to themselves: full capabilities in it (to mount, to
    make a pid namespace) until the next execve, which a command's uid (not 0 there) loses. Single-threaded."""
    uid, gid = os.getuid(), os.getgid()
    if not _unshare(_CLONE_NEWUSER):
        return False
    _prctl(_PR_SET_DUMPABLE, 1)  # a non-dumpable process's /proc/self files are root's
    try:
        _write_maps(f"{uid} {uid} 1", f"{gid} {gid} 1", deny=True)
    except OSError:
        return False
    finally:
        _prctl(_PR_SET_DUMPABLE, 0)
    return True


def user_pidns(binds: list, copies: list | None) -> bool | None:
    """Without privileges (issue 19 a40): the session's own pid namespace and /proc all the same, made in the
    user namespace of our own the caller is in, where CLONE_NEWPID needs no privilege on the host. This process
    cannot enter the namespace it makes, so it forks its init (`_own_proc`: the mounts, the fresh /proc, then the
    serving child) and stays between the keeper and that init holding nothing, reaping it and passing its exit
    status on; it dies with the keeper and the init with it (PR_SET_PDEATHSIG), and the kernel then ends the
    whole namespace. Returns (in the serving child) what `_own_proc` returns; None, in this process, when no pid
    namespace could be made (the caller falls back to `user_binds`). Single-threaded caller, before Landlock."""
    if not _proc_mountable() or not _unshare(_CLONE_NEWPID):
        return None
    keeper = os.getppid()
    init = os.fork()
    if init == 0:
        return _own_proc(binds, copies)
    os.closerange(0, os.sysconf("SC_OPEN_MAX"))  # the socket to hermes and the keeper's channel are the server's
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != keeper:  # the keeper ended before the death signal was armed
        os.kill(init, signal.SIGKILL)
    os._exit(_reap_until(init))


def _proc_mountable() -> bool:
    """Can a pid namespace made here get a /proc of its own (the kernel refuses one in a user namespace when the
    host's /proc is partly covered, as in some containers)? Tried in a throwaway child and its child (two forks,
    ~2 ms, once per launcher): once this process has made its pid namespace there is no way back."""
    import ctypes

    probe = os.fork()
    if probe == 0:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if not _unshare(_CLONE_NEWPID):
                os._exit(1)
            inner = os.fork()
            if inner == 0:
                ok = _unshare(_CLONE_NEWNS) and libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0
                os._exit(0 if ok and libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                                                None) == 0 else 1)
            os._exit(os.waitstatus_to_exitcode(os.waitpid(inner, 0)[1]))
        finally:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(probe, 0)[1]) == 0


def _host_read_only(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return True


def _bind(libc, path: str, read_only: bool, source: str = "") -> bool:  # type: ignore[no-untyped-def]
    """`path` bound onto itself, or `source` (a file only hermes writes) bound over it (a symlink is never
    followed: the fds are opened O_NOFOLLOW), then read-only. False when it was not (every failure: the
    caller keeps Landlock's own carve-outs)."""
    flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        import stat

        if stat.S_ISLNK(os.fstat(fd).st_mode) or os.readlink(f"/proc/self/fd/{fd}") != path:
            return False  # a link, or moved since planning: not bound (the run-later guard still watches it)
        where = f"/proc/self/fd/{fd}".encode()
        if not _mount_from(libc, source, where):
            return False
    finally:
        os.close(fd)
    try:
        top = os.open(path, flags)  # the new mount's root, not the directory it covers
    except OSError:
        return False
    try:  # a bind inherits its source mount's flags: a writable root inside a read-only one is made writable again
        where = f"/proc/self/fd/{top}".encode()
        return libc.mount(None, where, None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV
                          | (_MS_RDONLY if read_only else 0), None) == 0
    finally:
        os.close(top)


def _mount_from(libc, source: str, where: bytes) -> bool:  # type: ignore[no-untyped-def]
    if not source:
        return libc.mount(where, where, None, _MS_BIND | _MS_REC, None) == 0
    try:
        src = os.open(source, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return libc.mount(f"/proc/self/fd/{src}".encode(), where, None, _MS_BIND, None) == 0
    finally:
        os.close(src)


def _reap_until(server: int) -> int:
    """Reap every child until `server` ends; its exit status as a shell reports it (0 if it was never seen)."""
    code = 0
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == server:
            code = os.waitstatus_to_exitcode(status)
            break
    return code if code >= 0 else 128 - code
