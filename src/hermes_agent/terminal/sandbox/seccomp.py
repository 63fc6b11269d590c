"""A seccomp filter for the Landlock path: no new AF_UNIX sockets (socketpair still works).

Landlock cannot stop connect() to a unix socket by path, and without a mount namespace the user's
sockets (tmux, screen, ssh-agent, gpg-agent, D-Bus, docker.sock, X11) cannot be hidden; refusing
socket(AF_UNIX, ...) closes that door (EACCES). Granting any socket (`sandbox.sockets`) leaves the filter
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
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_AF_UNIX = 1
# (audit arch, socket syscall number) per machine
_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
_X32_BIT = 0x40000000


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The BPF program for this machine (None when unknown): x32 and socket(AF_UNIX) refused, the rest allowed."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, nr_socket = arch
    deny = _RET_ERRNO | errno.EACCES
    return b"".join([
        _insn(_LD_W_ABS, 0, 0, 4),                       # 0 arch
        _insn(_JEQ_K, 1, 0, audit),                      # 1 native -> 3
        _insn(_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),  # 2 foreign ABI refused
        _insn(_LD_W_ABS, 0, 0, 0),                       # 3 nr
        _insn(_JGE_K, 4, 0, _X32_BIT),                   # 4 x32 -> 9 deny
        _insn(_JEQ_K, 0, 2, nr_socket),                  # 5 socket() -> 6, else -> 8 allow
        _insn(_LD_W_ABS, 0, 0, 16),                      # 6 domain
        _insn(_JEQ_K, 1, 0, _AF_UNIX),                   # 7 AF_UNIX -> 9 deny, else -> 8
        _insn(_RET_K, 0, 0, _RET_ALLOW),                 # 8 allow
        _insn(_RET_K, 0, 0, deny),                       # 9 deny
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
