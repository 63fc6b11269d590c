"""What a configured MCP server costs `hermes chat -q hi`: none, a missing binary, one that dies at start,
one that sleeps 5 s before answering initialize, one that ignores SIGTERM (and answers at once).

Usage: .venv/bin/python bench/bench_mcp_start.py [--runs 5] [--cases none,missing,dies,slow,noterm] [--wait 15]
       [--src DIR] [--vs-src DIR]   (paired: A and B run in turn; bytecode written)
Each run is a fresh `hermes chat -q hi` (real CLI) against the scripted model. Reported per case, medians:
  first_ms  process start to the first model request (what the user waits for before anything happens)
  exit_ms   process start to its exit (what a script calling hermes waits for)
  cpu_ms    user + system CPU of the process and its reaped children
and the stderr lines that name the server. `--wait` sets mcp_single_query_discovery_timeout."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hermes_agent.providers.scripted import ScriptedServer  # noqa: E402

HERMES = str(Path(sys.executable).with_name("hermes"))
_TIME = "runpy.run_module('mcp_server_time', run_name='__main__')"
CASES = {
    "none": None,
    "missing": ["/nonexistent/mcp-ghost"],
    "dies": [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"],
    "slow": [sys.executable, "-c", f"import time, runpy; time.sleep(5); {_TIME}"],
    "noterm": [sys.executable, "-c", f"import signal, runpy; signal.signal(signal.SIGTERM, signal.SIG_IGN); {_TIME}"],
}


def config(url: str, argv: list[str] | None, wait: float) -> str:
    text = (f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: k\n"
            f"mcp_single_query_discovery_timeout: {wait:g}\n")
    if argv:
        text += f"mcp_servers:\n  probe:\n    command: {argv[0]}\n    args: {json.dumps(argv[1:])}\n"
    return text


def one(case: str, wait: float, src: str) -> dict:
    model = ScriptedServer(default={"content": "hi there"}).start()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.yaml").write_text(config(model.url, CASES[case], wait), encoding="utf-8")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_")) and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(HERMES_HOME=str(home), PYTHONPATH=src)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        out = subprocess.run([HERMES, "chat", "-q", "hi"], env=env, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        t1 = time.time()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    model.stop()
    first = model.requests[0]["time"] - t0 if model.requests else float("nan")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in out.stderr.splitlines() if "probe" in ln or "Traceback" in ln]
    return {"first": first, "exit": t1 - t0, "cpu": cpu, "rc": out.returncode, "lines": lines,
            "stdout": out.stdout.strip()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--wait", type=float, default=15.0)
    ap.add_argument("--src", default=str(ROOT / "src"), help="the src directory put first on PYTHONPATH (A)")
    ap.add_argument("--vs-src", default="", help="a second src directory (B), run in turn with A")
    args = ap.parse_args()
    trees = [("A", args.src)] + ([("B", args.vs_src)] if args.vs_src else [])
    print(f"load {os.getloadavg()[0]:.2f} at start; " + ", ".join(f"{n} = {src}" for n, src in trees))
    for case in args.cases.split(","):
        runs: dict[str, list[dict]] = {n: [] for n, _ in trees}
        for _ in range(args.runs):
            for name, src in trees:
                runs[name].append(one(case, args.wait, src))
        for name, _ in trees:
            med = {k: statistics.median(r[k] for r in runs[name]) * 1000 for k in ("first", "exit", "cpu")}
            print(f"{case:8s} {name}  first {med['first']:6.0f} ms  exit {med['exit']:6.0f} ms  cpu {med['cpu']:6.0f} ms  "
                  f"rc {runs[name][-1]['rc']}  out {runs[name][-1]['stdout']!r}")
            for line in runs[name][-1]["lines"]:
                print(f"           | {line}")
    print(f"load {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
