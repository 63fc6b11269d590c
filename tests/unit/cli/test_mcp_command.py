"""`hermes mcp list|add|remove|test` through the real executable: config edits keep the user's comments."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.helpers import run_hermes, write_config

CONFIG = """# my settings
model: some-model   # chosen last week

# tools from outside
mcp_servers:
  # the docs server
  docs:
    url: http://127.0.0.1:9/mcp
    enabled: false
"""


def test_add_list_remove_round_trip_keeps_comments(hermes_home):
    path = write_config(hermes_home, CONFIG)
    out = run_hermes("mcp", "add", "clock", "--command", "mcp-server-time", "--arg=--local-timezone", "--arg", "UTC",
                     "--env", "TZ=UTC", "--timeout", "15", home=hermes_home)
    assert out.returncode == 0, out.stderr
    text = path.read_text()
    assert "# my settings" in text and "# chosen last week" in text and "# the docs server" in text
    assert "  clock:\n    command: mcp-server-time\n" in text and "timeout: 15\n" in text
    listing = run_hermes("mcp", "list", home=hermes_home).stdout
    assert "docs   disabled  http" in listing and "clock  enabled   stdio  mcp-server-time --local-timezone UTC" in listing
    dup = run_hermes("mcp", "add", "clock", "--url", "http://127.0.0.1:1/mcp", home=hermes_home)
    assert dup.returncode == 1 and "already exists" in dup.stderr and "Traceback" not in dup.stderr
    assert run_hermes("mcp", "remove", "docs", home=hermes_home).returncode == 0
    assert run_hermes("mcp", "remove", "clock", home=hermes_home).returncode == 0
    after = path.read_text()
    assert "mcp_servers" not in after and "# chosen last week" in after and after.endswith("\n")
    missing = run_hermes("mcp", "remove", "clock", home=hermes_home)
    assert missing.returncode == 1 and "no MCP server named 'clock'" in missing.stderr


def test_add_rejects_bad_input_without_touching_config(hermes_home):
    path = write_config(hermes_home, CONFIG)
    for args, message in ((["bad name", "--command", "x"], "invalid server name"),
                          (["web", "--url", "ftp://x"], "http:// or https://"),
                          (["e", "--command", "x", "--env", "NOEQUALS"], "KEY=VALUE")):
        out = run_hermes("mcp", "add", *args, home=hermes_home)
        assert out.returncode == 1 and message in out.stderr, out.stderr
    assert path.read_text() == CONFIG


def test_mcp_test_connects_and_lists_tools_with_timings(hermes_home):
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip("mcp and mcp-server-time are needed (.ci/install-mcp-servers.sh)")
    write_config(hermes_home, f"mcp_servers:\n  clock:\n    command: {sys.executable}\n    args: [-m, mcp_server_time]\n"
                              "  dead:\n    url: http://127.0.0.1:9/mcp\n    connect_timeout: 3\n")
    out = run_hermes("mcp", "test", "clock", "--call", "get_current_time", "--args", '{"timezone": "UTC"}',
                     home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert "connected in" in out.stdout and "2 tools" in out.stdout and "mcp__clock__get_current_time" in out.stdout
    assert "call get_current_time" in out.stdout and "UTC" in out.stdout
    dead = run_hermes("mcp", "test", "dead", home=hermes_home)
    assert dead.returncode == 1 and "FAILED" in dead.stderr and "Traceback" not in dead.stderr


def test_add_says_a_server_is_untrusted_unless_vouched_for(hermes_home):
    path = write_config(hermes_home, CONFIG)
    out = run_hermes("mcp", "add", "clock", "--command", "mcp-server-time", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    assert "Untrusted:" in out.stdout and "mcp_servers.clock.trusted: true" in out.stdout, out.stdout
    assert "trusted" not in path.read_text()
    out = run_hermes("mcp", "add", "mine", "--command", "my-server", "--trusted", home=hermes_home, input="")
    assert out.returncode == 0 and "Untrusted" not in out.stdout, out.stdout
    assert "  mine:\n    command: my-server\n    trusted: true\n" in path.read_text(), path.read_text()
