"""The agent loop through AIAgent against the scripted server: tools, errors, limits, interrupt, trajectories."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hermes_agent.config.loader import load_settings
from hermes_agent.core.agent import AgentServices, AIAgent
from hermes_agent.events import Notice, ToolFinished, ToolStarted
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry

SCHEMA = {"description": "sleep then echo", "parameters": {"type": "object", "properties": {
    "seconds": {"type": "number"}, "text": {"type": "string"}}, "required": ["text"]}}


@pytest.fixture(autouse=True)
def loop_tools():
    def nap(args, **kw):
        ctx = kw["ctx"]
        if ctx.interrupt.wait(float(args.get("seconds", 0))):
            return json.dumps({"interrupted": True})
        return json.dumps({"echo": args["text"], "task": kw["task_id"]})

    registry.register("nap", "loop-test", SCHEMA, nap, emoji="😴")
    yield
    registry.deregister("nap")


def make_agent(scripted, events=None, **kw) -> AIAgent:
    settings = load_settings()
    services = AgentServices(provider=OpenAIChatProvider(scripted.url, "k", "scripted-model"), settings=settings,
                             ctx=ToolContext(settings=settings, task_id="task-1"))
    return AIAgent(enabled_toolsets=["loop-test"], services=services,
                   event_callback=(events.append if events is not None else None), **kw)


def call(text, seconds=0, id=None):
    c = {"name": "nap", "arguments": {"text": text, "seconds": seconds}}
    return {**c, "id": id} if id else c


def test_tool_round_trip_and_progress_events(scripted):
    events = []
    scripted.add({"tool_calls": [call("hello")]}, {"content": "The tool said hello."})
    agent = make_agent(scripted, events)
    result = agent.run_conversation("please nap")
    assert result["final_response"] == "The tool said hello." and result["completed"]
    tool_msg = next(m for m in result["messages"] if m["role"] == "tool")
    assert json.loads(tool_msg["content"]) == {"echo": "hello", "task": "task-1"}
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert (started.name, started.preview, started.emoji) == ("nap", "hello", "😴")
    assert any(isinstance(e, ToolFinished) and e.ok for e in events)
    sent = scripted.requests[0]["body"]
    assert sent["messages"][0]["role"] == "system" and [t["function"]["name"] for t in sent["tools"]] == ["nap"]


def test_four_independent_calls_run_in_parallel(scripted):
    scripted.add({"tool_calls": [call(f"n{i}", 1, id=f"c{i}") for i in range(4)]}, {"content": "done"})
    agent = make_agent(scripted)
    started = time.monotonic()
    result = agent.run_conversation("nap four times")
    elapsed = time.monotonic() - started
    assert result["final_response"] == "done"
    assert elapsed < 2.0, f"4 x 1 s calls took {elapsed:.2f}s"
    tools = [json.loads(m["content"])["echo"] for m in result["messages"] if m["role"] == "tool"]
    assert tools == ["n0", "n1", "n2", "n3"]  # results keep call order


def test_malformed_arguments_and_unknown_tools_go_back_to_the_model(scripted):
    scripted.add({"tool_calls": [{"name": "nap", "arguments": "{broken"}, {"name": "rm_everything", "arguments": {}}]},
                 {"content": "recovered"})
    result = make_agent(scripted).run_conversation("go")
    assert result["final_response"] == "recovered"
    errors = [json.loads(m["content"])["error"] for m in result["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in errors[0]
    assert errors[1].startswith("Unknown tool: rm_everything. Available tools: nap")
    second = scripted.requests[1]["body"]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "tool"]


def test_max_iterations_ends_with_a_clear_notice(scripted):
    scripted.default = {"tool_calls": [call("again")]}
    scripted.add(*[{"tool_calls": [call(f"x{i}")]} for i in range(5)])
    result = make_agent(scripted, max_iterations=3).run_conversation("loop")
    assert result["reason"] == "max_iterations" and "maximum of 3 model calls" in result["final_response"]
    assert result["api_calls"] == 3


def test_repeated_identical_calls_are_warned_then_stopped(scripted):
    events = []
    scripted.default = {"tool_calls": [call("same")]}
    result = make_agent(scripted, events).run_conversation("loop forever")
    assert result["reason"] == "loop" and "identical arguments 6 times" in result["final_response"]
    tool_results = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert "warning" not in tool_results[1] and "3 times in a row" in tool_results[2]["warning"]
    assert len(scripted.requests) == 6
    assert any(isinstance(e, Notice) and "identical" in e.text for e in events)


def test_interrupt_from_another_thread_stops_the_turn_and_keeps_the_pairs(scripted):
    scripted.add({"tool_calls": [call("slow", 30)]}, {"content": "should not be reached"})
    agent = make_agent(scripted)
    threading.Timer(0.5, agent.interrupt).start()
    started = time.monotonic()
    result = agent.run_conversation("take a long nap")
    assert time.monotonic() - started < 5
    assert result["interrupted"] and result["final_response"] == "Interrupted."
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert len(scripted.requests) == 1


def test_multi_turn_chat_keeps_history(scripted):
    scripted.add({"content": "first"}, {"content": "second"})
    agent = make_agent(scripted)
    assert agent.chat("one") == "first" and agent.chat("two") == "second"
    sent = scripted.requests[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0] == scripted.requests[0]["body"]["messages"][0]  # byte-stable system prompt


def test_trajectories_are_saved_in_sharegpt_format(scripted, hermes_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Hermes writes trajectories to the working directory
    scripted.add({"reasoning": "let me think", "tool_calls": [call("t")]}, {"content": "final"})
    agent = make_agent(scripted, save_trajectories=True)
    agent.run_conversation("record me")
    line = (tmp_path / "trajectory_samples.jsonl").read_text().splitlines()[0]
    convo = json.loads(line)["conversations"]
    assert [t["from"] for t in convo] == ["system", "human", "gpt", "tool", "gpt"]
    assert "<tools>" in convo[0]["value"] and "<think>\nlet me think\n</think>" in convo[2]["value"]
    assert '<tool_call>\n{"name": "nap"' in convo[2]["value"]
    assert convo[3]["value"].startswith("<tool_response>") and convo[4]["value"] == "<think>\n</think>\nfinal"
