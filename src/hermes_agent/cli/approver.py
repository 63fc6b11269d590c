"""Questions from worker threads answered at the REPL prompt: dangerous-command approval (the Approver
seam: once/session/always/deny, timing out to deny) and the `clarify` tool's callback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_agent.cli.screen import Screen


@dataclass(slots=True)
class Question:
    """One pending question: the prompt line shown at the input, optional choices (arrow keys pick
    one), and the answer once given (None when cancelled)."""

    prompt: str
    choices: list[str] = field(default_factory=list)
    selected: int = 0
    answer: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def move(self, step: int) -> None:
        """Move the highlighted choice (wrapping)."""
        if self.choices:
            self.selected = (self.selected + step) % len(self.choices)


class Asker:
    """Routes one question at a time from any thread to the prompt and waits for the answer."""

    def __init__(self, screen: Screen, invalidate: Callable[[], None]) -> None:
        self.screen = screen
        self.invalidate = invalidate
        self.pending: Question | None = None
        self._one_at_a_time = threading.Lock()

    def ask(self, header: list[str], question: Question, timeout: float,
            cancel: threading.Event | None = None) -> str | None:
        """Print `header`, show `question` at the prompt, wait; None on timeout, cancel or interrupt."""
        with self._one_at_a_time:
            self.screen.lines(header)
            self.pending = question
            self.invalidate()
            deadline = time.monotonic() + timeout
            try:
                while not question.done.wait(0.1):
                    if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                        return None
                return question.answer
            finally:
                self.pending = None
                self.invalidate()

    def answer(self, text: str | None) -> bool:
        """Deliver the user's input to the pending question; False when nothing is pending."""
        question = self.pending
        if question is None:
            return False
        question.answer = text
        question.done.set()
        return True


class ReplApprover:
    """The REPL's Approver (approval.approvers.Approver): `ask(request)` shows the full command above the
    prompt and returns once|session|always|deny; deny on timeout, Ctrl-C or an interrupted turn."""

    can_ask = True

    def __init__(self, asker: Asker, *, timeout: float = 60.0, yolo: bool = False,
                 cancel: threading.Event | None = None) -> None:
        self.asker = asker
        self.timeout = timeout
        self.yolo = yolo
        self.cancel = cancel

    def ask(self, request: object) -> str:
        """Ask the user about a flagged command or write; never raises."""
        from hermes_agent.approval.approvers import parse_choice, title_for

        once_only = bool(getattr(request, "once_only", False))  # leaving the sandbox: yolo never answers it
        if self.yolo and not once_only:
            return "once"
        reason = str(getattr(request, "description", "") or "flagged")
        timeout = float(getattr(request, "timeout", 0) or self.timeout)
        kind = str(getattr(request, "kind", "command"))
        title = title_for(kind) if kind in ("write", "context") else title_for("command")
        s = self.asker.screen
        choices = "[o]nce  |  [d]eny" if once_only else "[o]nce  |  [s]ession  |  [a]lways  |  [d]eny"
        header = self._header(request, title, reason, choices, timeout, once_only)
        prompt = "Choice [o/D]: " if once_only else "Choice [o/s/a/D]: "
        while True:
            raw = self.asker.ask(header, Question(prompt), timeout, self.cancel)
            if raw is None:
                s.line("    no answer in time, or cancelled: denied", "yellow")
                return "deny"
            choice = parse_choice(raw)
            if choice is not None:
                s.line(f"    {choice}", "dim" if choice != "deny" else "yellow")
                return choice
            header = [s.style("    answer o or d" if once_only else "    answer o, s, a or d", "yellow")]
            if raw.strip().lower() in ("v", "view"):  # the whole command, then the reason again
                from hermes_agent.approval.display import full, safe

                command = str(getattr(request, "command", "") or "")
                header = ["    " + row for row in full(command)] + [s.style(f"    ⚠️  reason: {safe(reason)}", "yellow"),
                                                                    *header]


    def _header(self, request: object, title: str, reason: str, choices: str, timeout: float,
                once_only: bool) -> list[str]:
        """Title, the command fitted to the terminal (approval/display.py), then the flagged part and the
        reason again right above the choices, so padding never scrolls what is dangerous off screen."""
        from hermes_agent.approval.approvers import once_note
        from hermes_agent.approval.display import VIEW_HINT, fit, safe, terminal_size

        s = self.asker.screen
        rows, width = terminal_size()
        keys = tuple(getattr(request, "pattern_keys", ()) or (str(getattr(request, "pattern_key", "")),))
        kind = str(getattr(request, "kind", "command"))
        shown = fit(str(getattr(request, "command", "") or ""), keys, rows=rows, width=width - 4,
                    reserved=11 if once_only else 10)
        reason = safe(reason)
        return [s.style(f"⚠️  {title}: {reason}", "yellow"), *("    " + row for row in shown.rows),
                *(s.style(f"    ⚠️  dangerous part: {part}", "yellow") for part in shown.flagged),
                s.style(f"    ⚠️  reason: {reason}", "yellow"),
                *([s.style(f"    {VIEW_HINT}", "dim")] if shown.shortened else []),
                *([s.style(f"    {once_note(kind)[:-1]} (even with /yolo).", "yellow")] if once_only else []),
                s.style(f"    {choices}   (no answer in {timeout:g} s = deny)", "dim")]

def make_clarify(asker: Asker, timeout: float,
                 cancel: threading.Event | None = None) -> Callable[[str, list[str]], str]:
    """The ctx.clarify callback: numbered choices plus 'Other', or an open question."""

    def clarify(question: str, choices: list[str]) -> str:
        s = asker.screen
        header = [s.style(f"❓ {question}", "bold_cyan")]  # the choices are drawn at the prompt
        if choices:
            prompt = f"Choose 1-{len(choices)} (↑/↓ + Enter) or type another answer: "
        else:
            prompt = "Your answer: "
        question_box = Question(prompt, list(choices))
        raw = asker.ask(header, question_box, timeout, cancel)
        answer = _pick(raw, choices, question_box.selected)
        s.line(f"   → {answer}" if answer else "   (no answer)", "dim")
        return answer

    return clarify


def _pick(raw: str | None, choices: list[str], selected: int) -> str:
    """A number picks that choice, Enter alone the highlighted one, anything else is the answer."""
    if raw is None:
        return ""
    text = raw.strip()
    if not text and choices:
        return choices[selected]
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text
