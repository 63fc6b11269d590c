"""MCP start-up benchmark: 3 servers connect in the background; the first prompt must not wait for them.

Usage: .venv/bin/python bench/bench_mcp.py [--runs 5] [--everything PATH]
Each run is a fresh process (cold `mcp` import). Reported per run, then medians:
  start_ms      time for McpManager.start() to return (what the user's first prompt waits for)
  ready_ms      until every server's tools are in the registry
  first_defs_ms time to build the tool definitions right after start() (the first request)
  busy_ms       a fixed 300 ms pure-Python workload on the main thread, alone vs while servers connect
                (background work shares the GIL: this is the real cost to the first prompt)
  call_ms       median latency of 20 tool calls per server; restart_ms after SIGKILL of one server.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DYNAMIC = ROOT / "tests" / "fixtures" / "mcp_dynamic_server.py"


def _busy(ms: float = 300.0) -> float:
    """Run a fixed amount of pure-Python work (calibrated to ~`ms` alone) and return its duration."""
    n = int(os.environ.get("BENCH_BUSY_N", "0"))
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return (time.perf_counter() - t0) * 1000


def _calibrate(target_ms: float = 300.0) -> int:
    n = 200_000
    while True:
        os.environ["BENCH_BUSY_N"] = str(n)
        took = _busy()
        if took > 50:
            return int(n * target_ms / took)
        n *= 4


def _servers(everything: str | None) -> dict:
    servers = {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
               "dyn": {"command": sys.executable, "args": [str(DYNAMIC)]}}
    if everything:
        servers["everything"] = {"command": everything}
    else:
        servers["time2"] = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    return servers


def _child_pid(marker: str) -> int:
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me and marker in cmd:
                return int(entry)
    raise RuntimeError(f"no child process matching {marker}")


def child(everything: str | None) -> dict:
    """One cold measurement (runs in a fresh interpreter)."""
    busy_alone = _busy()
    from hermes_agent.tools.mcp.config import parse_server
    from hermes_agent.tools.mcp.manager import McpManager
    from hermes_agent.tools.registry import registry

    cfgs = [parse_server(n, raw) for n, raw in _servers(everything).items()]
    t0 = time.perf_counter()
    manager = McpManager(cfgs, backoff_base=0.2).start()
    start_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    registry.get_definitions(registry.names())
    first_defs_ms = (time.perf_counter() - t1) * 1000
    busy_during = _busy()
    ok = manager.wait_ready(60)
    ready_ms = (time.perf_counter() - t0) * 1000
    status = {n: {"connect_ms": round(s.connect_ms), "list_ms": round(s.list_ms, 1), "tools": len(s.tools)}
              for n, s in manager.status().items()}
    calls = {}
    for name, tool, args in (("time", "mcp__time__get_current_time", {"timezone": "UTC"}),
                             ("dyn", "mcp__dyn__pid", {}), ("everything", "mcp__everything__echo", {"message": "x"})):
        if registry.get(tool) is None:
            continue
        lat = []
        for _ in range(20):
            tc = time.perf_counter()
            registry.dispatch(tool, args)
            lat.append((time.perf_counter() - tc) * 1000)
        calls[name] = round(statistics.median(lat), 2)
    pid = _child_pid("mcp_dynamic_server")
    connects = manager.status()["dyn"].connects
    tk = time.perf_counter()
    os.kill(pid, signal.SIGKILL)
    while manager.status()["dyn"].connects == connects and time.perf_counter() - tk < 30:
        time.sleep(0.01)
    restart_ms = (time.perf_counter() - tk) * 1000
    manager.shutdown()
    return {"ok": ok, "start_ms": round(start_ms, 2), "first_defs_ms": round(first_defs_ms, 2),
            "ready_ms": round(ready_ms), "busy_alone_ms": round(busy_alone), "busy_during_ms": round(busy_during),
            "tools": len(registry.names()) if not ok else sum(s["tools"] for s in status.values()),
            "servers": status, "call_ms": calls, "restart_ms": round(restart_ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--everything", default=os.environ.get("HERMES_TEST_MCP_EVERYTHING"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.everything)))
        return
    n = _calibrate()
    env = {**os.environ, "BENCH_BUSY_N": str(n), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, __file__, "--child"] + (["--everything", args.everything] if args.everything else [])
    runs = []
    for i in range(args.runs):
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
        if out.returncode != 0:
            sys.exit(f"run {i} failed:\n{out.stderr[-2000:]}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"run {i + 1}: {runs[-1]}")
    med = {k: statistics.median(r[k] for r in runs) for k in
           ("start_ms", "first_defs_ms", "ready_ms", "busy_alone_ms", "busy_during_ms", "restart_ms")}
    servers = ", ".join(runs[0]["servers"])
    print(f"\n3 MCP servers ({servers}), {args.runs} cold runs, medians:")
    print(f"  start() returns in {med['start_ms']:.2f} ms; first tool definitions built in {med['first_defs_ms']:.2f} ms")
    print(f"  all tools registered after {med['ready_ms']:.0f} ms (in the background)")
    print(f"  300 ms main-thread workload: {med['busy_alone_ms']:.0f} ms alone, {med['busy_during_ms']:.0f} ms "
          "while servers connect")
    print(f"  restart after SIGKILL: {med['restart_ms']:.0f} ms; call latency (ms): {runs[-1]['call_ms']}")


if __name__ == "__main__":
    main()
