"""The Approver seam and its implementations. Contract: `ask` returns "once", "session", "always" or
"deny", never raises, and gives "deny" once `request.timeout` seconds pass without an answer."""

from __future__ import annotations

import os
import select
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO

Choice = Literal["once", "session", "always", "deny"]
CHOICES: tuple[Choice, ...] = ("once", "session", "always", "deny")
_KEYS = {"o": "once", "once": "once", "y": "once", "yes": "once", "s": "session", "session": "session",
         "a": "always", "always": "always", "d": "deny", "deny": "deny", "n": "deny", "no": "deny", "": "deny"}


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked about. `command` is the full text, never truncated; `kind` is
    "command" for terminal commands, "write" for file writes to sensitive paths and "external" for a
    call to an MCP/plugin tool whose server asks for approval (origin, tool and arguments)."""

    command: str
    pattern_key: str
    description: str
    pattern_keys: tuple[str, ...] = ()
    kind: Literal["command", "write", "external", "persist", "context"] = "command"
    session_id: str | None = None
    timeout: float = 60.0
    once_only: bool = False  # crossing the sandbox boundary: only this call can be approved


class Approver(Protocol):
    """Asks a human. `can_ask` is False for approvers that never reach anyone (the gate then denies
    at once with an explanation instead of calling `ask`). An approver may also carry `cancelled`: a non-empty
    reason when its last "deny" was a request called off unanswered (/stop, a restart), not the user's no."""

    can_ask: bool

    def ask(self, request: ApprovalRequest) -> Choice:
        """The user's answer; "deny" on timeout or any failure."""
        ...


class AutoDenyApprover:
    """For sessions with no way to ask (stdin not a terminal, cron, subagents): always deny."""

    can_ask = False

    def ask(self, request: ApprovalRequest) -> Choice:
        return "deny"


class AutoApprover:
    """Approves everything once (tests, or an explicit --yolo frontend). Not a person: it never approves
    crossing the sandbox boundary (the gate asks only approvers whose `human` is true for that)."""

    can_ask = True
    human = False

    def ask(self, request: ApprovalRequest) -> Choice:
        return "once"


class ScriptedApprover:
    """Answers from a queue (tests). An empty queue denies; `delay` seconds are waited per answer,
    and a delay longer than the request timeout ends in "deny" like a user who never answers."""

    can_ask = True

    def __init__(self, answers: Iterable[Choice] = (), *, delay: float = 0.0) -> None:
        self.answers: deque[Choice] = deque(answers)
        self.requests: list[ApprovalRequest] = []
        self.delay = delay
        self._lock = threading.Lock()

    def ask(self, request: ApprovalRequest) -> Choice:
        with self._lock:
            self.requests.append(request)
            answer = self.answers.popleft() if self.answers else "deny"
        if self.delay:
            time.sleep(min(self.delay, request.timeout))
            if self.delay >= request.timeout:
                return "deny"
        return answer if answer in CHOICES else "deny"


_TITLES = {"command": "Potentially dangerous command detected", "write": "Write to a sensitive path requested",
           "external": "External tool call needs approval",
           "persist": "A lasting change after untrusted content needs approval",
           "context": "A context file was changed by confined code"}


def title_for(kind: str, default: str = "Potentially dangerous command detected") -> str:
    """The heading of an approval request of this kind."""
    return _TITLES.get(kind, default)


def once_note(kind: str) -> str:
    """Why a once-only request offers only once/deny."""
    if kind == "context":
        return "Every later session loads this file as instructions: only this change can be kept."
    return "This leaves the sandbox: only this one call can be approved."


def render_prompt(request: ApprovalRequest, rows: int = 24, width: int = 100) -> str:
    """The prompt text for a `rows` x `width` terminal: title and reason, the command fitted to the screen
    (approval/display.py), the reason and flagged part again right above the choices, and the prompt."""
    from hermes_agent.approval.display import VIEW_HINT, fit, safe

    title = title_for(request.kind, "Approval needed")
    shown = fit(request.command, request.pattern_keys or (request.pattern_key,), rows=rows, width=width - 4,
                reserved=10 if request.once_only else 9)
    body = "\n".join("    " + line for line in shown.rows)
    reason = safe(request.description)
    above = "".join(f"    ⚠️  dangerous part: {part}\n" for part in shown.flagged)
    above += f"    ⚠️  reason: {reason}\n" + (f"    {VIEW_HINT}\n" if shown.shortened else "")
    if request.once_only:
        return (f"\n⚠️  {title}: {reason}\n{body}\n\n{above}"
                f"    {once_note(request.kind)}\n"
                f"    [o]nce  |  [d]eny   (no answer in {request.timeout:g} s = deny)\n"
                f"    Choice [o/D]: ")
    return (f"\n⚠️  {title}: {reason}\n{body}\n\n{above}"
            f"    [o]nce  |  [s]ession  |  [a]lways  |  [d]eny   (no answer in {request.timeout:g} s = deny)\n"
            f"    Choice [o/s/a/D]: ")


def parse_choice(answer: str) -> Choice | None:
    """Map a typed answer to a choice; None when it is not one of them."""
    return _KEYS.get(answer.strip().lower())  # type: ignore[return-value]


class TerminalApprover:
    """Prompts on the controlling terminal (/dev/tty) and waits with select(), so the timeout holds
    even while nobody types. `stream_in`/`stream_out` replace the terminal (pipes in tests)."""

    can_ask = True

    def __init__(self, *, timeout: float | None = None, tty: str = "/dev/tty",
                 stream_in: TextIO | int | None = None, stream_out: TextIO | None = None) -> None:
        self.timeout = timeout
        self.tty = tty
        self.stream_in = stream_in
        self.stream_out = stream_out

    def ask(self, request: ApprovalRequest) -> Choice:
        timeout = self.timeout if self.timeout is not None else request.timeout
        try:
            fd_in, out, opened = self._open()
        except OSError:
            return "deny"
        try:
            from hermes_agent.approval.display import terminal_size

            rows, width = terminal_size(fd_in)
            out.write(render_prompt(request, rows, width))
            out.flush()
            return self._wait(fd_in, out, time.monotonic() + timeout, timeout, request)
        except (OSError, ValueError):
            return "deny"
        finally:
            for f in opened:
                f.close()

    def _open(self) -> tuple[int, TextIO, list]:
        if self.stream_in is not None and self.stream_out is not None:
            fd = self.stream_in if isinstance(self.stream_in, int) else self.stream_in.fileno()
            return fd, self.stream_out, []
        tty_in = open(self.tty, "rb", buffering=0)  # noqa: SIM115 - closed in ask()
        try:
            tty_out = open(self.tty, "w", encoding="utf-8")  # noqa: SIM115
        except OSError:
            tty_in.close()
            raise
        return tty_in.fileno(), tty_out, [tty_in, tty_out]

    @staticmethod
    def _wait(fd: int, out: TextIO, deadline: float, timeout: float, request: ApprovalRequest) -> Choice:
        buf = b""
        once_only = request.once_only
        retry = "    Please type o or d. Choice [o/D]: " if once_only else "    Please type o, s, a or d. Choice [o/s/a/D]: "
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.write(f"\n    No answer within {timeout:g} s: denied.\n")
                out.flush()
                return "deny"
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1024)
            if not chunk:
                return "deny"
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                typed = line.decode("utf-8", "replace")
                choice = parse_choice(typed)
                if choice is not None:
                    return choice
                if typed.strip().lower() in ("v", "view"):
                    from hermes_agent.approval.display import full, safe

                    out.write("".join(f"    {row}\n" for row in full(request.command)))
                    out.write(f"    ⚠️  reason: {safe(request.description)}\n")
                out.write(retry)
                out.flush()
