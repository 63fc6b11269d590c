"""Landlock (Linux >= 5.13, no binary needed) through raw syscalls with ctypes.

Landlock only allows: a rule grants rights on a file or a whole directory tree, and rights add up
along the path. So "read everywhere except the secrets" is planned as read rights on every sibling
along each secret's path (the directories on the way keep READ_DIR only: names under them are
listable, contents are not). Write rights go on the writable roots. A protected path inside a
writable root cannot be carved out without losing file creation in that root: Landlock leaves it
writable (bubblewrap re-binds it read-only). With network off, ABI >= 4 denies TCP bind/connect.
Stdlib only: the sandbox launcher imports this module before it serves."""

from __future__ import annotations

import ctypes
import os
import stat
import struct

from hermes_agent.paths import is_under

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same on x86_64 and aarch64
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (
    1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12)
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2

FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV
_ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
# Not /dev/pts: the user's own terminals live there (same uid, mode 620), and a command could type into them,
# read keystrokes or write escape sequences around hermes's output (a32). A PTY command gets its terminal as an
# fd from hermes; /dev/tty (the controlling terminal, that one) stays. Programs that make their own ptys
# (script, expect, tmux) need bwrap (a private devpts) under Landlock's fallback.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/random", "/dev/urandom")
# POSIX shared memory of the user's programs (browsers, IDE helpers, audio servers keep state and tokens there):
# Landlock cannot give a command a private one, so it gets none (no read, no write; bwrap mounts a private /dev).
SHARED_MEMORY = "/dev/shm"
USER_TERMINALS = "/dev/pts"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0 when unavailable or disabled)."""
    try:
        res = _libc().syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(res), 0)


def all_fs(abi: int) -> int:
    return next(v for k, v in sorted(_ALL_BY_ABI.items(), reverse=True) if abi >= k)


def plan(writable: tuple[str, ...], secrets: tuple[str, ...], abi: int,
         sealed: tuple[str, ...] = (), unseen: tuple[str, ...] = (),
         reveal: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """(path, rights) rules: read on / except the secrets, /dev/shm, /dev/pts and the `unseen` directories (the host's /tmp
    when the session has its own), everything on writable roots and devices, except the `sealed` paths
    inside them (HOME, the Hermes home: read-only; deeper writable roots such as the workspace get their
    own rule, and rights add up). `reveal`: readable again inside an unseen directory (minus secrets)."""
    full = all_fs(abi)
    read = READ & full
    hidden = [s for s in secrets if os.path.lexists(s)]
    rules: list[tuple[str, int]] = []
    home = os.path.realpath(os.path.expanduser("~"))
    _carve("/", read, [*hidden, *(u for u in (*unseen, SHARED_MEMORY, USER_TERMINALS) if os.path.isdir(u))], rules,
           home if home != "/" else "")
    for path in reveal:
        _carve(path, read, [h for h in hidden if h != path], rules)
    for root in writable:
        if os.path.exists(root):
            inner = [s for s in (*hidden, *sealed) if s == root or s.startswith(root.rstrip("/") + "/")]
            _carve(root, full, inner, rules)
    rules += [(d, (READ | WRITE_FILE | TRUNCATE) & full) for d in DEVICES if os.path.exists(d)]
    return rules


def _carve(root: str, rights: int, hidden: list[str], rules: list[tuple[str, int]], unlisted: str = "") -> None:
    """`rights` on `root`, except below the hidden paths: split along each one's ancestors. An ancestor gets
    READ_DIR (its names listable) — a right Landlock applies to the whole tree below it, hidden subtrees
    included — except `unlisted` (HOME), the directories on the way to it (/ and /home too: a right there
    reaches HOME) and those below it: the names of ~/.ssh's keys, a pass store's accounts, Hermes's profiles
    are data (red-team round 9 a39). Their entries still get their own rules: only listing those directories
    themselves (`ls /`, `ls ~`) is refused under Landlock."""
    if any(root == h for h in hidden) or os.path.islink(root):
        return  # a symlink would grant its target's whole tree: the target has its own entry
    below = [h for h in hidden if h.startswith(root.rstrip("/") + "/")]
    if not below:
        rules.append((root, rights if os.path.isdir(root) else rights & FILE_ONLY))
        return
    if not (unlisted and (is_under(root, unlisted) or is_under(unlisted, root))):
        rules.append((root, READ_DIR & rights))
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        _carve(os.path.join(root, name), rights, below, rules, unlisted)


FS_MAKE_BLOCK = 1 << 11


def fence() -> bool:
    """A Landlock domain that only forbids making block devices: enough for the kernel's rule that a
    process inside a domain cannot ptrace, or read /proc/<pid>/environ|mem|fd of, anything outside it
    (hermes itself), and (ABI >= 6) cannot signal it or reach its abstract unix sockets. Used under
    bubblewrap, and on the Landlock path as the inner domain that keeps commands off the keeper."""
    abi = abi_version()
    if abi < 1:
        return False
    # REFER is denied by every domain that does not grant it, handled or not: without it, renaming or linking a
    # file into another directory fails with EXDEV (pip's wheel build, `os.replace` across directories). So
    # the fence handles it and grants it everywhere; the outer domain (Landlock path) still decides its own.
    if abi >= 2:
        apply([("/", REFER)], network=True, handled=FS_MAKE_BLOCK | REFER)
    else:
        apply([], network=True, handled=FS_MAKE_BLOCK)
    return True


def apply(rules: list[tuple[str, int]], *, network: bool, abi: int | None = None, handled: int | None = None) -> None:
    """Restrict this process and everything it starts, for good. Raises OSError when it cannot."""
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    libc = _libc()
    handled_fs = all_fs(abi) if handled is None else handled
    handled_net = 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP
    # ABI >= 6: no signals to, and no abstract unix sockets (X11, D-Bus) of, processes outside the domain
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX if abi >= 6 else 0
    attr = struct.pack("QQQ", handled_fs, handled_net, scoped)
    size = 24 if abi >= 6 else 16
    buf = ctypes.create_string_buffer(attr[:size], size)
    fd = libc.syscall(_SYS_CREATE, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, rights in rules:
            _add_rule(libc, fd, path, rights & handled_fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
        if libc.syscall(_SYS_RESTRICT, fd, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(fd)


def open_rule_path(path: str) -> int | None:
    """An O_PATH fd of rule path `path` with no symlink followed anywhere on the way or at the end (None when
    it is gone or a link is there now). The plan checked for links, but a writable place can be changed
    between the check and the rule (red-team round 6 a10: an MCP server's tmp swapped for a link to HOME):
    the rule is made from this fd, so what was checked is what is granted, or nothing is (fail closed)."""
    from hermes_agent.nofollow import open_nofollow

    try:
        fd = open_nofollow(path, os.O_PATH)
    except OSError:
        return None
    if stat.S_ISLNK(os.fstat(fd).st_mode):  # the walk's last step opens a final link itself (O_PATH|O_NOFOLLOW)
        os.close(fd)
        return None
    return fd


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    pfd = open_rule_path(path)
    if pfd is None:
        return  # vanished or replaced by a link since planning: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(pfd).st_mode):
            rights &= FILE_ONLY
        if not rights:
            return
        attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, pfd), 12)
        if libc.syscall(_SYS_ADD_RULE, ruleset, ctypes.c_uint32(_RULE_PATH_BENEATH), attr, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(pfd)
