"""Reading the workspace files a command runs, for the approval gate (rules/workfiles.py scans them).
The workspace is writable by the confined side, so files are opened fail-closed: walked from / with
O_NOFOLLOW under directory fds, regular files only, at most 64 KB (anything else is reported as not
inspectable). Results are cached by command and by each file's (device, inode, size, mtime)."""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import OrderedDict

from hermes_agent import lazyre

MAX_BYTES = 64 * 1024
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Cheap pre-check: only commands that could run a file of the workspace are scanned again.
_RUNS_A_FILE = lazyre.compile(r"(?:^|[\s;&|(`$]|\bsudo\s)(?:\S*/)?(?:(?:ba|z|da|k|mk|fi|c|tc|rba|ya|po)?sh|source|"
                              r"g?make|python[\d.]*|node|perl|ruby|php|npm|pnpm|yarn|bun)\b|(?:^|[\s;&|(`])\.\s|"
                              r"(?:^|[\s;&|(`])\.{0,2}/?[\w.-]+/[\w./-]*", re.M)
_lock = threading.Lock()
_cache: OrderedDict[tuple, tuple] = OrderedDict()
_CACHE_SIZE = 256


def _signature(path: str) -> tuple | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


def read_nofollow(path: str, limit: int = MAX_BYTES) -> bytes | None:
    """The bytes of the regular file at absolute `path`, no symlink followed anywhere on the way; None when it
    does not exist. Raises PermissionError for a symlink, a special file or a file over `limit`."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise PermissionError(path)
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                return None
            os.close(fd)
            fd = nfd
        try:
            ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return None
    finally:
        os.close(fd)
    try:
        st = os.fstat(ffd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            raise PermissionError(path)
        return os.read(ffd, limit + 1)[:limit]
    finally:
        os.close(ffd)


def _hooks(command: str, cwd: str, shell_state: str) -> str:
    """The shell text the session's exported variables make `command`'s programs run (state.hook_lines), without
    the lines whose file is not there: nothing to scan for `export PYTHONPATH=src` without a sitecustomize.py."""
    from hermes_agent.approval.rules.state import hook_lines

    base = os.path.realpath(cwd)
    lines = hook_lines(shell_state, command, base)
    return "\n".join(line for line, file in lines if file is None or
                     os.path.lexists(os.path.join(base, os.path.expanduser(file))))


def file_findings(command: str, cwd: str | None, shell_state: str = "") -> tuple:
    """Findings (rules.Finding) in the workspace files `command` would run from `cwd`, each naming its file;
    with `shell_state`, also in what the variables it exports make the command's programs run."""
    hooks = _hooks(command, cwd, shell_state) if shell_state and cwd else ""
    if not cwd or not command or not (hooks or _RUNS_A_FILE.search(command)):
        return ()
    from hermes_agent.approval.rules import scan_files
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    base = os.path.realpath(cwd)
    read: dict[str, tuple | None] = {}

    def reader(path: str, at: str | None) -> object:
        full = os.path.normpath(os.path.join(base, at or "", os.path.expanduser(path)))
        try:
            data = read_nofollow(full)
        except OSError:
            read[full] = ("unreadable",)
            return UNREADABLE
        read[full] = _signature(full)
        return None if data is None else data.decode("utf-8", "replace")

    key = (command, base, hooks)
    with _lock:
        hit = _cache.get(key)
    if hit is not None and all(_signature(p) == sig for p, sig in hit[0].items() if sig != ("unreadable",)):
        return hit[1]
    findings = scan_files(command, reader, hooks)
    with _lock:
        _cache[key] = (dict(read), findings)
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return findings
