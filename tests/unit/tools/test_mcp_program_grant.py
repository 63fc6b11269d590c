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


def test_a_server_in_a_plain_folder_of_the_default_deny_home_is_granted(tmp_path, monkeypatch):
    """HOME is default-deny: a server at ~/tools/srv/server.py gets its folder, one in ~/.secret-tools does not."""
    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.tools.mcp.config import ServerConfig
    from hermes_agent.tools.mcp.confine import _server_code

    home = tmp_path / "home"
    for rel in ("proj", "tools/srv", ".secret-tools", ".hermes"):
        (home / rel).mkdir(parents=True)
    for rel in ("tools/srv/server.py", ".secret-tools/server.py"):
        (home / rel).write_text("print('x')\n")
    monkeypatch.setenv("HOME", str(home))
    policy = PathPolicy.build(workspace=[str(home / "proj")], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": False})  # a writable /tmp would make paths there untrusted
    assert policy.home_closed and not policy.check_read(str(home / "tools/srv/server.py")).allowed
    plain = ServerConfig(name="a", command="python3", args=(str(home / "tools/srv/server.py"),))
    dotted = ServerConfig(name="b", command="python3", args=(str(home / ".secret-tools/server.py"),))
    assert str(home / "tools/srv") in _server_code(policy, plain)
    assert not [p for p in _server_code(policy, dotted) if p.startswith(str(home))]
