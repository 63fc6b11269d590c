"""LocalBackend: commands run on this machine, one `bash -c` per call in its own process group;
cwd and exported variables persist per backend instance. With a SandboxSpec every process starts
inside the OS sandbox (terminal/sandbox/, see README). Channels, not paths: output, stdin and the shell's
state travel through anonymous files (memfd) this process opened before the spawn; it never opens a name
in a directory the sandbox can write. The environment is an allowlist (terminal/sandbox/envallow.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import wraps

from hermes_agent import paths
from hermes_agent.terminal import judged
from hermes_agent.terminal.base import ExecResult, append_note, timeout_note
from hermes_agent.terminal.localfiles import HostFiles
from hermes_agent.terminal.ptyrun import kill_process_group, signal_group
from hermes_agent.terminal.runfile import RunRecord
from hermes_agent.terminal.sandbox.envallow import allowed_env
from hermes_agent.terminal.sandbox.launcher import SandboxError
from hermes_agent.terminal.sandbox.runner import SandboxRunner
from hermes_agent.terminal.sandbox.spec import BLOCKED_NOTE, SandboxSpec, blocked_by_sandbox
from hermes_agent.terminal.shell import (
    INTERRUPT_EXIT,
    TIMEOUT_EXIT,
    ScriptSpec,
    build_body,
    cap_bytes,
    shell_argv,
)

_POLL_S = 0.02
_KILL_GRACE_S = 0.5
_RC_LIMIT_S = 30.0  # ~/.bashrc, sourced once per session before its first command
_STATE_LIMIT = 8 * 2**20  # the saved shell state is data from inside: bounded


def _memfd(name: str, data: bytes = b"") -> int:
    """An anonymous file (no name anywhere), positioned at 0."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_fd(fd: int, limit: int) -> tuple[bytes, int]:
    """(the first `limit` bytes, total size) of an anonymous file."""
    size = os.fstat(fd).st_size
    return os.pread(fd, min(size, limit), 0), size


def _guarded(method: Callable[..., ExecResult]) -> Callable[..., ExecResult]:
    """Run a confined command inside the run-later guard (sandbox/guard.py): what it changed among git's
    hooks/config and the workspace's run-later files is put back, and the result says so."""
    @wraps(method)
    def run(self: LocalBackend, command: str, *args: object, sandbox: bool = True, **kw: object) -> ExecResult:
        guard = self.guard() if sandbox else None
        notes = guard.enter(why=command) if guard is not None else []
        try:
            res = method(self, command, *args, sandbox=sandbox, **kw)
        finally:
            notes += guard.leave() if guard is not None else []
            notes += self._notes
            self._notes = []
        return replace(res, output=append_note(res.output, "\n".join(notes))) if notes else res
    return run


class LocalBackend(HostFiles):
    """Runs commands with the host's bash. `env` replaces the inherited environment (commands get only
    the allowlisted variables plus `env_passthrough`; `env_strip` names are dropped even then unless
    passed through); `output_limit` bounds what one call may hold in memory; `sandbox` contains every
    command (None: unconfined, for callers without a policy)."""

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
        self._state_dir: str | None = None  # the session's private temp dir (/tmp inside under bwrap)
        self._snapshot = b""  # the shell's saved state (export -p...), written by the confined side: data
        self._cwd: str | None = None
        self._procs: dict[int, subprocess.Popen] = {}  # running calls by id(): killed at close
        self._spawned: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._state_lock = threading.RLock()  # parallel first calls must not see a state dir without its runner
        self._record = record  # the temp dir in HERMES_HOME/run: removed after a crash
        self._sandbox = sandbox
        self._env_strip = tuple(env_strip)
        self._notice = notice
        self._runner: SandboxRunner | None = None
        self._warm_aborted = False  # closing: warm() starts nothing
        self._notes: list[str] = []  # lines for the next result (a ~/.bashrc given up on)

    # -- sandbox ----------------------------------------------------------------------------

    @property
    def sandbox_state(self) -> str:
        """"bwrap" | "landlock" (contained), "off" (sandbox.mode off or no policy), "unavailable"."""
        return self._get_runner().state if self._sandbox is not None else "off"  # type: ignore[union-attr]

    @property
    def contained(self) -> bool:
        """True when commands run inside the OS sandbox; when False and sandbox_state is
        "unavailable", the approval gate asks a person before each command."""
        return self.sandbox_state in ("bwrap", "landlock")

    def guard(self, stop: Callable[[], bool] | None = None):  # noqa: ANN201 - sandbox.guard.Guard | None
        """The run-later guard of this backend's workspaces (shared in the process), when commands are
        confined and may write the workspace. `stop`: for the warm-up, calls off the hard-link walk."""
        runner = self._get_runner()
        if runner is None or not runner.contained or not runner.spec.workspaces:
            return None
        from hermes_agent.terminal.sandbox.guard import guard_for

        spec = runner.spec
        guard = guard_for(spec.workspaces, spec.quarantine, self._notice, (*spec.writable, *spec.pinned))
        guard.separate_links(spec, stop)  # once per set of writable roots: files hard-linked outside copied apart
        guard.watch(runner.strays)  # orphans of finished commands (setsid, `&`): their changes are not the user's
        return guard

    def network_input(self) -> bool | None:
        """Did a command bring content in from the network since the last look (SandboxRunner.network_input)?
        False before any command ran."""
        runner = self._runner
        return False if runner is None else runner.network_input()

    def warm(self) -> None:
        """Plan the sandbox and start its launcher now, so the first command does not wait for them (the
        first model request overlaps them: bootstrap/warm.py). Commands still start only inside it."""
        runner = self._get_runner()
        if runner is not None and not self._warm_aborted:
            runner.warm()
            if not self._warm_aborted:
                self.guard(lambda: self._warm_aborted)  # the hard-link walk (guard.separate_links) meanwhile too

    def abort_warm(self) -> None:
        """The session is closing: a launcher start under way (warm) fails now instead of finishing first."""
        self._warm_aborted = True
        runner = self._runner
        if runner is not None:
            runner.abort_start()

    def _get_runner(self) -> SandboxRunner | None:
        self._ensure_state()
        return self._runner

    def _popen(self, argv: list[str], *, stdin, stdout, stderr, pty: bool = False, sandbox: bool = True,
               extra: tuple[int, ...] = (), cwd: str | None = None):
        runner = self._get_runner()
        env = self._child_env()
        if pty:
            env.update(TERM=env.get("TERM") or "xterm", COLUMNS="200", LINES="50")
        if runner is None:  # never run unconfined because the runner is not there (yet)
            raise SandboxError("the sandbox runner is not ready; the command was not run")
        judged.check(sandbox, runner.strays)  # the files the gate judged are still what runs (judged.py)
        if sandbox and runner.state == "landlock" and runner.spec.git_config_global:
            env["GIT_CONFIG_GLOBAL"] = runner.spec.git_config_global  # the originals are hidden (no bind)
        if sandbox and runner.contained and runner.spec.private_tmp:
            # bwrap mounts the private dir on /tmp; Landlock cannot remap, so TMPDIR names it
            env["TMPDIR"] = "/tmp" if runner.state == "bwrap" else runner.spec.private_tmp
            npm = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".npm")
            if "npm_config_cache" not in env and runner.spec.denies_write(npm):
                env["npm_config_cache"] = f"{env['TMPDIR']}/npm-cache"  # npm fails outright on a read-only cache
        if sandbox and runner.contained:  # no new hard links into the stores (EXDEV anyway): uv/pnpm copy
            from hermes_agent.terminal.sandbox.hardlinks import COPY_ENV

            env.update(COPY_ENV)
        return runner.popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd or self._spawn_cwd(), env=env,
                            pty=pty, sandbox=sandbox, extra=extra)

    def _run(self, argv: list[str], stdin, stdout, sandbox: bool, pty: bool = False,
             save: bool = True, fds: tuple[int, ...] = (),
             start: tuple[int, str, bool] | None = None) -> tuple[subprocess.Popen, int | None]:
        """Start one call's wrapper with the state channels (fd 3: saved state in, fd 4: new state out,
        then `fds` from 5). With `start` (an unconfined call, see `_unconfined_start`) nothing the sandbox
        wrote crosses: no saved state in, none taken back, the pinned start directory last."""
        state_in = _memfd("hermes-state", b"" if start else self._snapshot)
        state_out = _memfd("hermes-state-out")
        extra = (state_in, state_out, *fds, *((start[0],) if start else ()))
        save = save and start is None
        try:
            proc = self._popen(argv, stdin=stdin, stdout=stdout, stderr=stdout if pty else subprocess.STDOUT,
                               pty=pty, sandbox=sandbox, extra=extra, cwd=start[1] if start else None)
        except BaseException:
            os.close(state_out)
            raise
        finally:
            os.close(state_in)
        if not save:
            os.close(state_out)
            return proc, None
        return proc, state_out

    def _blocked_note(self, text: str, code: int, sandbox: bool) -> str:
        """The result text, with a note when a failure looks like the sandbox's refusal."""
        if code == 0 or not sandbox or self._runner is None or not self._runner.contained:
            return text
        if blocked_by_sandbox(self._runner.spec, text, self.cwd(), os.path.expanduser("~")):
            return append_note(text, BLOCKED_NOTE)
        return text

    # -- commands ---------------------------------------------------------------------------

    @_guarded
    def execute(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                stdin: str | None = None, interrupt: threading.Event | None = None,
                sandbox: bool = True, fds: tuple[int, ...] = ()) -> ExecResult:
        """Run `command`; cwd/exported variables persist between calls of this backend.
        `sandbox=False` runs this one call unconfined (the approval gate has asked the user).
        `fds` are passed to the command as its fds 5, 6, ... (execute_code's channels)."""
        self._ensure_state()
        start = self._unconfined_start(sandbox)
        self._source_rc_once(start)
        out = _memfd("hermes-out")
        state_out: int | None = None
        try:
            with self._stdin_file(stdin) as inp:
                body = build_body(self._spec(command, cwd, stdin is not None, start=start, nfds=len(fds)))
                proc, state_out = self._run(self._argv(body), inp, out, sandbox, fds=fds, start=start)
            self._track(proc)
            limit = self._timeout if timeout is None else timeout
            try:
                timed_out, interrupted = self._wait(proc, limit, interrupt)
            finally:
                self._untrack(proc)
            self._load_state(state_out)
            text = self._read_output(out)
        finally:
            os.close(out)
            if state_out is not None:
                os.close(state_out)
            if start:
                os.close(start[0])
        code = TIMEOUT_EXIT if timed_out else INTERRUPT_EXIT if interrupted else proc.returncode
        if timed_out:
            text = append_note(text, timeout_note(limit))
        elif interrupted:
            text = append_note(text, "[command interrupted]")
        else:
            text = self._blocked_note(text, code, sandbox)
        if getattr(proc, "lost_why", ""):  # the launcher was killed for not answering (launcher.Launcher.check)
            text = append_note(text, f"[{proc.lost_why}]")
        return ExecResult(_start_note(text, start, self.cwd()), code, timed_out=timed_out, interrupted=interrupted,
                          cwd=self._cwd)

    def _source_rc_once(self, start: tuple[int, str, bool] | None) -> None:
        """Source ~/.bashrc in a call of its own before the session's first command (up to _RC_LIMIT_S), so that
        command's timeout is its own and a slow start-up file (pyenv rehash, nvm, conda) is not killed half-way
        by it (pyenv then leaves its lock behind: every later shell waits a minute). A start-up file that does
        not finish is given up on for the session, and the next result says so."""
        if start is not None or self._snapshot or not self._source_rc or not self._bash().endswith("bash"):
            return
        with self._state_lock:
            if self._snapshot or not self._source_rc:
                return
            out = _memfd("hermes-rc")
            with open(os.devnull, "rb") as inp:
                proc, state_out = self._run(self._argv(build_body(self._spec(":", None))), inp, out, True)
            try:
                self._track(proc)
                self._wait(proc, _RC_LIMIT_S, None)
                self._untrack(proc)
                self._load_state(state_out)
            finally:
                os.close(out)
                if state_out is not None:
                    os.close(state_out)
            if not self._snapshot:
                self._source_rc = False
                self._notes.append(f"[~/.bashrc did not finish within {_RC_LIMIT_S:g}s; this session's commands "
                                   "run without it]")

    def _spec(self, command: str, cwd: str | None, stdin: bool = False, save: bool = True,
              start: tuple[int, str, bool] | None = None, nfds: int = 0) -> ScriptSpec:
        """An unconfined call (`start`) gets a fresh shell: no ~/.bashrc, no saved state, its pinned directory
        (the fd after the `nfds` extra channels from 5)."""
        return ScriptSpec(source_rc=self._source_rc and start is None, command=command, state_dir="", call_id="",
                          initial_cwd=self.cwd(), workdir=self._abs(cwd) if cwd else None, stdin=stdin,
                          shell=self._bash(), fd_state=True, save_state=save and start is None,
                          cwd_fd=5 + nfds if start else None)

    def _unconfined_start(self, sandbox: bool) -> tuple[int, str, bool] | None:
        """For a call let out of a working sandbox: (an O_PATH fd on the directory it starts in, that
        directory's real path, whether the shell's cwd was set aside). The confined side chose the cwd and
        may have made every link on its way, so the directory is pinned by fd and must be the workspace root
        or under it; else the root. None for a confined call, or when nothing is ever confined."""
        runner = self._get_runner()
        if sandbox or runner is None or not runner.contained:
            return None
        root = os.path.realpath(self._initial_cwd or os.getcwd())
        for reset, path in enumerate((self.host_path(self.cwd()), root)):
            try:
                fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            real = os.readlink(f"/proc/self/fd/{fd}")
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return fd, real, bool(reset)
            os.close(fd)
        raise SandboxError("the workspace directory is gone; the command was not run outside the sandbox")

    @staticmethod
    def _stdin_file(text: str | None):
        """A file object for the command's stdin: the text in an anonymous file, or /dev/null."""
        if text is None:
            return open(os.devnull, "rb")  # noqa: SIM115 - closed by the with block
        return os.fdopen(_memfd("hermes-in", text.encode("utf-8")), "rb")

    @_guarded
    def execute_pty(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                    stdin: str | None = None, interrupt: threading.Event | None = None,
                    sandbox: bool = True) -> ExecResult:
        """Like `execute`, but under a pseudo-terminal (isatty() is true; output has terminal codes)."""
        from hermes_agent.terminal.ptyrun import run_in_pty

        self._ensure_state()
        limit = self._timeout if timeout is None else timeout
        started: list = []
        start = self._unconfined_start(sandbox)
        self._source_rc_once(start)

        def popen(argv: list[str], fd: int):
            proc, state_out = self._run(argv, fd, fd, sandbox, pty=True, start=start)
            started[:] = [proc, state_out]
            self._track(proc)
            return proc

        try:
            data, code, timed_out, interrupted = run_in_pty(
                self._argv(build_body(self._spec(command, cwd, start=start))), stdin=stdin, timeout=limit,
                interrupt=interrupt, limit=self._output_limit, popen=popen)
        finally:
            if started:
                self._untrack(started[0])
                self._load_state(started[1])
                if started[1] is not None:
                    os.close(started[1])
            if start:
                os.close(start[0])
        text = _start_note(data.decode("utf-8", "replace").replace("\r\n", "\n"), start, self.cwd())
        if timed_out:
            return ExecResult(append_note(text, timeout_note(limit)),
                              TIMEOUT_EXIT, timed_out=True, cwd=self._cwd)
        if interrupted:
            return ExecResult(append_note(text, "[command interrupted]"), INTERRUPT_EXIT, interrupted=True,
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

    def _read_output(self, fd: int) -> str:
        """Decoded output of one call; head and tail kept when it exceeds the output limit."""
        try:
            size = os.fstat(fd).st_size
            if size <= self._output_limit:
                data = os.pread(fd, self._output_limit, 0)
            else:
                half = self._output_limit // 2
                data = cap_bytes(os.pread(fd, half, 0) + os.pread(fd, half, size - half), self._output_limit,
                                 total=size)
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    # -- background processes (used by terminal.processes) ----------------------------------

    def spawn(self, command: str, *, cwd: str | None = None, token: str, sandbox: bool = True):
        """Start `command` in the background (own process group) with this shell's cwd and exports;
        stdin is a pipe, stdout+stderr one pipe."""
        self._ensure_state()
        start = self._unconfined_start(sandbox)
        guard = self.guard() if sandbox else None
        if guard is not None:
            guard.enter(deliver=False, why=command)
        try:
            self._source_rc_once(start)
            proc, _ = self._run(self._argv(build_body(self._spec(command, cwd, save=False, start=start))),
                                subprocess.PIPE, subprocess.PIPE, sandbox, save=False, start=start)
        except BaseException:
            if guard is not None:
                guard.leave(hold=True)
            raise
        finally:
            if start:
                os.close(start[0])
        if guard is not None:  # checked when it ends; the lines go with the next foreground result
            threading.Thread(target=_leave_when_done, args=(proc, guard), daemon=True,
                             name="hermes-guard-bg").start()
        with self._lock:
            self._spawned[token] = proc
        self._track(proc)
        return proc

    def _track(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs[id(proc)] = proc

    def _untrack(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.pop(id(proc), None)

    def kill_spawned(self, token: str) -> None:
        """SIGTERM a background process group, then SIGKILL whatever is left of it."""
        with self._lock:
            proc = self._spawned.pop(token, None)
            if proc is not None:
                self._procs.pop(id(proc), None)
        if proc is not None:
            self._kill_group(proc)

    # -- state ------------------------------------------------------------------------------

    def cwd(self) -> str:
        """The current working directory of this backend's shell."""
        if self._cwd is None:
            self._cwd = self._initial_cwd or os.getcwd()
        return self._cwd

    def shell_definitions(self) -> str:
        """The aliases and functions of the saved shell state, as text for the approval rules to read (data
        from the confined side: parsed there, never run here)."""
        return self._snapshot.decode("utf-8", "replace")

    def _load_state(self, fd: int | None) -> None:
        """Take the cwd and shell state the call wrote to its state channel (untrusted data: kept as
        bytes for the next call's fd 3; the cwd only as a string for `cd` and the spawn)."""
        if fd is None:
            return
        try:
            data, size = _read_fd(fd, _STATE_LIMIT)
        except OSError:
            return
        cwd, sep, snapshot = data.partition(b"\0")
        if not sep or size > _STATE_LIMIT:
            return  # killed before its EXIT trap, or garbage: keep the previous state
        text = cwd.decode("utf-8", "replace")
        if not text.startswith("/") or len(text) >= 4096:
            return
        self._cwd = text
        self._snapshot = snapshot

    def _argv(self, body: str) -> list[str]:
        """The process that runs one call's shell body (overridden by container backends)."""
        return [*shell_argv(self._bash()), body]

    def scratch_dir(self) -> str:
        """The session's private temp directory (writable inside; /tmp there under bwrap); removed at close.
        Hermes itself never opens a name in it."""
        return self._ensure_state()

    def _ensure_state(self) -> str:
        """The private temp dir, and the sandbox runner whose /tmp it is (created once)."""
        with self._state_lock:
            if self._state_dir is None:
                state = tempfile.mkdtemp(prefix="hermes-term-")
                if self._record is not None:
                    self._record.add_dir(state)
                spec = SandboxSpec(mode="off") if self._sandbox is None else \
                    self._sandbox.with_private_tmp(state).with_writable(state)
                self._runner = SandboxRunner(spec, self._notice)
                self._state_dir = state  # published last: whoever sees it also sees its runner
            return self._state_dir

    def _spawn_cwd(self) -> str:
        """The session's directory, or where it started when that is gone or not in the sandbox's view (a closed
        HOME's private folder: a confined command cannot have gone there; nothing to chdir into inside)."""
        cwd = self.cwd()
        runner = self._runner
        hidden = runner is not None and runner.contained and runner.spec.unseen(os.path.realpath(cwd))
        return cwd if os.path.isdir(self.host_path(cwd)) and not hidden else (
            self._initial_cwd if self._initial_cwd and os.path.isdir(self._initial_cwd) else os.getcwd())

    def host_path(self, path: str) -> str:
        """Where a path the commands see lives on this side: under bwrap, /tmp inside is the session's
        private dir (except what is bound from the host: writable roots, HOME or hermes itself under /tmp).
        The file primitives below use it; a file tool that opens local paths itself should too."""
        runner = self._runner
        if runner is None or not runner.spec.private_tmp or runner.state != "bwrap":
            return path
        from hermes_agent.terminal.sandbox.bwrap import tmp_path_on_host

        return tmp_path_on_host(runner.spec, path)

    def _child_env(self) -> dict[str, str]:
        """The allowlisted variables plus `env_passthrough`; nothing that marks or locates hermes."""
        base = paths.user_environ() if self._env is None else dict(self._env)
        for name in self._env_strip:
            if name not in self._passthrough:
                base.pop(name, None)
        return allowed_env(base, self._passthrough)

    def _bash(self) -> str:
        if self._shell is None:
            self._shell = shutil.which("bash") or "/bin/sh"
        return self._shell

    def _abs(self, path: str) -> str:
        path = os.path.expanduser(path)
        return path if os.path.isabs(path) else os.path.join(self.cwd(), path)

    def close(self) -> None:
        """Kill what this session started (the sandbox launcher takes its whole pid namespace or process
        tree with it: setsid, double fork and `env -i` included) and remove the private temp dir."""
        with self._lock:
            procs, self._procs = list(self._procs.values()), {}
            self._spawned.clear()
        for proc in procs:
            try:
                signal_group(proc, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._runner is not None:
            guard = self.guard()
            self._runner.close()
            self._runner = None
            if guard is not None:  # what processes that outlived their calls changed until they were killed
                guard.settle()
        if self._state_dir:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            if self._record is not None:
                self._record.drop_dir(self._state_dir)
            self._state_dir = None


def _leave_when_done(proc: subprocess.Popen, guard) -> None:  # noqa: ANN001 - sandbox.guard.Guard
    try:
        proc.wait()
    finally:
        guard.leave(hold=True)


def _start_note(text: str, start: tuple[int, str, bool] | None, cwd: str) -> str:
    """Say so when an unconfined call did not start in the shell's directory."""
    if not start or not start[2]:
        return text
    return append_note(text, f"[ran outside the sandbox in the workspace root {start[1]}, not in {cwd}: that directory "
                         "is outside the workspace or reached through a link; pass workdir to choose]")

