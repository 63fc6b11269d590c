"""execute_code's two halves: the `hermes_tools` module a script imports (generated, one function per allowed
tool, each a JSON line over a Unix socket) and the parent's RPC server, which runs every call through
`handle_function_call` (approval gate, path policy, sandbox, result caps) and counts them."""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable

# Tools a script may call, with the Python signature its stub takes (Hermes's seven).
SIGNATURES: dict[str, tuple[str, str]] = {
    "terminal": ("command, timeout=None, workdir=None", "-> {output, exit_code} (foreground only)"),
    "read_file": ("path, offset=1, limit=500", "-> {content, total_lines}"),
    "write_file": ("path, content", ""),
    "patch": ("path, old_string, new_string, replace_all=False", ""),
    "search_files": ("pattern, target='content', path='.', file_glob=None, limit=50", "-> {matches}"),
    "web_search": ("query, limit=5", "-> results"),
    "web_extract": ("urls, char_limit=None", "-> {results: [{url, title, content}]}"),
}

_HELPERS = '''
def json_parse(text):
    return json.loads(text, strict=False)


def shell_quote(s):
    return shlex.quote(str(s))


def retry(fn, max_attempts=3, delay=2):
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception:
            if attempt == max_attempts - 1:
                raise
            time.sleep(delay * 2 ** attempt)
'''


def stub_module(tools: list[str], sock_path: str, token: str) -> str:
    """Source of hermes_tools.py for `tools` (each must be in SIGNATURES)."""
    lines = ["import json, shlex, socket, time", f"_SOCK = {sock_path!r}", f"_TOKEN = {token!r}", "",
             "def _call(tool, args):",
             "    args = {k: v for k, v in args.items() if v is not None}",
             "    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:",
             "        s.connect(_SOCK)",
             "        s.sendall(json.dumps({'token': _TOKEN, 'tool': tool, 'args': args}).encode() + b'\\n')",
             "        data = b''",
             "        while not data.endswith(b'\\n'):",
             "            chunk = s.recv(65536)",
             "            if not chunk:",
             "                break",
             "            data += chunk",
             "    text = json.loads(data or b'\"{}\"')",
             "    try:",
             "        return json.loads(text, strict=False)",
             "    except ValueError:",
             "        return {'output': text}", ""]
    for name in tools:
        params = SIGNATURES[name][0]
        names = [p.split("=")[0].strip() for p in params.split(",")]
        body = ", ".join(f"{n!r}: {n}" for n in names)
        lines += [f"def {name}({params}):", f"    return _call({name!r}, {{{body}}})", ""]
    return "\n".join(lines) + _HELPERS


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _peer_is_ours(conn: socket.socket) -> bool:
    """True when the connecting process descends from this one. The token alone is not enough: another
    session's script (same uid) can read this script's stub from the shared /tmp, but it cannot make itself a
    descendant of this process, so it cannot run tools in this session (its cwd, approvals, call budget)."""
    try:
        pid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
    except (OSError, AttributeError, struct.error):
        return False
    me, seen = os.getpid(), 0
    while pid > 1 and seen < 64:
        if pid == me:
            return True
        pid, seen = _parent(pid), seen + 1
    return False


class RpcServer:
    """Serves one script's tool calls on a Unix socket; `dispatch(name, args)` returns the tool's JSON text."""

    def __init__(self, sock_path: str, token: str, allowed: set[str], max_calls: int,
                 dispatch: Callable[[str, dict], str]) -> None:
        self.path, self.token, self.allowed, self.max_calls = sock_path, token, allowed, max_calls
        self.dispatch = dispatch
        self.calls: list[dict] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(sock_path)
        os.chmod(sock_path, 0o600)
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="execute-code-rpc", daemon=True)

    def __enter__(self) -> RpcServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                if _peer_is_ours(conn):
                    self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        data = b""
        try:
            while not data.endswith(b"\n") and len(data) < 10_000_000:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            req = json.loads(data)
        except (OSError, ValueError):
            return
        result = self._result(req if isinstance(req, dict) else {})
        try:
            conn.sendall(json.dumps(result).encode() + b"\n")
        except OSError:
            pass

    def _result(self, req: dict) -> str:
        name, args = str(req.get("tool") or ""), req.get("args") if isinstance(req.get("args"), dict) else {}
        if req.get("token") != self.token:
            return json.dumps({"error": "unauthorised RPC request"})
        if name not in self.allowed:
            return json.dumps({"error": f"tool {name!r} is not available to scripts here"})
        if len(self.calls) >= self.max_calls:
            return json.dumps({"error": f"tool-call limit reached ({self.max_calls} per script)"})
        params = {p.split("=")[0].strip() for p in SIGNATURES[name][0].split(",")} if name in SIGNATURES else set()
        args = {k: v for k, v in args.items() if k in params}  # the script API's arguments only (foreground, sandboxed)
        started = time.monotonic()
        out = self.dispatch(name, args)
        self.calls.append({"tool": name, "ms": round((time.monotonic() - started) * 1000),
                           "error": '"error"' in out[:200]})
        return out
