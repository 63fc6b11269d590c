"""Shared driver for cloud sandboxes reached through a vendor SDK (Daytona, Modal): one sandbox
per task, created on first use and deleted by `close()` (and at process exit). Commands run the
same wrapper as docker/ssh (`shell.build_remote_script`: cwd/exports kept in a state dir, the
command in its own session, output captured and capped remotely) through one SDK exec call each,
made on a worker thread so that a timeout or interrupt can kill the remote process group through
a second exec call. Files go through the SDK's file API."""

from __future__ import annotations

import atexit
import shlex
import threading
import time
import weakref

from hermes_agent.errors import HermesError
from hermes_agent.terminal.base import ExecResult, append_note, timeout_note
from hermes_agent.terminal.shell import (
    CWD_MARKER,
    INTERRUPT_EXIT,
    TIMEOUT_EXIT,
    ScriptSpec,
    build_remote_script,
    kill_script,
    new_call_id,
)

_POLL_S = 0.02
_LIVE: weakref.WeakSet = weakref.WeakSet()
_HOOKED = False


def _close_live() -> None:
    """atexit: delete every sandbox still held (a crash cannot run this; see README)."""
    for backend in list(_LIVE):
        backend.close()


def _track(backend: CloudShellBackend) -> None:
    global _HOOKED
    _LIVE.add(backend)
    if not _HOOKED:
        atexit.register(_close_live)
        _HOOKED = True


class CloudShellBackend:
    """Base class. Subclasses provide `_start()` (create the sandbox), `_run(command, timeout)`
    -> (combined output, exit code), `_put(path, data)`, `_get(path)` and `_stop()`; SDK failures
    surface as HermesError."""

    kind = "cloud"
    isolated = True

    def __init__(self, *, task_id: str = "default", cwd: str | None = None, timeout: float = 180.0,
                 output_limit: int = 2_000_000, source_rc: bool = True) -> None:
        self._task_id = task_id
        self._initial_cwd = cwd
        self._timeout = timeout
        self._output_limit = output_limit
        self.source_rc = source_rc
        self._cwd: str | None = None
        self._shell: str | None = None
        self._setsid = True
        self._home = "/root"
        self._state_dir = f"/tmp/hermes-{new_call_id()}"
        self._lock = threading.Lock()
        self._started = False

    # -- subclass hooks ------------------------------------------------------------------------

    def _start(self) -> None:
        raise NotImplementedError

    def _run(self, command: str, timeout: float | None) -> tuple[str, int]:
        raise NotImplementedError

    def _put(self, path: str, data: bytes) -> None:
        raise NotImplementedError

    def _get(self, path: str) -> bytes:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError

    # -- lifecycle -----------------------------------------------------------------------------

    def _prepare(self) -> None:
        if self._started:
            return
        with self._lock:
            if self._started:
                return
            self._start()
            self._started = True
            _track(self)
        probe, _ = self._run("command -v bash >/dev/null 2>&1 && echo bash || echo sh; "
                             "command -v setsid >/dev/null 2>&1 && echo setsid || echo none; "
                             'echo "$HOME"', 60)
        words = probe.split()
        self._shell = "bash" if "bash" in words else "sh"
        self._setsid = "setsid" in words
        if len(words) >= 3 and words[2].startswith("/"):
            self._home = words[2]

    def close(self) -> None:
        """Delete the sandbox (everything started in it goes with it)."""
        with self._lock:
            if not self._started:
                return
            self._started = False
            _LIVE.discard(self)
        try:
            self._stop()
        except HermesError:
            pass

    # -- commands ------------------------------------------------------------------------------

    def execute(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                stdin: str | None = None, interrupt: threading.Event | None = None) -> ExecResult:
        """Run `command` in the sandbox; cwd/exported variables persist between calls."""
        try:
            self._prepare()
            call_id = new_call_id()
            wrapped = self._wrap(command, cwd, call_id, stdin)
        except HermesError as exc:
            return ExecResult(str(exc), 1, cwd=self._cwd)
        limit = self._timeout if timeout is None else timeout
        outcome: dict = {}
        worker = threading.Thread(target=self._call, args=(wrapped, limit, outcome), daemon=True)
        worker.start()
        stopped = _wait(worker, limit, interrupt)
        if stopped:
            try:
                # stderr dropped: the SDKs merge it, and the kill races processes leaving /proc.
                killer = shlex.quote(kill_script(self._state_dir, call_id, self._output_limit))
                partial, _ = self._run(f"sh -c {killer} 2>/dev/null", 30)
            except HermesError:
                partial = ""
            worker.join(timeout=5)
            text = _strip_marker(partial)[0]
            if stopped == "timeout":
                return ExecResult(append_note(text, timeout_note(limit)),
                                  TIMEOUT_EXIT, timed_out=True, cwd=self._cwd)
            return ExecResult(append_note(text, "[command interrupted]"), INTERRUPT_EXIT, interrupted=True, cwd=self._cwd)
        if "output" not in outcome:  # an SDK failure (HermesError), or one it did not wrap (logged by threading)
            return ExecResult(outcome.get("error") or f"{self.kind} backend: exec failed", 1, cwd=self._cwd)
        text, new_cwd = _strip_marker(outcome["output"])
        if new_cwd:
            self._cwd = new_cwd
        return ExecResult(text, outcome["code"], cwd=self._cwd)

    def _wrap(self, command: str, cwd: str | None, call_id: str, stdin: str | None) -> str:
        """One shell line for the SDK's exec: the wrapper script with stderr merged (the SDKs
        return one stream), stdin fed from a file uploaded beforehand."""
        spec = ScriptSpec(source_rc=self.source_rc, command=command, state_dir=self._state_dir, call_id=call_id,
                          initial_cwd=self._initial_cwd, workdir=cwd, stdin=stdin is not None,
                          shell=self._shell or "sh", setsid=self._setsid, output_limit=self._output_limit)
        script = shlex.quote(build_remote_script(spec))
        if stdin is None:
            return f"sh -c {script} </dev/null 2>&1"
        feed = f"/tmp/.hermes-in-{call_id}"
        self._put(feed, stdin.encode("utf-8"))
        return f"sh -c {script} <{feed} 2>&1; __r=$?; rm -f {feed}; exit $__r"

    def _call(self, wrapped: str, limit: float | None, outcome: dict) -> None:
        # The SDK's own timeout is a backstop: ours kills the process group first.
        sdk_timeout = None if limit is None or limit <= 0 else limit + 30
        try:
            outcome["output"], outcome["code"] = self._run(wrapped, sdk_timeout)
        except HermesError as exc:
            outcome["error"] = str(exc)

    def cwd(self) -> str:
        """The current working directory of the sandbox shell."""
        if self._cwd is None:
            res = self.execute("pwd", timeout=30)
            lines = res.output.strip().splitlines()
            self._cwd = lines[-1] if res.exit_code == 0 and lines else "/"
        return self._cwd

    def _abs(self, path: str) -> str:
        self._prepare()
        if path.startswith("/"):
            return path
        if path == "~" or path.startswith("~/"):
            return self._home + path[1:]
        return f"{self.cwd().rstrip('/')}/{path}"

    # -- files ---------------------------------------------------------------------------------

    def _check(self, path: str) -> None:
        """Raise the error a read of `path` deserves (missing, directory, unreadable)."""
        p = shlex.quote(path)
        _, code = self._run(f"[ -e {p} ] || exit 3; [ -d {p} ] && exit 4; [ -r {p} ] || exit 5; exit 0", 60)
        errors = {3: FileNotFoundError, 4: IsADirectoryError, 5: PermissionError}
        if code in errors:
            raise errors[code](path)

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """Bytes of a sandbox file (at most `limit`), through the SDK's file download."""
        try:
            full = self._abs(path)
            try:
                data = self._get(full)
            except HermesError as exc:
                self._check(full)
                raise OSError(f"cannot read {path}: {exc}") from exc
        except HermesError as exc:
            raise OSError(str(exc)) from exc
        return data if limit is None else data[:limit]

    def write_bytes(self, path: str, data: bytes) -> None:
        """Upload to a temp file next to `path`, then rename it over `path` (creating parents)."""
        try:
            self._write(self._abs(path), data)
        except HermesError as exc:
            raise PermissionError(f"cannot write {path}: {exc}") from exc

    def _write(self, full: str, data: bytes) -> None:
        parent = full.rsplit("/", 1)[0] or "/"
        tmp = f"{parent}/.hermes-{new_call_id()}"
        try:
            self._put(tmp, data)
        except HermesError:
            out, code = self._run(f"mkdir -p {shlex.quote(parent)}", 60)
            if code != 0:
                raise PermissionError(out.strip() or f"cannot create {parent}") from None
            self._put(tmp, data)
        out, code = self._run(f"mv -f {shlex.quote(tmp)} {shlex.quote(full)} || "
                              f"{{ rm -f {shlex.quote(tmp)}; exit 5; }}", 60)
        if code != 0:
            raise PermissionError(out.strip() or f"cannot write {full}")

    def stat(self, path: str) -> dict | None:
        """{"size", "is_dir", "mtime"} of a sandbox path, or None when missing."""
        try:
            p = shlex.quote(self._abs(path))
            out, code = self._run(f"[ -e {p} ] || exit 3; [ -d {p} ] && echo d || echo f; "
                                  f"stat -c '%s %Y' {p} 2>/dev/null || wc -c < {p}", 60)
        except HermesError as exc:
            raise OSError(str(exc)) from exc
        if code == 3:
            return None
        words = out.split()
        if code != 0 or not words:
            raise OSError(f"cannot stat {path}")
        size = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        mtime = float(words[2]) if len(words) > 2 and words[2].isdigit() else 0.0
        return {"size": size, "is_dir": words[0] == "d", "mtime": mtime}


def _wait(worker: threading.Thread, limit: float | None, interrupt: threading.Event | None) -> str:
    """Wait for the exec thread; "timeout" / "interrupt" when it had to be stopped, else ""."""
    deadline = None if limit is None or limit <= 0 else time.monotonic() + limit
    while worker.is_alive():
        if interrupt is not None and interrupt.is_set():
            return "interrupt"
        if deadline is not None and time.monotonic() >= deadline:
            return "timeout"
        worker.join(_POLL_S)
    return ""


def _strip_marker(text: str) -> tuple[str, str | None]:
    """(output, cwd) from the wrapper's combined output, whose last line carries the cwd marker."""
    at = text.rfind(CWD_MARKER)
    if at < 0 or (at > 0 and text[at - 1] != "\n"):
        return text, None
    cwd = text[at + len(CWD_MARKER):].strip() or None
    body = text[:at]
    return (body[:-1] if body.endswith("\n") else body), cwd

