"""`hermes sessions ...` through its parser and run(), against a real state.db; checks what the user sees."""

from __future__ import annotations

import argparse
import io
import json
import time

import pytest

from hermes_agent.cli.commands import sessions
from hermes_agent.config.settings import Settings
from hermes_agent.messages import Message, ToolCall, Usage
from hermes_agent.storage import SessionStore


def hermes(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="hermes")
    sessions.add_parser(parser.add_subparsers(dest="command"))
    return sessions.run(parser.parse_args(["sessions", *argv]), Settings())


@pytest.fixture
def sid(hermes_home) -> str:
    with SessionStore() as store:
        info = store.create_session("cli", "gpt-4o")
        store.append_messages(info.id, [
            Message("user", "Why does the nightly backup fail?"),
            Message("assistant", None, (ToolCall("c1", "terminal", '{"command": "tail backup.log"}'),)),
            Message("tool", "ERROR: disk quota exceeded " + "x" * 2000, tool_call_id="c1", name="terminal"),
            Message("assistant", "The disk quota is exceeded; 数据库备份 needs 20 GB."),
        ])
        store.add_usage(info.id, Usage(10_000, 500))
        other = store.create_session("telegram", session_id="20000101_000000_abcdef")
        store.append_message(other.id, Message("user", "weather tomorrow?"), timestamp=time.time() - 90 * 86400)
        return info.id


def test_list(sid, capsys):
    assert hermes("list") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "LAST", "ACTIVE", "SOURCE", "MSGS", "TITLE"]
    assert out[1].startswith(sid) and "Why does the nightly backup fail?" in out[1] and " 4 " in out[1]
    assert len(out) == 3
    assert hermes("list", "--source", "telegram", "--limit", "5") == 0
    assert "weather tomorrow?" in capsys.readouterr().out


def test_bare_sessions_lists(sid, capsys):
    assert hermes() == 0
    assert sid in capsys.readouterr().out


def test_empty_store(hermes_home, capsys):
    assert hermes("list") == 0
    assert capsys.readouterr().out == "No sessions yet.\n"


def test_show_by_prefix(sid, capsys):
    assert hermes("show", sid[:17]) == 0
    out = capsys.readouterr().out
    assert f"Session {sid}  (cli, gpt-4o)" in out
    assert "Tokens: 10,000 in / 500 out   Cost: $0.0300" in out
    assert "→ terminal(" in out and "tail backup.log" in out
    assert "more chars; --full shows all" in out and "数据库备份" in out
    assert hermes("show", sid, "--full") == 0
    assert "x" * 2000 in capsys.readouterr().out


def test_missing_id_is_one_line_and_exit_1(sid, capsys):
    assert hermes("show", "doesnotexist") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "hermes sessions show: no session matches 'doesnotexist'\n"


def test_search(sid, capsys):
    assert hermes("search", "disk", "quota") == 0
    out = capsys.readouterr().out
    assert out.startswith(sid) and "**disk** **quota**" in out
    assert hermes("search", "数据库") == 0
    assert "**数据库**" in capsys.readouterr().out
    assert hermes("search", "quota", "--source", "telegram") == 0
    assert capsys.readouterr().out == "No sessions match 'quota'.\n"
    assert hermes("search", "weather", "--until", "2000-01-01") == 0
    assert "No sessions match" in capsys.readouterr().out
    assert hermes("search", "x", "--since", "last tuesday") == 1
    assert "invalid date 'last tuesday'" in capsys.readouterr().err


def test_export_to_file_and_stdout(sid, tmp_path, capsys):
    target = tmp_path / "s.jsonl"
    assert hermes("export", sid, "--format", "jsonl", "-o", str(target)) == 0
    assert capsys.readouterr().out.startswith(f"Wrote {target}")
    lines = [json.loads(x) for x in target.read_text().splitlines()]
    assert lines[0]["id"] == sid and len(lines) == 5
    assert hermes("export", sid, "--format", "md") == 0
    assert capsys.readouterr().out.startswith("# Why does the nightly backup fail?")
    assert hermes("export", sid, "-o", str(tmp_path / "missing" / "dir" / "x")) == 1
    assert "cannot write" in capsys.readouterr().err


def test_delete_needs_confirmation(sid, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert hermes("delete", sid) == 1
    assert capsys.readouterr().err == "hermes sessions delete: needs confirmation: re-run with --yes\n"
    assert hermes("delete", sid, "--yes") == 0
    assert capsys.readouterr().out == f"Deleted session {sid} (4 messages).\n"
    assert hermes("show", sid) == 1


def test_delete_interactive_no_keeps(sid, capsys, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty("n\n"))
    assert hermes("delete", sid) == 0
    assert capsys.readouterr().out.endswith("Kept.\n")
    assert hermes("show", sid) == 0


def test_prune(sid, capsys):
    assert hermes("prune", "--older-than", "365d", "--yes") == 0
    assert capsys.readouterr().out == "No sessions idle for more than 365d.\n"
    assert hermes("prune", "--older-than", "30d", "--yes") == 0
    assert capsys.readouterr().out == "Deleted 1 sessions (1 messages).\n"
    assert hermes("prune", "--older-than", "soon") == 1
    assert "invalid age 'soon'" in capsys.readouterr().err


def test_rename_and_stats(sid, capsys):
    assert hermes("rename", sid, "Backup", "failure") == 0
    assert hermes("stats") == 0
    out = capsys.readouterr().out
    assert "Sessions: 2   Messages: 5   Tool calls: 1" in out
    assert "Cost:     $0.0300" in out and "By source: cli 1 (4 msgs), telegram 1 (1 msgs)" in out
    assert hermes("stats", sid) == 0
    assert "Title:    Backup failure" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * 86400), ("12h", 43200), ("2w", 1209600),
                                               ("90m", 5400), ("45s", 45), ("7", 7 * 86400)])
def test_parse_age(text, seconds):
    assert sessions.parse_age(text) == seconds
