"""Approvers: the terminal prompt (real pipes standing in for /dev/tty), scripted and automatic ones."""

from __future__ import annotations

import io
import os
import time

from hermes_agent.approval.approvers import (
    ApprovalRequest,
    AutoApprover,
    AutoDenyApprover,
    ScriptedApprover,
    TerminalApprover,
    parse_choice,
    render_prompt,
)

REQUEST = ApprovalRequest("rm -rf build\necho done", "recursive_delete", "recursive delete", ("recursive_delete",),
                          timeout=2.0)


def ask_with_input(data: bytes, timeout: float = 2.0) -> tuple[str, str]:
    read_fd, write_fd = os.pipe()
    out = io.StringIO()
    try:
        os.write(write_fd, data)
        if data.endswith(b"<EOF>"):
            os.close(write_fd)
            write_fd = -1
        choice = TerminalApprover(timeout=timeout, stream_in=read_fd, stream_out=out).ask(REQUEST)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    return choice, out.getvalue()


def test_terminal_prompt_shows_the_full_command_and_choices() -> None:
    choice, shown = ask_with_input(b"s\n")
    assert choice == "session"
    assert "    rm -rf build\n    echo done\n" in shown
    assert "[o]nce  |  [s]ession  |  [a]lways  |  [d]eny" in shown and "recursive delete" in shown


def test_terminal_prompt_reasks_on_nonsense_and_accepts_words() -> None:
    choice, shown = ask_with_input(b"maybe\nALWAYS\n")
    assert choice == "always" and "Please type o, s, a or d" in shown


def test_terminal_prompt_empty_answer_and_eof_deny() -> None:
    assert ask_with_input(b"\n")[0] == "deny"
    assert ask_with_input(b"<EOF>")[0] == "deny"


def test_terminal_prompt_times_out_to_deny() -> None:
    started = time.monotonic()
    choice, shown = ask_with_input(b"", timeout=0.2)
    assert choice == "deny" and time.monotonic() - started < 1.5
    assert "No answer within 0.2 s" in shown


def test_terminal_without_a_tty_denies() -> None:
    approver = TerminalApprover(tty="/nonexistent/tty")
    assert approver.ask(REQUEST) == "deny"


def test_a_command_that_fits_one_screen_is_shown_whole() -> None:
    command = "rm -rf " + " ".join(f"dir{i}" for i in range(150))
    text = render_prompt(ApprovalRequest(command, "recursive_delete", "recursive delete"), 24, 100)
    assert command in text


def test_a_command_longer_than_the_screen_is_shown_head_and_tail_within_it() -> None:
    command = "rm -rf " + " ".join(f"dir{i}" for i in range(2000))
    text = render_prompt(ApprovalRequest(command, "recursive_delete", "recursive delete"), 24, 100)
    rows = sum(max(1, -(-len(line) // 100)) for line in text.split("\n"))
    assert rows <= 24, text
    assert "rm -rf dir0 dir1" in text and "dir1998 dir1999" in text and " more chars ... " in text
    assert text.rstrip().endswith("Choice [o/s/a/D]:")
    assert text.split("\n")[-4:-2] == ["    ⚠️  reason: recursive delete",
                                        "    (shortened to fit the screen: type v to see the whole command)"]


def test_parse_choice() -> None:
    assert [parse_choice(x) for x in ("o", "S", " a ", "d", "", "yes", "x")] == [
        "once", "session", "always", "deny", "deny", "once", None]


def test_scripted_and_automatic_approvers() -> None:
    scripted = ScriptedApprover(["once", "always"])
    assert [scripted.ask(REQUEST) for _ in range(3)] == ["once", "always", "deny"]
    assert len(scripted.requests) == 3
    assert AutoApprover().ask(REQUEST) == "once"
    deny = AutoDenyApprover()
    started = time.monotonic()
    assert deny.ask(REQUEST) == "deny" and deny.can_ask is False
    assert time.monotonic() - started < 0.05
