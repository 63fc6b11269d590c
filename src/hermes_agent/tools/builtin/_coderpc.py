"""execute_code's two halves: the `hermes_tools` module a script imports (generated, one function per allowed
tool, each a JSON line over an inherited socket: one end of a socketpair this process made, the script's fd
RPC_FD; no path, no token) and the parent's RPC server, which runs every call through `handle_function_call`
(approval gate, path policy, sandbox, result caps) and counts them."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable

from hermes_agent.messages import safe_loads
from hermes_agent.tools.registry import registry

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

def script_tools(offered: frozenset[str] | set[str]) -> list[str]:
    """The tools a script may call: the script-API tools this agent offers; when it offers none of them
    (`-t code_execution` alone), every one available here, so the script still has terminal, files, web."""
    chosen = [t for t in SIGNATURES if t in offered]
    if chosen:
        return chosen
    from hermes_agent.tools.discovery import discover_builtin_tools

    discover_builtin_tools()  # the run imported only its toolsets' modules: load the script API's tools too
    ok = registry.availability(SIGNATURES)
    return [t for t in SIGNATURES if ok.get(t)]


def build_schema(present: frozenset[str] | set[str]) -> dict:
    """The schema listing only the script tools this agent offers (seeds: dynamic schema patching)."""
    tools = script_tools(present)
    listing = "\n".join(f"{t}({SIGNATURES[t][0]}) {SIGNATURES[t][1]}".rstrip() for t in tools) or "(none here)"
    return {
        "name": "execute_code",
        "description": (
            "Run Python that calls tools as functions; only stdout comes back. For 3+ tool calls with logic "
            f"between them, loops, or shrinking big outputs. `from hermes_tools import ...`:\n{listing}\n"
            "Also json_parse(text), shell_quote(s), retry(fn, max_attempts=3, delay=2). Sandboxed, in the "
            "working directory; limits 5 min, 50 tool calls, 50 KB stdout. print() the result."
        ),
        "parameters": {"type": "object", "properties": {"code": {"type": "string"}},
                       "required": ["code"]},
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


RPC_FD = 5  # the script's end of the socketpair (fds 3 and 4 carry the shell's state)
MAX_LINE = 8 << 20  # one call's JSON line; past it the script's tool calls end (rt12 a17: 16 MB stalled the turn)


def stub_module(tools: list[str], rpc_fd: int = RPC_FD) -> str:
    """Source of the hermes_tools module for `tools` (each must be in SIGNATURES)."""
    lines = ["import json, shlex, socket, threading, time", f"_SOCK = socket.socket(fileno={rpc_fd})",
             "_LOCK = threading.Lock()", "",
             "def _call(tool, args):",
             "    args = {k: v for k, v in args.items() if v is not None}",
             "    with _LOCK:",
             "        _SOCK.sendall(json.dumps({'tool': tool, 'args': args}).encode() + b'\\n')",
             "        data = b''",
             "        while not data.endswith(b'\\n'):",
             "            chunk = _SOCK.recv(65536)",
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


class RpcServer:
    """Serves one script's tool calls, one JSON line each, in order, on `sock` (this side of a socketpair
    whose other end only the script holds); `dispatch(name, args)` returns the tool's JSON text."""

    def __init__(self, sock: socket.socket, allowed: set[str], max_calls: int,
                 dispatch: Callable[[str, dict], str]) -> None:
        self.allowed, self.max_calls, self.dispatch = allowed, max_calls, dispatch
        self.calls: list[dict] = []
        self.refused = ""  # why the script's tool calls were ended, for the result
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="execute-code-rpc", daemon=True)

    def __enter__(self) -> RpcServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            if len(buf) > MAX_LINE and b"\n" not in buf[:MAX_LINE + 1]:
                self._refuse(f"a tool call over {MAX_LINE >> 20} MB: the script's tool calls were ended")
                return
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    req = safe_loads(line)
                except ValueError:
                    req = {}
                result = self._result(req if isinstance(req, dict) else {})
                try:
                    self._sock.sendall(json.dumps(result).encode() + b"\n")
                except OSError:
                    return

    def _refuse(self, why: str) -> None:
        """Answer once and close the channel, so the script's pending send or receive fails now rather than
        holding the turn until the script's time limit."""
        self.refused = why
        try:
            self._sock.sendall(json.dumps(json.dumps({"error": why})).encode() + b"\n")
        except OSError:
            pass
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _result(self, req: dict) -> str:
        name, args = str(req.get("tool") or ""), req.get("args") if isinstance(req.get("args"), dict) else {}
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
