"""The real `hermes` REPL in a pseudo-terminal (pexpect) against the scripted model server: what the user
sees on screen, and what the model receives."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pexpect
import pytest

from tests.helpers import HERMES, model_config

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|[\r\x08]")
PROMPT = "❯ "


class Repl:
    """Drives one `hermes` process; `expect` searches the screen text with escape codes removed."""

    def __init__(self, home: Path, cwd: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env.update(HERMES_HOME=str(home), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120", LINES="40")
        self.child = pexpect.spawn(HERMES, list(args), env=env, cwd=str(cwd), dimensions=(40, 120),
                                   encoding="utf-8", codec_errors="replace", timeout=15)
        self.raw = ""
        self.pos = 0  # search position in the stripped text

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw)

    def _pump(self, wait: float) -> None:
        try:
            self.raw += self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            if not self.child.isalive():
                raise

    def expect(self, pattern: str, timeout: float = 15.0) -> re.Match:
        """Wait until `pattern` (a regex) appears after the previous match; return the match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} not seen; screen text after last match:\n{self.text[self.pos:]}")
            self._pump(0.05)

    def ready(self) -> None:
        """Wait for the prompt and for the agent (the banner's tools line)."""
        self.expect(r"\d+ tools from \d+ toolset")
        self.expect(PROMPT)

    def send(self, line: str) -> None:
        self.child.send(line + "\r")

    def exit(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF, timeout=15)
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def start(scripted, hermes_home, tmp_path):
    """start(extra_config="", *args) -> a ready Repl on the scripted server."""
    opened: list[Repl] = []
    cwd = tmp_path / "work"
    cwd.mkdir()

    def _start(extra: str = "", *args: str, wait: bool = True) -> Repl:
        model_config(hermes_home, scripted.url, extra)
        repl = Repl(hermes_home, cwd, *args)
        opened.append(repl)
        if wait:
            repl.ready()
        return repl

    yield _start
    for repl in opened:
        repl.close()


def wait_requests(server, n: int, timeout: float = 10.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while len(server.requests) < n:
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {n} model requests, got {len(server.requests)}")
        time.sleep(0.02)
    return [r["body"] for r in server.requests]


def convo(body: dict) -> list[tuple[str, str]]:
    """(role, content) of the non-system messages of a request."""
    return [(m["role"], m.get("content") or "") for m in body["messages"] if m["role"] != "system"]


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


def test_model_switch_applies_to_the_next_request(start, scripted):
    repl = start()
    repl.send("/model other-model")
    repl.expect(r"Model switched to other-model")
    repl.send("hi")
    repl.expect(r"ok")
    assert wait_requests(scripted, 1)[0]["model"] == "other-model"
    repl.send("/model")
    repl.expect(r"model\s+other-model")


def test_new_starts_an_empty_conversation(start, scripted):
    scripted.add({"content": "first answer"}, {"content": "fresh answer"})
    repl = start()
    repl.send("remember this")
    repl.expect(r"first answer")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("what did I say?")
    repl.expect(r"fresh answer")
    assert convo(wait_requests(scripted, 2)[1]) == [("user", "what did I say?")]


def test_retry_resends_the_last_message_and_replaces_its_answer(start, scripted):
    scripted.add({"content": "bad answer"}, {"content": "better answer"}, {"content": "fine"})
    repl = start()
    repl.send("question one")
    repl.expect(r"bad answer")
    repl.send("/retry")
    repl.expect(r"better answer")
    repl.send("thanks")
    repl.expect(r"fine")
    bodies = wait_requests(scripted, 3)
    assert convo(bodies[1]) == [("user", "question one")]
    assert convo(bodies[2]) == [("user", "question one"), ("assistant", "better answer"), ("user", "thanks")]


def test_undo_removes_the_last_exchange(start, scripted):
    scripted.add({"content": "A1"}, {"content": "A2"}, {"content": "A3"})
    repl = start()
    repl.send("one")
    repl.expect(r"A1")
    repl.send("two")
    repl.expect(r"A2")
    repl.send("/undo")
    repl.expect(r"Undone: two \(2 messages removed\)")
    repl.send("three")
    repl.expect(r"A3")
    assert convo(wait_requests(scripted, 3)[2]) == [("user", "one"), ("assistant", "A1"), ("user", "three")]


def test_compress_summarises_the_middle(start, scripted):
    filler = "lorem ipsum dolor sit amet " * 40  # big enough that a summary is smaller than the turns
    scripted.add(*({"content": f"answer {i} {filler}"} for i in range(6)))
    repl = start("compression:\n  protect_first_n: 1\n  protect_last_n: 2\n")
    for i in range(6):
        repl.send(f"message {i}")
        repl.expect(rf"answer {i}")
    scripted.add({"content": "SUMMARY: the user sent numbered messages."}, {"content": "after"})
    repl.send("/compress")
    m = repl.expect(r"Compressed: (\d+) → (\d+) messages")
    assert int(m.group(2)) < int(m.group(1))
    repl.send("and now?")
    repl.expect(r"after")
    last = wait_requests(scripted, 8)[-1]
    assert "SUMMARY: the user sent numbered messages." in json.dumps(last["messages"])
    assert len(last["messages"]) < 14


def test_unknown_command_gets_a_suggestion(start):
    repl = start()
    repl.send("/modle gpt")
    repl.expect(r"Unknown command /modle\. Did you mean /model\?")
    repl.send("/help")
    repl.expect(r"/personality")
    repl.expect(r"/quit")


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


def test_personality_switch_changes_the_system_prompt(start, scripted, hermes_home):
    (hermes_home / "SOUL.md").write_text("You are Soulful, a calm assistant.\n")
    repl = start("personalities:\n  pirate: Talk like a pirate at all times.\n")
    repl.send("/personality pirate")
    repl.expect(r"Personality set to pirate: the system prompt changes from the first message")
    repl.send("ahoy")
    repl.expect(r"ok")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("still a pirate?")
    repl.expect(r"ok")
    repl.send("/personality default")
    repl.expect(r"next conversation")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("hello")
    repl.expect(r"ok")
    prompts = [b["messages"][0]["content"] for b in wait_requests(scripted, 3)]
    assert all("Talk like a pirate" in p and "Soulful" not in p for p in prompts[:2])
    assert "Soulful" in prompts[2] and "pirate" not in prompts[2]


def test_configured_personality_applies_from_the_start(start, scripted):
    start("personalities:\n  terse:\n    system_prompt: Answer in five words or fewer.\n"
          "display:\n  personality: terse\n").send("hi")
    assert wait_requests(scripted, 1)[0]["messages"][0]["content"].startswith("Answer in five words or fewer.")


def test_sessions_are_listed_titled_and_resumed(start, scripted):
    scripted.add({"content": "noted: apples"})
    repl = start()
    repl.send("remember apples")
    repl.expect(r"noted: apples")
    repl.send("/title Fruit talk")
    repl.expect(r"Title set: Fruit talk")
    repl.send("/sessions")
    sid = repl.expect(r"● (\S+)\s+\S+ \S+\s+cli\s+2\s+Fruit talk").group(1)
    assert repl.exit() == 0

    scripted.add({"content": "you said apples"})
    again = start("", "-c")
    again.expect(rf"Resumed session {sid} “Fruit talk”: 2 messages")
    again.send("what fruit?")
    again.expect(r"you said apples")
    assert convo(wait_requests(scripted, 2)[1]) == [("user", "remember apples"), ("assistant", "noted: apples"),
                                                     ("user", "what fruit?")]
    again.send("/new")
    again.expect(r"New conversation started")
    again.send(f"/resume {sid[:12]}")
    again.expect(rf"Resumed session {sid} “Fruit talk”: 4 messages")


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


def test_info_commands_show_the_session(start, scripted, hermes_home):
    scripted.add({"content": "noted", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}})
    repl = start()
    repl.send("remember the milk")
    repl.expect(r"noted")
    repl.send("/usage")
    repl.expect(r"turns\s+1\s+model calls\s+1\s+input tokens\s+1,200\s+output tokens\s+34")
    repl.send("/history")
    repl.expect(r"you: remember the milk\s+hermes: noted")
    repl.send("/save convo.json")
    repl.expect(r"Saved 3 messages to convo\.json")
    saved = json.loads((Path(repl.child.cwd) / "convo.json").read_text())
    assert [m["role"] for m in saved["messages"]] == ["system", "user", "assistant"]
    repl.send("/tools")
    repl.expect(r"📖 read_file\s+file")
    repl.send("/toolsets")
    repl.expect(r"● hermes-cli")
    repl.send("/provider")
    repl.expect(r"model\s+scripted-model")
    repl.send("/config")
    repl.expect(rf"home\s+{re.escape(str(hermes_home))}")
    repl.send("/verbose")
    repl.expect(r"Tool progress: verbose")
    repl.send("/reasoning show")
    repl.expect(r"Reasoning is now shown")
    repl.send("/yolo")
    repl.expect(r"YOLO on")
    repl.send("/stop")
    repl.expect(r"No background processes are running")
    repl.send("/rollback")
    repl.expect(r"No checkpoints for .* yet")
    repl.send("/quit")
    repl.child.expect(pexpect.EOF, timeout=10)
    repl.child.close()
    assert repl.child.exitstatus == 0


def test_rollback_restores_files_changed_by_the_agent(start, scripted):
    repl = start()
    work = Path(repl.child.cwd)
    (work / "keep.txt").write_text("original\n")
    scripted.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "keep.txt", "content": "clobbered\n"}}]},
                 {"content": "written"})
    repl.send("overwrite keep.txt")
    repl.expect(r"written")
    assert (work / "keep.txt").read_text() == "clobbered\n"
    repl.send("/rollback")
    repl.expect(r"Restored checkpoint [0-9a-f]{10}")
    assert (work / "keep.txt").read_text() == "original\n"


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


def test_stop_kills_background_processes(start, scripted):
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 60", "background": True}}]},
                 {"content": "started it"})
    repl = start()
    repl.send("run a server")
    repl.expect(r"started it")
    started = json.loads(wait_requests(scripted, 2)[1]["messages"][-1]["content"])
    assert started["status"] == "running"
    repl.send("/stop")
    repl.expect(r"Stopped 1 background process\(es\): sleep 60")
    deadline = time.monotonic() + 5
    while _alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(started["pid"])
    repl.send("/stop")
    repl.expect(r"No background processes are running")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting to be reaped is dead too
            return fh.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
