"""The REPL's approver and clarify callback, answered from another thread as the prompt would."""

from __future__ import annotations

import io
import threading
import time

from hermes_agent.approval.approvers import ApprovalRequest
from hermes_agent.cli.approver import Asker, ReplApprover, make_clarify
from hermes_agent.cli.screen import Screen


def asker() -> tuple[Asker, io.StringIO]:
    out = io.StringIO()
    return Asker(Screen(out, color=False), lambda: None), out


def answer_when_asked(a: Asker, *answers: str | None, move: int = 0) -> threading.Thread:
    def run() -> None:
        for text in answers:
            while a.pending is None or a.pending.done.is_set():
                time.sleep(0.005)
            a.pending.move(move)
            a.answer(text)
            time.sleep(0.02)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def request(command: str = "rm -r build\necho done", timeout: float = 5.0) -> ApprovalRequest:
    return ApprovalRequest(command=command, pattern_key="rm_recursive", description="recursive delete",
                           timeout=timeout)


def test_full_command_is_shown_and_the_choice_returned():
    a, out = asker()
    long_cmd = "rm -r " + " ".join(f"/tmp/dir{i}" for i in range(60))
    answer_when_asked(a, "s")
    assert ReplApprover(a).ask(request(long_cmd + "\necho done")) == "session"
    text = out.getvalue()
    assert long_cmd in text and "echo done" in text and "recursive delete" in text


def test_unclear_answer_asks_again():
    a, out = asker()
    answer_when_asked(a, "maybe", "a")
    assert ReplApprover(a).ask(request()) == "always"
    assert "answer o, s, a or d" in out.getvalue()


def test_timeout_cancel_and_empty_answer_deny():
    a, _ = asker()
    assert ReplApprover(a).ask(request(timeout=0.2)) == "deny"
    cancel = threading.Event()
    cancel.set()
    assert ReplApprover(a, cancel=cancel).ask(request()) == "deny"
    answer_when_asked(a, "")
    assert ReplApprover(a).ask(request()) == "deny"
    answer_when_asked(a, None)  # Ctrl-C at the question
    assert ReplApprover(a).ask(request()) == "deny"


def test_yolo_never_asks():
    a, out = asker()
    assert ReplApprover(a, yolo=True).ask(request()) == "once" and out.getvalue() == ""


def test_clarify_number_text_and_highlighted_choice():
    a, out = asker()
    clarify = make_clarify(a, 5.0)
    answer_when_asked(a, "2")
    assert clarify("Which?", ["red", "blue"]) == "blue"
    answer_when_asked(a, "purple please")
    assert clarify("Which?", ["red", "blue"]) == "purple please"
    answer_when_asked(a, "", move=1)
    assert clarify("Which?", ["red", "blue", "green"]) == "blue"
    assert "❓ Which?" in out.getvalue()


def test_clarify_timeout_gives_no_answer():
    a, _ = asker()
    assert make_clarify(a, 0.1)("Anyone?", []) == ""
