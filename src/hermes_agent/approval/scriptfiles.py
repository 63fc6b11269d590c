"""Reading the workspace files a command runs, for the approval gate (rules/workfiles.py scans them).
The workspace is writable by the confined side, so files are opened fail-closed: walked from / with
O_NOFOLLOW under directory fds, regular files only, at most 64 KB (anything else is reported as not
inspectable). Results are cached by command and by each file's (device, inode, size, mtime)."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable

from hermes_agent import lazyre
from hermes_agent.terminal.judged import UNJUDGED, digest

MAX_BYTES = 64 * 1024
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Cheap pre-check: only commands that could run a file of the workspace are scanned again.
_RUNS_A_FILE = lazyre.compile(r"(?:^|[\s;&|(`$]|\bsudo\s)(?:\S*/)?(?:(?:ba|z|da|k|mk|fi|c|tc|rba|ya|po)?sh|source|"
                              r"g?make|python[\d.]*|node|perl|ruby|php|npm|pnpm|yarn|bun|py\.?test|nose2|tox|nox|uv|poetry|pipenv|"
                              r"pdm|hatch|rye|pixi|just|task|docker|podman|buildah|nerdctl|gcloud|az|fly|flyctl|railway|vercel|rsync|scp|sftp|cp|mv|install|ln|shred)\b|(?:^|[\s;&|(`])\.\s|"
                              r"(?<![>&\d])[\d&]?>\|?\s*(?!&|/dev/)[\w./~-]|"
                              r"(?:^|[\s;&|(`])\.{0,2}/?[\w.-]+/[\w./-]*", re.M)
MAX_TEST_FILES = 200  # newest first (by ctime, which no command can set back): what the session just wrote
MAX_TEST_DIRS = 2000
# never collected: pytest's norecursedirs, virtual environments and caches
_NO_RECURSE = frozenset({"node_modules", "venv", "__pycache__", "build", "dist", "site-packages", "CVS", "_darcs"})
_WRITABLE = ("/tmp/", "/var/tmp/", "/dev/shm/")
_lock = threading.Lock()
_cache: OrderedDict[tuple, tuple] = OrderedDict()
_judged: OrderedDict[tuple, dict[str, str]] = OrderedDict()
_CACHE_SIZE = 256


def _signature(path: str) -> tuple | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns)  # ctime: no going back


def judged(command: str, cwd: str | None) -> dict[str, str]:
    """What the gate read for `command` run from `cwd` (taken: one judgment, one run): host path -> digest of
    the bytes it judged (terminal/judged.py checks them again right before the spawn). Empty: it read no file."""
    if not cwd:
        return {}
    with _lock:
        return _judged.pop((command, os.path.realpath(cwd)), {})


def _remember(command: str, base: str, digests: dict[str, str]) -> None:
    with _lock:
        _judged[(command, base)] = digests
        _judged.move_to_end((command, base))
        while len(_judged) > _CACHE_SIZE:
            _judged.popitem(last=False)


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


def _assigns_hook(command: str) -> bool:
    """`LD_LIBRARY_PATH=./lib ls`: a variable of the exported-variable table set for one command (state.py)."""
    if "=" not in command:
        return False
    from hermes_agent.approval.rules.state import ASSIGNS_HOOK

    return bool(ASSIGNS_HOOK.search(command))


def _hooks(command: str, cwd: str, shell_state: str) -> str:
    """The shell text the session's exported variables make `command`'s programs run (state.hook_lines), without
    the lines whose file is not there: nothing to scan for `export PYTHONPATH=src` without a sitecustomize.py."""
    from hermes_agent.approval.rules.state import hook_lines

    base = os.path.realpath(cwd)
    lines = hook_lines(shell_state, command, base)
    return "\n".join(line for line, file in lines if file is None or
                     os.path.lexists(os.path.join(base, os.path.expanduser(file))))


def file_findings(command: str, cwd: str | None, shell_state: str = "", since: float | None = None,
                  host_path: Callable[[str], str] | None = None) -> tuple:
    """Findings (rules.Finding) in the workspace files `command` would run from `cwd`, each naming its file;
    with `shell_state`, also in what the variables it exports make the command's programs run. The files a
    test runner collects without naming them count when changed (ctime) after `since` (None: all of them):
    what this frontend's sessions wrote, not the project's own suite. `host_path` maps a path the confined
    commands see to where it lies here (their /tmp is the session's private one); still read without
    following a symlink."""
    hooks = _hooks(command, cwd, shell_state) if shell_state and cwd else ""
    if not cwd or not command or not (hooks or _RUNS_A_FILE.search(command) or _assigns_hook(command)):
        return ()
    from hermes_agent.approval.rules import scan_files
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    base = os.path.realpath(cwd)
    read: dict[str, tuple | None] = {}
    digests: dict[str, str] = {}
    here = host_path or (lambda p: p)

    def reader(path: str, at: str | None) -> object:
        full = here(os.path.normpath(os.path.join(base, at or "", os.path.expanduser(path))))
        try:
            data = read_nofollow(full)
        except OSError:
            read[full] = ("unreadable",)
            digests[full] = UNJUDGED
            return UNREADABLE
        read[full] = _signature(full)
        digests[full] = digest(data)
        return None if data is None else data.decode("utf-8", "replace")

    def lister(path: str, at: str | None, picks: tuple[str, ...]) -> list[str]:
        full = here(os.path.normpath(os.path.join(base, at or "", os.path.expanduser(path))))
        return list_tests(full, here(base), picks, read, int((since - 1) * 1e9) if since is not None else 0)

    key = (command, base, hooks, since, here("/tmp"))
    with _lock:
        hit = _cache.get(key)
    if hit is not None and all(_signature(p) == sig for p, sig in hit[0].items() if sig != ("unreadable",)):
        _remember(command, base, hit[2])
        return hit[1]
    findings = scan_files(command, reader, hooks, lister)
    _remember(command, base, digests)
    with _lock:
        _cache[key] = (dict(read), findings, dict(digests))
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return findings


def list_tests(top: str, base: str, picks: tuple[str, ...], seen: dict[str, tuple | None], since_ns: int = 0) -> list[str]:
    """The files test runner picks[0] imports under `top` (a directory walked without following symlinks, or one
    test file): files matching picks[1] (`a|b` globs), pytest's conftest.py, and the __init__.py of their
    packages, changed (ctime: no command can set it back) at or after `since_ns`; the newest MAX_TEST_FILES.
    Only in the workspace or a temp dir. Every directory and candidate is noted in `seen` with its signature,
    so a file added or changed there makes the cache stale."""
    if not ((top + "/").startswith(base.rstrip("/") + "/") or (top + "/").startswith(_WRITABLE)):
        return []
    runner, pattern = picks
    sig = _signature(top)
    if sig is None or not stat.S_ISDIR(sig[4]):
        if sig is None or not top.endswith(".py"):
            return []
        if runner == "plugin":  # a module a pytest config or conftest names: the session's, as conftest.py
            seen[top] = sig
            return [top] if _changed_since(top, since_ns) else []
        up = [os.path.dirname(top)]
        while up[-1] != base and up[-1].startswith(base.rstrip("/") + "/") and len(up) < 32:
            up.append(os.path.dirname(up[-1]))
        implied = [f"{d}/{n}" for d in up for n in ("conftest.py", "__init__.py") if runner == "pytest"]
        return [top, *(f for f in implied if _changed_since(f, since_ns))]
    globs = pattern.split("|") + (["conftest.py"] if runner == "pytest" else [])
    found: dict[str, int] = {}
    packages: set[str] = set()
    todo, walked = [top], 0
    while todo and walked < MAX_TEST_DIRS:
        where = todo.pop()
        walked += 1
        seen[where] = _signature(where)
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        names = {e.name for e in entries}
        if "__init__.py" in names:
            packages.add(where)
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if not e.name.startswith(".") and e.name not in _NO_RECURSE and not e.name.endswith(".egg") and \
                        (runner != "unittest" or os.path.lexists(os.path.join(e.path, "__init__.py"))):
                    todo.append(e.path)
            elif any(fnmatch.fnmatchcase(e.name, g) for g in globs) and e.name.endswith(".py"):
                st = e.stat(follow_symlinks=False)
                seen[e.path] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns)
                if st.st_ctime_ns >= since_ns:
                    found[e.path] = st.st_ctime_ns
    newest = sorted(found, key=found.__getitem__, reverse=True)[:MAX_TEST_FILES]
    inits = {f"{d}/__init__.py" for f in newest for d in _ancestors(os.path.dirname(f), top) if d in packages}
    return [*newest, *sorted(f for f in inits if _changed_since(f, since_ns))]


def _changed_since(path: str, since_ns: int) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_ctime_ns >= since_ns
    except OSError:
        return False


def _ancestors(path: str, top: str) -> list[str]:
    out = [path]
    while out[-1] != top and out[-1].startswith(top.rstrip("/") + "/") and len(out) < 32:
        out.append(os.path.dirname(out[-1]))
    return out
