"""Blank a process's own command line in /proc/<pid>/cmdline (stdlib only: the keeper imports it).

Under Landlock without a pid namespace (an unprivileged user where user namespaces are off) a confined command
reads /proc/<pid>/cmdline of every process: that file is mode 0444 whatever the process's dumpable flag (which
already keeps its environ, fd and mem away). hermes's own argv holds the user's prompt (`hermes chat -q ...`),
and a keeper's holds its Landlock plan (the names of the hidden paths). The kernel reads cmdline from the
process's memory between arg_start and arg_end (/proc/self/stat), so overwriting that memory with NULs after
the first `keep` arguments is what `ps` and /proc show from then on. Python has copied its argv by then;
nothing reads the original again."""

from __future__ import annotations

import ctypes


def _arg_area() -> tuple[int, int]:
    """(arg_start, arg_end) of this process: fields 48 and 49 of /proc/self/stat (Linux >= 3.5)."""
    with open("/proc/self/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return int(fields[45]), int(fields[46])  # counted from field 3 (state)


def scrub(keep: int) -> bool:
    """NUL out this process's command line after its first `keep` arguments; False when it cannot."""
    try:
        start, end = _arg_area()
    except (OSError, ValueError, IndexError):
        return False
    if not 0 < start < end:
        return False
    parts = ctypes.string_at(start, end - start).split(b"\0")
    offset = sum(len(p) + 1 for p in parts[:keep])
    if offset < end - start:
        ctypes.memset(start + offset, 0, end - start - offset)
    return True
