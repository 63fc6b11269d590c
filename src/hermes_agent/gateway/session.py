"""One chat's session: its agent (built and run in worker threads), the queue of messages that arrived
while it worked (merged into the next turn), typing while it works, the chat -> session-id map."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import lazyre
from hermes_agent.events import BUDGET_NOTICE, Event, Notice, ToolFinished, ToolStarted
from hermes_agent.gateway.approval import ChatApprover
from hermes_agent.gateway.base import Inbound, PlatformAdapter
from hermes_agent.gateway.hooks import HookRunner
from hermes_agent.paths import is_under

if TYPE_CHECKING:
    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.core.contract import AgentSession
    from hermes_agent.storage.routing import RoutingIndex

Builder = Callable[[ChatApprover, "str | None", Callable[[Event], None]], "AgentSession"]

log = logging.getLogger(__name__)
TYPING_EVERY = 4.0


_MEDIA = lazyre.compile(r"^[ \t]*MEDIA:[ \t]*(\S+)[ \t]*$", re.M)


_NEVER = ("/proc", "/sys", "/dev")  # the gateway's own environment (bot token, API keys), memory and devices


def _sendable(path: Path, scope: str, policy: PathPolicy | None) -> str | None:
    """The resolved path of a file the sender may send, else None: exactly what a confined command of the
    sending session could read (`policy`: its workspace, grants, default-deny HOME, secrets; without one, no
    workspace at all), plus of HERMES_HOME only the media of its own `scope`; never /proc, /sys, /dev, .env."""
    import os

    from hermes_agent import paths
    from hermes_agent.approval.policy import MEDIA_DIRS, PathPolicy

    real = os.path.realpath(path)
    home = str(paths.hermes_home().resolve())
    media = tuple(os.path.join(home, d, scope) for d in MEDIA_DIRS) if scope else ()  # not another chat's
    if is_under(real, home) and not any(is_under(real, m) for m in media):
        return None
    if any(is_under(real, p) for p in _NEVER) or os.path.basename(real) == ".env":
        return None
    if policy is None:
        policy = PathPolicy.build(workspace=[], hermes_home=home, media_scope=scope)
    return real if policy.check_read(real).allowed else None


def _snapshot(real: str) -> Path | None:
    """A private copy of the checked file for the adapters to send (HERMES_HOME/cache/outbox-*): the file is
    opened once, by its resolved name, without following a symlink (a name swapped after the check is
    refused), and must be a regular file; None when it cannot be."""
    import os
    import shutil
    import tempfile

    from hermes_agent import paths
    from hermes_agent.nofollow import check_plain, open_nofollow

    try:
        fd = open_nofollow(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        check_plain(fd, real)
        os.set_blocking(fd, True)
        cache = paths.hermes_home() / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        copy = Path(tempfile.mkdtemp(prefix="outbox-", dir=cache)) / os.path.basename(real)
        with os.fdopen(fd, "rb", closefd=False) as src, open(copy, "xb") as dst:
            shutil.copyfileobj(src, dst)
        return copy
    except OSError as exc:
        log.warning("MEDIA file %s not sent: %s", real, exc)
        return None
    finally:
        os.close(fd)


def discard(files: list[Path]) -> None:
    """Remove the private copies `media_of` made, once they are sent."""
    import shutil

    for copy in files:
        shutil.rmtree(copy.parent, ignore_errors=True)


def media_of(reply: str, scope: str = "", policy: PathPolicy | None = None) -> tuple[str, list[Path]]:
    """Hermes's `MEDIA:/path` lines: files to send after the text (those the sending session could read, see
    `_sendable`; the line is removed), as private copies to pass to `discard` once sent."""
    files, kept = [], set()
    for name in _MEDIA.findall(reply):
        real = _sendable(Path(name), scope, policy)
        copy = _snapshot(real) if real else None
        if copy is not None:
            files.append(copy)
            kept.add(name)
    if not files:
        return reply, []
    text = _MEDIA.sub(lambda m: "" if m.group(1) in kept else m.group(0), reply)
    return re.sub(r"\n{3,}", "\n\n", text).strip(), files


def _unanswered(history: list, text: str) -> bool:
    """The stored conversation ends inside a turn for `text` (the gateway stopped before it was answered):
    that turn is continued rather than the message stored a second time."""
    if not history or (history[-1].role == "assistant" and not history[-1].tool_calls):
        return False
    last_user = next((m for m in reversed(history) if m.role == "user"), None)
    return last_user is not None and last_user.content == text


def _with_run_later(reply: str) -> str:
    """The reply, then one line per file the user runs by hand that this turn's commands changed (also logged)."""
    from hermes_agent.terminal.base import run_later_lines

    lines = run_later_lines()
    for line in lines:
        log.warning("%s", line)
    return reply + "".join(f"\n\n⚠️ {line}" for line in lines)


def session_key(event: Inbound, per_user: bool = True) -> str:
    """Hermes's routing key of the chat an event belongs to: `agent:main:<platform>:dm:<chat_id>` for a
    direct chat; `agent:main:<platform>:group:<chat_id>[:<user_id>]` elsewhere: per participant unless
    `group_sessions_per_user: false`, and a thread (our adapters' `<channel>:<thread>` chat ids) shared by
    everyone in it, as in Hermes."""
    if event.is_dm:
        return f"agent:main:{event.platform}:dm:{event.chat_id}"
    tail = f":{event.user_id}" if per_user and event.user_id and ":" not in event.chat_id else ""
    return f"agent:main:{event.platform}:group:{event.chat_id}{tail}"


def origin_of(event: Inbound) -> dict:
    """Hermes's SessionSource dict for an event (the routing entry's `origin`)."""
    return {"platform": event.platform, "chat_id": event.chat_id,
            "chat_name": event.user_name if event.is_dm else None, "chat_type": "dm" if event.is_dm else "group",
            "user_id": event.user_id, "user_name": event.user_name, "thread_id": None, "chat_topic": None}


_INDEX_LOCK = threading.Lock()


class SessionMap:
    """Chat key -> state.db session id, shared with Hermes (storage/routing.py: its gateway_routing table and
    sessions/sessions.json), so a chat continues one conversation across restarts and across the two
    programs. Chats remembered by earlier versions of ours (HERMES_HOME/gateway/sessions.json, keys
    `<platform>:<chat_id>`) are read as a fallback."""

    def __init__(self, home: Path, legacy: Path | None = None) -> None:
        self.home = home
        self._index: RoutingIndex | None = None  # made on first use: storage and sqlite3 load after the first poll
        self._written: dict[str, str] = {}  # chat key -> the session id this process last pointed it at
        try:
            self.legacy: dict[str, str] = json.loads(legacy.read_text(encoding="utf-8")) if legacy else {}
        except (OSError, ValueError):
            self.legacy = {}

    @property
    def index(self) -> RoutingIndex:
        if self._index is None:
            from hermes_agent.storage.routing import RoutingIndex

            with _INDEX_LOCK:  # the loop's thread and the executor's may both be first
                if self._index is None:
                    self._index = RoutingIndex(self.home)
        return self._index

    def get(self, key: str) -> str | None:
        found = self.index.get(key)
        if found is None and self.legacy:
            parts = key.split(":")
            for old in (":".join([parts[2], *parts[4:]]), ":".join([parts[2], *parts[4:-1]])):
                if isinstance(self.legacy.get(old), str):
                    return self.legacy[old]
        return found

    def set(self, key: str, sid: str | None, origin: dict | None = None) -> None:
        """Point the chat at `sid`; after every turn this is the session this process already wrote (a dict
        lookup instead of a state.db read: the index only changes when the session does)."""
        if sid is not None and self._written.get(key) == sid:
            return
        self.index.set(key, sid, origin, wait=False)  # the mirror is written meanwhile: settle() before a reply
        if sid is None:
            self._written.pop(key, None)
        else:
            self._written[key] = sid

    def settle(self) -> None:
        """Wait until sessions.json has every change made so far (Hermes reads it when the table lacks a chat)."""
        self.index.settle()

    def close(self) -> None:
        if self._index is not None:
            self._index.close()


class ChatSession:
    """The agent of one chat plus its inbound queue. `build(approver, resume)` makes the agent (in a thread)."""

    def __init__(self, key: str, chat_id: str, adapter: PlatformAdapter, sessions: SessionMap,
                 build: Builder,
                 loop: asyncio.AbstractEventLoop, hooks: HookRunner | None = None, progress: str = "off") -> None:
        self.key, self.chat_id, self.adapter, self.sessions, self.build = key, chat_id, adapter, sessions, build
        self.loop, self.hooks, self.progress = loop, hooks or HookRunner([]), progress
        self.approver = ChatApprover(loop, adapter, chat_id)
        self.user_id = ""
        self.owners: frozenset[str] = frozenset()  # users on the platform's allowlist: their words are trusted
        self.person = ""  # team mode: "<platform>:<user id>" of the one person this session belongs to
        self.origin: dict | None = None  # Hermes's SessionSource of the last message (routing entry)
        self._announced = False  # session:start fired for this chat's session
        self.model: str | None = None  # /model NAME for this chat
        self.switch_model: Callable[[AgentSession, str], None] | None = None
        self._progress_lines: list[str] = []
        self._progress_msg: asyncio.Future | None = None
        self._steps = 0
        self._last_tool = ""
        self.agent: AgentSession | None = None
        self.queue: list[Inbound] = []
        self.worker: asyncio.Task | None = None
        self.turns = 0
        self.last_active = time.monotonic()
        self.closing = False  # the gateway is stopping: an interrupted turn is neither answered nor acknowledged
        self._resumed = False  # the agent was just built on a stored conversation (its first turn is next)

    @property
    def busy(self) -> bool:
        return self.worker is not None and not self.worker.done()

    def submit(self, event: Inbound) -> None:
        """Queue a message; start the worker if idle (a busy worker picks it up in its next turn)."""
        self.queue.append(event)
        self.last_active = time.monotonic()
        if not self.busy:
            self.worker = asyncio.create_task(self._work(), name=f"chat-{self.key}")

    def stop(self, why: str = "the user stopped the task (/stop)") -> list[Inbound]:
        """Interrupt the running turn and drop the queue; returns the dropped events (to acknowledge)."""
        dropped, self.queue = self.queue, []
        self.approver.cancel(why)  # a pending approval must not hold the turn until its timeout
        if self.agent is not None and self.busy:
            self.agent.interrupt()
        return dropped

    async def reset(self) -> None:
        """A new conversation: the next message starts a new session in state.db (queued messages are dropped)."""
        self.adapter.ack([e.event_id for e in self.stop("the user started a new conversation (/new)")])
        if self.worker is not None:
            await asyncio.gather(self.worker, return_exceptions=True)
        if self.agent is not None:
            await asyncio.to_thread(self.agent.reset)
        await asyncio.to_thread(self._forget_session)
        self._announced = False

    def _forget_session(self) -> None:
        self.sessions.set(self.key, None)
        self.sessions.settle()

    async def _work(self) -> None:
        while self.queue:
            batch, self.queue = self.queue, []
            text = "\n\n".join(e.text for e in batch)
            self.user_id = batch[-1].user_id
            self.origin = origin_of(batch[-1])
            self._progress_lines, self._progress_msg, self._steps = [], None, 0
            typing = asyncio.create_task(self._keep_typing())
            try:
                if await asyncio.to_thread(self._prepare):
                    self.hooks.emit("session:start", self.hook_context())
                if self.hooks.wants("agent:start"):
                    self.hooks.emit("agent:start", {**self.hook_context(), "message": text[:500]})
                reply = await asyncio.to_thread(self._turn, text, self._untrusted_sender(batch))
            except Exception as exc:  # frontend boundary: the user hears about any failure
                log.exception("turn failed in chat %s", self.key)
                reply = f"⚠️ Sorry, that failed: {type(exc).__name__}: {exc}"
            finally:
                typing.cancel()
                await asyncio.gather(typing, return_exceptions=True)
            if self.closing:
                return
            if self.hooks.wants("agent:end"):
                self.hooks.emit("agent:end", {**self.hook_context(), "message": text[:500], "response": reply[:500]})
            await self._deliver(reply)
            self.adapter.ack([e.event_id for e in batch])
            self.turns += 1
            self.last_active = time.monotonic()

    async def _deliver(self, reply: str) -> None:
        """The reply's text, then its MEDIA files: speech as a voice message where the platform has them."""
        from hermes_agent.gateway.voice import send_media
        from hermes_agent.paths import media_scope_of

        policy = getattr(getattr(getattr(self.agent, "services", None), "ctx", None), "path_policy", None)
        reply, files = media_of(reply, media_scope_of(self.key), policy)  # what this chat's commands could read
        try:
            if reply.strip() or not files:
                await self.adapter.send(self.chat_id, reply)
            for path in files:
                await send_media(self.adapter, self.chat_id, path)
        finally:
            discard(files)

    async def _keep_typing(self) -> None:
        while True:
            await self.adapter.typing(self.chat_id)
            await asyncio.sleep(TYPING_EVERY)

    def hook_context(self) -> dict:
        sid = self.agent.session_id if self.agent is not None else self.sessions.get(self.key)
        return {"platform": self.adapter.name, "user_id": self.user_id, "chat_id": self.chat_id,
                "session_id": sid or "", "session_key": self.key}

    def _on_event(self, event: Event) -> None:
        """Agent events (worker thread): tool progress to the chat, agent:step to the hooks."""
        if isinstance(event, Notice) and event.text.startswith(BUDGET_NOTICE):  # 80% of a cap: the person is told once
            asyncio.run_coroutine_threadsafe(self.adapter.send(self.chat_id, "⚠️ " + event.text), self.loop)
        if isinstance(event, ToolFinished):
            self._steps += 1
            if self.hooks.wants("agent:step"):
                self.hooks.emit_threadsafe(self.loop, "agent:step", {**self.hook_context(), "iteration": self._steps,
                                                                     "tool_names": [event.name]})
        if not isinstance(event, ToolStarted) or self.progress not in ("new", "all", "verbose"):
            return
        if self.progress == "new" and self._progress_lines and self._last_tool == event.name:
            return
        self._last_tool = event.name
        shown = event.shown()
        if self.progress == "verbose" and event.preview and event.preview not in shown:
            shown = f"{shown}: {event.preview}"
        self._progress_lines.append(f"{event.emoji or '⚙️'} `{shown}`...")
        asyncio.run_coroutine_threadsafe(self._show_progress(), self.loop)

    async def _show_progress(self) -> None:
        """One progress message per turn, edited in place as tools run."""
        text = "\n".join(self._progress_lines)
        if self._progress_msg is None:
            self._progress_msg = asyncio.ensure_future(self.adapter.send(self.chat_id, text))
            await self._progress_msg
            return
        message_id = await self._progress_msg
        if message_id:
            await self.adapter.edit(self.chat_id, message_id, text)

    def _untrusted_sender(self, batch: list) -> str:
        """Who in this batch is not the owner (not on the platform's allowlist): their words taint the turn."""
        other = next((e for e in batch if str(e.user_id) not in self.owners), None)
        return "" if other is None else f"a message from {self.adapter.name} user {other.user_id} (not on the allowlist)"

    def _prepare(self) -> bool:
        """Build the agent (first turn) and name its session before the turn starts, so hooks see the real
        session id; True when that session is new."""
        agent = self._built()
        binding = agent.services.session
        if binding is None or self._announced:
            return False
        if agent.session_id and agent.history:  # a stored conversation continues: not a new session
            return False
        if not agent.session_id:
            self.sessions.set(self.key, binding.start(), self.origin)
        self._announced = True
        return True

    def _built(self) -> AgentSession:
        """The chat's agent, built on first use (on its stored conversation when it has one)."""
        if self.agent is None:
            self.agent = agent = self.build(self.approver, self.sessions.get(self.key), self._on_event)
            self._resumed = bool(agent.history)
            if self.model and self.switch_model is not None:
                self.switch_model(agent, self.model)
        return self.agent

    def _turn(self, text: str, untrusted: str = "") -> str:
        if self.agent is None:
            self._prepare()
        agent = self._built()
        pending, self._resumed = self._resumed and _unanswered(agent.history, text), False
        outcome = agent.run_turn(text, untrusted=untrusted, continue_pending=pending)
        self.sessions.set(self.key, agent.session_id, self.origin)
        self.sessions.settle()  # the chat is in sessions.json (for Hermes) before the user sees the reply
        text = outcome.final_text or ("⏹ Stopped." if outcome.reason == "interrupted" else "(no reply)")
        return _with_run_later(text)

    def close(self) -> None:
        if self.agent is not None:
            self.agent.close()
            self.agent = None
