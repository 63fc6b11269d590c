"""What a run leaves behind if it is killed: the local backends' private temp directories are recorded in
HERMES_HOME/run/<pid>.json (written when a backend starts, not per command); the next start removes the
directories of dead runs. Processes need no record: the sandbox launcher takes them with it when hermes
dies (bwrap's pid namespace with --die-with-parent; the Landlock/unconfined keeper's parent-death signal),
and no marker is put in any command's environment. Records of older versions, which carried a token in
every command's environment, are still honoured (process groups carrying a dead run's token are killed).
Start-up cost when nothing was left behind: one listdir."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

from hermes_agent import paths

TOKEN_VAR = "HERMES_RUN_TOKEN"  # what older versions set in every command's environment
_DIR_PREFIX = "hermes-term-"


def _start_ticks(pid: int) -> str:
    """The start time of `pid` (clock ticks since boot, from /proc), or "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return ""


class RunRecord:
    """This process's token and state directories, mirrored to its run file."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / f"{os.getpid()}.json"
        self.token = f"{os.getpid()}.{_start_ticks(os.getpid()) or 'x'}"
        self._dirs: set[str] = set()
        self._lock = threading.Lock()

    def add_dir(self, path: str) -> None:
        with self._lock:
            self._dirs.add(path)
            self._save()

    def drop_dir(self, path: str) -> None:
        with self._lock:
            self._dirs.discard(path)
            self._save()

    def _save(self) -> None:
        if not self._dirs:
            try:
                self.path.unlink()
            except OSError:
                pass
            return
        data = {"pid": os.getpid(), "token": self.token, "dirs": sorted(self._dirs)}
        tmp = f"{self.path}.tmp"
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:
            pass  # bookkeeping only: a read-only home must not stop commands


_RECORD: RunRecord | None = None
_RECORD_LOCK = threading.Lock()


def run_record() -> RunRecord:
    """This process's RunRecord (one per process, whatever the number of backends)."""
    global _RECORD
    with _RECORD_LOCK:
        if _RECORD is None or _RECORD.path.parent != run_dir():
            _RECORD = RunRecord(run_dir())
        return _RECORD


def run_dir() -> Path:
    return paths.hermes_home() / "run"


def reap_stale(directory: Path | None = None) -> list[str]:
    """Clean up after runs that died without closing their backends; returns what was done."""
    directory = directory or run_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    done: list[str] = []
    for name in names:
        pid_text = name.removesuffix(".json")
        if not name.endswith(".json") or not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        path = directory / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _owner_alive(data):
            continue
        done += _reap(data)
        try:
            path.unlink()
        except OSError:
            pass
    return done


def _owner_alive(data: dict) -> bool:
    pid = int(data.get("pid") or 0)
    token = str(data.get("token") or "")
    if not paths.pid_alive(pid):
        return False
    ticks = _start_ticks(pid)
    return not ticks or token == f"{pid}.{ticks}"  # same pid, other start time: a reused pid


def _reap(data: dict) -> list[str]:
    token = str(data.get("token") or "")
    done = [f"killed process group {g}" for g in _kill_marked(token)] if token else []
    for d in data.get("dirs") or []:
        if isinstance(d, str) and os.path.basename(d).startswith(_DIR_PREFIX) and os.path.isdir(d):
            import shutil  # here, not at import: shutil loads bz2/lzma, and chat -q imports this module

            shutil.rmtree(d, ignore_errors=True)
            done.append(f"removed {d}")
    return done


def _kill_marked(token: str, var: str = TOKEN_VAR) -> list[int]:
    """SIGKILL the process groups of live processes whose environment carries `var=token` (without /proc,
    nothing is killed: a recycled pid must never be mistaken for ours)."""
    marker = f"{var}={token}".encode() + b"\0"
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    own, me = os.getpgrp(), os.getuid()
    groups: list[int] = []
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}").st_uid != me:
                continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if marker not in fh.read():
                    continue
        except OSError:
            continue
        pgrp = _pgrp(pid)
        if pgrp > 1 and pgrp != own and pgrp not in groups:
            try:
                os.killpg(pgrp, signal.SIGKILL)
                groups.append(pgrp)
            except (ProcessLookupError, PermissionError):
                pass
    return groups


def _pgrp(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return -1
