"""Benchmark: what provenance in the data (tools/taintmark.py, memory/taintledger.py) adds. Reader side, per
call of an untainted conversation: a command naming 6 paths (one a glob) and a read_file, against an empty
ledger and against one holding W taint windows; writer side, per confined call of a tainted conversation: the
window's sign of life (a locked rewrite of the ledger). Medians of N calls.
Run: .venv/bin/python bench/bench_taintmark.py [--calls N] [--windows W]"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from types import SimpleNamespace


def ctx_for(home: str, work: str) -> SimpleNamespace:
    settings = SimpleNamespace(home=home, cfg=SimpleNamespace(sandbox=SimpleNamespace(mode="auto")))
    ctx = SimpleNamespace(settings=settings, untrusted="", path_policy=SimpleNamespace(workspace=(work,), writable=()),
                          taint_window=None, taint_session="", session_id="bench")
    ctx.taint = lambda source: setattr(ctx, "untrusted", source)
    return ctx


def median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--windows", type=int, default=1000)
    a = ap.parse_args()
    from hermes_agent.memory import taintledger
    from hermes_agent.tools import taintmark

    with tempfile.TemporaryDirectory() as tmp:
        home, work, other = f"{tmp}/home", f"{tmp}/work", f"{tmp}/other"
        for d in (home, work, other):
            os.makedirs(d)
        for i in range(20):
            open(f"{work}/f{i}.txt", "w").write("x")
        command = "grep -n TODO src/app.py README.md f1.txt 'a b.txt' f*.txt > out.txt"
        ctx = ctx_for(home, work)
        empty = median_ms(lambda: taintmark.command_reads(ctx, command, work), a.calls)
        read_empty = median_ms(lambda: taintmark.on_read(ctx, [f"{work}/f1.txt"]), a.calls)
        for i in range(a.windows):
            start = taintledger.open_window(home, [other], f"source {i}", time.time_ns())
            taintledger.touch_window(home, start, end=True)
        full = median_ms(lambda: taintmark.command_reads(ctx, command, work), a.calls)
        read_full = median_ms(lambda: taintmark.on_read(ctx, [f"{work}/f1.txt"]), a.calls)
        touch = median_ms(lambda: taintledger.touch_window(home, start), max(30, a.calls // 10))
        print(f"untainted reader, ledger without taint:   command {empty:.3f} ms, read_file {read_empty:.3f} ms")
        print(f"untainted reader, {a.windows} windows:          command {full:.3f} ms, read_file {read_full:.3f} ms")
        print(f"tainted writer, per confined call ({a.windows} windows): {touch:.3f} ms")


if __name__ == "__main__":
    main()
