"""Plugins and MCP observed through the real `hermes chat -q` (scripted model on loopback)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.helpers import model_config, run_hermes

PLUGIN = '''
from hermes_agent.tools.hooks import Block


def register(ctx):
    ctx.register_tool("shout", schema={"name": "shout", "description": "Upper-case text",
                      "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                     "required": ["text"]}},
                      handler=lambda args, **kw: '{"result": "%s"}' % args["text"].upper())
    ctx.register_hook("pre_tool_call",
                      lambda name, args, ctx: Block("shouting about cats is not allowed")
                      if name == "shout" and "cat" in args.get("text", "") else None)
'''


def test_plugin_tool_and_blocking_hook_through_chat(scripted, hermes_home):
    d = hermes_home / "plugins" / "guard"
    d.mkdir(parents=True)
    (d / "plugin.yaml").write_text("name: guard\nversion: 1.0\n")
    (d / "__init__.py").write_text(PLUGIN)
    (hermes_home / "plugins" / "broken").mkdir()
    (hermes_home / "plugins" / "broken" / "__init__.py").write_text("raise RuntimeError('bad plugin')\n")
    model_config(hermes_home, scripted.url, extra="plugins:\n  enabled: [guard, broken]\n")
    scripted.add({"tool_calls": [{"name": "shout", "arguments": {"text": "hello"}},
                                 {"name": "shout", "arguments": {"text": "a cat"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "shout twice", home=hermes_home)  # plugin tools are offered by default
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n" and "Traceback" not in out.stderr
    results = [m["content"] for m in scripted.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert results[0] == '{"result": "HELLO"}'
    assert "shouting about cats is not allowed" in results[1]
    assert "shout" in [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]]


def test_mcp_tool_through_chat(scripted, hermes_home):
    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip("mcp-server-time is not installed (.ci/install-mcp-servers.sh)")
    model_config(hermes_home, scripted.url,
                 extra=f"mcp_servers:\n  time:\n    command: {sys.executable}\n    args: [-m, mcp_server_time]\n"
                       "mcp_discovery_timeout: 20\nmcp_single_query_discovery_timeout: 60\n")
    scripted.add({"tool_calls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]},
                 {"content": "it is night in Tokyo"})
    out = run_hermes("chat", "-q", "time in Tokyo?", "-t", "mcp-time", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "it is night in Tokyo\n"
    tool_msg = scripted.requests[1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and "Asia/Tokyo" in tool_msg["content"]


def test_npm_everything_server_tool_through_chat(scripted, hermes_home):
    from tests.integration.test_mcp import EVERYTHING

    if EVERYTHING is None:
        pytest.skip("server-everything not installed (set HERMES_TEST_MCP_EVERYTHING; .ci/install-mcp-servers.sh)")
    model_config(hermes_home, scripted.url,
                 extra=f"mcp_servers:\n  ev:\n    command: {EVERYTHING}\nmcp_discovery_timeout: 20\nmcp_single_query_discovery_timeout: 60\n")
    scripted.add({"tool_calls": [{"name": "mcp__ev__echo", "arguments": {"message": "over stdio from npm"}}]},
                 {"content": "echoed"})
    out = run_hermes("chat", "-q", "echo something", home=hermes_home)  # default preset includes mcp-* toolsets
    assert out.returncode == 0, out.stderr
    tool_msg = scripted.requests[1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and "over stdio from npm" in tool_msg["content"]


def test_deferred_plugin_tool_found_and_called_through_the_bridge(scripted, hermes_home):
    d = hermes_home / "plugins" / "guard"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text(PLUGIN)
    model_config(hermes_home, scripted.url, extra="tools:\n  tool_search:\n    enabled: on\nplugins:\n  enabled: [guard]\n")
    scripted.add({"tool_calls": [{"name": "tool_search", "arguments": {"query": "upper case text"}}]},
                 {"tool_calls": [{"name": "tool_call", "arguments": {"name": "shout", "arguments": {"text": "hi"}}},
                                 {"name": "tool_call", "arguments": {"name": "shout", "arguments": {"text": "cat"}}}]},
                 {"content": "HI"})
    out = run_hermes("chat", "-q", "shout hi", "-t", "todo,plugin-guard", home=hermes_home)
    assert out.returncode == 0, out.stderr
    sent = [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]]
    assert sent == ["todo", "tool_search", "tool_call"]
    found = scripted.requests[1]["body"]["messages"][-1]["content"]
    assert '"name": "shout"' in found and '"text"' in found
    results = [m["content"] for m in scripted.requests[2]["body"]["messages"][-2:]]
    assert results[0] == '{"result": "HI"}' and "shouting about cats is not allowed" in results[1]


LIFECYCLE = '''
import json, os


def register(ctx):
    log = os.path.join(os.environ["HERMES_HOME"], "events.log")

    def note(event):
        def fn(**kw):
            with open(log, "a") as fh:
                fh.write(event + " " + json.dumps({k: str(v)[:40] for k, v in kw.items()}, sort_keys=True) + "\\n")
        return fn

    for event in ("on_session_start", "pre_llm_call", "post_llm_call", "on_session_end"):
        ctx.register_hook(event, note(event))
'''


def test_lifecycle_hooks_fire_in_order(scripted, hermes_home):
    d = hermes_home / "plugins" / "lifecycle"
    d.mkdir(parents=True)
    (d / "plugin.yaml").write_text("name: lifecycle\n")
    (d / "__init__.py").write_text(LIFECYCLE)
    model_config(hermes_home, scripted.url, extra="plugins:\n  enabled: [lifecycle]\n")
    scripted.add({"content": "hello"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0, out.stderr
    events = [line.split(" ")[0] for line in (hermes_home / "events.log").read_text().splitlines()]
    assert events == ["on_session_start", "pre_llm_call", "post_llm_call", "on_session_end"]
