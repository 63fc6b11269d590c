"""Tool search: MCP/plugin schemas deferred behind tool_search/tool_call when they would crowd the context."""

from __future__ import annotations

import json

import pytest

from hermes_agent.config.settings import Settings
from hermes_agent.tools import dispatch, tool_search
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import Block, HookBus
from hermes_agent.tools.registry import discover_builtin_tools, registry

SERVICES = ["github", "jira", "slack", "calendar", "drive", "notion"]
ACTIONS = ["create", "list", "update", "delete", "search", "comment", "close", "assign", "label", "archive"]


def _schema(name: str, service: str, action: str) -> dict:
    props = {f"field_{i}": {"type": "string", "description": f"{service} {action} field number {i} with details"}
             for i in range(8)}
    return {"name": name, "description": f"{action.capitalize()} a {service} item. " + "Careful usage notes. " * 10,
            "parameters": {"type": "object", "properties": props}}


@pytest.fixture
def external():
    """60 MCP-like tools (about 40k tokens of schemas) plus the built-ins."""
    discover_builtin_tools()
    names = []
    for service in SERVICES:
        for action in ACTIONS:
            name = f"mcp__{service}__{action}_item"
            registry.register(name, f"mcp-{service}", _schema(name, service, action),
                              lambda args, _n=name, **kw: json.dumps({"ran": _n, "args": args}))
            names.append(name)
    yield names
    for name in names:
        registry.deregister(name)


def _defs(names: set[str]) -> list[dict]:
    return registry.get_definitions(names)


def _names(defs: list[dict]) -> list[str]:
    return [d["function"]["name"] for d in defs]


def test_small_extra_schemas_are_sent_directly(external):
    core = tool_search.core_names()
    assert "mcp__github__create_item" not in core and {"terminal", "read_file"} <= core
    defs = _defs(core | {"mcp__github__create_item"})
    assert tool_search.assemble(defs, core, context_length=128_000) == defs
    assert tool_search.assemble(defs, core, context_length=128_000, mode="off") == defs


def test_large_extra_schemas_are_replaced_by_two_bridge_tools(external):
    core = tool_search.core_names()
    defs = _defs(core | set(external))
    before = tool_search.estimate_tokens(defs)
    out = tool_search.assemble(defs, core, context_length=128_000, threshold_pct=10)
    names = _names(out)
    assert names[-2:] == ["tool_search", "tool_call"] and not any(n.startswith("mcp__") for n in names)
    assert set(names[:-2]) == {d["function"]["name"] for d in defs if d["function"]["name"] in core}
    search_desc = out[-2]["function"]["description"]
    assert "60 tools" in search_desc and "mcp-github (10)" in search_desc
    extra_tokens = tool_search.estimate_tokens([d for d in defs if _names([d])[0] not in core])
    bridge_tokens = tool_search.estimate_tokens(out[-2:])
    assert extra_tokens > 12_800 and bridge_tokens < extra_tokens / 50, (before, extra_tokens, bridge_tokens)


def test_mode_on_defers_even_a_few_tools_and_mode_off_never(external):
    core = tool_search.core_names()
    defs = _defs(core | {"mcp__jira__list_item"})
    assert "tool_search" in _names(tool_search.assemble(defs, core, 1_000_000, mode="on"))
    big = _defs(core | set(external))
    assert tool_search.assemble(big, core, 8_000, mode=False) == big
    assert tool_search.normalize_mode(True) == "on" and tool_search.normalize_mode("whatever") == "auto"


def test_search_returns_matching_tools_with_schemas(external):
    core = tool_search.core_names()
    ctx = ToolContext(settings=Settings())
    tool_search.assemble(_defs(core | set(external)), core, 128_000, ctx=ctx)
    hits = json.loads(tool_search.search({"query": "create jira issue"}, ctx=ctx))["matches"]
    assert hits[0]["name"] == "mcp__jira__create_item" and "field_0" in hits[0]["parameters"]["properties"]
    assert len(hits) == 5
    assert len(json.loads(tool_search.search({"query": "slack", "limit": 3}, ctx=ctx))["matches"]) == 3
    none = json.loads(tool_search.search({"query": "zzzz-nothing"}, ctx=ctx))
    assert none["matches"] == [] and "mcp__drive__archive_item" in none["tools"]


def test_tool_call_runs_the_deferred_tool_through_hooks(external):
    core = tool_search.core_names()
    bus = HookBus()
    seen = []
    bus.register("pre_tool_call", lambda name, args, ctx: seen.append(name) or (
        Block("deleting is not allowed") if "delete" in name else None))
    ctx = ToolContext(settings=Settings(), hook_bus=bus)
    tool_search.assemble(_defs(core | set(external)), core, 128_000, ctx=ctx)
    out = dispatch.handle_function_call("tool_call", {"name": "mcp__slack__list_item", "arguments": {"field_0": "x"}},
                                        ctx=ctx, hook_bus=bus)
    assert json.loads(out) == {"ran": "mcp__slack__list_item", "args": {"field_0": "x"}}
    assert seen == ["tool_call", "mcp__slack__list_item"]
    blocked = json.loads(dispatch.handle_function_call(
        "tool_call", {"name": "mcp__slack__delete_item", "arguments": {}}, ctx=ctx, hook_bus=bus))
    assert blocked["error"] == "Blocked: deleting is not allowed"


def test_tool_call_refuses_what_was_not_deferred(external):
    core = tool_search.core_names()
    ctx = ToolContext(settings=Settings())
    tool_search.assemble(_defs(core | set(external)), core, 128_000, ctx=ctx)
    assert "not a deferred tool" in json.loads(tool_search.call({"name": "terminal", "arguments": {}}, ctx=ctx))["error"]
    assert "cannot be called" in json.loads(tool_search.call({"name": "tool_search"}, ctx=ctx))["error"]
    assert json.loads(tool_search.call({"name": "mcp__drive__list_item"}, ctx=ctx))["ran"] == "mcp__drive__list_item"
    other = ToolContext(settings=Settings())  # another agent that deferred only one drive tool
    tool_search.assemble(_defs(core | {"mcp__drive__list_item"}), core, 128_000, mode="on", ctx=other)
    limited = json.loads(tool_search.call({"name": "mcp__github__list_item"}, ctx=other))
    assert "not a deferred tool" in limited["error"]
    assert json.loads(tool_search.call({"name": "mcp__drive__list_item"}, ctx=other))["ran"] == "mcp__drive__list_item"
    assert "not a deferred tool" in json.loads(tool_search.call({"name": "mcp__drive__list_item"}))["error"]  # no ctx
    assert json.loads(tool_search.search({"query": "drive"}))["matches"] == []
