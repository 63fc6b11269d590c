"""Benchmark: what a spending cap adds to each model call (the check before it and the booking after it),
against a real state.db, for tool loops starting at 10, 100 and 400 messages with 30 tool definitions. Target < 0.1 ms
for the check. Run: .venv/bin/python bench/bench_budget.py [--calls N]"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hermes_agent.bootstrap.budget import Ledger, Meter
from hermes_agent.config.settings import Settings
from hermes_agent.messages import Message, ToolCall, Usage, system, tool_result, user
from hermes_agent.providers.base import ChatRequest
from hermes_agent.storage.store import SessionStore

TOOLS = tuple({"type": "function", "function": {"name": f"tool_{i}", "description": "does a thing " * 20,
                                                 "parameters": {"type": "object", "properties": {
                                                     "arg": {"type": "string", "description": "x" * 80}}}}}
              for i in range(30))


def conversation(n: int) -> tuple[Message, ...]:
    out = [system("You are a helpful agent. " * 200), user("do the task")]
    while len(out) < n:
        call = ToolCall(f"c{len(out)}", "tool_1", '{"arg": "' + "a" * 200 + '"}')
        out += [Message("assistant", "working on it", tool_calls=(call,)), tool_result(call, "r" * 1500)]
    return tuple(out[:n])


def measure(meter: Meter, start: int, calls: int, record: bool) -> tuple[float, float]:
    """Each call's request is the previous one plus an assistant tool call and its result, as in a tool loop."""
    checks, books = [], []
    reply = Message("assistant", "ok", usage=Usage(prompt_tokens=5000, completion_tokens=100))
    whole = conversation(start + 2 * calls)
    requests = [ChatRequest(whole[:start + 2 * i], TOOLS, max_tokens=1000) for i in range(calls)]
    for request in requests:
        t0 = time.perf_counter()
        meter.check("gpt-4o", request)
        t1 = time.perf_counter()
        if record:
            meter.record("gpt-4o", "main", request, reply)
        books.append(time.perf_counter() - t1)
        checks.append(t1 - t0)
    return statistics.median(checks) * 1e3, statistics.median(books) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp) / "state.db")
        sid = store.create_session("cli", model="gpt-4o").id
        settings = Settings(data={"model": {"default": "gpt-4o", "max_tokens": 1000},
                                  "budget": {"session_usd": 1e9, "day_usd": 1e9, "month_tokens": 10**15}})
        print(f"{'from msgs':>9} {'check ms (p50)':>15} {'book ms (p50)':>14}")
        for n in (10, 100, 400):
            meter = Meter(settings, "", Ledger(lambda: store), lambda: sid)
            check, book = measure(meter, n, args.calls, record=True)
            print(f"{n:>9} {check:>15.4f} {book:>14.4f}")
        meter = Meter(settings, "", Ledger(lambda: store), lambda: sid)
        check, _ = measure(meter, 100, args.calls, record=False)
        print(f"check only, no booking in between (from 100 messages): {check:.4f} ms")
        meter = Meter(settings, "", Ledger(lambda: store), lambda: sid)
        t0 = time.perf_counter()
        meter.check("gpt-4o", ChatRequest(conversation(400), TOOLS, max_tokens=1000))
        print(f"first check of a 400-message conversation (cold: store read, full estimate): "
              f"{(time.perf_counter() - t0) * 1e3:.3f} ms")
        store.close()


if __name__ == "__main__":
    main()
