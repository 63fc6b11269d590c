"""The launcher process (stdlib only): started once per local backend inside the sandbox (under
bwrap, or restricting itself with Landlock first), it starts every command of that backend with
plain subprocess (the vfork fast path), so each command inherits the sandbox for ~1 ms.

Protocol on a unix stream socket, frames of a 4-byte length + JSON: the first frame from the
parent is {"landlock": [[path, rights]...] | null, "network": bool}; the launcher answers
{"ready": true} or {"error": "..."}. Then {"id", "argv", "cwd", "env", "pty"} with three fds
(stdin, stdout, stderr) attached -> {"id", "pid"} or {"id", "error"}, and later {"exit": pid, "code"}.
EOF from the parent ends the launcher (the commands live on in their own sessions)."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading

MAX_FRAME = 64 * 1024 * 1024


def send_frame(sock: socket.socket, obj: object, fds: list[int] | tuple[int, ...] = ()) -> None:
    """One frame; `fds` ride on its first bytes."""
    data = json.dumps(obj).encode()
    data = struct.pack("!I", len(data)) + data
    sent = socket.send_fds(sock, [data], list(fds)) if fds else sock.send(data)
    if sent < len(data):
        sock.sendall(data[sent:])


def recv_frame(sock: socket.socket) -> tuple[object, list[int]] | None:
    """(object, fds) of the next frame, None at EOF."""
    head, fds = b"", []
    while len(head) < 4:
        chunk, got, _, _ = socket.recv_fds(sock, 4 - len(head), 8)
        if not chunk:
            for fd in got:
                os.close(fd)
            return None
        head += chunk
        fds += got
    size = struct.unpack("!I", head)[0]
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            return None
        body += chunk
    return json.loads(body), fds


def _take_controlling_tty() -> None:
    import fcntl
    import termios

    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    except OSError:
        pass


class _Server:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.send_lock = threading.Lock()

    def send(self, obj: object) -> None:
        with self.send_lock:
            send_frame(self.sock, obj)

    def spawn(self, req: dict, fds: list[int]) -> None:
        try:
            if len(fds) != 3:
                raise ValueError(f"expected 3 fds, got {len(fds)}")
            proc = subprocess.Popen(
                req["argv"], stdin=fds[0], stdout=fds[1], stderr=fds[2], cwd=req.get("cwd") or None,
                env=req.get("env"), start_new_session=True,
                preexec_fn=_take_controlling_tty if req.get("pty") else None)
        except (OSError, ValueError, KeyError, subprocess.SubprocessError) as exc:
            self.send({"id": req.get("id"), "error": f"{type(exc).__name__}: {exc}"})
            return
        finally:
            for fd in fds:
                os.close(fd)
        self.send({"id": req.get("id"), "pid": proc.pid})
        threading.Thread(target=self._reap, args=(proc,), daemon=True).start()

    def _reap(self, proc: subprocess.Popen) -> None:
        code = proc.wait()
        try:
            self.send({"exit": proc.pid, "code": code})
        except OSError:
            pass

    def serve(self) -> None:
        while True:
            try:
                frame = recv_frame(self.sock)
            except (OSError, ValueError):
                return
            if frame is None:
                return
            req, fds = frame
            self.spawn(req if isinstance(req, dict) else {}, fds)


def _setup(sock: socket.socket) -> bool:
    """Apply the first frame's Landlock rules (when any) and answer ready/error."""
    frame = recv_frame(sock)
    if frame is None:
        return False
    cfg = frame[0] if isinstance(frame[0], dict) else {}
    try:
        if cfg.get("landlock") is not None:
            from hermes_agent.terminal.sandbox import landlock

            rules = [(str(p), int(r)) for p, r in cfg["landlock"]]
            landlock.apply(rules, network=bool(cfg.get("network", True)))
        elif cfg.get("fence"):
            from hermes_agent.terminal.sandbox import landlock

            landlock.fence()
    except OSError as exc:
        send_frame(sock, {"error": f"landlock: {exc}"})
        return False
    send_frame(sock, {"ready": True, "pid": os.getpid()})
    return True


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    if _setup(sock):
        _Server(sock).serve()


def exec_main() -> None:
    """`sandbox_command` for Landlock: restrict this process with argv[1] (JSON), then exec argv[2:]."""
    cfg = json.loads(sys.argv[1])
    from hermes_agent.terminal.sandbox import landlock

    landlock.apply([(str(p), int(r)) for p, r in cfg["landlock"]], network=bool(cfg.get("network", True)))
    os.execvp(sys.argv[2], sys.argv[2:])
