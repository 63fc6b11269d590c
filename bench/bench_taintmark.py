"""Benchmark: what provenance in the data (tools/taintmark.py, memory/taintledger.py) adds. Reader side, per
call of an untainted conversation: a command naming 6 paths (one a glob) and a read_file, against an empty
ledger and against one holding W taint windows; writer side, per confined call of a tainted conversation: the
window's sign of life (a locked rewrite of the ledger). Medians of N calls.
The read watch (tools/readwatch.py): its walk once per conversation over a tree of F files (some tainted) and
its look per tool call (no read since the last look; one read of a clean file of a watched folder); the search
of a tool result for the names tainted sessions made (tools/readnames.py).
Run: .venv/bin/python bench/bench_taintmark.py [--calls N] [--windows W] [--files F]"""

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
    ap.add_argument("--files", type=int, default=10000)
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
    read_watch(a.calls, a.files)


def read_watch(calls: int, files: int) -> None:
    from hermes_agent.memory import taintledger
    from hermes_agent.tools import readwatch

    with tempfile.TemporaryDirectory() as tmp:
        home, work = f"{tmp}/home", f"{tmp}/work"
        os.makedirs(home)
        for i in range(files):
            os.makedirs(f"{work}/d{i // 100}", exist_ok=True)
            open(f"{work}/d{i // 100}/f{i}.txt", "w").write("x")
        start = taintledger.open_window(home, [work], "a page", time.time_ns())
        for i in range(0, files, 100):
            open(f"{work}/d{i // 100}/t{i}.txt", "w").write("tainted")
            open(f"{work}/d{i // 100}/note {i} says deploy with --force.md", "w").write("")  # a name as text
        taintledger.touch_window(home, start, end=True)
        ctx = ctx_for(home, work)
        ctx.read_watch, ctx.traffic_watch = None, True
        t = time.perf_counter()
        readwatch.look(ctx, "bench")
        walk = (time.perf_counter() - t) * 1000
        idle = median_ms(lambda: readwatch.look(ctx, "bench"), calls)
        clean = f"{work}/d1/f150.txt"

        def one_read() -> None:
            with open(clean) as f:
                f.read()
            readwatch.look(ctx, "bench")
        busy = median_ms(one_read, calls)
        w = ctx.read_watch
        print(f"read watch, {files} files in {len(w.dirs)} folders ({len(w.files)} tainted): walk {walk:.1f} ms once;"
              f" per call {idle:.4f} ms idle, {busy:.4f} ms after a clean read; tainted? {bool(ctx.untrusted)}")
        for size in (10_000, 100_000):  # readnames: a tool result searched for the names tainted sessions made
            result = '{"output": "' + ("src/app.py:12: x = 1\\n" * (size // 22))[:size] + '"}'
            shown = median_ms(lambda r=result: readwatch.shown(ctx, r), calls)
            print(f"names shown ({len(w.texts.texts)} texts), per call with a {size // 1000} KB result: {shown:.4f} ms;"
                  f" tainted? {bool(ctx.untrusted)}")


if __name__ == "__main__":
    main()
