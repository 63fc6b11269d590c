"""The executor decides parallelism and labels from registry traits (parallel_safe, path_arg,
preview_arg, show_name), never from tool names."""

from __future__ import annotations

import json
import threading
import time

from hermes_agent.core.executor import ToolExecutor
from hermes_agent.events import ToolStarted
from hermes_agent.messages import ToolCall
from hermes_agent.tools.registry import ToolRegistry


def registry_with_traits() -> ToolRegistry:
    reg = ToolRegistry()
    noop = lambda args, **kw: "{}"  # noqa: E731
    reg.register("free", "t", {}, noop)
    reg.register("alone", "t", {}, noop, parallel_safe=False)
    reg.register("saver", "t", {}, noop, parallel_safe=False, path_arg="file", emoji="💾")
    reg.register("shell", "t", {}, noop, preview_arg="cmd", show_name=False, emoji="💻")
    return reg


def run(calls: list[tuple[str, dict]]) -> tuple[int, list[ToolStarted]]:
    """Most calls in flight at once, and the ToolStarted events."""
    reg, events, lock = registry_with_traits(), [], threading.Lock()
    state = {"now": 0, "peak": 0}

    def run_one(call: ToolCall) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return "{}"

    executor = ToolExecutor(run_one, events.append, reg.get)
    try:
        executor.run(tuple(ToolCall(f"c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls)))
    finally:
        executor.close()
    return state["peak"], [e for e in events if isinstance(e, ToolStarted)]


def test_parallel_only_where_traits_allow():
    assert run([("free", {}), ("free", {}), ("shell", {"cmd": "ls"})])[0] == 3
    assert run([("free", {}), ("alone", {})])[0] == 1
    assert run([("saver", {"file": "a"}), ("saver", {"file": "b"}), ("free", {})])[0] == 3
    assert run([("saver", {"file": "a"}), ("saver", {"file": "a"})])[0] == 1


def test_labels_come_from_preview_traits():
    _, started = run([("shell", {"other": "x", "cmd": "ls -la"}), ("saver", {"file": "a.txt"}), ("free", {})])
    assert [(e.emoji, e.preview, e.label) for e in started] == [
        ("💻", "ls -la", "ls -la"), ("💾", "a.txt", "saver a.txt"), ("", "", "free")]


def test_a_call_with_unknown_traits_keeps_the_batch_in_order():
    """An upstream alias (`todo_list`) or bridge whose entry is unknown may write what its neighbour reads:
    the batch runs one call after the other (was: treated as parallel-safe, and a merge lost an item)."""
    order: list[str] = []

    def run_one(call: ToolCall) -> str:
        order.append(f"start {call.id}")
        time.sleep(0.05)
        order.append(f"end {call.id}")
        return "{}"

    ex = ToolExecutor(run_one, lambda e: None, lambda name: None)
    calls = (ToolCall("a", "todo_list", "{}"), ToolCall("b", "todo_list", "{}"))
    assert ex.run(calls) == ["{}", "{}"]
    assert order == ["start a", "end a", "start b", "end b"]
