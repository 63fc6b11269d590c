"""LocalBackend: commands run on this machine, one `bash -c` per call in its own process group;
cwd and exported variables persist per backend instance through a private state directory.
With a SandboxSpec every process starts inside the OS sandbox (terminal/sandbox/, see README)."""

from __future__ import annotations

import os
import shutil
import signal
import stat as stat_mod
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from typing import BinaryIO

from hermes_agent.terminal.base import ExecResult
from hermes_agent.terminal.ptyrun import kill_process_group
from hermes_agent.terminal.runfile import TOKEN_VAR, RunRecord, kill_marked
from hermes_agent.terminal.sandbox.launcher import SandboxError
from hermes_agent.terminal.sandbox.runner import SandboxRunner, plain_popen
from hermes_agent.terminal.sandbox.spec import BLOCKED_NOTE, SandboxSpec, blocked_by_sandbox
from hermes_agent.terminal.sandbox.views import GitSentinel
from hermes_agent.terminal.shell import (
    INTERRUPT_EXIT,
    TIMEOUT_EXIT,
    ScriptSpec,
    build_body,
    cap_bytes,
    new_call_id,
    scrub_env,
    shell_argv,
)

_POLL_S = 0.02
_KILL_GRACE_S = 0.5


def _git_swept(method: Callable[..., ExecResult]) -> Callable[..., ExecResult]:
    """Run a confined command between a GitSentinel's open and sweep (views.GitSentinel): a git
    redirection file the command created is removed and the result says so."""
    @wraps(method)
    def run(self: LocalBackend, command: str, *args: object, sandbox: bool = True, **kw: object) -> ExecResult:
        runner = self._runner
        guard = GitSentinel(runner.spec.readonly) if sandbox and runner is not None and runner.contained else None
        notes: list[str] = []
        try:
            res = method(self, command, *args, sandbox=sandbox, **kw)
        finally:
            notes = guard.sweep() if guard is not None else []
        return replace(res, output=_append(res.output, "\n".join(notes))) if notes else res
    return run


class LocalBackend:
    """Runs commands with the host's bash. `env` replaces the inherited environment (secrets
    scrubbed by default, `env_strip` names more); `output_limit` bounds what one call may hold in
    memory; `sandbox` contains every command (None: unconfined, for callers without a policy)."""

    kind = "local"
    isolated = False

    def __init__(self, cwd: str | None = None, *, env: dict[str, str] | None = None,
                 env_passthrough: list[str] | tuple[str, ...] = (), timeout: float = 180.0,
                 output_limit: int = 2_000_000, shell: str | None = None, source_rc: bool = True,
                 record: RunRecord | None = None, sandbox: SandboxSpec | None = None,
                 env_strip: list[str] | tuple[str, ...] = (), notice: Callable[[str], None] | None = None) -> None:
        self._initial_cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd else None
        self._env = env
        self._passthrough = tuple(env_passthrough)
        self._timeout = timeout
        self._output_limit = output_limit
        self._shell = shell
        self._source_rc = source_rc
        self._state_dir: str | None = None
        self._cwd: str | None = None
        self._groups: set[int] = set()
        self._spawned: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._state_lock = threading.RLock()  # parallel first calls must not see a state dir without its runner
        self._token = uuid.uuid4().hex  # in every command's environment: found again at close
        self._record = record  # token in every command's env + state dir in HERMES_HOME/run: reaped after a crash
        self._sandbox = sandbox
        self._env_strip = tuple(env_strip)
        self._notice = notice
        self._runner: SandboxRunner | None = None

    # -- sandbox ----------------------------------------------------------------------------

    @property
    def sandbox_state(self) -> str:
        """"bwrap" | "landlock" (contained), "off" (sandbox.mode off or no policy), "unavailable"."""
        runner = self._get_runner()
        return runner.state if runner is not None else "off"

    @property
    def contained(self) -> bool:
        """True when commands run inside the OS sandbox; when False and sandbox_state is
        "unavailable", the approval gate asks before commands that write."""
        return self.sandbox_state in ("bwrap", "landlock")

    def _get_runner(self) -> SandboxRunner | None:
        if self._sandbox is None:
            return None
        self._ensure_state()
        return self._runner

    def _popen(self, argv: list[str], *, stdin, stdout, stderr, pty: bool = False, sandbox: bool = True):
        runner = self._get_runner()
        env = self._child_env()
        if pty:
            env.update(TERM=env.get("TERM") or "xterm", COLUMNS="200", LINES="50")
        if runner is None:
            if self._sandbox is not None:  # never run unconfined because the runner is not there (yet)
                raise SandboxError("the sandbox runner is not ready; the command was not run")
            return plain_popen(argv, stdin, stdout, stderr, self._spawn_cwd(), env, pty)
        if sandbox and runner.private_tmp():
            env["TMPDIR"] = os.path.join(self._ensure_state(), "tmp")
        return runner.popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=self._spawn_cwd(), env=env,
                            pty=pty, sandbox=sandbox)

    def _blocked_note(self, text: str, code: int, sandbox: bool) -> str:
        """The result text, with a note when a failure looks like the sandbox's refusal."""
        if code == 0 or not sandbox or self._runner is None or not self._runner.contained:
            return text
        if blocked_by_sandbox(self._runner.spec, text, self.cwd(), os.path.expanduser("~")):
            return _append(text, BLOCKED_NOTE)
        return text

    # -- commands ---------------------------------------------------------------------------

    @_git_swept
    def execute(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                stdin: str | None = None, interrupt: threading.Event | None = None,
                sandbox: bool = True) -> ExecResult:
        """Run `command`; cwd/exported variables persist between calls of this backend.
        `sandbox=False` runs this one call unconfined (the approval gate has asked the user)."""
        state = self._ensure_state()
        call_id = new_call_id()
        spec = ScriptSpec(source_rc=self._source_rc, command=command, state_dir=state, call_id=call_id,
                          initial_cwd=self.cwd(), workdir=self._abs(cwd) if cwd else None,
                          stdin=stdin is not None, shell=self._bash(), host_renames=True)
        out_path = os.path.join(state, f"stdout.{call_id}")
        in_path = os.path.join(state, f"stdin.{call_id}")
        try:
            if stdin is not None:
                with open(in_path, "w", encoding="utf-8") as fh:
                    fh.write(stdin)
            with open(out_path, "wb") as out, \
                    open(in_path if stdin is not None else os.devnull, "rb") as inp:
                proc = self._popen(self._argv(build_body(spec)), stdin=inp, stdout=out, stderr=subprocess.STDOUT,
                                   sandbox=sandbox)
            self._track(proc.pid)
            limit = self._timeout if timeout is None else timeout
            timed_out, interrupted = self._wait(proc, limit, interrupt)
            self._load_cwd(state, call_id)
            text = self._read_output(out_path)
            code = TIMEOUT_EXIT if timed_out else INTERRUPT_EXIT if interrupted else proc.returncode
            if timed_out:
                text = _append(text, f"[command timed out after {limit:g}s; its process group was killed]")
            elif interrupted:
                text = _append(text, "[command interrupted]")
            else:
                text = self._blocked_note(text, code, sandbox)
            return ExecResult(text, code, timed_out=timed_out, interrupted=interrupted, cwd=self._cwd)
        finally:
            for path in (out_path, in_path):
                try:
                    os.unlink(path)
                except OSError:
                    pass

    @_git_swept
    def execute_pty(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                    stdin: str | None = None, interrupt: threading.Event | None = None,
                    sandbox: bool = True) -> ExecResult:
        """Like `execute`, but under a pseudo-terminal (isatty() is true; output has terminal codes)."""
        from hermes_agent.terminal.ptyrun import run_in_pty

        state = self._ensure_state()
        call_id = new_call_id()
        spec = ScriptSpec(source_rc=self._source_rc, command=command, state_dir=state, call_id=call_id, initial_cwd=self.cwd(),
                          workdir=self._abs(cwd) if cwd else None, shell=self._bash(), host_renames=True)
        limit = self._timeout if timeout is None else timeout
        data, code, timed_out, interrupted = run_in_pty(
            self._argv(build_body(spec)), stdin=stdin, timeout=limit, interrupt=interrupt, limit=self._output_limit,
            popen=lambda argv, fd: self._popen(argv, stdin=fd, stdout=fd, stderr=fd, pty=True, sandbox=sandbox))
        self._load_cwd(state, call_id)
        text = data.decode("utf-8", "replace").replace("\r\n", "\n")
        if timed_out:
            return ExecResult(_append(text, f"[command timed out after {limit:g}s; its process group was killed]"),
                              TIMEOUT_EXIT, timed_out=True, cwd=self._cwd)
        if interrupted:
            return ExecResult(_append(text, "[command interrupted]"), INTERRUPT_EXIT, interrupted=True,
                              cwd=self._cwd)
        return ExecResult(self._blocked_note(text, code, sandbox), code, cwd=self._cwd)

    def _wait(self, proc: subprocess.Popen, limit: float | None,
              interrupt: threading.Event | None) -> tuple[bool, bool]:
        """Wait for the wrapper; kill its process group on timeout or interrupt."""
        deadline = None if limit is None or limit <= 0 else time.monotonic() + limit
        while True:
            try:
                proc.wait(timeout=_POLL_S)
                return False, False
            except subprocess.TimeoutExpired:
                pass
            if interrupt is not None and interrupt.is_set():
                self._kill_group(proc)
                return False, True
            if deadline is not None and time.monotonic() >= deadline:
                self._kill_group(proc)
                return True, False

    @staticmethod
    def _kill_group(proc: subprocess.Popen) -> None:
        kill_process_group(proc, _KILL_GRACE_S)

    def _read_output(self, path: str) -> str:
        """Decoded output of one call; head and tail kept when it exceeds the output limit."""
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as fh:
                if size <= self._output_limit:
                    data = fh.read(self._output_limit)
                else:
                    half = self._output_limit // 2
                    head = fh.read(half)
                    fh.seek(size - half)
                    data = cap_bytes(head + fh.read(half), self._output_limit, total=size)
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    # -- background processes (used by terminal.processes) ----------------------------------

    def spawn(self, command: str, *, cwd: str | None = None, token: str, sandbox: bool = True):
        """Start `command` in the background (own process group) with this shell's cwd and exports;
        stdin is a pipe, stdout+stderr one pipe."""
        spec = ScriptSpec(source_rc=self._source_rc, command=command, state_dir=self._ensure_state(), call_id=token,
                          initial_cwd=self.cwd(), workdir=self._abs(cwd) if cwd else None,
                          shell=self._bash(), save_state=False)
        proc = self._popen(self._argv(build_body(spec)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, sandbox=sandbox)
        with self._lock:
            self._spawned[token] = proc
        self._track(proc.pid)
        return proc

    def _track(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def kill_spawned(self, token: str) -> None:
        """SIGTERM a background process group, then SIGKILL whatever is left of it."""
        with self._lock:
            proc = self._spawned.pop(token, None)
            if proc is not None:
                self._groups.discard(proc.pid)
        if proc is not None:
            self._kill_group(proc)

    # -- state ------------------------------------------------------------------------------

    def cwd(self) -> str:
        """The current working directory of this backend's shell."""
        if self._cwd is None:
            self._cwd = self._initial_cwd or os.getcwd()
        return self._cwd

    def _load_cwd(self, state: str, call_id: str) -> None:
        try:
            os.replace(os.path.join(state, f"env.{call_id}"), os.path.join(state, "env"))
        except OSError:
            pass
        try:
            with open(os.path.join(state, "cwd"), encoding="utf-8", errors="replace") as fh:
                self._cwd = fh.read() or self._cwd
        except OSError:
            pass

    def _argv(self, body: str) -> list[str]:
        """The process that runs one call's shell body (overridden by container backends)."""
        return [*shell_argv(self._bash()), body]

    def scratch_dir(self) -> str:
        """A directory this session's commands can read and write (inside the sandbox too); removed at close."""
        path = os.path.join(self._ensure_state(), "scratch")
        os.makedirs(path, exist_ok=True)
        return path

    def _ensure_state(self) -> str:
        with self._state_lock:
            if self._state_dir is None or not os.path.isdir(self._state_dir):
                state = tempfile.mkdtemp(prefix="hermes-term-")
                if self._record is not None:
                    self._record.add_dir(state)
                if self._sandbox is not None:  # the state and private temp dir are writable inside
                    os.mkdir(os.path.join(state, "tmp"))
                    if self._runner is not None:
                        self._runner.close()
                    self._runner = SandboxRunner(self._sandbox.with_writable(state), self._notice)
                self._state_dir = state  # published last: whoever sees it also sees its runner
            return self._state_dir

    def _spawn_cwd(self) -> str:
        cwd = self.cwd()
        return cwd if os.path.isdir(cwd) else (self._initial_cwd if self._initial_cwd and
                                                os.path.isdir(self._initial_cwd) else os.getcwd())

    def _child_env(self) -> dict[str, str]:
        base = dict(os.environ) if self._env is None else dict(self._env)
        for name in self._env_strip:
            if name not in self._passthrough:
                base.pop(name, None)
        env = scrub_env(base, self._passthrough)
        if self._record is not None:
            env[TOKEN_VAR] = self._record.token
        env[_BACKEND_VAR] = self._token
        return env

    def _bash(self) -> str:
        if self._shell is None:
            self._shell = shutil.which("bash") or "/bin/sh"
        return self._shell

    def _abs(self, path: str) -> str:
        path = os.path.expanduser(path)
        return path if os.path.isabs(path) else os.path.join(self.cwd(), path)

    # -- files ------------------------------------------------------------------------------

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """Bytes of a file (at most `limit`)."""
        with open(self._abs(path), "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)

    def open_bytes(self, path: str) -> BinaryIO:
        """A file opened for reading in binary (for chunked reads of files of any size)."""
        return open(self._abs(path), "rb")  # noqa: SIM115 - the caller closes it

    def write_bytes(self, path: str, data: bytes) -> None:
        """Atomically replace a file (temp file + rename), creating parent directories."""
        target = self._abs(path)
        parent = os.path.dirname(target) or "."
        os.makedirs(parent, exist_ok=True)
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(prefix=".hermes-", dir=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())  # new files as `open()` makes them
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def stat(self, path: str) -> dict | None:
        """{"size", "is_dir", "mtime"} or None when missing."""
        try:
            st = os.stat(self._abs(path))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return {"size": st.st_size, "is_dir": stat_mod.S_ISDIR(st.st_mode), "mtime": st.st_mtime}

    def close(self) -> None:
        """Kill what earlier calls left running and remove the state directory."""
        with self._lock:
            groups, self._groups = self._groups, set()
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        kill_marked(_BACKEND_VAR, self._token)  # what left its group (setsid, nohup) dies with the session
        if self._runner is not None:
            self._runner.close()
            self._runner = None
        if self._state_dir:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            if self._record is not None:
                self._record.drop_dir(self._state_dir)
            self._state_dir = None


_BACKEND_VAR = "HERMES_SHELL_TOKEN"


def _umask() -> int:
    """The process umask, read without changing it (os.umask would race with other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _append(text: str, note: str) -> str:
    """`note` on a line of its own after `text`."""
    return f"{text.rstrip(chr(10))}\n{note}" if text else note
