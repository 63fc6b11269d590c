"""What one no-op tool round trip costs, split into hermes's share and the scripted model server's: `hermes chat
-q` in a loop of read-only `todo` calls (bench_startup.loop_script) against the scripted server.

- gap: median time between two model requests as the server sees them (bench_startup's "no-op tool" figure): the
  server streaming its answer + hermes reading it, running the tool, storing, and sending the next request.
- server alone: the same request bodies replayed over one keep-alive connection by a client that does nothing
  else (bytes prepared beforehand; the answer read to its end): the server's own share of the gap, the floor
  any client meets. `--openai` replays them with the openai SDK too (~35-40 ms a request, ~10 ms of it the SDK's
  own CPU, the rest waiting, with TCP_NODELAY too: a figure of that client, not of the server).
- hermes CPU per round trip: the CPU time of all hermes's threads (the scheduler's ns count, /proc/PID/task/*/
  schedstat) read as request 2 and as the last request arrive, /N: its own work, whatever the load does to the
  wall time. The first 2 round trips are left out of every figure (the first tool call's imports).
With --vs-src DIR the same runs alternate with another source tree (`git archive <commit> src | tar -x -C DIR`).
`--profile FILE` writes a cProfile of hermes's AgentLoop.run over one run (pstats; the top lines are printed).

Usage: python bench/bench_turn.py [--runs 7] [--turns 20] [--vs-src DIR] [--openai] [--profile FILE]"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_startup as bs  # noqa: E402

from hermes_agent.providers.scripted import ScriptedServer  # noqa: E402

SRC = str(Path(__file__).resolve().parent.parent / "src")
SKIP = 2  # round trips not counted: the first tool call loads its modules, the sandbox warm-up starts
_PROFILE = """import cProfile, sys, time
from hermes_agent.core import loop
run = loop.AgentLoop.run
def profiled(self, messages, cancel):
    p = cProfile.Profile(time.thread_time)  # CPU of this thread: a descheduled moment is not charged
    p.enable()
    try:
        return run(self, messages, cancel)
    finally:
        p.disable()
        p.dump_stats({out!r})
loop.AgentLoop.run = profiled
from hermes_agent.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def task_cpu_ns(pid: int) -> int:
    """CPU time so far of every thread of `pid` (the scheduler's nanosecond count, /proc/PID/task/*/schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total


def one(src: str, home: str, turns: int, port: int, prefix: tuple[str, ...] = ()) -> tuple[dict, int]:
    """One `chat -q` whose model asks for `turns` no-op tools: request times and bodies, hermes's CPU (all its
    threads) when each request arrived, and its whole run's CPU seconds (rusage)."""
    pid, cpu_at = [0], []

    def stamped(step: dict):  # noqa: ANN202 - a scripted step answering after noting hermes's CPU so far
        def answer(body: dict) -> dict:
            cpu_at.append(task_cpu_ns(pid[0]) if pid[0] else 0)
            return step
        return answer

    script = [stamped(step) for step in bs.loop_script(turns, "todo")]
    with ScriptedServer(script, default=stamped({"content": "done"}), port=port) as srv:
        port = bs.port_of(srv.url)
        bs.make_home(srv.url, home)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(HERMES_HOME=home, NO_COLOR="1", TERM="dumb", PYTHONPATH=src)
        import subprocess

        proc = subprocess.Popen([*(prefix or (bs.OURS,)), "chat", "-q", "check the todo list"], env=env,
                                cwd=tempfile.mkdtemp(prefix="hermes-bench-cwd-"), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pid[0] = proc.pid
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or len(srv.requests) != turns + 1:
            raise SystemExit(f"bench_turn: a {turns}-turn run of {src} failed ({len(srv.requests)} requests)")
        return {"times": [r["time"] for r in srv.requests], "bodies": [r["body"] for r in srv.requests],
                "cpu": usage.ru_utime + usage.ru_stime, "cpu_at": cpu_at}, port


def gaps_ms(times: list[float]) -> list[float]:
    return [(b - a) * 1000 for a, b in zip(times, times[1:], strict=False)]


def replay_raw(bodies: list[dict], turns: int) -> float:
    """Median gap at the server when a bare keep-alive client sends these bodies (prepared beforehand)."""
    import json

    payloads = [json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode() for b in bodies]
    with ScriptedServer(bs.loop_script(turns, "todo"), default={"content": "done"}) as srv:
        sock = socket.create_connection(("127.0.0.1", bs.port_of(srv.url)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")
        for data in payloads:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
            while reader.readline() not in (b"\r\n", b""):  # status line and headers
                pass
            while True:  # chunked body to its last chunk
                size = int(reader.readline().strip() or b"0", 16)
                reader.read(size + 2)
                if size == 0:
                    break
        sock.close()
        return statistics.median(gaps_ms([r["time"] for r in srv.requests][SKIP:]))


def replay_openai(bodies: list[dict], turns: int) -> float:
    import openai

    with ScriptedServer(bs.loop_script(turns, "todo"), default={"content": "done"}) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key="bench")
        for b in bodies:
            extra = {k: v for k, v in b.items() if k not in ("model", "messages", "stream")}
            for _ in client.chat.completions.create(model=b["model"], messages=b["messages"], stream=True, **extra):
                pass
        return statistics.median(gaps_ms([r["time"] for r in srv.requests]))


def measure(src: str, turns: int, rows: dict, homes: dict, ports: dict) -> None:
    r = rows.setdefault(src, {"gap": [], "cpu": [], "server": []})
    run, ports[src] = one(src, homes[src], SKIP + turns, ports[src])
    r["gap"].append(statistics.median(gaps_ms(run["times"][SKIP:])))
    r["cpu"].append((run["cpu_at"][-1] - run["cpu_at"][SKIP]) / turns / 1e6)
    r["server"].append(replay_raw(run["bodies"], SKIP + turns))
    r["bodies"] = run["bodies"]


def figures(runs: int = 5, turns: int = 20, src: str = SRC) -> dict:
    """Medians for one tree: gap, server alone, gap - server and hermes CPU per round trip (ms)."""
    homes, ports, rows = {src: tempfile.mkdtemp(prefix="hermes-bench-turn-")}, {src: 0}, {}
    one(src, homes[src], 1, ports[src])
    for _ in range(runs):
        measure(src, turns, rows, homes, ports)
    r = rows[src]
    gap, server = statistics.median(r["gap"]), statistics.median(r["server"])
    return {"gap_ms": gap, "server_ms": server, "share_ms": gap - server, "cpu_ms": statistics.median(r["cpu"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--vs-src", help="a second source tree (its src/ on PYTHONPATH) to alternate with")
    ap.add_argument("--openai", action="store_true", help="also replay the bodies with the openai SDK")
    ap.add_argument("--profile", help="write a cProfile of AgentLoop.run (this tree) to this file and print its top")
    args = ap.parse_args()
    trees = [SRC] + ([str(Path(args.vs_src) / "src")] if args.vs_src else [])
    homes = {t: tempfile.mkdtemp(prefix="hermes-bench-turn-") for t in trees}
    ports = {t: 0 for t in trees}
    for t in trees:  # warm-up: bytecode caches, the home's bundled skills and config cache
        one(t, homes[t], 1, ports[t])
    rows: dict = {}
    loads = []
    for _ in range(args.runs):
        for t in trees:
            measure(t, args.turns, rows, homes, ports)
        loads.append(os.getloadavg()[0])
    med = statistics.median
    print(f"no-op tool round trip, {args.turns} turns, {args.runs} runs, 1-min load {min(loads):.1f}-{max(loads):.1f}, "
          f"{time.strftime('%H:%M UTC', time.gmtime())}")
    for t in trees:
        r = rows[t]
        print(f"  {t}: gap {med(r['gap']):.2f} ms | server alone {med(r['server']):.2f} ms | gap - server "
              f"{med(r['gap']) - med(r['server']):.2f} ms | hermes CPU {med(r['cpu']):.2f} ms per round trip "
              f"(runs: gap {sorted(round(x, 2) for x in r['gap'])}, cpu {sorted(round(x, 2) for x in r['cpu'])})")
        if args.openai:
            print(f"    the same bodies through the openai SDK: gap {replay_openai(r['bodies'], args.turns + 2):.2f} ms")
    if args.profile:
        script = Path(tempfile.mkdtemp()) / "profiled_hermes.py"
        script.write_text(_PROFILE.format(out=args.profile), encoding="utf-8")
        one(SRC, homes[SRC], args.turns, ports[SRC], prefix=(sys.executable, str(script)))
        import pstats

        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
