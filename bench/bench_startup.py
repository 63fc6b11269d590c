"""Start-up, per-turn overhead, memory and request size of `hermes`, optionally vs Hermes 0.19.0.

Usage: python bench/bench_startup.py [--runs 5] [--compare] [--hermes-bin /work/hermes-ref/bin/hermes]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_agent.providers.scripted import ScriptedServer

OURS = str(Path(sys.executable).with_name("hermes"))


def spawn(cmd: list[str], home: str, cwd: str) -> tuple[float, float, float, int]:
    """Run a command; return (start time, wall seconds, peak RSS MiB, exit code)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached after the warm-up run
    env.update(HERMES_HOME=home, NO_COLOR="1", TERM="dumb")
    start = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return start, wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def make_home(url: str, home: str | None = None, rewrite: bool = False) -> str:
    """A home whose config.yaml points at `url`; the file is left alone when it already says that (a user's
    config between runs: its parsed JSON copy stays valid), unless `rewrite` (every run after a config edit)."""
    home = home or tempfile.mkdtemp(prefix="hermes-bench-")
    config = Path(home, "config.yaml")
    text = (f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: bench-key\n"
            "  context_length: 128000\n")
    if rewrite or not config.exists() or config.read_text(encoding="utf-8") != text:
        config.unlink(missing_ok=True)  # a new inode and mtime: config.yaml's JSON copy no longer matches
        config.write_text(text, encoding="utf-8")
    return home


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def case(binary: str, script: list[dict], args: list[str], runs: int, rewrite_config: bool = False) -> dict:
    """Median wall/first-request/RSS and the median gap between model requests over `runs` runs. The model
    keeps its port across the runs, so config.yaml is unchanged after the warm-up run (a user's steady state);
    `rewrite_config`: config.yaml written anew before every run (the first run after an edit)."""
    walls, firsts, rsss, gaps, sizes, codes = [], [], [], [], [], []
    home = None  # one home per case: the warm-up run seeds it, as a user's home is after the first run
    port = 0
    for i in range(runs + 1):
        with ScriptedServer(list(script), default={"content": "done"}, port=port) as srv:
            port = port_of(srv.url)
            home = make_home(srv.url, home, rewrite=rewrite_config)
            cwd = tempfile.mkdtemp(prefix="hermes-bench-cwd-")
            start, wall, rss, code = spawn([binary, *args], home, cwd)
            if i == 0:
                continue  # warm-up: writes bytecode caches, seeds bundled skills
            codes.append(code)
            walls.append(wall)
            rsss.append(rss)
            if srv.requests:
                firsts.append(srv.requests[0]["time"] - start)
                first = srv.requests[0]  # bytes as sent on the wire (re-encoded when the server did not count them)
                sizes.append(first.get("bytes") or len(json.dumps(first["body"]).encode()))
                times = [r["time"] for r in srv.requests]
                gaps.extend(b - a for a, b in zip(times, times[1:], strict=False))
    med = statistics.median
    return {"wall_s": med(walls), "first_request_s": med(firsts) if firsts else None, "peak_rss_mib": med(rsss),
            "gap_ms": med(gaps) * 1000 if gaps else None, "first_body_bytes": med(sizes) if sizes else None,
            "exit_codes": sorted(set(codes)), "requests": len(srv.requests)}


def loop_script(n: int, tool: str) -> list[dict]:
    if tool == "terminal":
        return [{"tool_calls": [{"name": "terminal", "arguments": {"command": f"echo {i}"}}]} for i in range(n)]
    # the read-only todo call, its arguments alternating: the same call 5 times in a row ends the loop (the
    # repeat guard's warning), so identical calls measured 5 turns, not n
    return [{"tool_calls": [{"name": "todo", "arguments": {"merge": True} if i % 2 else {}}]} for i in range(n)]


def measure(binary: str, runs: int, label: str) -> dict:
    print(f"-- {label}: {binary}", file=sys.stderr)
    version = [spawn([binary, "--version"], tempfile.mkdtemp(), "/tmp")[1] for _ in range(runs)]
    hi = case(binary, [{"content": "hi"}], ["chat", "-q", "say hi"], runs)
    echo = case(binary, loop_script(20, "terminal"), ["chat", "-q", "run the 20 echos"], max(3, runs // 2))
    noop = case(binary, loop_script(20, "todo"), ["chat", "-q", "check the todo list 20 times"], max(3, runs // 2))
    return {"version_s": statistics.median(version), "say_hi": hi, "echo_loop": echo, "noop_loop": noop}


def show(name: str, r: dict) -> None:
    hi, echo, noop = r["say_hi"], r["echo_loop"], r["noop_loop"]
    body = hi["first_body_bytes"] or 0
    print(f"{name:>10}: --version {r['version_s'] * 1000:.0f} ms | chat -q wall {hi['wall_s'] * 1000:.0f} ms, "
          f"first request {hi['first_request_s'] * 1000:.0f} ms, peak RSS {hi['peak_rss_mib']:.0f} MiB | "
          f"per turn: echo {echo['gap_ms']:.1f} ms, no-op tool {noop['gap_ms']:.1f} ms | "
          f"first request {body} B (~{body // 4} tokens) | exits {hi['exit_codes']}/{echo['exit_codes']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", action="store_true", help="also run the released Hermes 0.19.0")
    ap.add_argument("--hermes-bin", default="/work/hermes-ref/bin/hermes")
    ap.add_argument("--json", help="write results to this file")
    args = ap.parse_args()
    results = {"ours": measure(OURS, args.runs, "hermes-agent (this repo)")}
    if args.compare:
        results["hermes_0_19"] = measure(args.hermes_bin, args.runs, "Hermes 0.19.0")
    for name, r in results.items():
        show(name, r)
    if args.compare:
        a, b = results["ours"], results["hermes_0_19"]
        ratio = lambda x, y: (y / x) if x else float("nan")  # noqa: E731
        print(f"ratios (Hermes / ours): --version {ratio(a['version_s'], b['version_s']):.1f}x, first request "
              f"{ratio(a['say_hi']['first_request_s'], b['say_hi']['first_request_s']):.1f}x, per-turn echo "
              f"{ratio(a['echo_loop']['gap_ms'], b['echo_loop']['gap_ms']):.1f}x, no-op "
              f"{ratio(a['noop_loop']['gap_ms'], b['noop_loop']['gap_ms']):.1f}x, RSS "
              f"{ratio(a['say_hi']['peak_rss_mib'], b['say_hi']['peak_rss_mib']):.1f}x, request bytes "
              f"{ratio(a['say_hi']['first_body_bytes'], b['say_hi']['first_body_bytes']):.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
