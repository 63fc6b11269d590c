"""Toolset resolution and the guarded call path of handle_function_call."""

from __future__ import annotations

import json

import pytest

from hermes_agent.errors import ToolError
from hermes_agent.tools import dispatch, toolsets
from hermes_agent.tools.hooks import Block, HookBus
from hermes_agent.tools.registry import discover_builtin_tools, registry


def test_composite_and_legacy_toolsets():
    names = toolsets.resolve_toolset("debugging")
    assert {"terminal", "process", "web_search", "read_file", "patch"} <= set(names)
    assert toolsets.resolve_toolset("file_tools") == ["read_file", "write_file", "patch", "search_files"]
    assert "terminal" in toolsets.resolve_toolset("hermes-gateway")


def test_unknown_toolset_and_cycle_are_clear_errors(monkeypatch):
    with pytest.raises(ToolError, match="unknown toolset 'nope'"):
        toolsets.resolve_toolset("nope")
    monkeypatch.setitem(toolsets.TOOLSETS, "loop-a", {"description": "", "tools": [], "includes": ["loop-b"]})
    monkeypatch.setitem(toolsets.TOOLSETS, "loop-b", {"description": "", "tools": [], "includes": ["loop-a"]})
    with pytest.raises(ToolError, match="cycle: loop-a -> loop-b -> loop-a"):
        toolsets.resolve_toolset("loop-a")


@pytest.fixture
def echo_tool():
    schema = {"description": "echo", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "flag": {"type": "boolean"}, "items": {"type": "array"}, "s": {"type": "string"}}}}
    registry.register("t_echo", "t-echo", schema, lambda args, **kw: json.dumps({"args": args, "ctx": kw.get("ctx")}))
    registry.register("t_big", "t-echo", schema, lambda args, **kw: "x" * 300_000)
    yield
    registry.deregister("t_echo")
    registry.deregister("t_big")


def test_definitions_follow_enabled_and_disabled_toolsets(echo_tool):
    names = {d["function"]["name"] for d in dispatch.get_tool_definitions(["t-echo"])}
    assert names == {"t_echo", "t_big"}
    everything = {d["function"]["name"] for d in dispatch.get_tool_definitions(disabled_toolsets=["t-echo"])}
    assert "t_echo" not in everything


def test_bad_json_and_tools_without_agent_state_return_errors(echo_tool):
    err = json.loads(dispatch.handle_function_call("t_echo", "{not json"))["error"]
    assert "not valid JSON" in err
    assert json.loads(dispatch.handle_function_call("t_echo", "[1]"))["error"].endswith("got list")
    discover_builtin_tools()
    for name in ("todo", "memory", "session_search", "delegate_task"):  # no agent state: a clear error
        assert json.loads(dispatch.handle_function_call(name, "{}"))["error"] == f"{name} is not available in this context"
    assert "Unknown tool: zzz" in json.loads(dispatch.handle_function_call("zzz", "{}"))["error"]


def test_arguments_are_coerced_to_the_schema(echo_tool):
    out = json.loads(dispatch.handle_function_call("t_echo", '{"n": "42", "flag": "true", "items": "[1,2]", "s": 5}'))
    assert out["args"] == {"n": 42, "flag": True, "items": [1, 2], "s": 5}


def test_pre_hook_blocks_and_post_hook_transforms(echo_tool):
    bus = HookBus()
    bus.register("pre_tool_call", lambda name, args, ctx: Block("not today") if args.get("n") == 1 else None)
    bus.register("post_tool_call", lambda name, args, result, ctx, duration_ms: result.replace("args", "ARGS"))
    blocked = json.loads(dispatch.handle_function_call("t_echo", '{"n": 1}', hook_bus=bus))
    assert blocked == {"error": "Blocked: not today", "blocked": True}
    assert "ARGS" in dispatch.handle_function_call("t_echo", '{"n": 2}', hook_bus=bus)


def test_a_failing_pre_hook_fails_closed_and_huge_results_are_capped(echo_tool):
    bus = HookBus()
    bus.register("pre_tool_call", lambda name, args, ctx: 1 / 0)
    assert "safety hook failed" in json.loads(dispatch.handle_function_call("t_echo", "{}", hook_bus=bus))["error"]
    big = dispatch.handle_function_call("t_big", "{}")
    assert len(big) < 101_000 and "characters cut from the middle" in big


def test_a_broken_table_entry_is_reported_once_and_left_out(monkeypatch, caplog, echo_tool):
    monkeypatch.setitem(toolsets.TOOLSETS, "loop-a", {"description": "", "tools": ["terminal"], "includes": ["loop-b"]})
    monkeypatch.setitem(toolsets.TOOLSETS, "loop-b", {"description": "", "tools": [], "includes": ["loop-a"]})
    monkeypatch.setitem(toolsets.TOOLSETS, "dangling", {"description": "", "tools": ["t_big"], "includes": ["gone"]})
    monkeypatch.setattr(toolsets, "_reported", set())
    discover_builtin_tools()
    with caplog.at_level("WARNING", logger="hermes_agent.tools.toolsets"):
        everything = {d["function"]["name"] for d in dispatch.get_tool_definitions(disabled_toolsets=["t-echo"])}
        again = {d["function"]["name"] for d in dispatch.get_tool_definitions(disabled_toolsets=["t-echo"])}
        chosen = {d["function"]["name"] for d in dispatch.get_tool_definitions(["file", "dangling"])}
        all_names = dispatch.resolve_tool_names(["all"])
    assert everything == again and "read_file" in everything and "t_echo" not in everything
    assert chosen == {"read_file", "write_file", "patch", "search_files"}  # the broken entry adds nothing
    assert "terminal" in all_names and "t_big" in all_names  # other entries still supply them
    warnings = [r.getMessage() for r in caplog.records]
    assert sum("'loop-a' left out" in w and "cycle" in w for w in warnings) == 1
    assert sum("'dangling' left out" in w and "unknown toolset 'gone'" in w for w in warnings) == 1
    with pytest.raises(ToolError, match="unknown toolset 'nope'"):  # a typo in a requested name stays an error
        dispatch.get_tool_definitions(["file", "nope"])


def test_an_oversized_json_result_is_cut_inside_its_strings_and_stays_json():
    """Red-team round 7 a35: a 30 MB MCP-shaped result was cut in the middle of its JSON text."""
    text = json.dumps({"content": [{"type": "text", "text": "A" * 3_000_000 + '\n"quoted"' + "B" * 500}]})
    cut = json.loads(dispatch.cap_result(text, 100_000))
    body = cut["content"][0]["text"]
    assert body.startswith("A" * 1000) and body.endswith("B" * 500) and "characters cut from the middle" in body
    rows = json.loads(dispatch.cap_result(json.dumps({"rows": ["x" * 150] * 20_000}), 100_000))["rows"]
    assert 100 < len(rows) < 20_000 and rows[0] == "x" * 150 and "items cut from the middle" in "".join(rows)
    assert len(json.dumps(rows)) < 100_000
