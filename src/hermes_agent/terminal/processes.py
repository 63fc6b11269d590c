"""Background processes started by `terminal(background=true)`: tracked per task, each with a
rolling output buffer; list/poll/log/wait/kill/write, and `cleanup(task_id)` at the end of a task."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

from hermes_agent.terminal.shell import new_call_id

BUFFER_BYTES = 200_000
MAX_TRACKED = 64
_POLL_S = 0.05


class Spawner(Protocol):
    """What a backend offers for background processes (LocalBackend, docker, ssh)."""

    kind: str

    def spawn(self, command: str, *, cwd: str | None = None, token: str, **opts: object) -> subprocess.Popen: ...

    def kill_spawned(self, token: str) -> None: ...


class RollingBuffer:
    """The last `limit` bytes of a stream; offsets count from the start of the whole stream."""

    def __init__(self, limit: int = BUFFER_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._data = bytearray()
        self._lock = threading.Lock()

    def append(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            self.total += len(chunk)
            excess = len(self._data) - self.limit
            if excess > 0:
                del self._data[:excess]

    @property
    def dropped(self) -> int:
        """Bytes that fell out of the front of the buffer."""
        return self.total - len(self._data)

    def read(self, offset: int, limit: int) -> tuple[bytes, int]:
        """(bytes from `offset`, the offset they start at) — clamped to what is still held."""
        with self._lock:
            start = max(offset, self.total - len(self._data))
            rel = start - (self.total - len(self._data))
            return bytes(self._data[rel:rel + limit]), start

    def tail(self, limit: int) -> tuple[bytes, int]:
        """(the last `limit` bytes, the offset they start at)."""
        with self._lock:
            data = bytes(self._data[-limit:]) if limit else b""
            return data, self.total - len(data)


@dataclass(slots=True)
class BackgroundProcess:
    """One tracked process."""

    id: str
    task_id: str
    command: str
    proc: subprocess.Popen
    spawner: Spawner
    started: float = field(default_factory=time.time)
    buffer: RollingBuffer = field(default_factory=RollingBuffer)
    ended: float | None = None
    killed: bool = False
    reader: threading.Thread | None = None
    stdin_pending: str = ""  # written to stdin after the last unescaped newline: the reader has not run it yet
    stdin_written: str = ""  # all of it (bounded): a script reader (python3 < stdin) runs the whole at EOF

    def settle(self) -> None:
        """After exit, give the reader a moment to copy the last output (a grandchild that keeps
        the pipe open must not block us, hence the bound)."""
        if self.proc.poll() is not None and self.reader is not None and self.reader.is_alive():
            self.reader.join(timeout=0.5)

    def status(self) -> dict:
        """Summary the model sees (no output)."""
        code = self.proc.poll()
        if code is not None and self.ended is None:
            self.ended = time.time()
        info = {"id": self.id, "command": self.command, "backend": self.spawner.kind,
                "status": "running" if code is None else ("killed" if self.killed else "exited"),
                "exit_code": code, "pid": self.proc.pid,
                "runtime_s": round((self.ended or time.time()) - self.started, 1),
                "output_bytes": self.buffer.total}
        note = getattr(self.proc, "sandbox_note", "") if code is None else ""
        if note:  # an earlier sandbox launcher's process (sandbox/proxy.py)
            info["note"] = note
        return info


PENDING_LIMIT = 65_536


def pending_after(text: str) -> str:
    """What a line-reading program (a shell, a REPL) still holds of `text`: everything after its last newline
    that is not escaped by a backslash (`rm -rf \\` + newline continues the line)."""
    end = len(text)
    while (cut := text.rfind("\n", 0, end)) >= 0:
        if not text[:cut].endswith("\\"):
            return text[cut + 1:][-PENDING_LIMIT:]
        end = cut
    return text[-PENDING_LIMIT:]


class ProcessManager:
    """Registry of background processes, keyed by id and tracked per task."""

    def __init__(self, buffer_bytes: int = BUFFER_BYTES, max_tracked: int = MAX_TRACKED) -> None:
        self._procs: dict[str, BackgroundProcess] = {}
        self._lock = threading.Lock()
        self._buffer_bytes = buffer_bytes
        self._max = max_tracked
        self.exit_listeners: list = []  # fn(process) when one ends (its output closed and the process reaped)

    def start(self, task_id: str, spawner: Spawner, command: str, *, cwd: str | None = None,
              **opts: object) -> BackgroundProcess:
        """Spawn `command` in the background on `spawner`; raises RuntimeError when none can be added.
        `opts` go to the spawner (sandbox=False for one approved unsandboxed local command)."""
        self._prune()
        with self._lock:
            if len(self._procs) >= self._max:
                raise RuntimeError(f"{self._max} background processes are already tracked; kill some first")
        token = new_call_id()
        proc = spawner.spawn(command, cwd=cwd, token=token, **opts)
        bp = BackgroundProcess(id=f"proc_{token}", task_id=task_id, command=command, proc=proc, spawner=spawner,
                               buffer=RollingBuffer(self._buffer_bytes))
        bp.reader = threading.Thread(target=_pump, args=(bp, self.exit_listeners), name=f"hermes-bg-{token}",
                                     daemon=True)
        bp.reader.start()
        with self._lock:
            self._procs[bp.id] = bp
        return bp

    def running_commands(self) -> list[str]:
        """The command lines of the background processes still running (any task): what a later file write may
        feed (tools/builtin/_bgwrites.py)."""
        with self._lock:
            procs = list(self._procs.values())
        return [bp.command for bp in procs if bp.proc.poll() is None]

    def _prune(self) -> None:
        """Forget the oldest finished processes when the table is full."""
        with self._lock:
            if len(self._procs) < self._max:
                return
            done = sorted((p for p in self._procs.values() if p.proc.poll() is not None),
                          key=lambda p: p.ended or p.started)
            for p in done[: len(self._procs) - self._max + 1]:
                del self._procs[p.id]

    def get(self, proc_id: str, task_id: str | None = None) -> BackgroundProcess:
        """The process `proc_id` (of `task_id` when given); KeyError with a helpful message otherwise."""
        bp = self._procs.get(proc_id)
        if bp is None or (task_id is not None and bp.task_id != task_id):
            raise KeyError(f"no background process {proc_id!r} (use action=list)")
        return bp

    def list(self, task_id: str | None = None) -> list[dict]:
        """Status of every process (of one task when given), oldest first."""
        with self._lock:
            procs = [p for p in self._procs.values() if task_id is None or p.task_id == task_id]
        return [p.status() for p in sorted(procs, key=lambda p: p.started)]

    def poll(self, proc_id: str, task_id: str | None = None, tail: int = 2000) -> dict:
        """Status plus the last `tail` bytes of output."""
        bp = self.get(proc_id, task_id)
        bp.settle()
        info = bp.status()
        data, _ = bp.buffer.tail(tail)
        info["output_tail"] = data.decode("utf-8", "replace")
        return info

    def log(self, proc_id: str, task_id: str | None = None, *, offset: int | None = None,
            limit: int = 50_000) -> dict:
        """Output from byte `offset` (or the last `limit` bytes), with `next_offset` to continue."""
        bp = self.get(proc_id, task_id)
        bp.settle()
        if offset is None:
            data, start = bp.buffer.tail(limit)
        else:
            data, start = bp.buffer.read(max(offset, 0), limit)
        info = {"id": bp.id, "status": bp.status()["status"], "offset": start,
                "next_offset": start + len(data), "total_bytes": bp.buffer.total,
                "output": data.decode("utf-8", "replace")}
        if offset is not None and start > offset:
            info["note"] = f"bytes {offset}..{start} were dropped from the {bp.buffer.limit}-byte buffer"
        return info

    def wait(self, proc_id: str, task_id: str | None = None, *, timeout: float = 60.0,
             interrupt: threading.Event | None = None) -> dict:
        """Block until the process ends, `timeout` passes or `interrupt` is set."""
        bp = self.get(proc_id, task_id)
        deadline = time.monotonic() + max(timeout, 0)
        while bp.proc.poll() is None and time.monotonic() < deadline:
            if interrupt is not None and interrupt.is_set():
                break
            time.sleep(_POLL_S)
        info = self.poll(proc_id, task_id)
        info["wait_timed_out"] = info["status"] == "running"
        return info

    def kill(self, proc_id: str, task_id: str | None = None) -> dict:
        """Kill the process group (on the backend where it runs)."""
        bp = self.get(proc_id, task_id)
        if bp.proc.poll() is None:
            bp.killed = True
            _terminate(bp)
        return bp.status()

    def write(self, proc_id: str, data: str, task_id: str | None = None, *, close: bool = False) -> dict:
        """Send `data` to the process's stdin (and close it when `close`)."""
        bp = self.get(proc_id, task_id)
        if bp.proc.poll() is not None:
            raise RuntimeError(f"{proc_id} has already exited")
        if bp.proc.stdin is None or bp.proc.stdin.closed:
            raise RuntimeError(f"stdin of {proc_id} is closed")
        try:
            if data:
                bp.proc.stdin.write(data.encode("utf-8"))
                bp.proc.stdin.flush()
            if close:
                bp.proc.stdin.close()
        except (BrokenPipeError, OSError) as exc:
            raise RuntimeError(f"cannot write to {proc_id}: {exc}") from exc
        bp.stdin_pending = pending_after(bp.stdin_pending + data)
        bp.stdin_written = (bp.stdin_written + data)[-PENDING_LIMIT:]
        return {"id": bp.id, "written": len(data.encode("utf-8")), "stdin_closed": close}

    def cleanup(self, task_id: str) -> int:
        """Kill and forget every process of `task_id`; returns how many were running."""
        with self._lock:
            procs = [p for p in self._procs.values() if p.task_id == task_id]
            for p in procs:
                del self._procs[p.id]
        running = 0
        for p in procs:
            if p.proc.poll() is None:
                running += 1
                p.killed = True
                _terminate(p)
        return running

    def close_all(self) -> None:
        """Kill every tracked process."""
        for task in {p.task_id for p in list(self._procs.values())}:
            self.cleanup(task)


def _pump(bp: BackgroundProcess, listeners: list | None = None) -> None:
    """Copy the process's output into its buffer until EOF; then, once it is reaped, tell `listeners`."""
    stream = bp.proc.stdout
    try:
        for chunk in iter(lambda: stream.read1(65536), b"") if stream is not None else ():
            bp.buffer.append(chunk)
    except (OSError, ValueError):
        pass
    if not listeners:
        return
    try:
        bp.proc.wait()
    except Exception:  # a process object that cannot be waited on: the listeners still look
        pass
    for listener in list(listeners):
        try:
            listener(bp)
        except Exception:  # a listener must not take the reader down
            import logging

            logging.getLogger(__name__).warning("background exit listener failed", exc_info=True)


def _terminate(bp: BackgroundProcess) -> None:
    try:
        bp.spawner.kill_spawned(bp.id.removeprefix("proc_"))
    finally:
        if bp.proc.poll() is None:
            bp.proc.kill()
        try:
            bp.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (bp.proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


_default: ProcessManager | None = None
_default_lock = threading.Lock()


def get_manager() -> ProcessManager:
    """The process-wide manager (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ProcessManager()
        return _default
