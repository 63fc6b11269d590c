"""Shared driver for backends that reach their shell through a client process (docker exec, ssh):
the wrapper runs remotely, output is captured to a remote file so background children never hold
our pipe, and a timeout or interrupt kills the remote process group through a second call."""

from __future__ import annotations

import shlex
import subprocess
import threading
import time

from hermes_agent.terminal.base import ExecResult, append_note, timeout_note
from hermes_agent.terminal.shell import (
    INTERRUPT_EXIT,
    TIMEOUT_EXIT,
    ScriptSpec,
    build_background_script,
    build_remote_script,
    cleanup_script,
    kill_script,
    new_call_id,
    split_meta,
)

_POLL_S = 0.02


class RemoteShellBackend:
    """Base class: subclasses provide `_client_argv(script, stdin)` (argv that runs a POSIX sh
    script on the far side), `_prepare()` and `close()`."""

    kind = "remote"
    isolated = False

    def __init__(self, *, cwd: str | None = None, timeout: float = 180.0, output_limit: int = 2_000_000,
                 source_rc: bool = True):
        self._initial_cwd = cwd
        self._timeout = timeout
        self._output_limit = output_limit
        self.source_rc = source_rc
        self._cwd: str | None = None
        self._shell: str | None = None
        self._setsid = True
        self._client_env: dict[str, str] | None = None
        self._state_dir = f"/tmp/hermes-{new_call_id()}"
        self._lock = threading.Lock()

    # -- subclass hooks ------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Start the container / connection if needed (raise HermesError when impossible)."""

    def _client_argv(self, script: str, stdin: bool) -> list[str]:
        raise NotImplementedError

    def _client_failed(self, code: int, stderr: str) -> str | None:
        """A message when `code` means the client itself failed (not the command)."""
        return None

    # -- plumbing ------------------------------------------------------------------------------

    def _run_raw(self, script: str, *, stdin: bytes | None = None,
                 timeout: float | None = 60.0) -> subprocess.CompletedProcess:
        """Run a small helper script through the client; returns raw bytes."""
        self._prepare()
        argv = self._client_argv(script, stdin is not None)
        if stdin is not None:
            return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout,
                                  env=self._client_env)
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              env=self._client_env)

    def _detect_shell(self) -> str:
        """`bash` when the remote side has it, else `sh` (e.g. a busybox image); notes setsid."""
        if self._shell is None:
            proc = self._run_raw("command -v bash >/dev/null 2>&1 && echo bash || echo sh; "
                                 "command -v setsid >/dev/null 2>&1 && echo setsid || echo none")
            found = proc.stdout.decode("utf-8", "replace").split()
            self._setsid = "setsid" in found
            self._shell = "bash" if "bash" in found else "sh"
        return self._shell

    def execute(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                stdin: str | None = None, interrupt: threading.Event | None = None) -> ExecResult:
        """Run `command` remotely; cwd/exported variables persist between calls of this backend."""
        self._prepare()
        shell = self._detect_shell()
        call_id = new_call_id()
        spec = ScriptSpec(source_rc=self.source_rc, command=command, state_dir=self._state_dir, call_id=call_id,
                          initial_cwd=self._initial_cwd, workdir=cwd, stdin=stdin is not None,
                          shell=shell, setsid=self._setsid, output_limit=self._output_limit)
        argv = self._client_argv(build_remote_script(spec), stdin is not None)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._client_env)
        limit = self._timeout if timeout is None else timeout
        out, err, stopped = self._collect(proc, stdin, limit, interrupt)
        new_cwd, noise = split_meta(err.decode("utf-8", "replace"))
        if stopped:
            out += self._kill_remote(call_id)
            proc.kill()
            proc.wait()
        elif new_cwd:
            self._cwd = new_cwd
        text = out.decode("utf-8", "replace")
        code = proc.returncode
        if not stopped and new_cwd is None and (msg := self._client_failed(code, noise)):
            return ExecResult(msg, code, cwd=self._cwd)
        if noise and not stopped:
            text = f"{text}\n{noise}" if text else noise
        if stopped == "timeout":
            return ExecResult(append_note(text, timeout_note(limit)),
                              TIMEOUT_EXIT, timed_out=True, cwd=self._cwd)
        if stopped == "interrupt":
            return ExecResult(append_note(text, "[command interrupted]"), INTERRUPT_EXIT,
                              interrupted=True, cwd=self._cwd)
        return ExecResult(text, code, cwd=self._cwd)

    def _collect(self, proc: subprocess.Popen, stdin: str | None, limit: float | None,
                 interrupt: threading.Event | None) -> tuple[bytes, bytes, str]:
        """Feed stdin, gather stdout/stderr; stop early on timeout or interrupt."""
        chunks: dict[str, list[bytes]] = {"out": [], "err": []}

        def pump(name: str, stream) -> None:
            for block in iter(lambda: stream.read1(65536), b""):
                chunks[name].append(block)

        threads = [threading.Thread(target=pump, args=(n, s), daemon=True)
                   for n, s in (("out", proc.stdout), ("err", proc.stderr))]
        for t in threads:
            t.start()
        if stdin is not None and proc.stdin:
            try:
                proc.stdin.write(stdin.encode("utf-8"))
                proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
        deadline = None if limit is None or limit <= 0 else time.monotonic() + limit
        stopped = ""
        while proc.poll() is None:
            if interrupt is not None and interrupt.is_set():
                stopped = "interrupt"
                break
            if deadline is not None and time.monotonic() >= deadline:
                stopped = "timeout"
                break
            time.sleep(_POLL_S)
        if not stopped:
            for t in threads:
                t.join(timeout=5)
        return b"".join(chunks["out"]), b"".join(chunks["err"]), stopped

    def _kill_remote(self, call_id: str) -> bytes:
        """Kill the remote process group of a call; returns the output it had produced."""
        try:
            proc = self._run_raw(kill_script(self._state_dir, call_id, self._output_limit), timeout=15)
        except (subprocess.TimeoutExpired, OSError):
            return b""
        return proc.stdout

    def spawn(self, command: str, *, cwd: str | None = None, token: str) -> subprocess.Popen:
        """Start `command` in the background on the far side; the client's pipes carry its I/O."""
        self._prepare()
        spec = ScriptSpec(source_rc=self.source_rc, command=command, state_dir=self._state_dir, call_id=token,
                          initial_cwd=self._initial_cwd, workdir=cwd, stdin=True, shell=self._detect_shell(),
                          setsid=self._setsid, save_state=False)
        return subprocess.Popen(self._client_argv(build_background_script(spec), True), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self._client_env)

    def kill_spawned(self, token: str) -> None:
        """Kill a background process's remote process group."""
        self._kill_remote(token)

    def cwd(self) -> str:
        """The current working directory of the remote shell."""
        if self._cwd is None:
            res = self.execute("pwd", timeout=30)
            self._cwd = res.output.strip().splitlines()[-1] if res.exit_code == 0 and res.output.strip() else "/"
        return self._cwd

    def _abs(self, path: str) -> str:
        if path.startswith("/"):
            return path
        if path == "~" or path.startswith("~/"):
            return "$HOME" + path[1:]
        return f"{self.cwd().rstrip('/')}/{path}"

    # -- files ---------------------------------------------------------------------------------

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        """Bytes of a remote file (at most `limit`)."""
        p = _qpath(self._abs(path))
        reader = f"head -c {int(limit)} {p}" if limit is not None else f"cat {p}"
        script = (f"[ -e {p} ] || exit 3; [ -d {p} ] && exit 4; [ -r {p} ] || exit 5; {reader}")
        proc = self._run_raw(script)
        errors = {3: FileNotFoundError, 4: IsADirectoryError, 5: PermissionError}
        if proc.returncode in errors:
            raise errors[proc.returncode](f"{path}")
        if proc.returncode != 0:
            raise OSError(proc.stderr.decode("utf-8", "replace").strip() or f"cannot read {path}")
        return proc.stdout

    def write_bytes(self, path: str, data: bytes) -> None:
        """Atomically replace a remote file (temp file + mv), creating parent directories."""
        p = _qpath(self._abs(path))
        tmp = f'"$__d/.hermes-{new_call_id()}"'
        script = (f"__t={p}; __d=$(dirname \"$__t\"); mkdir -p \"$__d\" || exit 5; "
                  f"cat > {tmp} || {{ rm -f {tmp}; exit 5; }}; mv -f {tmp} \"$__t\" || {{ rm -f {tmp}; exit 5; }}")
        proc = self._run_raw(script, stdin=data)
        if proc.returncode != 0:
            raise PermissionError(proc.stderr.decode("utf-8", "replace").strip() or f"cannot write {path}")

    def stat(self, path: str) -> dict | None:
        """{"size", "is_dir", "mtime"} of a remote path, or None when missing."""
        p = _qpath(self._abs(path))
        proc = self._run_raw(f"[ -e {p} ] || exit 3; [ -d {p} ] && echo d || echo f; "
                             f"stat -c '%s %Y' {p} 2>/dev/null || wc -c < {p}")
        if proc.returncode == 3:
            return None
        lines = proc.stdout.decode("utf-8", "replace").split()
        if proc.returncode != 0 or not lines:
            raise OSError(f"cannot stat {path}")
        size = int(lines[1]) if len(lines) > 1 and lines[1].isdigit() else 0
        mtime = float(lines[2]) if len(lines) > 2 and lines[2].isdigit() else 0.0
        return {"size": size, "is_dir": lines[0] == "d", "mtime": mtime}

    def _remove_state(self) -> None:
        try:
            self._run_raw(cleanup_script(self._state_dir), timeout=15)
        except (subprocess.TimeoutExpired, OSError):
            pass


def _qpath(path: str) -> str:
    """Quote a path for sh, leaving a leading `$HOME` expandable."""
    if path.startswith("$HOME"):
        return '"$HOME"' + shlex.quote(path[5:]) if path[5:] else '"$HOME"'
    return shlex.quote(path)

