"""Chat approvals: the Approver (approval/approvers.py seam) that asks in the chat, with inline buttons
and `/approve` / `/deny`. Called from the agent's worker thread; answered from the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os

from hermes_agent.approval.approvers import CHOICES, ApprovalRequest, Choice, once_note
from hermes_agent.gateway.base import PlatformAdapter

BUTTONS = (("✅ Once", "once"), ("Session", "session"), ("Always", "always"), ("❌ Deny", "deny"))
TEXT_ANSWERS = {"/approve": "once", "/approve once": "once", "/approve session": "session",
                "/approve always": "always", "/deny": "deny"}


def approval_text(request: ApprovalRequest) -> str:
    """The chat message: reason, the command fitted to one screen (approval/display.py: blank runs and space
    runs collapsed, controls and invisible characters marked, head + `... N more ...` + tail), then the flagged
    part and the reason again right above the way to answer."""
    from hermes_agent.approval.display import fit, safe

    shown = fit(request.command, request.pattern_keys or (request.pattern_key,), rows=40, width=160, reserved=0)
    body = "\n".join(shown.rows).replace("```", "`\u200b``")
    reason = safe(request.description)
    above = "".join(f"Dangerous part: {part}\n" for part in shown.flagged) + f"Reason: {reason}\n"
    head = f"⚠️ Approval needed: {reason}\n\n```\n{body}\n```\n\n{above}"
    if request.once_only:
        return (f"{head}{once_note(request.kind)} Reply /approve or /deny. "
                f"No answer within {request.timeout:g} s = deny.")
    return (f"{head}Reply /approve (once), /approve session, /approve always or /deny. "
            f"No answer within {request.timeout:g} s = deny.")


class ChatApprover:
    """Asks one chat. `ask` blocks its (worker) thread until a button, a text answer or the timeout."""

    can_ask = True

    def __init__(self, loop: asyncio.AbstractEventLoop, adapter: PlatformAdapter, chat_id: str,
                 timeout: float | None = None) -> None:
        self.loop, self.adapter, self.chat_id, self.timeout = loop, adapter, chat_id, timeout
        self._token = ""
        self._answer: concurrent.futures.Future | None = None
        self.cancelled = ""  # why the last request was called off unanswered (read by the gate's verdict)

    @property
    def waiting(self) -> bool:
        return self._answer is not None and not self._answer.done()

    def ask(self, request: ApprovalRequest) -> Choice:
        timeout = self.timeout if self.timeout is not None else request.timeout
        self._token, self.cancelled = os.urandom(4).hex(), ""  # not `secrets`: hmac, hashlib, random at start
        self._answer = concurrent.futures.Future()
        buttons = [(label, f"appr:{self._token}:{choice}") for label, choice in BUTTONS]
        try:
            message_id = asyncio.run_coroutine_threadsafe(
                self.adapter.send(self.chat_id, approval_text(request), buttons), self.loop).result(timeout=30)
        except (concurrent.futures.TimeoutError, OSError, RuntimeError):
            return "deny"
        try:
            choice = self._answer.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            choice = "deny"
            self._notify(f"No answer within {timeout:g} s: denied.")
        finally:
            self._answer = None
        self._drop_buttons(message_id)
        return choice if choice in CHOICES else "deny"

    def cancel(self, why: str) -> None:
        """Call off a pending request unanswered (/stop, the gateway stopping): denied, with `why` recorded."""
        if self.waiting and self._answer is not None:
            self.cancelled = why
            self._answer.set_result("deny")

    def _drop_buttons(self, message_id: str | None) -> None:
        """An answered (or expired, or cancelled) request's message loses its buttons."""
        clear = getattr(self.adapter, "clear_buttons", None)
        if not message_id or clear is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(clear(self.chat_id, message_id), self.loop).result(timeout=10)
        except (concurrent.futures.TimeoutError, OSError, RuntimeError):
            pass

    def _notify(self, text: str) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.adapter.send(self.chat_id, text), self.loop).result(timeout=30)
        except (concurrent.futures.TimeoutError, OSError, RuntimeError):
            pass

    def answer_button(self, data: str) -> Choice | None:
        """A button press `appr:<token>:<choice>` for the current request; None when stale or not ours."""
        parts = data.split(":")
        if len(parts) != 3 or parts[0] != "appr" or parts[1] != self._token or not self.waiting:
            return None
        return self._resolve(parts[2])

    def answer_text(self, text: str) -> Choice | None:
        choice = TEXT_ANSWERS.get(" ".join(text.lower().split()))
        if choice is None or not self.waiting:
            return None
        return self._resolve(choice)

    def _resolve(self, choice: str) -> Choice | None:
        if choice not in CHOICES or self._answer is None:
            return None
        self._answer.set_result(choice)
        return choice
