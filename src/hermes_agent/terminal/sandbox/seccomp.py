"""A seccomp filter for the Landlock path: no new AF_UNIX sockets but connected stream/seqpacket pairs.

Landlock cannot stop connect() or sendto() to a unix socket by path (before ABI 9), and without a mount
namespace the user's sockets (tmux, screen, ssh-agent, gpg-agent, D-Bus, docker.sock, X11, journald's and
other datagram sockets) cannot be hidden. So: socket(AF_UNIX, ...) is refused (EACCES); socketpair(AF_UNIX)
only for SOCK_STREAM and SOCK_SEQPACKET, whose ends ignore or refuse a destination address, never for
SOCK_DGRAM (or SOCK_RAW, which is DGRAM for unix) whose end could sendto() any host datagram socket by path
(a39); io_uring_setup is refused (ENOSYS, so programs fall back to plain system calls): its operations
(socket, connect, sendmsg) never pass this filter. Granting any socket (`sandbox.sockets`) leaves the filter
off. Foreign system-call ABIs (x32, i386 via int 0x80 / socketcall) are refused as a whole. Stdlib only:
the sandbox launcher installs it before it serves (no_new_privs is already set by Landlock)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
_AF_UNIX, _SOCK_STREAM, _SOCK_SEQPACKET, _SOCK_TYPE_MASK = 1, 1, 5, 0xF
_IO_URING_SETUP = 425  # the same on every architecture
# (audit arch, socket, socketpair) per machine
_ARCH = {"x86_64": (0xC000003E, 41, 53), "aarch64": (0xC00000B7, 198, 199)}
_X32_BIT = 0x40000000
_ARG0, _ARG1 = 16, 24  # low 32 bits of seccomp_data.args[0], args[1] (little endian)


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The BPF program for this machine (None when unknown). Jumps count the instructions skipped."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, nr_socket, nr_socketpair = arch
    nosys = _RET_ERRNO | errno.ENOSYS
    return b"".join([
        _insn(_LD_W_ABS, 0, 0, 4),                         # 0 arch
        _insn(_JEQ_K, 1, 0, audit),                        # 1 native -> 3
        _insn(_RET_K, 0, 0, nosys),                        # 2 foreign ABI refused
        _insn(_LD_W_ABS, 0, 0, 0),                         # 3 nr
        _insn(_JGE_K, 13, 0, _X32_BIT),                    # 4 x32 -> 18 deny
        _insn(_JEQ_K, 3, 0, nr_socket),                    # 5 socket() -> 9
        _insn(_JEQ_K, 4, 0, nr_socketpair),                # 6 socketpair() -> 11
        _insn(_JEQ_K, 11, 0, _IO_URING_SETUP),             # 7 io_uring_setup() -> 19
        _insn(_RET_K, 0, 0, _RET_ALLOW),                   # 8 allow
        _insn(_LD_W_ABS, 0, 0, _ARG0),                     # 9 socket: domain
        _insn(_JEQ_K, 7, 6, _AF_UNIX),                     # 10 AF_UNIX -> 18 deny, else -> 17 allow
        _insn(_LD_W_ABS, 0, 0, _ARG0),                     # 11 socketpair: domain
        _insn(_JEQ_K, 0, 4, _AF_UNIX),                     # 12 AF_UNIX -> 13, else -> 17 allow
        _insn(_LD_W_ABS, 0, 0, _ARG1),                     # 13 type
        _insn(_AND_K, 0, 0, _SOCK_TYPE_MASK),              # 14 without SOCK_NONBLOCK / SOCK_CLOEXEC
        _insn(_JEQ_K, 1, 0, _SOCK_STREAM),                 # 15 stream -> 17 allow
        _insn(_JEQ_K, 0, 1, _SOCK_SEQPACKET),              # 16 seqpacket -> 17 allow, else -> 18 deny
        _insn(_RET_K, 0, 0, _RET_ALLOW),                   # 17 allow
        _insn(_RET_K, 0, 0, _RET_ERRNO | errno.EACCES),    # 18 deny
        _insn(_RET_K, 0, 0, nosys),                        # 19 not here
    ])


def deny_unix_sockets() -> bool:
    """Install the filter on this process (inherited by everything it starts). False when unsupported."""
    prog = program()
    if prog is None:
        return False
    count = len(prog) // 8
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = struct.pack("HxxxxxxP", count, ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fbuf, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused: " + os.strerror(ctypes.get_errno()))
    return True
