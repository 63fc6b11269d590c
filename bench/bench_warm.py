"""The sandbox warm-up (bootstrap/warm.py) as a user meets it: `hermes chat -q` against a scripted model whose
first reply takes --think seconds. `first command`: from that reply (a terminal `echo`) to the next request, i.e.
what the first command costs once the model has asked for it; `reply -> exit`: a run that offers the terminal but
only answers in words (the warm-up's price when no command comes). Medians; with --vs-src DIR the same runs
alternate with another source tree (e.g. `git archive <commit> src | tar -x -C DIR`), PYTHONPATH=DIR/src.

Usage: python bench/bench_warm.py [--runs 6] [--think 1.0] [--vs-src /tmp/base]"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_startup import OURS, make_home, spawn  # noqa: E402

from hermes_agent.providers.scripted import ScriptedServer  # noqa: E402

ECHO = {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo warm"}}]}


def one(src: str, home: str | None, script: list[dict]) -> tuple[str, list[float], float]:
    os.environ["PYTHONPATH"] = src
    with ScriptedServer(script, default={"content": "done"}) as srv:
        home = make_home(srv.url, home)
        start, wall, _, _ = spawn([OURS, "chat", "-q", "go"], home, tempfile.mkdtemp(prefix="hermes-bench-cwd-"))
        times = [r["time"] for r in srv.requests]
    return home, [t - start for t in times], wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--think", type=float, default=1.0, help="seconds the model takes for its first reply")
    ap.add_argument("--vs-src", help="a second source tree (its src/ is put on PYTHONPATH) to alternate with")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "src")
    trees = [here] + ([str(Path(args.vs_src) / "src")] if args.vs_src else [])
    first: dict[str, list[float]] = {t: [] for t in trees}
    exits: dict[str, list[float]] = {t: [] for t in trees}
    homes: dict[str, str | None] = {t: None for t in trees}
    for i in range(args.runs + 1):  # the first round warms bytecode caches and the homes
        for tree in trees:
            homes[tree], at, _ = one(tree, homes[tree], [{"delay": args.think, **ECHO}, ECHO])
            if i and len(at) >= 2:
                first[tree].append((at[1] - at[0] - args.think) * 1000)
            homes[tree], at, wall = one(tree, homes[tree], [{"delay": args.think, "content": "words"}])
            if i and at:
                exits[tree].append((wall - at[0] - args.think) * 1000)
    load = os.getloadavg()[0]
    for tree in trees:
        print(f"{tree}: first command {statistics.median(first[tree]):.0f} ms after a {args.think:g} s reply "
              f"(runs {[round(x) for x in first[tree]]}); reply -> exit with no command "
              f"{statistics.median(exits[tree]):.0f} ms; load {load:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
