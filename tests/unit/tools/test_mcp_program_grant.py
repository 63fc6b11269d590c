"""Which of a configured MCP server's own paths become readable to it (tools/mcp/confine.py): a plain folder of
another home (a clone in /root while HOME is a folder elsewhere) is, that home itself, anything holding it and its
dot-entries (where credentials live) are not."""

from __future__ import annotations

from hermes_agent.tools.mcp.confine import _dotted_in


def test_a_plain_folder_of_another_home_is_granted_its_dot_entries_are_not():
    assert not _dotted_in("/root/src/hermes-agent/tests/fixtures", "/root")
    assert _dotted_in("/root/.aws", "/root") and _dotted_in("/root/proj/.ssh/keys", "/root")
    assert _dotted_in("/root", "/root") and _dotted_in("/", "/root")  # the home itself, or what holds it
    assert not _dotted_in("/srv/app/.venv/bin", "/root")  # not in that home at all: other rules decide
