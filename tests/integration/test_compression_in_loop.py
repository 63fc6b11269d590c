"""A long tool-heavy run through the real loop, the real OpenAI client and a scripted model on
loopback: with AutoCompactor every request fits the window, keeps tool pairs, and the task finishes."""

from __future__ import annotations

import threading

import pytest

from hermes_agent.config.settings import Settings
from hermes_agent.core.compression import SUMMARY_PREFIX, AutoCompactor, CompressionResult
from hermes_agent.core.loop import AgentLoop
from hermes_agent.memory.todo import TodoStore
from hermes_agent.messages import system, user
from hermes_agent.providers.base import ChatRequest
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.providers.scripted import ScriptedServer

CONTEXT = 16_000
TOOL_DEF = {"type": "function", "function": {"name": "read_file", "description": "read",
                                             "parameters": {"type": "object", "properties": {}}}}


def _pairs_ok(wire: list[dict]) -> bool:
    pending: set[str] = set()
    for m in wire:
        if m["role"] == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
            continue
        if pending:
            return False
        pending = {tc["id"] for tc in m.get("tool_calls") or []}
    return not pending


def _chars(wire: list[dict]) -> int:
    return sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in wire)


@pytest.mark.parametrize("with_summarizer", [False, True])
def test_forty_big_tool_results_finish_within_the_window(with_summarizer):
    steps = [{"tool_calls": [{"id": f"c{i}", "name": "read_file", "arguments": {"path": f"src/m{i}.py"}}]}
             for i in range(40)]
    main = ScriptedServer(steps + [{"content": "All 40 files read."}]).start()
    aux = ScriptedServer(default={"content": "## Goal\nread every module\n## Progress\nmany read"}).start()
    try:
        provider = OpenAIChatProvider(main.url, "k", "scripted-model", stream=True)
        aux_provider = OpenAIChatProvider(aux.url, "k", "scripted-model", stream=False)

        def summarize(prompt: str) -> str:
            return aux_provider.complete(ChatRequest((user(prompt),), max_tokens=4000)).content or ""

        todos = TodoStore()
        todos.write([{"id": "1", "content": "read all modules", "status": "in_progress"}])
        results: list[CompressionResult] = []
        settings = Settings(data={"model": {"context_length": CONTEXT}})
        compactor = AutoCompactor(settings, summarize if with_summarizer else None,
                                  todo_text=todos.render_for_context, on_result=results.append)
        loop = AgentLoop(provider=provider, tools=lambda: [TOOL_DEF], compact=compactor, max_iterations=60,
                         run_tool=lambda call: f"{call.id} contents: " + "x" * 6000)
        messages = [system("You are Hermes."), user("Read every module")]
        outcome = loop.run(messages, threading.Event())
        loop.close()
    finally:
        main.stop()
        aux.stop()

    assert outcome.reason == "stop" and outcome.final_text == "All 40 files read."
    assert results and all(r.method == ("summary" if with_summarizer else "truncate") for r in results)
    bodies = [r["body"]["messages"] for r in main.requests]
    assert len(bodies) == 41
    assert all(_pairs_ok(b) for b in bodies)
    assert max(_chars(b) for b in bodies) // 4 < CONTEXT * 0.6  # never near the window
    last = bodies[-1]
    assert last[1]["content"] == "Read every module"  # the first turns stay verbatim
    note = next(m["content"] for m in last if str(m.get("content") or "").startswith(SUMMARY_PREFIX))
    assert "read all modules" in note  # the todo list survived compaction
    assert ("read every module" in note) is with_summarizer
    assert len(aux.requests) == (len(results) if with_summarizer else 0)
