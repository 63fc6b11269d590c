"""Team mode in the gateway: approvals a member's or guest's agent needs go to the owner and admins (buttons
in their DMs, denied at the timeout), and the `/role` and `/users` commands. Roles come from config/team.py."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import secrets
from dataclasses import dataclass, field

from hermes_agent.approval.approvers import CHOICES, ApprovalRequest, Choice
from hermes_agent.config.team import ROLES, Person, Team
from hermes_agent.gateway.approval import BUTTONS, TEXT_ANSWERS, approval_text
from hermes_agent.gateway.base import PlatformAdapter

PREFIX = "team"
log = logging.getLogger(__name__)


@dataclass
class _Pending:
    requester: Person
    answer: concurrent.futures.Future
    by: str = ""
    asked: list[str] = field(default_factory=list)  # the approvers' user ids


class ApprovalDesk:
    """Pending approvals of every member/guest chat, by token; only an owner or admin resolves one."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.pending: dict[str, _Pending] = {}

    def answer_button(self, data: str, presser: Person) -> tuple[Choice | None, str]:
        """(choice, text for the button toast) for a press of `team:<token>:<choice>`."""
        parts = data.split(":")
        if len(parts) != 3 or parts[0] != PREFIX:
            return None, "Expired."
        if not presser.can_approve:
            return None, "Not allowed: only the owner or an admin can answer."
        return self._resolve(parts[1], parts[2], presser)

    def answer_text(self, text: str, presser: Person) -> Choice | None:
        """`/approve [session|always]` or `/deny` from an owner/admin: the oldest request they were asked."""
        choice = TEXT_ANSWERS.get(" ".join(text.lower().split()))
        chat = presser.key.partition(":")[2]
        for token, p in list(self.pending.items()):
            if choice and presser.can_approve and chat in p.asked and not p.answer.done():
                return self._resolve(token, choice, presser)[0]
        return None

    def _resolve(self, token: str, choice: str, presser: Person) -> tuple[Choice | None, str]:
        p = self.pending.get(token)
        if p is None or p.answer.done() or choice not in CHOICES:
            return None, "Expired."
        p.by = presser.name or presser.key
        p.answer.set_result(choice)
        return choice, f"Answer: {choice}"


class DeskApprover:
    """The Approver of a member's or guest's chat: asks every owner/admin in their DM on this platform (the
    adapter's `open_dm`), tells the requester it is waiting, and denies at the timeout."""

    can_ask = True

    def __init__(self, desk: ApprovalDesk, loop: asyncio.AbstractEventLoop, adapter: PlatformAdapter,
                 chat_id: str, person: Person, timeout: float | None = None) -> None:
        self.desk, self.loop, self.adapter, self.chat_id, self.person = desk, loop, adapter, chat_id, person
        self.timeout = timeout
        self._token = ""
        self.cancelled = ""  # why the last request was called off unanswered (as ChatApprover.cancelled)

    @property
    def waiting(self) -> bool:
        p = self.desk.pending.get(self._token)
        return p is not None and not p.answer.done()

    def ask(self, request: ApprovalRequest) -> Choice:
        timeout = self.timeout if self.timeout is not None else request.timeout
        approvers = [a.key.partition(":")[2] for a in self.desk.team.approvers(self.adapter.name)]
        if not approvers:
            self._say("⛔ This needs approval by the owner or an admin, and none is set up here: denied.")
            return "deny"
        self._token = token = secrets.token_hex(4)
        self.cancelled = ""
        pending = _Pending(self.person, concurrent.futures.Future(), asked=approvers)
        self.desk.pending[token] = pending
        who = f"{self.person.name or self.person.key} ({self.person.key}, {self.person.role})"
        text = f"👤 {who} asks:\n" + approval_text(request)
        buttons = [(label, f"{PREFIX}:{token}:{choice}") for label, choice in BUTTONS]
        try:
            if not self._ask_approvers(approvers, text, buttons):
                self._say("⛔ This needs approval by the owner or an admin, and none of them could be reached in a "
                          "direct message: denied.")
                return "deny"
            self._say(f"⏳ Waiting for the owner or an admin to approve: {request.description}")
            choice = pending.answer.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self._say(f"No answer within {timeout:g} s: denied.")
            return "deny"
        except (OSError, RuntimeError):
            return "deny"
        finally:
            self.desk.pending.pop(token, None)
        self._say(f"{'✅ Approved' if choice != 'deny' else '❌ Denied'} by {pending.by}.")
        return choice if choice in CHOICES else "deny"

    def _ask_approvers(self, user_ids: list[str], text: str, buttons: list) -> int:
        """The request with its buttons in each approver's DM (opened as the platform needs: a Discord user id is
        no channel id); how many got it."""
        reached = 0
        for user_id in user_ids:
            try:
                dm = asyncio.run_coroutine_threadsafe(self.adapter.open_dm(user_id), self.loop).result(timeout=30)
                if self._send(dm, text, buttons) is None:  # refused (Telegram: the approver never started the bot)
                    raise OSError("the platform refused the message")
                reached += 1
            except (OSError, concurrent.futures.TimeoutError) as exc:
                log.warning("team approval: cannot reach %s:%s in a DM: %s", self.adapter.name, user_id, exc)
        return reached

    def _send(self, chat: str, text: str, buttons: list | None = None) -> str | None:
        """The message id, None when the platform refused it."""
        return asyncio.run_coroutine_threadsafe(self.adapter.send(chat, text, buttons), self.loop).result(timeout=30)

    def _say(self, text: str) -> None:
        try:
            self._send(self.chat_id, text)
        except (concurrent.futures.TimeoutError, OSError, RuntimeError):
            pass

    def cancel(self, why: str) -> None:
        """Call off a pending request unanswered (/stop, /new, the gateway stopping): denied, `why` recorded."""
        p = self.desk.pending.get(self._token)
        if p is not None and not p.answer.done():
            self.cancelled = why
            p.by = "nobody: " + why
            p.answer.set_result("deny")

    def answer_button(self, data: str) -> Choice | None:
        return None  # the requester cannot answer their own request

    def answer_text(self, text: str) -> Choice | None:
        """Only `/deny` (and /stop, /new) from the requester: withdrawing a request is always allowed."""
        p = self.desk.pending.get(self._token)
        if p is None or p.answer.done() or TEXT_ANSWERS.get(" ".join(text.lower().split())) != "deny":
            return None
        p.by = "the requester"
        p.answer.set_result("deny")
        return "deny"


def users_text(team: Team, known: list[dict]) -> str:
    """`/users`: everyone with a role, plus paired people (at the default role)."""
    seen = {p.key: p for p in team.people()}
    for row in known:
        key = f"{row['platform']}:{row['user_id']}"
        if key not in seen:
            seen[key] = team.person(row["platform"], str(row["user_id"]), str(row.get("user_name") or ""))
    if not seen:
        return "Nobody has a role yet."
    lines = [f"{p.role:<6} {p.key}" + (f" ({p.name})" if p.name else "")
             for p in sorted(seen.values(), key=lambda p: (ROLES.index(p.role), p.key))]
    return "People:\n" + "\n".join(lines)


def role_command(team: Team, speaker: Person, platform: str, args: list[str]) -> tuple[str, str | None]:
    """`/role USER ROLE` (USER: an id on this platform or platform:id): (reply, the person changed or None)."""
    if len(args) != 2:
        return "Usage: /role USER admin|member|guest (USER: a user id, or platform:id)", None
    key = args[0] if ":" in args[0] else f"{platform}:{args[0].lstrip('@')}"
    role = args[1].lower()
    target = team.person(*key.split(":", 1))
    if target.role == "owner":
        return "The owner's role is set in config.yaml (team.people) only.", None
    if role == "admin" and speaker.role != "owner":
        return "Only the owner can make someone an admin.", None
    if target.role == "admin" and speaker.role != "owner":
        return "Only the owner can change an admin's role.", None
    try:
        team.assign(key, role, by=speaker.key)
    except ValueError as exc:
        return str(exc), None
    return f"{key} is now {role}.", key
