"""LiveView: agent events in, what the user reads out (answers, one line per tool call, notices)."""

from __future__ import annotations

import io

from hermes_agent.cli.live import LiveView, wrap
from hermes_agent.cli.screen import Screen
from hermes_agent.events import MessageAdded, Notice, TextDelta, ToolFinished, ToolStarted, TurnFinished
from hermes_agent.messages import Message, Usage


def view(progress: str = "all") -> tuple[LiveView, io.StringIO]:
    out = io.StringIO()
    return LiveView(Screen(out, color=False, width=80), lambda: None, progress=progress), out


def tool(v: LiveView, call_id: str, name: str, preview: str, ok: bool = True, error: str = "") -> None:
    bare = name == "terminal"  # the executor labels a call from its tool's traits (show_name)
    v(ToolStarted(call_id, name, preview, "💻" if bare else "📖", preview if bare else f"{name} {preview}"))
    v(ToolFinished(call_id, name, '{"output": "line one\\nline two"}', 0.25, ok, error))


def test_streamed_text_is_live_until_the_message_ends_then_printed_once():
    v, out = view()
    v.begin()
    v(TextDelta("Hello "))
    v(TextDelta("world"))
    live = "".join(t for _, t in v.fragments(80, 10))
    assert "Hello world" in live and out.getvalue() == ""
    v(MessageAdded(Message("assistant", "Hello world")))
    assert out.getvalue() == "Hello world\n"
    assert "Hello" not in "".join(t for _, t in v.fragments(80, 10))


def test_one_progress_line_per_tool_call_with_emoji_args_and_duration():
    v, out = view()
    tool(v, "1", "terminal", "ls -la")
    tool(v, "2", "read_file", "src/app.py", ok=False, error="Blocked: src/app.py is outside the workspace")
    assert out.getvalue().splitlines() == ["💻 ls -la (0.2s)",
                                           "📖 read_file src/app.py (0.2s)  ✗ Blocked: src/app.py is outside the workspace"]


def test_progress_modes():
    v, out = view("off")
    tool(v, "1", "terminal", "ls")
    assert out.getvalue() == ""
    v, out = view("new")
    tool(v, "1", "terminal", "ls")
    tool(v, "2", "terminal", "pwd")
    tool(v, "3", "read_file", "a.txt")
    assert len(out.getvalue().splitlines()) == 2
    v, out = view("verbose")
    tool(v, "1", "terminal", "ls")
    assert "line one" in out.getvalue() and "line two" in out.getvalue()


def test_running_tool_and_spinner_are_drawn_while_busy():
    v, _ = view()
    v.begin()
    v(ToolStarted("1", "terminal", "sleep 5", "💻", "sleep 5"))
    live = "".join(t for _, t in v.fragments(80, 10))
    assert "💻 sleep 5" in live and "Ctrl-C to stop" in live
    v.end()
    assert v.fragments(80, 10) == []


def test_interrupted_turn_says_so_and_notices_are_printed():
    v, out = view()
    v(Notice("retrying in 2s", "warning"))
    v(TurnFinished("Interrupted.", Usage(), "interrupted"))
    text = out.getvalue()
    assert "· retrying in 2s" in text and "interrupted" in text


def test_wrap_keeps_rows_within_width():
    rows = wrap("word " * 50 + "\nx" * 3, 20)
    assert all(len(r) <= 20 for r in rows)


def test_reasoning_is_printed_dimmed_only_when_shown():
    from hermes_agent.events import ReasoningDelta

    for shown in (False, True):
        out = io.StringIO()
        v = LiveView(Screen(out, color=True, width=80), lambda: None, show_reasoning=shown)
        v.begin()
        v(ReasoningDelta("weighing the options"))
        live = "".join(t for _, t in v.fragments(80, 10))
        v(TextDelta("Answer."))
        v(MessageAdded(Message("assistant", "Answer.")))
        assert ("weighing the options" in live) is shown
        assert ("\x1b[2mweighing the options\x1b[0m" in out.getvalue()) is shown
        assert out.getvalue().endswith("Answer.\n")
