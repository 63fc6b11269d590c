"""Interactive REPL latency: launch-to-prompt time, and keystroke-to-echo latency while idle and while a
turn streams, for `hermes` in a pseudo-terminal (pexpect) against the scripted server on loopback.

Usage: python bench/bench_repl.py [--runs 5] [--keys 15] [--compare] [--ref-bin /work/hermes-ref/bin/hermes]
`--compare` also measures the released Hermes 0.19.0 (its own venv) in the same run."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from hermes_agent.providers.scripted import ScriptedServer

OURS = str(Path(sys.executable).with_name("hermes"))
REF = "/work/hermes-ref/bin/hermes"
KEYS = "QWXZJKVYBNMPGHF"  # never in the streamed text, the spinner line or the prompt


def make_home(url: str) -> str:
    home = tempfile.mkdtemp(prefix="hermes-bench-repl-")
    Path(home, "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: bench-key\n",
        encoding="utf-8")
    return home


def spawn(binary: str, home: str, cwd: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=home, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(binary, [], env=env, cwd=cwd, dimensions=(40, 120), encoding="utf-8",
                          codec_errors="replace", timeout=60)
    child.delaybeforesend = None
    return child


def read_until(child: pexpect.spawn, needle: str, timeout: float) -> float | None:
    """Seconds until `needle` shows up in new output, or None on timeout."""
    t0 = time.perf_counter()
    seen = ""
    while time.perf_counter() - t0 < timeout:
        try:
            seen += child.read_nonblocking(65536, timeout=0.005)
        except pexpect.TIMEOUT:
            continue
        if needle in seen:
            return time.perf_counter() - t0
    return None


def stop(child: pexpect.spawn) -> None:
    child.sendcontrol("c")
    child.sendcontrol("d")
    time.sleep(0.2)
    if child.isalive():
        child.terminate(force=True)


EDITOR_ON = "\x1b[?2004h"  # bracketed paste switched on: a line editor reads keys in raw mode (ours: the first
# line's editor, cli/early_line.py, with the prompt symbol; before it, or in another program: prompt_toolkit)
FULL_ON = "\x1b[?7l"  # prompt_toolkit's first render (autowrap off): completion and the live region work


def cpu_ms(pid: int) -> float:
    """CPU time the process has had so far, all its threads (the scheduler's ns in /proc/PID/task/*/schedstat, read
    as the marker arrives: a few ms late at most), load-independent where wall time is not on a shared machine."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e6


def startup(binary: str, runs: int, ready_marker: str | None) -> dict:
    """Median seconds from spawn to the `❯` prompt, to a line editor reading keys in raw mode (ours: the first
    line's editor; keys typed before any editor are echoed and kept by the terminal), to prompt_toolkit's first
    render (completion, live region), and to the agent-ready line when given."""
    prompts, editors, fulls, readies = [], [], [], []
    prompt_cpu, full_cpu = [], []
    with ScriptedServer([]) as srv:
        home, cwd = make_home(srv.url), tempfile.mkdtemp(prefix="hermes-bench-cwd-")
        for _ in range(runs):
            t0 = time.perf_counter()
            child = spawn(binary, home, cwd)
            child.expect("❯", timeout=60)
            prompts.append(time.perf_counter() - t0)
            prompt_cpu.append(cpu_ms(child.pid))
            if child.before is not None and EDITOR_ON in child.before + (child.after or ""):
                editors.append(prompts[-1])  # (a program without an early prompt)
            else:
                child.expect_exact(EDITOR_ON, timeout=60)
                editors.append(time.perf_counter() - t0)
            seen = (child.before or "") + (child.after or "")
            if FULL_ON not in seen:
                child.expect_exact(FULL_ON, timeout=60)
            fulls.append(time.perf_counter() - t0)
            full_cpu.append(cpu_ms(child.pid))
            if ready_marker:
                child.expect(ready_marker, timeout=60)
                readies.append(time.perf_counter() - t0)
            stop(child)
    out = {"prompt_s": statistics.median(prompts), "prompt_all_s": [round(p, 3) for p in prompts],
           "line_editor_s": statistics.median(editors), "prompt_toolkit_s": statistics.median(fulls),
           "prompt_cpu_ms": statistics.median(prompt_cpu), "prompt_toolkit_cpu_ms": statistics.median(full_cpu)}
    if readies:
        out["agent_ready_s"] = statistics.median(readies)
    return out


def keystrokes(binary: str, n: int, streaming: bool) -> dict:
    """Keystroke-to-echo latency at the prompt, idle or while an answer streams (40 chunks/s)."""
    words = " ".join(["lorem"] * 600)
    stream_started = 0.0
    with ScriptedServer([{"content": words, "chunk_delay": 0.025}], default={"content": "done"}) as srv:
        home, cwd = make_home(srv.url), tempfile.mkdtemp(prefix="hermes-bench-cwd-")
        child = spawn(binary, home, cwd)
        try:
            child.expect("❯", timeout=60)
            time.sleep(1.5)  # let a background build finish so idle means idle
            if streaming:
                child.send("write a lot\r")
                if read_until(child, "lorem", 30) is None:
                    return {"error": "the answer never started streaming"}
                stream_started = time.perf_counter()
                time.sleep(0.3)
            lat = []
            for key in KEYS[:n]:
                child.send(key)
                took = read_until(child, key, 3.0)
                if took is not None:
                    lat.append(took * 1000)
                time.sleep(0.12)
            # 600 chunks at 25 ms: the answer streams for ~15 s after its first word
            still_streaming = streaming and time.perf_counter() - stream_started < 600 * 0.025
        finally:
            stop(child)
    if not lat:
        return {"error": "no keystroke was echoed"}
    lat.sort()
    return {"median_ms": statistics.median(lat), "p95_ms": lat[max(0, int(len(lat) * 0.95) - 1)],
            "max_ms": lat[-1], "echoed": f"{len(lat)}/{n}", "during_stream": still_streaming if streaming else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=15)
    parser.add_argument("--compare", action="store_true", help="also measure the released Hermes 0.19.0")
    parser.add_argument("--hermes-bin", default=OURS)
    parser.add_argument("--ref-bin", default=REF)
    parser.add_argument("--only-keys", action="store_true", help="skip the start-up runs")
    parser.add_argument("--only-startup", action="store_true", help="launch to prompt only (no keystroke runs)")
    args = parser.parse_args()
    if args.only_startup:
        print(json.dumps({"startup": startup(args.hermes_bin, args.runs, r"tools from \d+ toolset")}, indent=2,
                         default=lambda v: round(v, 3) if isinstance(v, float) else str(v)))
        return 0
    if args.only_keys:
        print(json.dumps({"keys_streaming": keystrokes(args.hermes_bin, args.keys, streaming=True)}, indent=2))
        return 0
    results: dict[str, dict] = {"ours": {
        "startup": startup(args.hermes_bin, args.runs, r"tools from \d+ toolset"),
        "keys_idle": keystrokes(args.hermes_bin, args.keys, streaming=False),
        "keys_streaming": keystrokes(args.hermes_bin, args.keys, streaming=True),
    }}
    if args.compare and Path(args.ref_bin).exists():
        results["hermes_0.19.0"] = {
            "startup": startup(args.ref_bin, args.runs, None),
            "keys_idle": keystrokes(args.ref_bin, args.keys, streaming=False),
            "keys_streaming": keystrokes(args.ref_bin, args.keys, streaming=True),
        }
        ratio = results["hermes_0.19.0"]["startup"]["prompt_s"] / results["ours"]["startup"]["prompt_s"]
        results["launch_to_prompt_speedup"] = {"x": round(ratio, 1)}
    print(json.dumps(results, indent=2, default=lambda v: round(v, 3) if isinstance(v, float) else str(v)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
