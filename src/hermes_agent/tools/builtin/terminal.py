"""Terminal tools (toolset "terminal"): `terminal` runs shell commands on the task's backend
(foreground, background or under a pty); `process` manages the background ones."""

from __future__ import annotations

import os
import re
import shlex
import threading
from typing import TYPE_CHECKING

from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.terminal.judged import JudgedChanged
from hermes_agent.terminal.processes import get_manager
from hermes_agent.tools.builtin._checks import backend_ready
from hermes_agent.tools.builtin._termout import cap_output
from hermes_agent.tools.provenance import terminal_fetches, terminal_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

if TYPE_CHECKING:
    from hermes_agent.config.schema import Config

_BG_SETTLE_S = 0.3  # a background command that dies at once reports its error directly
_LOG_LINES_BYTES = 4_000_000  # how much of the buffer Hermes-style line paging reads

TERMINAL_SCHEMA = {
    "name": "terminal",
    "description": (
        "Run a bash command; cwd, exports and functions persist between calls. Returns output (stdout+stderr; "
        "head and tail when long) and exit_code (non-zero is a normal result). Foreground commands die "
        "at the timeout: run servers, watchers and long jobs with background=true, then use process. No "
        "interactive programs (editors, pagers, prompts) unless pty=true: use -y, --no-pager."),
    "parameters": {"type": "object", "properties": {
        "command": {"type": "string"},
        "background": {"type": "boolean", "description": "return at once with a process id"},
        "timeout": {"type": "integer", "description": "Seconds (default 180)"},
        "workdir": {"type": "string", "description": "for this command only"},
        "pty": {"type": "boolean"},
        "sandbox": {"type": "boolean", "description": "false: run outside the OS sandbox, only after it blocked "
                    "this command; needs a reason and the user's approval"},
        "reason": {"type": "string", "description": "Why (shown to the user)"},
    }, "required": ["command"]},
}

PROCESS_SCHEMA = {
    "name": "process",
    "description": (
        "Manage terminal(background=true) processes. list; poll: status + recent output; log: output "
        "from byte offset (default: tail), gives next_offset; wait: until exit or timeout s (default 60); "
        "kill; write: data to stdin (end with \\n to submit); close: close stdin."),
    "parameters": {"type": "object", "properties": {
        "action": {"type": "string", "enum": ["list", "poll", "log", "wait", "kill", "write", "close"]},
        "id": {"type": "string"},
        "data": {"type": "string"},
        "timeout": {"type": "number"},
        "offset": {"type": "integer"},
    }, "required": ["action"]},
}

_fallback_backends: dict[str, object] = {}
_fallback_lock = threading.Lock()


def _task_id(kw: dict) -> str:
    ctx = kw.get("ctx")
    return str(kw.get("task_id") or getattr(ctx, "task_id", None) or "default")


def _backend(kw: dict):
    """The task's backend: from the ToolContext, else a LocalBackend kept per task id."""
    ctx = kw.get("ctx")
    if ctx is not None:
        return ctx.backend()
    from hermes_agent.terminal.local import LocalBackend

    task_id = _task_id(kw)
    with _fallback_lock:
        backend = _fallback_backends.get(task_id)
        if backend is None:
            if not _fallback_backends:
                import atexit

                atexit.register(_close_fallbacks)
            backend = _fallback_backends[task_id] = LocalBackend()
        return backend


def _close_fallbacks() -> None:
    """At exit: kill what ctx-less calls left running and remove their state directories."""
    with _fallback_lock:
        backends = list(_fallback_backends.values())
        _fallback_backends.clear()
    for backend in backends:
        backend.close()


def _cfg(kw: dict) -> Config:
    """The typed settings of the calling agent (the defaults when called without a context)."""
    settings = getattr(kw.get("ctx"), "settings", None)
    return (settings if settings is not None else Settings()).cfg


def _limits(kw: dict) -> dict:
    out = _cfg(kw).tool_output
    return {"max_bytes": out.max_bytes, "max_lines": out.max_lines, "max_line_length": out.max_line_length}


def _default_timeout(kw: dict) -> float:
    return _cfg(kw).terminal.timeout


_UNSUPPORTED_NOTIFY = ("notify_on_complete and watch_patterns are not supported here: check a background "
                       "process with process(action='poll') or block on it with process(action='wait')")


def normalise_terminal_args(args: dict) -> tuple[dict, str | None]:
    """Hermes's extra `terminal` arguments: notify_on_complete / watch_patterns are accepted and dropped;
    the second value is the note telling the model so (None when neither was asked for)."""
    out = dict(args)
    notify = out.pop("notify_on_complete", None)
    watch = out.pop("watch_patterns", None)
    asked = notify not in (None, False, "false") or bool(watch)
    return out, (_UNSUPPORTED_NOTIFY if asked and out.get("background") else None)


def terminal(args: dict, **kw: object) -> str:
    """Handler of the `terminal` tool."""
    args, notify_note = normalise_terminal_args(args)
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return tool_error("command is required (a non-empty shell command)")
    workdir = args.get("workdir") or None
    timeout = args.get("timeout")
    try:
        timeout = float(timeout) if timeout is not None else _default_timeout(kw)
    except (TypeError, ValueError):
        return tool_error("timeout must be a number of seconds")
    if timeout <= 0:
        return tool_error("timeout must be positive")
    if args.get("sandbox") is False and not str(args.get("reason") or "").strip():
        return tool_error("sandbox=false needs a reason (why the sandboxed run was not enough)")
    try:
        backend = _backend(kw)
    except Exception as exc:  # a backend that cannot start (docker daemon down, ssh refused)
        return tool_error(f"terminal backend unavailable: {exc}")
    # Only a sandboxing backend takes the flag; the approval gate asks before such a call.
    opts = {"sandbox": False} if args.get("sandbox") is False and hasattr(backend, "contained") else {}
    _keep_uncommitted(backend, workdir, command, kw, opts)
    taint_guard(backend, kw)
    with _judged_files(backend, command):
        if args.get("background"):
            return _start_background(backend, command, workdir, kw, opts, notify_note)
        try:
            return _run_foreground(backend, command, workdir, timeout, bool(args.get("pty")), kw, opts)
        except JudgedChanged as exc:
            return tool_error(str(exc))
        except HermesError as exc:  # the backend could not run anything (connection refused, container gone)
            return tool_error(f"terminal backend unavailable: {exc}")


def _judged_files(backend, command: str):
    """The workspace files the approval gate judged for this call, checked again by the local backend right
    before its spawn (terminal/judged.py): what runs is what was judged."""
    from hermes_agent.approval.scriptfiles import judged
    from hermes_agent.terminal.judged import expecting

    try:
        cwd = backend.cwd() if backend.kind == "local" else None
    except Exception:  # noqa: BLE001 - no directory: the gate read no file either
        cwd = None
    return expecting(judged(command, cwd), command)


def taint_guard(backend, kw: dict) -> None:
    """Tell the run-later guard whether this conversation took in untrusted content: a change to a file the
    user runs by hand (package.json scripts, Makefile...) is then put back like a planted hook (byhand.py)."""
    find = getattr(backend, "guard", None) if backend.kind == "local" else None
    guard = find() if find is not None else None
    if guard is not None:
        guard.tainted = bool(getattr(kw.get("ctx"), "untrusted", ""))


def _keep_uncommitted(backend, workdir: str | None, command: str, kw: dict, opts: dict) -> None:
    """Let the caller snapshot the git workspace's uncommitted changes before the command may destroy them
    (local backend: the snapshot store lives on this host). A sandboxed run is kept by the guard's `enter`
    (terminal/sandbox/guard.py: one place for every confined writer), so only the others are kept here."""
    keep = getattr(kw.get("ctx"), "keep_uncommitted", None)
    if keep is None or backend.kind != "local":
        return
    find = getattr(backend, "guard", None)
    if opts.get("sandbox", True) and find is not None and find() is not None:
        return
    base = backend.cwd()
    keep(os.path.join(base, workdir) if workdir else base, command)


def _run_foreground(backend, command: str, workdir: str | None, timeout: float, pty: bool, kw: dict,
                    opts: dict) -> str:
    interrupt = getattr(kw.get("ctx"), "interrupt", None)
    before = backend.cwd()
    note = None
    if pty and hasattr(backend, "execute_pty"):
        res = backend.execute_pty(command, cwd=workdir, timeout=timeout, interrupt=interrupt, **opts)
    else:
        if pty:
            note = f"pty is not available on the {backend.kind} backend; ran without a terminal"
        res = backend.execute(command, cwd=workdir, timeout=timeout, interrupt=interrupt, **opts)
    out: dict = {"output": cap_output(res.output, **_limits(kw)), "exit_code": res.exit_code}
    if res.timed_out:
        out["timed_out"] = True
        out["note"] = (f"killed after {timeout:g}s; for long-running commands use background=true "
                       "or a larger timeout")
    if res.interrupted:
        out["interrupted"] = True
    if res.cwd and res.cwd != before:
        out["cwd"] = res.cwd
    if note:
        out["note"] = note
    return tool_result(out)


def _start_background(backend, command: str, workdir: str | None, kw: dict, opts: dict,
                      note: str | None = None) -> str:
    if not hasattr(backend, "spawn"):
        return tool_error(f"background processes are not supported on the {backend.kind} backend")
    try:
        bp = get_manager().start(_task_id(kw), backend, command, cwd=workdir, **opts)
    except JudgedChanged as exc:
        return tool_error(str(exc))
    except (RuntimeError, HermesError, OSError) as exc:
        return tool_error(f"cannot start background process: {exc}")
    try:
        bp.proc.wait(timeout=_BG_SETTLE_S)
    except Exception:
        pass
    info = get_manager().poll(bp.id, tail=4000)
    info.pop("command", None)
    if info["status"] == "running":
        info["note"] = "use process(action=poll|log|wait|kill, id=...) to follow it"
    info["session_id"] = info["id"]  # the name Hermes's process tool takes
    if note:
        info["notify"] = note
    return tool_result(info)


def normalise_process_args(args: dict) -> dict:
    """Hermes's `process` shapes as ours: `session_id` is `id`; `submit` is `write` of data plus a newline.
    (`limit` selects Hermes's line-paged log, see `_log_lines`.)"""
    out = dict(args)
    if not out.get("id") and out.get("session_id"):
        out["id"] = out["session_id"]
    if str(out.get("action") or "").strip().lower() == "submit":
        out["action"] = "write"
        out["data"] = str(out.get("data") or "") + "\n"
    return out


def _log_lines(manager, proc_id: str, task_id: str, offset: object, limit: object) -> dict:
    """Hermes's log paging: `limit` lines from line `offset` (offset 0 or absent: the last `limit`)."""
    info = manager.log(proc_id, task_id, offset=0, limit=_LOG_LINES_BYTES)
    lines = info.pop("output").splitlines()
    first, count = int(offset or 0), max(int(limit), 1)
    selected = lines[-count:] if first == 0 else lines[first:first + count]
    for key in ("offset", "next_offset"):
        info.pop(key, None)
    return {**info, "output": "\n".join(selected), "total_lines": len(lines), "showing": f"{len(selected)} lines"}


def process(args: dict, **kw: object) -> str:
    """Handler of the `process` tool."""
    args = normalise_process_args(args)
    result = _process(args, kw)
    if isinstance(result, dict):
        if args.get("session_id") and "id" in result:
            result["session_id"] = result["id"]
        for key in ("output", "output_tail"):
            if isinstance(result.get(key), str):
                result[key] = cap_output(result[key], **_limits(kw))
        return tool_result(result)
    return result


def _process(args: dict, kw: dict) -> dict | str:
    action = str(args.get("action") or "").strip().lower()
    manager = get_manager()
    task_id = _task_id(kw)
    if action == "list":
        return {"processes": manager.list(task_id)}
    proc_id = args.get("id")
    if not proc_id:
        return tool_error(f"action {action!r} needs id (see action=list)" if action else
                          "action is required: list, poll, log, wait, kill, write or close")
    try:
        if action == "poll":
            return manager.poll(proc_id, task_id)
        if action == "log" and args.get("limit") is not None:
            return _log_lines(manager, proc_id, task_id, args.get("offset"), args["limit"])
        if action == "log":
            offset = args.get("offset")
            return manager.log(proc_id, task_id, offset=int(offset) if offset is not None else None)
        if action == "wait":
            timeout = float(args.get("timeout") or 60)
            interrupt = getattr(kw.get("ctx"), "interrupt", None)
            return manager.wait(proc_id, task_id, timeout=timeout, interrupt=interrupt)
        if action == "kill":
            return manager.kill(proc_id, task_id)
        if action in ("write", "close"):
            data = args.get("data") or ""
            if action == "write" and not data:
                return tool_error("write needs data")
            return manager.write(proc_id, data, task_id, close=action == "close")
    except KeyError as exc:
        return tool_error(exc.args[0])
    except (RuntimeError, ValueError) as exc:
        return tool_error(str(exc))
    return tool_error(f"unknown action {action!r}: use list, poll, log, wait, kill, write or close")


def command_subject(args: dict) -> ApprovalSubject | None:
    """What the approval gate judges for a terminal call: the command text."""
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    outside = ""
    if args.get("sandbox") is False:
        outside = f"the model asked for it: {str(args.get('reason') or 'no reason given').strip()[:300]}"
    return ApprovalSubject(command=command, uncontained=outside)


def stdin_subject(args: dict) -> ApprovalSubject | None:
    """Data written to a background process's stdin is judged as what its reader runs: for a shell (or an
    unknown program), the line it is still holding (the writes since its last newline: `r`, then `m -rf ~`)
    joined with this data; for an interpreter of another language (python3, node, psql...), all it was given
    as that language's code (`python3 -c TEXT`), so the rules for code given on a command line judge it."""
    action = str(args.get("action") or "").strip().lower()
    data = args.get("data")
    if action not in ("write", "close") or not isinstance(data, str) or not data.strip():
        return None
    try:
        bp = get_manager().get(str(args.get("id") or ""))
    except KeyError:
        return ApprovalSubject(command=data)
    flag = _interpreter_flag(bp.command)
    if flag:  # a REPL runs line by line, a script reader all at EOF: judged as the whole text it was given
        return ApprovalSubject(command=f"{flag} {shlex.quote(bp.stdin_written + data)}")
    return ApprovalSubject(command=bp.stdin_pending + data)


# a program reading code on stdin -> how its command line takes the same code (judged there by the rules)
_CODE_FLAGS = {"python": "-c", "python3": "-c", "python2": "-c", "pypy3": "-c", "ipython": "-c", "node": "-e",
               "nodejs": "-e", "deno": "eval", "bun": "-e", "perl": "-e", "ruby": "-e", "php": "-r", "psql": "-c",
               "mysql": "-e", "mariadb": "-e", "sqlite3": ":memory:", "lua": "-e", "Rscript": "-e"}
_WRAPPERS = frozenset({"env", "exec", "nohup", "setsid", "stdbuf", "nice", "time", "command", "sudo", "unbuffer"})


def _interpreter_flag(command: str) -> str:
    """`PROGRAM FLAG` when a stage of `command` is an interpreter of another language than shell, else ''."""
    for stage in re.split(r"[|;&()\n]+", command):
        try:
            words = shlex.split(stage)
        except ValueError:
            words = stage.split()
        words = [w for w in words if not re.match(r"[A-Za-z_]\w*=", w) and w not in _WRAPPERS]
        name = os.path.basename(words[0]) if words else ""
        base = re.sub(r"[\d.]+$", "", name) if name.startswith(("python", "pypy", "lua")) else name
        if base in _CODE_FLAGS or name in _CODE_FLAGS:
            return f"{name} {_CODE_FLAGS.get(name) or _CODE_FLAGS[base]}"
    return ""


registry.register("terminal", "terminal", TERMINAL_SCHEMA, terminal, emoji="💻", check_fn=backend_ready,
                  description="Run shell commands", approval="command", approval_subject=command_subject,
                  preview_arg="command", show_name=False, persists=terminal_persists,
                  untrusted_output=terminal_fetches)
registry.register("process", "terminal", PROCESS_SCHEMA, process, emoji="⚙️",
                  description="Manage background processes", approval="command", approval_subject=stdin_subject,
                  unlocked_by="terminal")  # background processes exist only after a terminal call
