"""Conversations of the API server: one agent (and one stored session, source `api_server`) per
conversation, turns run on worker threads, events routed to the request that is waiting for them. A
conversation idle for `gateway.idle_evict_seconds` leaves memory; it (or one from before a restart) is
rebuilt from state.db on its next request through persist.ApiIndex. Never touches HTTP."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_agent.api.persist import ApiIndex
from hermes_agent.config.settings import Settings
from hermes_agent.errors import StorageError
from hermes_agent.events import Event

if TYPE_CHECKING:
    from hermes_agent.config.team import Person
    from hermes_agent.core.contract import AgentSession
    from hermes_agent.core.loop import TurnOutcome

log = logging.getLogger(__name__)
Sink = Callable[[Event], None]


@dataclass(slots=True)
class Conversation:
    """One client conversation: its agent, the lock that serialises its turns, the current event sink."""

    key: str
    agent: AgentSession = field(init=False)  # set by the pool right after the conversation is made
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    sink: Sink | None = None
    last_used: float = field(default_factory=time.monotonic)
    person: Person | None = None  # team mode: the config.team.Person of an `X-Hermes-User` caller

    def emit(self, event: Event) -> None:
        sink = self.sink
        if sink is not None:
            sink(event)


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What one turn produced for the HTTP layer."""

    session_id: str
    text: str
    reason: str
    prompt_tokens: int
    completion_tokens: int
    history: tuple[dict, ...] = ()  # the conversation after this turn (only when asked for)


class ConversationPool:
    """At most `limit` live conversations (least recently used closed first); `builder` makes an agent."""

    def __init__(self, settings: Settings, *, limit: int = 256, workers: int = 64,
                 builder: Callable[..., AgentSession] | None = None, index: ApiIndex | None = None) -> None:
        self.settings = settings
        self.limit = limit
        self.idle_seconds = settings.cfg.gateway.idle_evict_seconds
        self.index = index or ApiIndex()
        self._builder = builder
        self._live: OrderedDict[str, Conversation] = OrderedDict()
        self._guard = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="api-turn")

    def _build(self, conv: Conversation, resume: str | None = None) -> AgentSession:
        from hermes_agent.approval.approvers import AutoDenyApprover
        from hermes_agent.bootstrap import RunOptions, build_agent

        build = self._builder or build_agent
        settings, options = self.settings, RunOptions()
        if conv.person is not None:  # an X-Hermes-User caller: their role's tools, their USER.md, their budget
            from hermes_agent.bootstrap import person_options
            from hermes_agent.config.team import Team

            settings, options = person_options(settings, Team(settings), conv.person)
        from dataclasses import replace

        from hermes_agent.paths import media_scope_of

        # an API caller's generated media are its own (never the local user's nor a chat's)
        options = replace(options, media_scope=media_scope_of(f"api:{options.person or 'owner'}", "api"))

        def make(session: str | None) -> AgentSession:
            return build(settings, platform="api_server", approver=AutoDenyApprover(), interactive=False,
                         event_callback=conv.emit, resume=session, options=options)

        if resume:
            try:
                return make(resume)
            except StorageError:  # its session was deleted (hermes sessions delete): start afresh
                log.warning("api conversation %s: session %s is gone, starting a new one", conv.key, resume)
        return make(None)

    @staticmethod
    def owns(key: str, person: Person | None) -> bool:
        """Whether conversation `key` is `person`'s (every key is the holder of the main key's)."""
        return person is None or key.startswith(f"{person.slug}~")

    @staticmethod
    def scoped(key: str | None, person: Person | None) -> str | None:
        """A client's conversation key inside `person`'s own namespace: one person never reaches another's."""
        if person is None or key is None:
            return key
        prefix = f"{person.slug}~"
        return key if key.startswith(prefix) else prefix + key

    async def warm(self) -> None:
        """Build (and close) one agent before serving: first-use work such as seeding the bundled skills
        then happens once, not in 20 concurrent builds racing over the same files."""
        loop = asyncio.get_running_loop()
        agent = await loop.run_in_executor(self.executor, self._build, Conversation("warm-up"))
        agent.close()

    async def get(self, key: str | None, person: Person | None = None) -> Conversation:
        """The live conversation `key`, else a new one under `key` (or a fresh server-issued key); with a
        `person` (team mode), only within their own conversations."""
        key = self.scoped(key, person) or (self.scoped(f"api-{uuid.uuid4().hex}", person) if person else None)
        with self._guard:
            if key and key in self._live:
                self._live.move_to_end(key)
                return self._live[key]
        conv = Conversation(key or f"api-{uuid.uuid4().hex}", person=person)
        loop = asyncio.get_running_loop()
        resume = self.index.session_of(key) if key else None  # evicted, or from before a restart
        conv.agent = await loop.run_in_executor(self.executor, self._build, conv, resume)
        with self._guard:
            if conv.key in self._live:  # built twice concurrently under one client key: keep the first
                conv.agent.close()
                return self._live[conv.key]
        self._remember(conv)
        return conv

    def _remember(self, conv: Conversation) -> None:
        with self._guard:
            self._live[conv.key] = conv
            while len(self._live) > self.limit:
                _, old = self._live.popitem(last=False)
                if not old.lock.locked():
                    old.agent.close()

    async def run(self, conv: Conversation, message: str, history: list[dict] | None, sink: Sink | None, *,
                  snapshot: bool = False, untrusted: str = "a request to the API server") -> TurnResult:
        """Run one turn (a cancelled request interrupts it); returns the answer, the conversation key and
        (with `snapshot`) the whole history after the turn."""
        async with conv.lock:
            conv.sink = sink
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self.executor, self._turn, conv, message, history, untrusted)
            try:
                outcome = await asyncio.shield(future)
            except asyncio.CancelledError:
                conv.agent.interrupt()  # the client went away
                await asyncio.wait([future], timeout=30)
                raise
            finally:
                conv.sink = None
                conv.last_used = time.monotonic()
            kept = tuple(m.to_openai() for m in conv.agent.history) if snapshot else ()
        sid = conv.agent.session_id
        if sid:
            await loop.run_in_executor(self.executor, self.index.set_session, conv.key, sid)
        usage = outcome.usage
        return TurnResult(conv.key, outcome.final_text or "", outcome.reason, usage.prompt_tokens,
                          usage.completion_tokens, kept)

    @staticmethod
    def _turn(conv: Conversation, message: str, history: list[dict] | None, untrusted: str) -> TurnOutcome:
        agent = conv.agent
        if history:
            from hermes_agent.messages import Message

            agent.history = [Message.from_openai(m) for m in history]
        outcome = agent.run_turn(message, untrusted=untrusted)
        from hermes_agent.terminal.base import run_later_lines

        for line in run_later_lines():  # the operator reads the server's log; the API's answer stays the model's
            log.warning("%s", line)
        return outcome

    def evict_idle(self) -> list[str]:
        """Close the conversations unused for `idle_seconds` (their sessions stay in state.db)."""
        cutoff = time.monotonic() - self.idle_seconds
        with self._guard:
            idle = [c for c in self._live.values() if c.last_used < cutoff and not c.lock.locked()]
            for conv in idle:
                del self._live[conv.key]
        for conv in idle:
            conv.agent.close()
        return [c.key for c in idle]

    async def history_of(self, key: str, count: int) -> list[dict]:
        """The first `count` messages of conversation `key` (a fork from an older response)."""
        conv = await self.get(key)
        async with conv.lock:
            return [m.to_openai() for m in conv.agent.history[:count]]

    def close(self) -> None:
        """Close every live agent and the worker threads."""
        with self._guard:
            convs = list(self._live.values())
            self._live.clear()
        for conv in convs:
            conv.agent.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
