"""The seccomp filter the sandbox launcher installs before it serves (inherited by every command).

What it refuses, by `Policy` field (the launcher's config frame says which apply):
- always (`keyring`): add_key, request_key, keyctl (ENOSYS, as a kernel without keys): the kernel keyring
  is not namespaced, so a token in the user's (or root's) session/user keyring was readable from inside (a46);
  io_uring_setup (ENOSYS, programs fall back to plain system calls): its socket/connect/sendmsg operations
  never pass this filter; foreign system-call ABIs (x32, i386 via int 0x80 / socketcall) as a whole.
- `ipc` (Landlock path: there is no ipc namespace): System V message queues, semaphores and shared memory and
  POSIX message queues (ENOSYS): objects made inside outlived the session in the host's namespace, and a
  command could attach to other programs' segments (a12). Under bwrap `--unshare-ipc` does it instead.
- `unix` (Landlock path without granted sockets): socket(AF_UNIX) (EACCES); socketpair(AF_UNIX) only for
  SOCK_STREAM / SOCK_SEQPACKET, whose ends ignore or refuse a destination address, never SOCK_DGRAM or
  SOCK_RAW, whose end could sendto() any host datagram socket by path (a39). Landlock (ABI < 9) cannot stop
  connect()/sendto() to a socket by path and cannot hide it.
- `net_off` (Landlock path, `sandbox.network: off`): Landlock's net rules only cover TCP, so every socket
  but AF_UNIX, AF_NETLINK route (interface lists, no CAP_NET_ADMIN to change them) and AF_INET/AF_INET6
  TCP streams (protocol 0 or IPPROTO_TCP: Landlock refuses their bind/connect) is refused (EACCES): UDP,
  raw, ICMP, SCTP, MPTCP, packet, vsock... (a56). With `tcp_free` (ABI < 4: no net rules) TCP goes too.
- `metadata` (Landlock path: Landlock does not check chmod, chown, utime or xattrs): chmod/fchmod/
  fchmodat/fchmodat2 only with a mode that has no setuid, setgid or sticky bit and no group/other write
  (EPERM otherwise: no `chmod 4755 /usr/bin/x` as root, no `chmod 0666 ~/.bashrc`), while `chmod +x`,
  pip and npm (0755 / 0644) keep working; set/remove of extended attributes (EOPNOTSUPP, as a file system
  without them: POSIX ACLs are xattrs, `setfacl` would otherwise grant what chmod may not).
- `setid` (bwrap path, where read-only mounts protect everything but the writable roots): chmod/fchmod/
  fchmodat/fchmodat2 with a setuid or setgid bit fail with EPERM (a setuid-root copy of a shell left in the
  workspace would give root to any local user who reaches it, rt5 a01); every other mode is the command's.
- `setid` and `metadata` both: a file *created* with those bits fails with EPERM too: open/openat with
  O_CREAT or O_TMPFILE, creat, mknod/mknodat whose mode has a setuid or setgid bit (the kernel keeps them
  on the new, empty file; writing strips them only for a writer without CAP_FSETID, so root's next
  unconfined `cp x ws/that` outside would fill a setuid-root file). openat2 carries its mode in a struct
  seccomp cannot read: ENOSYS, callers fall back to openat (glibc's open never uses it).
- `notify` (with `metadata`, the Landlock path): every other chmod, and chown/lchown/fchown/fchownat and
  utime/utimes/futimesat/utimensat, return SECCOMP_RET_USER_NOTIF: the keeper decides by path and does the
  change itself (`metaguard.py`, a34). `install` then returns the listener fd.
- `others` (Landlock path when no pid namespace holds the session: a normal user without user namespaces;
  server.py sets it once it knows): kill(-1, sig) (EPERM: "every process I may signal"; below Landlock ABI 6,
  whose signal scope keeps a command's signals inside its domain, that is hermes and every program of the
  user), setpriority, ioprio_set, sched_setaffinity/setscheduler/setparam/setattr,
  migrate_pages, move_pages and prlimit64 (setting) only for the caller itself (pid/who 0), else EPERM:
  Landlock scopes signals and ptrace, not these, so a command reniced hermes and the user's programs to 19
  and pinned them to one CPU (rt11 a27). `nice -n 5 cmd`, `ionice`, `taskset -c 0 cmd`, `chrt`, `ulimit`
  work (all act on the caller); what breaks: the same calls on the session's own child or thread by id
  (`renice -p <pid of a child>`, `taskset -p`, pthread_setaffinity_np: OpenMP thread binding), which seccomp
  cannot tell from a stranger's.
Stdlib only."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from dataclasses import dataclass

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO, _RET_USER_NOTIF = 0x7FFF0000, 0x00050000, 0x7FC00000
_SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER = 1, 8
_SECCOMP_NR = {"x86_64": 317, "aarch64": 277}
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_SOCK_STREAM, _SOCK_SEQPACKET, _SOCK_TYPE_MASK = 1, 5, 0xF
_IPPROTO_TCP, _NETLINK_ROUTE = 6, 0
_X32_BIT = 0x40000000
_MODE_REFUSED = 0o7022  # setuid, setgid, sticky, group write, other write
_SETID = 0o6000  # setuid, setgid
_ARGS = (16, 24, 32, 40)  # low 32 bits of seccomp_data.args[0..3] (little endian)

# per machine: audit arch and syscall numbers by name
_X86_64 = {
    "socket": 41, "socketpair": 53, "io_uring_setup": 425, "add_key": 248, "request_key": 249, "keyctl": 250,
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220, "mq_open": 240,
    "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
    "open": 2, "openat": 257, "creat": 85, "mknod": 133, "mknodat": 259, "openat2": 437,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "setxattrat": 463, "removexattrat": 466,
    "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144, "sched_setaffinity": 203,
    "ioprio_set": 251, "migrate_pages": 256, "move_pages": 279, "prlimit64": 302, "sched_setattr": 314, "kill": 62,
}
_AARCH64 = {
    "socket": 198, "socketpair": 199, "io_uring_setup": 425, "add_key": 217, "request_key": 218, "keyctl": 219,
    "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
    "mq_getsetattr": 185, "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190,
    "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197,
    "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "openat": 56, "mknodat": 33, "openat2": 437,
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
    "setxattrat": 463, "removexattrat": 466,
    "setpriority": 140, "sched_setparam": 118, "sched_setscheduler": 119, "sched_setaffinity": 122,
    "ioprio_set": 30, "migrate_pages": 238, "move_pages": 239, "prlimit64": 261, "sched_setattr": 274, "kill": 129,
}
_ARCH = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}
_KEYRING = ("add_key", "request_key", "keyctl")
_IPC = ("shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd",
        "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr")
_XATTR_SET = ("setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
              "setxattrat", "removexattrat")
_MODE_ARG = {"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2}
# (flags argument or -1 when the call always creates, mode argument) of the calls that create a file
_CREATE_ARG = {"open": (1, 2), "openat": (2, 3), "creat": (-1, 1), "mknod": (-1, 1), "mknodat": (-1, 2)}
_O_CREATE = 0o100 | 0o20000000  # O_CREAT, __O_TMPFILE
# calls that change another process when their first argument names it (0: the caller itself); the `others` rule
_OTHERS = {"setpriority": "setprio", "ioprio_set": "ioprio", "prlimit64": "prlimit", "sched_setaffinity": "self0",
           "sched_setscheduler": "self0", "sched_setparam": "self0", "sched_setattr": "self0",
           "migrate_pages": "self0", "move_pages": "self0", "kill": "killall"}
_PRIO_PROCESS, _IOPRIO_WHO_PROCESS = 0, 1


@dataclass(frozen=True)
class Policy:
    keyring: bool = True
    ipc: bool = False
    unix: bool = False
    net_off: bool = False
    tcp_free: bool = False
    metadata: bool = False
    setid: bool = False  # without metadata: only the setuid/setgid bits refused (bwrap)
    notify: bool = False  # with metadata: chmod/chown/utime go to the keeper (metaguard.py), which decides by path
    others: bool = False  # no pid namespace holds the session: priority/affinity/limits of the caller only

    @classmethod
    def from_config(cls, cfg: dict | None) -> Policy:
        cfg = cfg or {}
        return cls(**{k: bool(cfg[k]) for k in cls.__dataclass_fields__ if k in cfg})


class _Asm:
    """A tiny BPF assembler: jumps name labels, resolved to forward offsets at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def ret(self, value: int) -> None:
        self.op(_RET_K, value)

    def load(self, offset: int) -> None:
        self.op(_LD_W_ABS, offset)

    def build(self) -> bytes:
        out = []
        for i, (code, jt, jf, k) in enumerate(self.code):
            offs = [self.labels[j] - i - 1 if isinstance(j, str) else int(j) for j in (jt, jf)]
            if any(not 0 <= o < 256 for o in offs):
                raise ValueError("seccomp program: jump out of range")
            out.append(struct.pack("HBBI", code, offs[0], offs[1], k))
        return b"".join(out)


def _socket_checks(asm: _Asm, pol: Policy, deny: str) -> None:
    """socket(domain, type, protocol): the unix and network-off rules."""
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, _AF_UNIX, deny if pol.unix else "allow", 0)
    if not pol.net_off:
        asm.ret(_RET_ALLOW)
        return
    asm.op(_JEQ_K, _AF_NETLINK, "netlink", 0)
    asm.op(_JEQ_K, _AF_INET, "inet", 0)
    asm.op(_JEQ_K, _AF_INET6, "inet", deny)
    asm.label("netlink")
    asm.load(_ARGS[2])
    asm.op(_JEQ_K, _NETLINK_ROUTE, "allow", deny)
    asm.label("inet")
    if pol.tcp_free:  # no Landlock net rules on this kernel: TCP would reach anything
        asm.ret(_RET_ERRNO | errno.EACCES)
        return
    asm.load(_ARGS[1])
    asm.op(_AND_K, _SOCK_TYPE_MASK)
    asm.op(_JEQ_K, _SOCK_STREAM, 0, deny)
    asm.load(_ARGS[2])
    asm.op(_JEQ_K, 0, "allow", 0)
    asm.op(_JEQ_K, _IPPROTO_TCP, "allow", deny)


def _others_checks(asm: _Asm) -> None:
    """The `others` rule: the target is the caller itself (pid/who 0), else EPERM. setpriority and ioprio_set
    only for one process (PRIO_PGRP/PRIO_USER with 0 mean the caller's group / every process of its uid);
    prlimit64 of another process may still read its limits (new_limit NULL, both halves)."""
    asm.label("setprio")
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, _PRIO_PROCESS, "self1", "eperm")
    asm.label("ioprio")
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, _IOPRIO_WHO_PROCESS, "self1", "eperm")
    asm.label("self1")
    asm.load(_ARGS[1])
    asm.op(_JEQ_K, 0, "allow", "eperm")
    asm.label("prlimit")
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, 0, "allow", 0)
    asm.load(_ARGS[2])
    asm.op(_JEQ_K, 0, 0, "eperm")
    asm.load(_ARGS[2] + 4)
    asm.op(_JEQ_K, 0, "allow", "eperm")
    asm.label("self0")
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, 0, "allow", "eperm")
    asm.label("killall")  # kill(-1, sig): every process the caller may signal
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, 0xFFFFFFFF, "eperm", "allow")


def program(policy: Policy | None = None) -> bytes | None:
    """The BPF program for this machine and policy (None when the machine is unknown)."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, nrs = arch
    pol = policy or Policy()
    nosys, eacces = _RET_ERRNO | errno.ENOSYS, _RET_ERRNO | errno.EACCES
    asm = _Asm()
    asm.load(4)
    asm.op(_JEQ_K, audit, 0, "nosys")                     # foreign ABI refused
    asm.load(0)
    asm.op(_JGE_K, _X32_BIT, "deny", 0)                   # x32 refused
    table: list[tuple[str, str]] = [("io_uring_setup", "nosys")]
    if pol.keyring:
        table += [(n, "nosys") for n in _KEYRING]
    if pol.ipc:
        table += [(n, "nosys") for n in _IPC]
    if pol.unix or pol.net_off:
        table += [("socket", "socket")]
    if pol.unix:
        table += [("socketpair", "socketpair")]
    if pol.metadata:
        table += [(n, f"mode{_MODE_ARG[n]}") for n in _MODE_ARG]
        table += [(n, "notsup") for n in _XATTR_SET]
    elif pol.setid:
        table += [(n, f"setid{_MODE_ARG[n]}") for n in _MODE_ARG]
    if pol.metadata or pol.setid:
        table += [(n, f"create{f}_{m}" if f >= 0 else f"setid{m}") for n, (f, m) in _CREATE_ARG.items()]
        table += [("openat2", "nosys")]
    if pol.others:
        table += list(_OTHERS.items())
    if pol.metadata and pol.notify:
        from hermes_agent.terminal.sandbox.metaguard import NUMBERS, SPECS

        nrs = {**NUMBERS.get(platform.machine(), {}), **nrs}
        table += [(n, "notify") for n in SPECS if n not in _MODE_ARG]
    for name, target in table:
        if name in nrs:
            asm.op(_JEQ_K, nrs[name], target, 0)
    asm.ret(_RET_ALLOW)                                   # not in the table
    asm.label("socket")
    _socket_checks(asm, pol, "deny")
    asm.label("socketpair")
    asm.load(_ARGS[0])
    asm.op(_JEQ_K, _AF_UNIX, 0, "allow")
    asm.load(_ARGS[1])
    asm.op(_AND_K, _SOCK_TYPE_MASK)
    asm.op(_JEQ_K, _SOCK_STREAM, "allow", 0)
    asm.op(_JEQ_K, _SOCK_SEQPACKET, "allow", "deny")
    for flags, mode in sorted({v for v in _CREATE_ARG.values() if v[0] >= 0}):
        asm.label(f"create{flags}_{mode}")
        asm.load(_ARGS[flags])
        asm.op(_JSET_K, _O_CREATE, f"setid{mode}", "allow")
    for arg in (1, 2):
        asm.label(f"mode{arg}")
        asm.load(_ARGS[arg])
        asm.op(_JSET_K, _MODE_REFUSED, "eperm", "notify" if pol.notify else "allow")
    for arg in (1, 2, 3):
        asm.label(f"setid{arg}")
        asm.load(_ARGS[arg])
        asm.op(_JSET_K, _SETID, "eperm", "allow")
    if pol.others:
        _others_checks(asm)
    asm.label("notify")
    asm.ret(_RET_USER_NOTIF)
    asm.label("eperm")
    asm.ret(_RET_ERRNO | errno.EPERM)
    asm.label("notsup")
    asm.ret(_RET_ERRNO | errno.EOPNOTSUPP)
    asm.label("deny")
    asm.ret(eacces)
    asm.label("nosys")
    asm.ret(nosys)
    asm.label("allow")                                    # BPF jumps only forward: the shared allow is last
    asm.ret(_RET_ALLOW)
    return asm.build()


def install(policy: Policy | None = None) -> bool | int:
    """Install the filter on this process (inherited by everything it starts). False when unsupported; with
    `policy.notify`, the listener fd the keeper answers on (metaguard.Supervisor)."""
    prog = program(policy)
    if prog is None:
        return False
    count = len(prog) // 8
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = struct.pack("HxxxxxxP", count, ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # needed without CAP_SYS_ADMIN (Landlock already set it)
    if policy is not None and policy.notify:
        fd = libc.syscall(_SECCOMP_NR[platform.machine()], _SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER, fbuf)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "seccomp listener refused: " + os.strerror(ctypes.get_errno()))
        return int(fd)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fbuf, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused: " + os.strerror(ctypes.get_errno()))
    return True

