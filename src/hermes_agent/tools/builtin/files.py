"""File tools (toolset "file"): read_file, write_file, patch, search_files. They act through the task's
terminal backend (host, container or remote) and snapshot the working directory before changing it."""

from __future__ import annotations

import contextvars
import functools
import re
import threading
from collections.abc import Callable

from hermes_agent import lazyre
from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.tools.builtin import _patchmode, _searchrun
from hermes_agent.tools.builtin._diffparse import parse_patch
from hermes_agent.tools.builtin._fileio import (
    FileToolError,
    checkpoint,
    load_text,
    os_error,
    resolve,
    write_text,
)
from hermes_agent.tools.builtin._patching import replace, unified_diff
from hermes_agent.tools.builtin._pathguard import authorize, check_read, guarded
from hermes_agent.tools.builtin._reading import read_window
from hermes_agent.tools.provenance import path_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

_DIFF_PATH = lazyre.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)|^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.M)
_PATH = {"type": "string", "description": "absolute, ~/... or relative"}  # said once, on read_file (issue 24)
_PATH_PLAIN = {"type": "string"}

READ_FILE_SCHEMA = {
    "name": "read_file",
    "description": "Read a text file as numbered lines ('N|text'); the reply says how to page on.",
    "parameters": {"type": "object", "properties": {
        "path": _PATH,
        "offset": {"type": "integer", "description": "First line (default 1)"},
        "limit": {"type": "integer", "description": "Lines (default 500, max 2000)"},
    }, "required": ["path"]},
}

WRITE_FILE_SCHEMA = {
    "name": "write_file",
    "description": "Create or overwrite a whole file (and its parent dirs); to change part of one, use patch.",
    "parameters": {"type": "object", "properties": {
        "path": _PATH_PLAIN,
        "content": {"type": "string"},
    }, "required": ["path", "content"]},
}

PATCH_SCHEMA = {
    "name": "patch",
    "description": "Edit files; returns the diff. mode=replace (default): old_string -> new_string in path; "
                   "old_string must match one place exactly (copy it from read_file, with context lines to "
                   "make it unique) unless replace_all. mode=patch: apply "
                   "`patch`, a multi-file unified diff or '*** Begin Patch' text; all files change or none.",
    "parameters": {"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["replace", "patch"]},
        "path": _PATH_PLAIN,
        "old_string": {"type": "string"},
        "new_string": {"type": "string", "description": "may be empty"},
        "replace_all": {"type": "boolean"},
        "patch": {"type": "string"},
    }},
}

SEARCH_FILES_SCHEMA = {
    "name": "search_files",
    "description": "Regex search in file contents (target=content) or file-name glob (target=files). "
                   "Skips .git, node_modules, .venv, .gitignored.",
    "parameters": {"type": "object", "properties": {
        "pattern": {"type": "string", "description": "regex; a name glob like '*.py' for target=files"},
        "target": {"type": "string", "enum": ["content", "files"]},
        "path": {"type": "string", "description": "Dir or file (default: working dir)"},
        "file_glob": {"type": "string", "description": "e.g. '*.ts'"},
        "context": {"type": "integer", "description": "lines around matches"},
        "output_mode": {"type": "string", "enum": ["content", "files_only", "count"]},
        "limit": {"type": "integer", "description": "default 50"},
        "offset": {"type": "integer"},
    }, "required": ["pattern"]},
}


def _ctx(kw: dict) -> object:
    ctx = kw.get("ctx")
    if ctx is None:
        raise FileToolError("file tools need a ToolContext (ctx) from the caller")
    return ctx


def _display(backend, path: str) -> str:
    """A path as the model should see it: relative to the working directory when inside it."""
    prefix = backend.cwd().rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def _safe_text(text: str) -> str:
    """Text that survives JSON/UTF-8 even if it carries undecodable bytes (surrogate escapes)."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _int(args: dict, key: str, default: int) -> int:
    try:
        return int(args.get(key) or default)
    except (TypeError, ValueError) as exc:
        raise FileToolError(f"{key} must be an integer") from exc


def read_file(args: dict, **kw: object) -> str:
    """Handler of read_file."""
    try:
        ctx = _ctx(kw)
        settings = ctx.settings
        backend = guarded(ctx)
        path = resolve(backend, str(args.get("path") or ""))
        result = read_window(
            backend, check_read(backend, path), _int(args, "offset", 1), _int(args, "limit", 500),
            max_chars=settings.cfg.file_read_max_chars,
            max_line=settings.cfg.tool_output.max_line_length)
    except FileToolError as exc:
        return tool_error(str(exc), **exc.extra)
    result["path"] = _display(backend, path)
    if not ctx.untrusted and getattr(backend, "policy", None) is not None:  # the local files (taint ledger)
        from hermes_agent.tools import taintmark

        taintmark.on_read(ctx, [path])
    return tool_result(result)


def write_file(args: dict, **kw: object) -> str:
    """Handler of write_file."""
    try:
        ctx = _ctx(kw)
        backend = guarded(ctx)
        path = resolve(backend, str(args.get("path") or ""))
        content = args.get("content")
        if not isinstance(content, str):
            raise FileToolError("content is required (a string; use \"\" for an empty file)")
        path = authorize(ctx, backend, [path], "write_file")[0]
        try:
            st = backend.stat(path)
        except OSError as exc:
            raise os_error(exc, path, "writing") from exc
        if st is not None and st.get("is_dir"):
            raise FileToolError(f"{path} is a directory; give a file path")
        checkpoint(ctx, backend, [path], f"write_file {path}")
        written = write_text(backend, path, content)
    except FileToolError as exc:
        return tool_error(str(exc), **exc.extra)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return tool_result({"path": _display(backend, path), "bytes_written": written, "lines": lines,
                        "created": st is None})


def patch(args: dict, **kw: object) -> str:
    """Handler of patch (modes replace and patch)."""
    try:
        ctx = _ctx(kw)
        backend = guarded(ctx)
        mode = args.get("mode") or ("patch" if args.get("patch") and not args.get("old_string") else "replace")
        if mode == "patch":
            text = args.get("patch")
            if not isinstance(text, str) or not text.strip():
                raise FileToolError("mode=patch needs `patch`: the unified diff or '*** Begin Patch' text")
            result = _patchmode.apply(ctx, backend, text, lambda p: _display(backend, p))
            return tool_result({**result, "diff": _safe_text(result["diff"])})
        if mode != "replace":
            raise FileToolError(f"unknown mode {mode!r}; use 'replace' or 'patch'")
        return tool_result(_replace(ctx, backend, args))
    except FileToolError as exc:
        return tool_error(str(exc), **exc.extra)


def _replace(ctx: object, backend, args: dict) -> dict:
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise FileToolError("mode=replace needs path, old_string and new_string")
    path = check_read(backend, resolve(backend, str(args.get("path") or "")))
    original = load_text(backend, path)
    shown = _display(backend, path)
    done = replace(original.text, old, new, replace_all=bool(args.get("replace_all")), path=shown)
    path = authorize(ctx, backend, [path], "patch")[0]
    checkpoint(ctx, backend, [path], f"patch {path}")
    write_text(backend, path, done.text)
    result: dict = {"path": shown, "replacements": done.count,
                    "diff": _safe_text(unified_diff(original.text, done.text, shown))}
    if done.strategy != "exact":
        result["note"] = f"matched ignoring {done.strategy}; check the diff"
    return result


def search_files(args: dict, **kw: object) -> str:
    """Handler of search_files."""
    try:
        ctx = _ctx(kw)
        env = getattr(ctx.settings, "env", None) or {}
        use_rg = args.get("_use_rg", True) is not False
        result = _searchrun.run(guarded(ctx), args, path_env=env.get("PATH"), stop=ctx.interrupt,
                                use_rg=use_rg)
    except FileToolError as exc:
        return tool_error(str(exc), **exc.extra)
    except (TypeError, ValueError) as exc:
        return tool_error(f"bad search arguments: {exc}")
    read = result.pop("_read_paths", [])
    if read and not ctx.untrusted:  # matched lines of a file a tainted session wrote taint this conversation
        from hermes_agent.tools import taintmark

        taintmark.on_read(ctx, read, "searched by")
    return tool_result(result)


def written_paths(args: dict) -> list[str]:
    """Every path a write_file/patch call would modify: `path`, and each file a unified or V4A diff
    names (moves included). Over-inclusive on purpose: the approval gate judges these."""
    paths = [args[k] for k in ("path", "file_path", "target") if isinstance(args.get(k), str)]
    if isinstance(args.get("paths"), list):
        paths += [p for p in args["paths"] if isinstance(p, str)]
    for key in ("patch", "diff"):
        text = args.get(key)
        if isinstance(text, str):
            paths += [a or b for a, b in _DIFF_PATH.findall(text)]
            paths += _parsed_paths(text)
    return [p for p in dict.fromkeys(paths) if p and p != "/dev/null"]


def _parsed_paths(text: str) -> list[str]:
    try:
        ops = parse_patch(text)
    except FileToolError:
        return []
    return [p for op in ops for p in (op.path, op.move_to) if p]


def writes_subject(args: dict) -> ApprovalSubject | None:
    """What the approval gate judges for a file-writing call: the paths it would modify."""
    paths = written_paths(args)
    if not paths:
        return None
    from hermes_agent.tools.builtin._bgwrites import as_run

    return ApprovalSubject(paths=tuple(paths), command=as_run(paths, args, new_text))


FILE_DEADLINE = 30.0  # seconds: a file tool call that takes longer (a blocking file, a hung mount) answers anyway


class _Workers:
    """Long-lived daemon worker threads, one more whenever none is idle. Long-lived: a backend started from
    a thread that then exits loses its sandbox launcher (the parent-death signal follows the thread).
    Daemon: a call stuck in a read never holds up the exit (ThreadPoolExecutor joins its threads)."""

    def __init__(self) -> None:
        import queue

        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., object], *args: object, **kw: object):  # noqa: ANN201 - a Future
        from concurrent.futures import Future

        future: Future = Future()
        with self._lock:
            if self._idle == 0:
                threading.Thread(target=self._loop, name="hermes-file-tool", daemon=True).start()
            else:
                self._idle -= 1
        self._jobs.put((future, fn, args, kw))
        return future

    def _loop(self) -> None:
        while True:
            future, fn, args, kw = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kw))
                except BaseException as exc:  # handed to the caller through the future
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1


_workers = functools.cache(_Workers)


def bounded(handler: Callable[..., str], seconds: float) -> Callable[..., str]:
    """`handler` with a deadline: it runs on a worker thread (with the caller's context variables); past
    `seconds` the model gets an error and the turn goes on (the stuck call keeps its worker)."""
    from concurrent.futures import TimeoutError as FutureTimeout

    @functools.wraps(handler)
    def run(args: dict, **kw: object) -> str:
        future = _workers().submit(contextvars.copy_context().run, handler, args, **kw)
        try:
            return future.result(timeout=seconds)
        except FutureTimeout:
            return tool_error(f"{handler.__name__} did not finish within {seconds:g} s (a file that blocks, or a "
                              "hung filesystem); hermes stopped waiting. Do not retry it on the same path.")

    return run


registry.register("read_file", "file", READ_FILE_SCHEMA, bounded(read_file, FILE_DEADLINE), emoji="📖",
                  parallel_safe=True)
def writes_persist(args: dict) -> str | None:
    """A context file or the Hermes home among the written paths (what future sessions would load), or a
    file a tool runs later without being asked (git hooks, `.npmrc` node-options, a venv's `.pth` or
    bin/activate, `.pdbrc`...): judged by the run-later guard's own verdicts (terminal/sandbox/runlater.py),
    so a write the guard would put back after a confined command asks here too."""
    paths = written_paths(args)
    found = next((w for p in paths if (w := path_persists(p)) is not None), None)
    return found or next((w for p in paths if (w := _runs_later(p, args))), None)


def new_text(path: str, real: str, args: dict) -> str | None:
    """What `path` (resolved: `real`) holds after this write_file/patch call, when the arguments say (a whole
    content, or one old_string -> new_string replacement); None when they do not."""
    if isinstance(args.get("content"), str) and path == args.get("path"):
        return args["content"]
    if path == args.get("path") and isinstance(args.get("old_string"), str) \
            and isinstance(args.get("new_string"), str):
        from hermes_agent.nofollow import read_regular_text

        try:  # no link followed, no FIFO opened: the sandbox may have made either
            text = read_regular_text(real, 1 << 20)
        except OSError:
            text = ""
        if text.count(args["old_string"]) == 1 and args["old_string"]:
            return text.replace(args["old_string"], args["new_string"])
    return None


def _runs_later(path: str, args: dict) -> str:
    import os

    from hermes_agent.terminal.sandbox.runlater import path_verdict

    raw = os.path.expanduser(path.strip())
    real = os.path.realpath(raw if os.path.isabs(raw) else os.path.join(os.getcwd(), raw))
    text = new_text(path, real, args)
    why = path_verdict(real, None if text is None else text.encode())
    return f"{real}, a file a tool runs later without being asked ({why})" if why else ""


registry.register("write_file", "file", WRITE_FILE_SCHEMA, bounded(write_file, FILE_DEADLINE), emoji="✍️",
                  parallel_safe=False,
                  path_arg="path", approval="writes", approval_subject=writes_subject, persists=writes_persist)
registry.register("patch", "file", PATCH_SCHEMA, bounded(patch, FILE_DEADLINE), emoji="🔧", parallel_safe=False,
                  path_arg="path", approval="writes", approval_subject=writes_subject, persists=writes_persist)
registry.register("search_files", "file", SEARCH_FILES_SCHEMA,
                  bounded(search_files, _searchrun.SEARCH_DEADLINE + 15), emoji="🔎", parallel_safe=True)
