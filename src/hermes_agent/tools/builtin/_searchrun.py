"""search_files orchestration: pick an engine for the backend, paginate, and format compact results."""

from __future__ import annotations

import os
import posixpath
import threading
from collections.abc import Iterator

from hermes_agent.terminal.base import TerminalBackend
from hermes_agent.tools.builtin import _search as s
from hermes_agent.tools.builtin._fileio import FileToolError, missing_error, resolve
from hermes_agent.tools.builtin._pathguard import GuardedBackend, SearchGuard

LINE_MAX_CHARS = 300
COUNT_BEYOND = 1000  # keep counting this many hits past the page to report a total
AGGREGATE_MAX_HITS = 20000
_GLOB_CHARS = set("*?[")
SEARCH_DEADLINE = 60.0  # seconds: a search that runs longer stops and returns what it found


def run(backend: TerminalBackend, args: dict, *, path_env: str | None,
        stop: threading.Event | None = None, use_rg: bool = True) -> dict:
    """Run one search_files call within SEARCH_DEADLINE and return its result mapping."""
    deadline = s.Deadline(SEARCH_DEADLINE, stop)
    try:
        out = _run(backend, args, path_env=path_env, stop=deadline.event, use_rg=use_rg)
    finally:
        expired = deadline.expired
        deadline.close()
    if expired:
        out["note"] = (f"search stopped at its {SEARCH_DEADLINE:g} s deadline: results are partial; "
                       "narrow the path or pattern. " + out.get("note", "")).strip()
    return out


def _run(backend: TerminalBackend, args: dict, *, path_env: str | None,
         stop: threading.Event | None = None, use_rg: bool = True) -> dict:
    pattern = str(args.get("pattern") or "")
    if not pattern:
        raise FileToolError("pattern is required")
    root = resolve(backend, str(args.get("path") or "."))
    if backend.kind == "local" and s.kernel_root(os.path.realpath(root)):
        raise FileToolError(f"search_files does not search {root}: /proc, /sys and /dev hold endless and "
                            "blocking files. Read one specific file with read_file, or use the terminal.")
    guard = SearchGuard.for_backend(backend, root)
    root = guard.root if guard else root
    if backend.stat(root) is None:
        raise missing_error(backend, root)
    if backend.kind == "local" and not _searchable(root):
        raise FileToolError(f"{root} is not a regular file or directory (a FIFO, socket or device blocks a "
                            "reader): not searched")
    limit = max(1, min(int(args.get("limit") or 50), 500))
    offset = max(0, int(args.get("offset") or 0))
    cwd = backend.cwd()
    if (args.get("target") or "content") == "files":
        glob = pattern if _GLOB_CHARS & set(pattern) else f"*{pattern}*"
        files, engine = _find_files(backend, glob, root, path_env, stop, use_rg, offset + limit + COUNT_BEYOND, guard)
        return _page_list("files", [_display(f, cwd) for f in files], offset, limit, engine,
                          f"no files matching '{glob}' under {root}")
    q = s.Query(pattern, args.get("file_glob") or None, max(0, min(int(args.get("context") or 0), 10)),
                exclude=guard.exclude if guard else ())
    mode = args.get("output_mode") or "content"
    from hermes_agent.terminal.sandbox.startfail import OneMoreStart

    again = OneMoreStart()  # a loaded machine: the sandbox's namespace was not ready in time
    try:
        while True:
            try:
                return _content(backend, q, root, cwd, mode, offset, limit, path_env, stop, use_rg, guard)
            except s.SearchNotStarted as exc:
                if not again.wanted(str(exc)):
                    raise
    except s.PatternError as exc:
        literal = s.Query(q.pattern, q.glob, q.context, fixed=True, exclude=q.exclude)
        out = _content(backend, literal, root, cwd, mode, offset, limit, path_env, stop, use_rg, guard)
        out["note"] = f"not a valid regex ({exc}); searched as literal text. " + out.get("note", "")
        return out


def _searchable(root: str) -> bool:
    """A directory or a regular file (what a search may open); a FIFO would block rg or the walker."""
    import stat as stat_mod

    try:
        mode = os.stat(root).st_mode
    except OSError:
        return True  # the search reports it
    return stat_mod.S_ISDIR(mode) or stat_mod.S_ISREG(mode)


def _content(backend: TerminalBackend, q: s.Query, root: str, cwd: str, mode: str, offset: int, limit: int,
             path_env: str | None, stop: threading.Event | None, use_rg: bool, guard: SearchGuard | None) -> dict:
    needed = offset + limit + COUNT_BEYOND if mode == "content" else AGGREGATE_MAX_HITS
    hits, engine = _hits(backend, q, root, path_env, stop, use_rg, offset + limit, needed, guard)
    if guard is not None:
        hits = (h for h in hits if guard.visible(h.path))
    empty = f"no matches for '{q.pattern}' under {root}"
    if mode == "content":
        page, total, capped = [], 0, False
        for hit in hits:
            if offset <= total < offset + limit:
                page.append(hit)
            total += 1
            if total >= needed:
                capped = True
                break
        out = _paged(total, capped, offset, len(page), engine, empty)
        if page:  # _read_paths: the files whose text the model sees (files.py: the taint ledger), not sent
            out = {"matches": _format_hits(page, cwd, q.context), **out,
                   "_read_paths": list(dict.fromkeys(os.path.join(cwd, h.path) for h in page))}
        return out
    counts: dict[str, int] = {}
    capped = False
    for n, hit in enumerate(hits, 1):
        counts[hit.path] = counts.get(hit.path, 0) + 1
        if n >= needed:
            capped = True
            break
    if mode == "count":
        rows = [f"{_display(p, cwd)}: {c}" for p, c in counts.items()]
        out = _page_list("counts", rows, offset, limit, engine, empty)
        out["total_matches"] = sum(counts.values())
    else:
        out = _page_list("files", [_display(p, cwd) for p in counts], offset, limit, engine, empty)
    if capped:
        out["note"] = (out.get("note", "") + f" stopped after {needed} matches; narrow the pattern or path").strip()
    return out


def _hits(backend: TerminalBackend, q: s.Query, root: str, path_env: str | None, stop: threading.Event | None,
          use_rg: bool, page_end: int, needed: int, guard: SearchGuard | None = None) -> tuple[Iterator[s.Hit], str]:
    if backend.kind != "local":
        max_lines = needed * (2 * q.context + 1) + 2 * needed + 100
        res = backend.execute(s.remote_content_command(q, root, max_lines), timeout=120, interrupt=stop)
        lines = res.output.splitlines()
        if lines and lines[0] == s.NO_RG:
            return s.parse_grep_z(lines[1:]), "grep"
        return s.parse_rg_json(iter(lines), q.context), "rg"
    rg = s.find_rg(path_env) if use_rg else None
    run = _confined(backend, s.rg_content_args(rg, q, root)) if rg else None
    if run:
        cwd = root if posixpath.isdir(root) else posixpath.dirname(root)
        return s.parse_rg_json(s.stream_process(run[0], cwd, stop, env=run[1]), q.context), "rg"
    opener = backend.open_bytes if isinstance(backend, GuardedBackend) else None
    return s.python_content(root, q, stop, guard.hide if guard else None, opener), "python"


def _confined(backend: TerminalBackend, argv: list[str]) -> tuple[list[str], dict[str, str] | None] | None:
    """A local search program's (argv, environment; None: hermes's own): inside the OS sandbox when the backend
    is guarded (None when no sandbox works here: the caller uses the Python walker, which opens files without
    following links)."""
    if argv[-1] == "/":  # kernel roots are refused as search roots, and skipped below /
        cut = argv.index("--")
        argv = [*argv[:cut], "-g", "!/proc", "-g", "!/sys", "-g", "!/dev", *argv[cut:]]
    if not isinstance(backend, GuardedBackend):
        return argv, None
    return backend.confine(argv)


def _find_files(backend: TerminalBackend, glob: str, root: str, path_env: str | None,
                stop: threading.Event | None, use_rg: bool, needed: int,
                guard: SearchGuard | None = None) -> tuple[list[str], str]:
    if backend.kind != "local":
        res = backend.execute(s.remote_files_command(glob, root, needed), timeout=120, interrupt=stop)
        return [x for x in res.output.splitlines() if x.strip()], "shell"
    rg = s.find_rg(path_env) if use_rg else None
    run = _confined(backend, s.rg_files_args(rg, glob, root, guard.exclude if guard else ())) if rg else None
    if run:
        lines = s.stream_process(run[0], root, stop, env=run[1])
        out = []
        for line in lines:
            if guard is not None and not guard.visible(line.rstrip("\n")):
                continue
            out.append(line.rstrip("\n"))
            if len(out) >= needed:
                break
        lines.close()
        return out, "rg"
    found = s.python_files(root, glob, stop, guard.hide if guard else None)
    return [f for f in found if guard is None or guard.visible(f)][:needed], "python"


def _display(path: str, cwd: str) -> str:
    """`path` relative to the working directory when inside it, else absolute."""
    path = posixpath.normpath(path if posixpath.isabs(path) else posixpath.join(cwd, path))
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def _clip(text: str) -> str:
    return text if len(text) <= LINE_MAX_CHARS else text[:LINE_MAX_CHARS] + f"... [+{len(text) - LINE_MAX_CHARS}]"


def _format_hits(hits: list[s.Hit], cwd: str, context: int) -> str:
    """rg-style lines: 'path:N:text' for matches, 'path-N-text' for context, '--' between groups."""
    out: list[str] = []
    prev: tuple[str, int] | None = None
    for hit in hits:
        path = _display(hit.path, cwd)
        first = hit.before[0][0] if hit.before else hit.line
        if context and prev is not None and (prev[0] != path or first > prev[1] + 1):
            out.append("--")
        out.extend(f"{path}-{n}-{_clip(t)}" for n, t in hit.before)
        out.append(f"{path}:{hit.line}:{_clip(hit.text)}")
        out.extend(f"{path}-{n}-{_clip(t)}" for n, t in hit.after)
        prev = (path, hit.after[-1][0] if hit.after else hit.line)
    return "\n".join(out)


def _paged(total: int, capped: bool, offset: int, shown: int, engine: str, empty: str) -> dict:
    out: dict = {"total": f"{total}+" if capped else total, "engine": engine}
    if shown:
        out["shown"] = f"{offset + 1}-{offset + shown}"
    if offset + shown < total:
        out["note"] = f"more results: use offset={offset + shown}"
    elif not total:
        out["note"] = empty
    elif not shown:
        out["note"] = f"offset {offset} is past the last result ({total})"
    return out


def _page_list(key: str, items: list[str], offset: int, limit: int, engine: str, empty: str) -> dict:
    page = items[offset:offset + limit]
    out = _paged(len(items), False, offset, len(page), engine, empty)
    return {key: page, **out} if page else out
