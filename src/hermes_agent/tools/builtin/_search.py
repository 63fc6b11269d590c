"""search_files engines: ripgrep (--json, streamed and stopped early), a pure-Python walker honouring
basic .gitignore rules, and grep/find through a non-local backend's shell. All yield the same records."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from hermes_agent.messages import safe_loads
from hermes_agent.tools.builtin._fileio import FileToolError

SKIP_DIRS = (".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
             ".pytest_cache", ".ruff_cache", ".hg", ".svn")
MAX_FILE_BYTES = 50 * 1024 * 1024
NO_RG = "__HERMES_NO_RG__"
KERNEL_ROOTS = ("/proc", "/sys", "/dev")  # endless or blocking files: never searched


class Deadline:
    """A stop event that fires when `outer` (the turn's interrupt) does or after `seconds`; `expired`
    tells which. `close()` ends the watcher once the search is over."""

    def __init__(self, seconds: float, outer: threading.Event | None = None) -> None:
        self.event = threading.Event()
        self.expired = False
        self._outer, self._end = outer, time.monotonic() + seconds
        threading.Thread(target=self._watch, name="search-deadline", daemon=True).start()

    def _watch(self) -> None:
        while not self.event.is_set():
            if self._outer is not None and self._outer.is_set():
                self.event.set()
            elif time.monotonic() >= self._end:
                self.expired = True
                self.event.set()
            else:
                self.event.wait(0.1)

    def close(self) -> None:
        self.event.set()


def kernel_root(path: str) -> bool:
    """True for /proc, /sys, /dev and anything below them."""
    return any(path == r or path.startswith(r + "/") for r in KERNEL_ROOTS)


@dataclass(slots=True)
class Hit:
    """One matching line with its context lines."""

    path: str
    line: int
    text: str
    before: list[tuple[int, str]] = field(default_factory=list)
    after: list[tuple[int, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Query:
    """A content search: regex (or literal when `fixed`), optional name glob, context lines."""

    pattern: str
    glob: str | None = None
    context: int = 0
    fixed: bool = False
    exclude: tuple[str, ...] = ()  # paths relative to the search root never searched (secrets)


def find_rg(path_env: str | None) -> str | None:
    """The ripgrep binary on `path_env` (None: the process PATH)."""
    return shutil.which("rg", path=path_env)


def _exclude_globs(exclude: Iterable[str] = ()) -> list[str]:
    """rg globs: the usual noise dirs anywhere, and `exclude` anchored at the search root (rg's cwd)."""
    return [arg for d in (*SKIP_DIRS, *(f"/{_glob_escape(e)}" for e in exclude)) for arg in ("-g", f"!{d}")]


def _glob_escape(path: str) -> str:
    return re.sub(r"([*?\[\]{}!\\])", r"\\\1", path)


def rg_content_args(rg: str, q: Query, target: str) -> list[str]:
    """Command line for a ripgrep --json content search of `target`."""
    # --sort path keeps the order stable between calls, which offset paging relies on.
    args = [rg, "--json", "--no-messages", "--hidden", "--sort", "path", "--max-filesize", "50M",
            *_exclude_globs(q.exclude)]
    if q.context:
        args += ["-C", str(q.context)]
    if q.glob:
        args += ["-g", q.glob]
    args += ["-F"] if q.fixed else []
    return [*args, "-e", q.pattern, "--", target]


def rg_files_args(rg: str, glob: str, target: str, exclude: Iterable[str] = ()) -> list[str]:
    """Command line listing files whose name matches `glob`, newest first (`exclude`: as in Query)."""
    return [rg, "--files", "--hidden", "--no-messages", "--sortr=modified", *_exclude_globs(exclude),
            "--iglob", glob, "--", target]


_BOUNDARY = None  # a record that ends the current hit (rg's "begin" of a new file)
Record = tuple[str, int, str, bool]  # path, line number, text, is_match


def _fold(records: Iterable[Record | None], attach: Callable[[Hit, str, int], bool]) -> Iterator[Hit]:
    """Group match and context lines into Hits: context before a match is kept as `before`, context
    after it as `after` when `attach(last_hit, path, line)` says it belongs there."""
    pending: list[tuple[int, str]] = []
    last: Hit | None = None
    for rec in records:
        if rec is _BOUNDARY:
            if last is not None:
                yield last
                pending, last = [], None
            continue
        path, num, text, is_match = rec
        if not is_match:
            if last is not None and not pending and attach(last, path, num):
                last.after.append((num, text))
            else:
                pending.append((num, text))
            continue
        if last is not None:
            yield last
        last, pending = Hit(path, num, text, before=pending), []
    if last is not None:
        yield last


def _rg_records(lines: Iterator[str]) -> Iterator[Record | None]:
    for raw in lines:
        if '"type":"match"' not in raw and '"type":"context"' not in raw:
            if '"type":"begin"' in raw:
                yield _BOUNDARY
            continue
        msg = safe_loads(raw)
        data = msg["data"]
        text = (data["lines"].get("text") or "").rstrip("\n").rstrip("\r")
        yield (data["path"].get("text") or "<non-utf8 path>", data.get("line_number") or 0, text,
               msg["type"] == "match")


def parse_rg_json(lines: Iterator[str], context: int) -> Iterator[Hit]:
    """Hits from ripgrep --json output; context lines attach to the nearest match."""
    return _fold(_rg_records(lines), lambda last, path, num: num <= last.line + context)


def stream_process(args: list[str], cwd: str, stop: threading.Event | None,
                   env: dict[str, str] | None = None) -> Iterator[str]:
    """Stdout lines of a local process; the process is killed when the consumer stops early or `stop`
    is set (even while it prints nothing: a watcher kills it, so a stalled read returns)."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            stdin=subprocess.DEVNULL, text=True, errors="replace")
    if stop is not None:
        threading.Thread(target=_kill_on, args=(stop, proc), name="search-kill", daemon=True).start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if stop is not None and stop.is_set():
                break
            yield line
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout:
            proc.stdout.close()
        err = proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if proc.returncode == 2 and "regex" in err:
            raise PatternError(err.strip().splitlines()[-1] if err.strip() else "invalid regex")
        from hermes_agent.terminal.sandbox.startfail import start_refused

        said = start_refused(err) if proc.returncode not in (0, 1) else None
        if said:  # the sandbox never started the search: no result is not "none"
            raise SearchNotStarted(said)


def _kill_on(stop: threading.Event, proc: subprocess.Popen) -> None:
    while proc.poll() is None:
        if stop.wait(0.2):
            if proc.poll() is None:
                proc.kill()
            return


class PatternError(ValueError):
    """The pattern is not a valid regular expression."""


class SearchNotStarted(OSError):
    """The sandbox did not start the search program (it said why); one more start is safe."""


# -- pure-Python fallback ------------------------------------------------------------------------

class _Ignore:
    """Basic .gitignore rules: name and anchored globs, dir-only patterns, negation."""

    def __init__(self) -> None:
        self.rules: list[tuple[str, str, bool, bool]] = []  # (base dir, pattern, negated, dir_only)

    def load(self, directory: str) -> None:
        try:
            with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                raw = fh.read().splitlines()
        except OSError:
            return
        for line in raw:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            line = line[1:] if neg else line
            dir_only = line.endswith("/")
            self.rules.append((directory, line.strip("/") if "/" in line.rstrip("/") else line.rstrip("/"),
                               neg, dir_only))

    def ignored(self, path: str, is_dir: bool) -> bool:
        result = False
        name = os.path.basename(path)
        for base, pat, neg, dir_only in self.rules:
            if dir_only and not is_dir or not (path == base or path.startswith(base.rstrip("/") + "/")):
                continue
            rel = os.path.relpath(path, base)
            hit = fnmatch.fnmatchcase(rel, pat) if "/" in pat else fnmatch.fnmatchcase(name, pat)
            if hit:
                result = not neg
        return result


def _ancestors_with_gitignore(root: str) -> list[str]:
    """Directories above `root` up to its repository top whose .gitignore also applies."""
    out, probe = [], os.path.dirname(root)
    while probe and probe != os.path.dirname(probe):
        if os.path.isfile(os.path.join(probe, ".gitignore")):
            out.append(probe)
        if os.path.exists(os.path.join(probe, ".git")):
            return out
        probe = os.path.dirname(probe)
    return []  # not inside a repository: outer .gitignore files do not apply


Hide = Callable[[str, bool], bool]  # (path, is_symlink) -> True to leave it out of the walk


def walk_files(root: str, stop: threading.Event | None = None, hide: Hide | None = None) -> Iterator[str]:
    """Every file under `root` (or `root` itself) in path order, skipping SKIP_DIRS, .gitignore'd paths
    and what `hide` names (directory symlinks are never followed)."""
    if os.path.isfile(root):
        yield root
        return
    ignore = _Ignore()
    for d in reversed(_ancestors_with_gitignore(root)):
        ignore.load(d)
    yield from _walk(root, ignore, stop, hide or (lambda _p, _l: False))


def _walk(directory: str, ignore: _Ignore, stop: threading.Event | None, hide: Hide) -> Iterator[str]:
    if stop is not None and stop.is_set():
        return
    ignore.load(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and (entry.name in SKIP_DIRS or entry.path in KERNEL_ROOTS) or ignore.ignored(entry.path, is_dir) \
                or hide(entry.path, entry.is_symlink()):
            continue
        if is_dir:
            yield from _walk(entry.path, ignore, stop, hide)
        elif entry.is_file():
            yield entry.path


def python_content(root: str, q: Query, stop: threading.Event | None = None, hide: Hide | None = None,
                   opener: Callable[[str], BinaryIO] | None = None) -> Iterator[Hit]:
    """Content hits from the pure-Python walker (binary and oversized files skipped); `opener` opens
    each file (the path guard's: no symlink followed)."""
    try:
        rx = re.compile(re.escape(q.pattern) if q.fixed else q.pattern)
    except re.error as exc:
        raise PatternError(str(exc)) from exc
    for full in walk_files(root, stop, hide):
        if q.glob and not fnmatch.fnmatch(os.path.basename(full), q.glob) \
                and not fnmatch.fnmatch(os.path.relpath(full, root), q.glob):
            continue
        lines = _text_lines(full, opener)
        if lines is None:
            continue
        yield from _file_hits(full, lines, rx, q.context)


def _text_lines(full: str, opener: Callable[[str], BinaryIO] | None = None) -> list[str] | None:
    try:
        with (opener or _open_rb)(full) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError, FileToolError):
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _open_rb(path: str) -> BinaryIO:
    return open(path, "rb")  # noqa: SIM115 - the caller closes it (unguarded backends only)


def _file_hits(path: str, lines: list[str], rx: re.Pattern, context: int) -> Iterator[Hit]:
    matched = [i for i, line in enumerate(lines) if rx.search(line)]
    shown: set[int] = set(matched)
    for k, i in enumerate(matched):
        prev_end = matched[k - 1] + context if k else -1
        before = [(j + 1, lines[j]) for j in range(max(0, i - context, prev_end + 1), i) if j not in shown]
        nxt = matched[k + 1] if k + 1 < len(matched) else len(lines)
        after = [(j + 1, lines[j]) for j in range(i + 1, min(len(lines), i + 1 + context, nxt))]
        shown.update(j - 1 for j, _ in after)
        yield Hit(path, i + 1, lines[i], before, after)


def python_files(root: str, glob: str, stop: threading.Event | None = None, hide: Hide | None = None) -> list[str]:
    """Files whose name (or path relative to `root`) matches `glob`, newest first."""
    found = [f for f in walk_files(root, stop, hide)
             if fnmatch.fnmatch(os.path.basename(f).lower(), glob.lower())
             or fnmatch.fnmatch(os.path.relpath(f, root).lower(), glob.lower())]
    return sorted(found, key=_mtime, reverse=True)


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


# -- through a non-local backend's shell ---------------------------------------------------------

def remote_content_command(q: Query, target: str, max_lines: int) -> str:
    """Shell command: rg --json when the backend has it, else `grep -Z` output after a marker line."""
    rg = " ".join(shlex.quote(a) for a in rg_content_args("rg", q, target))
    excl = " ".join(f"--exclude-dir={shlex.quote(d)}" for d in SKIP_DIRS)
    grep = ["grep", "-rnIZ", "-F" if q.fixed else "-E", *(["-C", str(q.context)] if q.context else []),
            *([f"--include={q.glob}"] if q.glob else []), "-e", q.pattern, "--", target]
    grep_cmd = " ".join(shlex.quote(a) for a in grep[:1]) + " " + excl + " " + \
        " ".join(shlex.quote(a) for a in grep[1:])
    return (f"if command -v rg >/dev/null 2>&1; then {rg} 2>/dev/null | head -n {max_lines}; "
            f"else echo {NO_RG}; {grep_cmd} 2>/dev/null | head -n {max_lines}; fi")


def _grep_records(lines: list[str]) -> Iterator[Record]:
    for raw in lines:
        if "\x00" not in raw:
            continue
        path, rest = raw.split("\x00", 1)
        m = re.match(r"(\d+)([:-])(.*)", rest, re.S)
        if m:
            yield path, int(m.group(1)), m.group(3), m.group(2) == ":"


def parse_grep_z(lines: list[str]) -> Iterator[Hit]:
    """Hits from `grep -rnZ` output: path NUL line(:|-)text; '--' separates context groups."""
    return _fold(_grep_records(lines), lambda last, path, num: last.path == path and num > last.line)


def remote_files_command(glob: str, target: str, max_lines: int) -> str:
    """Shell command listing files by name glob (rg, else find), newest first where possible."""
    rg = " ".join(shlex.quote(a) for a in rg_files_args("rg", glob, target))
    prune = " -o ".join(f"-name {shlex.quote(d)}" for d in SKIP_DIRS)
    find = (f"find {shlex.quote(target)} \\( {prune} \\) -prune -o -type f -iname {shlex.quote(glob)} "
            "-printf '%T@ %p\\n' 2>/dev/null | sort -rn | cut -d' ' -f2-")
    return (f"if command -v rg >/dev/null 2>&1; then {rg} 2>/dev/null | head -n {max_lines}; "
            f"else {find} | head -n {max_lines}; fi")
