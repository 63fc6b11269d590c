"""The real `hermes` REPL in a pseudo-terminal against the scripted model server: streaming, tool lines,
Ctrl-C, queueing, input editing, and questions (approval, clarify) answered at the prompt."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pexpect
import pytest

from tests.helpers import model_config
from tests.integration.repl_driver import PROMPT, Repl, convo, wait_requests


def test_answer_streams_then_renders_and_ctrl_d_exits_0(start, scripted):
    scripted.add({"content": "alpha beta gamma **delta**", "chunk_delay": 0.15})
    repl = start()
    repl.send("hello there")
    repl.expect(r"❯ hello there")
    repl.expect(r"alpha")
    assert "alpha beta gamma delta" not in repl.text  # seen while streaming, before the final render
    repl.expect(r"alpha beta gamma delta")
    repl.expect(PROMPT)
    assert convo(scripted.requests[0]["body"]) == [("user", "hello there")]
    assert repl.exit() == 0


def test_tool_call_prints_one_progress_line(start, scripted):
    scripted.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                 {"content": "The notes say hi."})
    repl = start()
    (Path(repl.child.cwd) / "notes.txt").write_text("hi\n")
    repl.send("read my notes")
    line = repl.expect(r"📖 read_file notes\.txt \(\d+\.\ds\)")
    repl.expect(r"The notes say hi\.")
    assert repl.text.count("read_file notes.txt (") == 1, line
    tool_msg = scripted.requests[1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and "hi" in tool_msg["content"]


def test_ctrl_c_mid_turn_returns_to_prompt_and_keeps_the_partial_answer(start, scripted):
    words = " ".join(f"w{i}" for i in range(40))
    scripted.add({"content": words, "chunk_delay": 0.25}, {"content": "second answer"})
    repl = start()
    repl.send("tell me a long story")
    repl.expect(r"w2")
    t0 = time.monotonic()
    repl.child.sendcontrol("c")
    repl.expect(r"interrupted")
    repl.expect(PROMPT)
    assert time.monotonic() - t0 < 3
    repl.send("go on")
    repl.expect(r"second answer")
    second = convo(wait_requests(scripted, 2)[1])
    assert second[0] == ("user", "tell me a long story")
    assert second[1][0] == "assistant" and second[1][1].startswith("w0 w1 w2") and "w39" not in second[1][1]
    assert second[2] == ("user", "go on")
    assert repl.exit() == 0


def test_message_typed_during_a_turn_is_queued_and_runs_next(start, scripted):
    scripted.add({"content": "one two three four five six", "chunk_delay": 0.2}, {"content": "queued reply"})
    repl = start()
    repl.send("first")
    repl.expect(r"one")
    repl.send("second")
    repl.expect(r"1 queued: second")
    repl.expect(r"queued reply")
    bodies = wait_requests(scripted, 2)
    assert convo(bodies[1]) == [("user", "first"), ("assistant", "one two three four five six"), ("user", "second")]


def test_clarify_question_is_answered_at_the_prompt(start, scripted):
    scripted.add({"tool_calls": [{"name": "clarify",
                                  "arguments": {"question": "Which colour?", "choices": ["red", "blue"]}}]},
                 {"content": "Blue it is."})
    repl = start()
    repl.send("paint it")
    repl.expect(r"❓ Which colour\?")
    repl.expect(r"1\. red\s+2\. blue\s+Choose 1-2")
    repl.child.send("\x1b[B")  # arrow down to the second choice, then Enter
    time.sleep(0.2)
    repl.send("")
    repl.expect(r"→ blue")
    repl.expect(r"Blue it is\.")
    result = json.loads(wait_requests(scripted, 2)[1]["messages"][-1]["content"])
    assert result == {"question": "Which colour?", "answer": "blue"}


def test_input_history_persists_across_runs(start, hermes_home):
    repl = start()
    repl.send("/usage")
    repl.expect(r"model calls")
    assert repl.exit() == 0
    assert "/usage" in (hermes_home / ".hermes_history").read_text()


def _approval_wired(scripted, hermes_home, tmp_path) -> bool:
    """True when bootstrap hands the frontend's approver to the approval gate (probed in-process)."""
    import importlib.util

    if importlib.util.find_spec("hermes_agent.approval.approvers") is None:
        return False
    from hermes_agent.approval.approvers import ScriptedApprover
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.config.loader import load_settings

    model_config(hermes_home, scripted.url)
    probe = tmp_path / "probe"
    probe.mkdir()
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {probe}"}}]},
                 {"content": "probe done"})
    approver = ScriptedApprover(["deny"])
    agent = build_agent(load_settings({}), approver=approver, interactive=True)
    try:
        agent.run_turn("probe")
    finally:
        agent.close()
    scripted.requests.clear()
    return bool(approver.requests)


def test_approval_is_answered_at_the_prompt(start, scripted, hermes_home, tmp_path):
    if not _approval_wired(scripted, hermes_home, tmp_path):
        pytest.skip("needs bootstrap.build_agent to pass its `approver` to the approval gate "
                    "(a flagged terminal command ran without asking the approver)")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "rm -r somedir"}}]},
                 {"content": "removed"})
    repl = start()
    target = Path(repl.child.cwd) / "somedir"
    target.mkdir()
    repl.send("delete somedir")
    repl.expect(r"Potentially dangerous command detected")
    repl.expect(r"rm -r somedir")
    repl.expect(r"Choice \[o/s/a/D\]")
    time.sleep(0.3)
    assert target.exists()
    repl.send("o")
    repl.expect(r"removed")
    assert not target.exists()


def test_denied_approval_keeps_the_directory(start, scripted, hermes_home, tmp_path):
    if not _approval_wired(scripted, hermes_home, tmp_path):
        pytest.skip("needs bootstrap.build_agent to pass its `approver` to the approval gate")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "rm -r keepme"}}]},
                 {"content": "it was denied"})
    repl = start()
    target = Path(repl.child.cwd) / "keepme"
    target.mkdir()
    repl.send("delete keepme")
    repl.expect(r"Choice \[o/s/a/D\]")
    repl.send("d")
    repl.expect(r"it was denied")
    assert target.exists()
    assert "denied" in wait_requests(scripted, 2)[1]["messages"][-1]["content"].lower()


def test_ctrl_c_stops_a_running_tool(start, scripted):
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 30"}}]},
                 {"content": "after the stop"})
    repl = start()
    repl.send("wait a while")
    repl.expect(r"💻 sleep 30")
    t0 = time.monotonic()
    repl.child.sendcontrol("c")
    repl.expect(r"interrupted")
    assert time.monotonic() - t0 < 5
    repl.send("status?")
    repl.expect(r"after the stop")
    second = wait_requests(scripted, 2)[1]["messages"]
    assert second[-2]["role"] == "tool" and second[-1] == {"role": "user", "content": "status?"}


def test_multiline_input_paste_and_completion(start, scripted):
    repl = start()
    (Path(repl.child.cwd) / "notes_dir").mkdir()
    repl.child.send("line one\x1b\rline two\r")  # Alt-Enter (Esc Enter) inserts a newline
    repl.expect(r"❯ line one\s+line two")
    repl.child.send("\x1b[200~pasted a\npasted b\x1b[201~\r")  # bracketed paste keeps its newline
    repl.expect(r"❯ pasted a\s+pasted b")
    repl.child.send("look at ./notes")
    repl.expect(r"notes_dir/")
    repl.child.send("\t\r")
    repl.expect(r"❯ look at ./notes_dir")
    repl.child.send("/pers")
    repl.expect(r"/personality\s+list or switch personalities")
    repl.child.send("\t\r")
    repl.expect(r"none\s+no persona")
    bodies = wait_requests(scripted, 3)
    assert [convo(b)[-1][1] for b in bodies] == ["line one\nline two", "pasted a\npasted b", "look at ./notes_dir"]


def test_no_model_configured_is_one_line_and_exit_2(hermes_home, tmp_path):
    repl = Repl(hermes_home, tmp_path)
    repl.child.expect(pexpect.EOF, timeout=15)
    repl.raw += repl.child.before
    repl.child.close()
    assert repl.child.exitstatus == 2
    assert "hermes: config error: no model configured" in repl.text and "Traceback" not in repl.text


def test_model_error_is_one_line_and_the_repl_goes_on(start, scripted):
    scripted.add({"error": {"status": 401, "message": "invalid api key"}}, {"content": "back again"})
    repl = start()
    repl.send("hi")
    repl.expect(r"error: .*API key was refused")
    repl.send("retry please")
    repl.expect(r"back again")
    assert "Traceback" not in repl.text
