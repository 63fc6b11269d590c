"""The slash-command table: parsing, aliases, did-you-mean, and that every documented command exists."""

from __future__ import annotations

from hermes_agent.cli import slash

REQUIRED = ["help", "new", "reset", "clear", "history", "retry", "undo", "model", "provider", "tools", "toolsets",
            "skills", "sessions", "resume", "title", "compress", "usage", "config", "personality", "yolo", "verbose",
            "save", "rollback", "stop", "quit", "exit", "q"]


def test_every_documented_command_and_alias_resolves():
    for name in REQUIRED:
        command, arg = slash.lookup(f"/{name} some arg")
        assert command is not None, name
        assert arg == "some arg"
    assert slash.lookup("/reset")[0].name == "new" and slash.lookup("/Q")[0].name == "quit"


def test_paths_are_messages_not_commands():
    assert slash.is_command("/model gpt-4o")
    assert not slash.is_command("/etc/hosts looks odd, why?")
    assert not slash.is_command("/ alone")


def test_unknown_commands_get_the_closest_name():
    assert slash.unknown_message("/modle x") == "Unknown command /modle. Did you mean /model? Type /help for the list."
    assert "Did you mean /personality?" in slash.unknown_message("/pers")
    assert "Did you mean" not in slash.unknown_message("/zzzzzz")


def test_names_are_unique_and_documented():
    names = [n for c in slash.table() for n in (c.name, *c.aliases)]
    assert len(names) == len(set(names))
    assert all(c.help and c.handler for c in slash.table())
    assert {n for n, _ in slash.completions()} == set(names)
