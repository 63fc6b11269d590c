"""Run a program where user namespaces are not available (as `user.max_user_namespaces=0` or
`kernel.unprivileged_userns_clone=0` leave a normal user), without touching the host's setting: as root, a user
namespace mapping every id to itself whose own limit of nested user namespaces is 0 (the limit is per user
namespace), then exec `argv` (which drops to a normal user with setpriv). Its pid is written to PIDFILE first.
Usage: NO_USERNS_ARGV='["prog", ...]' python _no_userns.py PIDFILE — the program's words in the environment
(popped before the exec), so this process's command line, which every process may read, does not show them."""

from __future__ import annotations

import ctypes
import json
import os
import sys

_CLONE_NEWUSER = 0x10000000


def main() -> None:
    pidfile, argv = sys.argv[1], json.loads(os.environ.pop("NO_USERNS_ARGV"))
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_r)
        os.close(mapped_w)
        if ctypes.CDLL(None, use_errno=True).unshare(_CLONE_NEWUSER) != 0:
            sys.stderr.write(f"no_userns: unshare: {os.strerror(ctypes.get_errno())}\n")
            os._exit(90)
        os.write(ready_w, b"1")
        if os.read(mapped_r, 1) != b"1":
            os._exit(91)
        with open("/proc/sys/user/max_user_namespaces", "w") as fh:
            fh.write("0")
        with open(pidfile, "w") as fh:
            fh.write(f"{os.getpid()}\n")
        os.execvp(argv[0], argv)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) == b"1":
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{child}/{name}", "w") as fh:
                fh.write("0 0 4294967295")
        os.write(mapped_w, b"1")
    os.close(mapped_w)
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
