"""MCP config parsing, tool naming and result/schema conversion (pure functions, no server)."""

from __future__ import annotations

import json
import types

import pytest

from hermes_agent.tools.mcp.config import parse_server, parse_servers, tool_name, toolset_name
from hermes_agent.tools.mcp.convert import call_result_json, input_schema, trim_description
from hermes_agent.tools.mcp.manager import McpManager


def test_stdio_and_http_entries_with_defaults_and_env_expansion():
    env = {"TOKEN": "s3cret", "ROOT": "/srv"}
    servers, errors = parse_servers({
        "fs": {"command": "npx", "args": ["-y", "server-fs", "${ROOT}"], "env": {"K": "${TOKEN}"}, "cwd": "${ROOT}"},
        "web": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
                "timeout": 5, "connect_timeout": 2, "enabled": False},
    }, env)
    assert errors == {}
    fs, web = servers
    assert (fs.transport, fs.args, dict(fs.env), fs.cwd, fs.timeout) == ("stdio", ("-y", "server-fs", "/srv"),
                                                                         {"K": "s3cret"}, "/srv", 60.0)
    assert (web.transport, dict(web.headers), web.timeout, web.connect_timeout, web.enabled) == (
        "http", {"Authorization": "Bearer s3cret"}, 5.0, 2.0, False)


@pytest.mark.parametrize("raw, message", [
    ({}, "exactly one of"),
    ({"command": "x", "url": "http://h/mcp"}, "exactly one of"),
    ({"url": "ftp://h"}, "http:// or https://"),
    ({"command": "x", "args": "not-a-list"}, "`args` must be a list"),
    ({"command": "x", "timeout": -1}, "`timeout` must be positive"),
    ({"command": "x", "timeout": "soon"}, "number of seconds"),
    ({"command": "x", "env": ["A=1"]}, "`env` must be a mapping"),
    ({"command": "x", "pin": {"./s.py": "md5:abc"}}, "`pin` of ./s.py must be sha256:"),
    ({"command": "x", "pin": ["./s.py"]}, "`pin` must be a mapping"),
    ("just a string", "expected a mapping"),
])
def test_invalid_entries_are_reported_by_name(raw, message):
    servers, errors = parse_servers({"good": {"command": "ok"}, "bad": raw})
    assert [s.name for s in servers] == ["good"] and message in errors["bad"]


def test_tool_names_are_sanitised_prefixed_and_bounded():
    assert tool_name("my server", "get.weather/now") == "mcp__my_server__get_weather_now"
    assert toolset_name("my.server") == "mcp-my_server"
    long_a, long_b = tool_name("srv", "x" * 80 + "a"), tool_name("srv", "x" * 80 + "b")
    assert len(long_a) == 64 and long_a != long_b and long_a.startswith("mcp__srv__xxx")


def test_schema_titles_are_dropped_but_a_property_named_title_is_kept():
    raw = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "args", "type": "object",
           "properties": {"title": {"title": "Title", "type": "string"},
                          "tags": {"type": "array", "items": {"title": "Tag", "type": "string"}}}}
    assert input_schema(raw) == {"type": "object", "properties": {"title": {"type": "string"},
                                                                  "tags": {"type": "array", "items": {"type": "string"}}}}
    assert input_schema(None) == {"type": "object", "properties": {}}


def test_long_descriptions_are_cut_at_a_sentence():
    text = "First sentence here.  " + "Another detail follows. " * 60
    out = trim_description(text, 200)
    assert len(out) <= 200 and out.endswith(".") and "  " not in out


def test_results_become_json_for_the_model():
    text = types.SimpleNamespace(type="text", text="hello")
    image = types.SimpleNamespace(type="image", data="AAAA", mime_type="image/png")
    ok = types.SimpleNamespace(content=[text, image], structured_content=None, is_error=False)
    assert json.loads(call_result_json(ok)) == {"result": "hello\n[image image/png, 3 bytes, not shown]"}
    structured = types.SimpleNamespace(content=[], structured_content={"t": 21}, is_error=False)
    assert json.loads(call_result_json(structured)) == {"result": '{"t": 21}'}
    err = types.SimpleNamespace(content=[types.SimpleNamespace(type="text", text="bad zone")], is_error=True)
    assert json.loads(call_result_json(err)) == {"error": "bad zone"}


def test_manager_without_enabled_servers_starts_nothing():
    servers, _ = parse_servers({"off": {"command": "x", "enabled": False}})
    manager = McpManager(servers).start()
    assert not manager.running and manager.wait_ready(0.1) and manager.status() == {}
    manager.shutdown()


def test_sandbox_setting_per_server():
    from hermes_agent.tools.mcp.config import ServerSandbox

    assert parse_server("a", {"command": "x"}).sandbox == ServerSandbox()
    assert parse_server("a", {"command": "x", "sandbox": False}).sandbox.enabled is False
    assert parse_server("a", {"command": "x", "sandbox": "off"}).sandbox.enabled is False
    got = parse_server("a", {"command": "x", "sandbox": {"writable_paths": ["~/.cache/x", "${D}/y"],
                                                           "readable_paths": "/opt/k", "network": "off"}},
                       {"D": "/data"}).sandbox
    assert got == ServerSandbox(True, ("~/.cache/x", "/data/y"), ("/opt/k",), False)
    for bad, why in (({"writeable": []}, "unknown keys: writeable"), ({"network": "maybe"}, "on or off"),
                     ({"writable_paths": [1]}, "list of paths"), ("sometimes", "false or a mapping")):
        with pytest.raises(ValueError, match=why):
            parse_server("a", {"command": "x", "sandbox": bad})


def test_an_unconfined_python_m_server_started_in_a_writable_directory_gets_a_safe_path(tmp_path):
    """`python -m srv` puts its working directory first on sys.path: where sandboxed commands write, a planted
    json.py would shadow the stdlib in a process with the user's rights, so PYTHONSAFEPATH keeps it off."""
    from hermes_agent import paths
    from hermes_agent.tools.mcp.pins import plan, safe_path_env

    paths.distrust_writable(str(tmp_path))
    cfg = parse_server("m", {"command": "python3", "args": ["-m", "mcp_server_time"], "sandbox": False})
    assert safe_path_env(cfg, str(tmp_path)) == {"PYTHONSAFEPATH": "1"}
    assert plan(cfg, str(tmp_path), "python3").error == ""  # the module is not in the workspace
    (tmp_path / "mcp_server_time").mkdir()
    assert "mcp_server_time" in plan(cfg, str(tmp_path), "python3").error  # it is: refused, a directory is not pinned
