"""Tool traits observed through the real `hermes chat -q` (scripted model on loopback, real MCP server):
MCP servers that ask for approval, deferred tools that stay with the agent that deferred them, and
memory/todo running through the same guarded path (hooks) as every other tool."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

DYNAMIC = str(Path(__file__).parents[1] / "fixtures" / "mcp_dynamic_server.py")


def mcp_config(approval: str | None = None, extra: str = "") -> str:
    line = f"    approval: {approval}\n" if approval else ""
    return (f"mcp_servers:\n  dyn:\n    command: {sys.executable}\n    args: [{DYNAMIC}]\n{line}"
            f"mcp_discovery_timeout: 20\nmcp_single_query_discovery_timeout: 60\n{extra}")


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "tool"]


def test_mcp_server_that_asks_is_denied_without_a_terminal_and_others_run(scripted, hermes_home):
    call = {"tool_calls": [{"name": "mcp__dyn__pid", "arguments": {}}]}
    model_config(hermes_home, scripted.url, extra=mcp_config())  # default: never ask
    scripted.add(call, {"content": "ran"})
    out = run_hermes("chat", "-q", "pid?", "-t", "mcp-dyn", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert json.loads(tool_messages(scripted.requests[1])[0])["result"].isdigit()

    model_config(hermes_home, scripted.url, extra=mcp_config("ask"))
    scripted.add(call, {"content": "blocked"})
    out = run_hermes("chat", "-q", "pid?", "-t", "mcp-dyn", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    error = json.loads(tool_messages(scripted.requests[3])[0])
    assert error["blocked"] is True
    assert "mcp__dyn__pid was not run" in error["error"] and "MCP server 'dyn'" in error["error"]


def test_bad_mcp_approval_value_is_reported(scripted, hermes_home):
    model_config(hermes_home, scripted.url, extra=mcp_config("sometimes"))
    scripted.add({"content": "hi"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert "approval" in out.stderr and "ask, never" in out.stderr


def test_subagent_cannot_reach_tools_its_parent_deferred(scripted, hermes_home):
    """The parent defers the MCP tools behind tool_search/tool_call; a subagent given only the plugin
    toolset has its own (smaller) deferred set and its tool_call cannot run the parent's MCP tools."""
    plugin = hermes_home / "plugins" / "shouter"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "def register(ctx):\n"
        "    ctx.register_tool('shout', schema={'name': 'shout', 'description': 'Upper-case text',\n"
        "        'parameters': {'type': 'object', 'properties': {'text': {'type': 'string'}}}},\n"
        "        handler=lambda args, **kw: '{\"result\": \"%s\"}' % args.get('text', '').upper())\n")
    model_config(hermes_home, scripted.url, extra=mcp_config(
        extra="tools:\n  tool_search:\n    enabled: on\nplugins:\n  enabled: [shouter]\n"))
    child_calls = {"tool_calls": [
        {"name": "tool_call", "arguments": {"name": "mcp__dyn__pid", "arguments": {}}},
        {"name": "tool_search", "arguments": {"query": "process id pid"}},
        {"name": "tool_call", "arguments": {"name": "shout", "arguments": {"text": "hi"}}}]}
    scripted.add({"tool_calls": [{"name": "tool_call", "arguments": {"name": "mcp__dyn__pid", "arguments": {}}}]},
                 {"tool_calls": [{"name": "delegate_task", "arguments": {
                     "goal": "get the pid", "toolsets": ["plugin-shouter"]}}]},
                 child_calls, {"content": "child done"}, {"content": "parent done"})
    out = run_hermes("chat", "-q", "go", home=hermes_home)
    assert out.returncode == 0, out.stderr
    parent_tools = {t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]}
    assert {"tool_search", "tool_call"} <= parent_tools and "mcp__dyn__pid" not in parent_tools
    assert json.loads(tool_messages(scripted.requests[1])[0])["result"].isdigit()  # the parent reaches it
    child_tools = {t["function"]["name"] for t in scripted.requests[2]["body"]["tools"]}
    assert child_tools == {"tool_search", "tool_call"}
    refused, searched, shouted = tool_messages(scripted.requests[3])
    assert "'mcp__dyn__pid' is not a deferred tool" in json.loads(refused)["error"]
    assert json.loads(searched)["matches"] == [] and json.loads(searched)["tools"] == ["shout"]
    assert json.loads(shouted) == {"result": "HI"}


def test_memory_and_todo_pass_the_same_hooks_as_other_tools(scripted, hermes_home):
    plugin = hermes_home / "plugins" / "audit"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "from hermes_agent.tools.hooks import Block\n"
        "def register(ctx):\n"
        "    ctx.register_hook('pre_tool_call', lambda name, args, ctx: Block('memory is read-only today')\n"
        "                      if name == 'memory' else None)\n")
    model_config(hermes_home, scripted.url, "plugins:\n  enabled: [audit]\n")
    scripted.add({"tool_calls": [
        {"name": "memory", "arguments": {"action": "add", "target": "user", "content": "likes tea"}},
        {"name": "todo", "arguments": {"todos": [{"id": "1", "content": "brew", "status": "in_progress"}]}}]},
        {"content": "ok"})
    out = run_hermes("chat", "-q", "remember", home=hermes_home)
    assert out.returncode == 0, out.stderr
    memory, todo = (json.loads(t) for t in tool_messages(scripted.requests[1]))
    assert memory == {"error": "Blocked: memory is read-only today", "blocked": True}
    assert todo["todos"] == [{"id": "1", "content": "brew", "status": "in_progress"}]
    assert not (hermes_home / "memories" / "USER.md").exists() or "likes tea" not in (
        hermes_home / "memories" / "USER.md").read_text()
