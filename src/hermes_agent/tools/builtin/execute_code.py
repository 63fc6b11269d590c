"""`execute_code`: a Python script that calls tools as functions (`from hermes_tools import terminal, ...`).
The script runs through the task's local terminal backend, so inside its OS sandbox, under CPU-time, memory
and output-size limits (ulimit) and a wall-clock timeout. Nothing goes through a path: the script and the
`hermes_tools` stub arrive on an anonymous file (fd 6), each tool call comes back over one end of a
socketpair (fd 5) to this process and runs through the normal dispatch path (approval, path policy, caps),
up to a call limit.
Config: `code_execution.timeout` (300 s), `max_tool_calls` (50), `cpu_seconds` (= timeout), `memory_mb`
(2048), `max_output_bytes` (50,000 kept; the script is killed past 20 MB)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sys
import time

from hermes_agent import paths
from hermes_agent.approval.subject import ApprovalSubject, heredoc
from hermes_agent.config.schema import CodeExecutionCfg
from hermes_agent.tools.builtin._coderpc import (
    RPC_FD,
    SIGNATURES,
    RpcServer,
    build_schema,
    script_tools,
    stub_module,
)
from hermes_agent.tools.provenance import code_fetches, code_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

_KILL_BYTES = 20 * 2**20
# The script's stdout/stderr count what they write: past _KILL_BYTES the script is stopped (exit 153) with a
# note. ulimit -f backs this for child processes (Python itself ignores SIGXFSZ; the default is restored).
_PAYLOAD_FD = 6
_RUNNER = f"""import json, linecache, os, signal, sys, types
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
with os.fdopen({_PAYLOAD_FD}, "rb") as _f:
    _p = json.loads(_f.read())
_m = types.ModuleType("hermes_tools")
exec(compile(_p["stub"], "hermes_tools.py", "exec"), _m.__dict__)
sys.modules["hermes_tools"] = _m
linecache.cache["script.py"] = (len(_p["script"]), None, _p["script"].splitlines(True), "script.py")
class _Capped:
    def __init__(self, raw):
        self.raw, self.n = raw, 0
    def write(self, s):
        self.n += len(s)
        if self.n > {_KILL_BYTES}:
            self.raw.flush()
            os.write(2, b"\\n[output limit reached: script stopped]\\n")
            os._exit(153)
        return self.raw.write(s)
    def __getattr__(self, name):
        return getattr(self.raw, name)
sys.stdout, sys.stderr = _Capped(sys.stdout), _Capped(sys.stderr)
sys.argv = ["script.py"]
_code = compile(_p.pop("script"), "script.py", "exec")
del _f, _m, _p
exec(_code, {{"__name__": "__main__", "__file__": "script.py", "__builtins__": __builtins__}})
"""


def _limits(conf: CodeExecutionCfg) -> tuple[float, int, int, int, int]:
    cpu = conf.cpu_seconds if conf.cpu_seconds is not None else max(1, int(conf.timeout))
    return conf.timeout, conf.max_tool_calls, cpu, conf.memory_mb, conf.max_output_bytes


def _cap(text: str, limit: int) -> tuple[str, dict]:
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, {}
    head, tail = data[: int(limit * 0.4)], data[-(limit - int(limit * 0.4)):]
    cut = len(data) - len(head) - len(tail)
    return (head.decode("utf-8", "ignore") + f"\n...[{cut} bytes of output cut]...\n" + tail.decode("utf-8", "ignore"),
            {"output_truncated": True, "output_bytes": len(data)})


def run_script(code: str, ctx: object) -> str:
    """Run `code` for the agent of `ctx`; the JSON result the model sees."""
    from hermes_agent.tools.confined import CONFINED_ORIGIN
    from hermes_agent.tools.dispatch import handle_function_call

    backend = ctx.backend()  # type: ignore[attr-defined]
    if backend.kind != "local" or not hasattr(backend, "scratch_dir"):  # fds reach only local children
        return tool_error(f"execute_code needs the local terminal backend; this task uses {backend.kind}: "
                          "use the terminal tool instead")
    offered = getattr(ctx, "offered", frozenset()) or frozenset(SIGNATURES)
    allowed = set(script_tools(offered))
    timeout, max_calls, cpu, mem_mb, keep = _limits(ctx.settings.cfg.code_execution)  # type: ignore[attr-defined]
    python = shutil.which("python3", path=paths.user_path()) or sys.executable

    def dispatch(name: str, args: dict) -> str:  # the script's call: the confined side's (tools/context.py)
        token = CONFINED_ORIGIN.set("execute_code")
        try:
            return handle_function_call(name, args, ctx.task_id, ctx=ctx)  # type: ignore[attr-defined]
        finally:
            CONFINED_ORIGIN.reset(token)

    # CPU: soft limit first (SIGXCPU, exit 152: "CPU-time limit reached"), the hard one a second later (SIGKILL);
    # equal limits would SIGKILL at once and read as "killed (memory or signal)"
    command = (f"ulimit -v {mem_mb * 1024} -f {_KILL_BYTES // 1024} 2>/dev/null; "
               f"ulimit -S -t {cpu} 2>/dev/null; ulimit -H -t {cpu + 1} 2>/dev/null; "
               f"PYTHONDONTWRITEBYTECODE=1 {shlex.quote(python)} -u -c {shlex.quote(_RUNNER)}")
    payload = json.dumps({"stub": stub_module(sorted(allowed), RPC_FD), "script": code}).encode()
    keep_work = getattr(ctx, "keep_uncommitted", None)
    if keep_work is not None:  # the script may destroy uncommitted work as a command can (storage/dirtyguard.py)
        keep_work(backend.cwd(), "execute_code: " + code[:200])
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    payload_fd = os.memfd_create("hermes-code", os.MFD_CLOEXEC)
    started = time.monotonic()
    try:
        os.write(payload_fd, payload)
        os.lseek(payload_fd, 0, os.SEEK_SET)
        with RpcServer(mine, allowed, max_calls, dispatch) as rpc:
            res = backend.execute(command, timeout=timeout, interrupt=ctx.interrupt,  # type: ignore[attr-defined]
                                  fds=(theirs.fileno(), payload_fd))
            calls = list(rpc.calls)
            if rpc.refused:  # the model learns why the script's later calls got nothing
                calls.append({"tool": rpc.refused, "ms": 0, "error": True, "refused": True})
    finally:
        theirs.close()
        os.close(payload_fd)
    return _result(res, calls, time.monotonic() - started, keep, timeout, cpu, mem_mb)


def _result(res, calls: list[dict], took: float, keep: int, timeout: float, cpu: int, mem_mb: int) -> str:  # type: ignore[no-untyped-def]
    output, meta = _cap(res.output, keep)
    status = "timeout" if res.timed_out else "interrupted" if res.interrupted else \
        "success" if res.exit_code == 0 else "error"
    made = [c for c in calls if not c.get("refused")]
    out = {"status": status, "output": output, "exit_code": res.exit_code, "tool_calls_made": len(made),
           "duration_seconds": round(took, 2), **meta}
    reasons = {152: f"CPU-time limit reached ({cpu}s)", 153: "output limit reached (script killed past 20 MB)",
               137: f"killed: CPU-time limit ({cpu}s), memory limit ({mem_mb} MB) or a signal"}
    if status == "timeout":
        out["error"] = f"script stopped after {timeout:g}s (code_execution.timeout)"
    elif status == "error" and res.exit_code in reasons:
        out["error"] = reasons[res.exit_code]
    elif status == "error" and "MemoryError" in res.output:
        out["error"] = f"memory limit reached ({mem_mb} MB)"
    if calls:
        out["tool_log"] = [c["tool"] if c.get("refused") else f"{c['tool']} {'failed' if c['error'] else 'ok'} {c['ms']}ms"
                           for c in calls[:50]]
    return json.dumps(out, ensure_ascii=False)


def _handle(args: dict, **kw: object) -> str:
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return tool_error("code is required (a Python script)")
    return run_script(code, kw["ctx"])


def code_subject(args: dict) -> ApprovalSubject | None:
    """The gate judges the script like a command: its rules see the source, and with no OS sandbox here the
    script asks like any uncontained command."""
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return None
    return ApprovalSubject(command=heredoc("python3 -", code, "HERMES_EXECUTE_CODE"))  # judged as python, by effect


registry.register("execute_code", "code_execution", build_schema(frozenset(SIGNATURES)), _handle, emoji="🐍",
                  parallel_safe=False, preview_arg="code", dynamic_schema=build_schema, approval="command",
                  approval_subject=code_subject, persists=code_persists, untrusted_output=code_fetches)
