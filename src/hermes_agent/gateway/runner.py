"""The gateway process: adapters in, chat sessions out. One asyncio loop; agent turns in worker threads."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.config.team import Person, Team
from hermes_agent.errors import StorageError
from hermes_agent.events import Event
from hermes_agent.gateway.approval import ChatApprover
from hermes_agent.gateway.base import Inbound, PlatformAdapter, platform_conf
from hermes_agent.gateway.delivery import gateway_dir
from hermes_agent.gateway.hooks import HookRunner
from hermes_agent.gateway.pairing import PairingStore
from hermes_agent.gateway.routing import Access, authorized, pairing_reply
from hermes_agent.gateway.send import HomeChannels, Outbox
from hermes_agent.gateway.session import Builder, ChatSession, SessionMap, session_key

if TYPE_CHECKING:
    from hermes_agent.api.server import ApiConfig
    from hermes_agent.core.contract import AgentSession
    from hermes_agent.gateway.background import CronTicker

log = logging.getLogger(__name__)

_BUILD_LOCK = threading.Lock()  # bootstrap's one-time discovery is not safe to run twice at once


def tool_progress(settings: Settings, platform: str = "") -> str:
    """Tool progress in a platform's chats (off|new|all|verbose; `log` = off in chats): HERMES_TOOL_PROGRESS when
    set (true: HERMES_TOOL_PROGRESS_MODE, default all; false: off), else the platform's own setting as today's
    Hermes writes it (`display.platforms.<platform>.tool_progress`) or as 0.19.0 did
    (`display.tool_progress_overrides.<platform>`), else `display.tool_progress`."""
    env = str(settings.env.get("HERMES_TOOL_PROGRESS", "")).strip().lower()
    if env in ("1", "true", "yes", "on"):
        mode = str(settings.env.get("HERMES_TOOL_PROGRESS_MODE") or "all").lower()
        return mode if mode in ("new", "all", "verbose") else "all"
    if env in ("0", "false", "no", "off"):
        return "off"
    display = settings.cfg.display
    own = display.platforms.get(platform)
    raw: object = own.get("tool_progress") if isinstance(own, dict) else None
    if raw is None:
        raw = display.tool_progress_overrides.get(platform)
    if raw is None:
        raw = display.tool_progress
    mode = ("all" if raw else "off") if isinstance(raw, bool) else str(raw).lower()
    return mode if mode in ("new", "all", "verbose") else "off"


def state_path() -> Path:
    return paths.gateway_state_path()


def build_adapters(settings: Settings) -> list[PlatformAdapter]:
    """The enabled platforms: each module in `platforms.PLATFORMS` builds its adapter from settings, or None."""
    import importlib

    from hermes_agent.gateway.platforms import PLATFORMS

    adapters: list[PlatformAdapter] = []
    for name, module in PLATFORMS:
        conf = platform_conf(settings.cfg.platforms, name)
        if conf.get("enabled", True) is False:
            continue
        adapter = importlib.import_module(module).from_settings(settings, conf)
        if adapter is not None:
            adapters.append(adapter)
    return adapters


class GatewayRunner:
    """Routes inbound events to per-chat sessions; commands and approvals are answered at once."""

    def __init__(self, settings: Settings, adapters: list[PlatformAdapter]) -> None:
        self.settings = settings
        self.adapters = {a.name: a for a in adapters}
        self.pairing = PairingStore()
        self.access = {name: Access.from_settings(settings, name) for name in self.adapters}
        self.sessions: dict[str, ChatSession] = {}
        self.session_map = SessionMap(settings.home, legacy=gateway_dir() / "sessions.json")
        self.started = time.time()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop = asyncio.Event()
        self._failure: BaseException | None = None  # what ended an adapter's receiving by itself
        self.closing = False
        self._locks: dict[str, asyncio.Lock] = {}
        self._inflight: set[asyncio.Task] = set()  # handlers sending a command's reply right now
        self.hooks = HookRunner([])
        self.team = Team(settings)
        self.desk = None  # gateway/team.py's ApprovalDesk, in team mode
        if self.team.enabled:
            from hermes_agent.gateway.team import ApprovalDesk

            self.desk = ApprovalDesk(self.team)
        self.homes = HomeChannels(settings.env)
        self.outbox = Outbox(settings, self.homes)  # gets the adapters and the loop in run()
        self.cron: CronTicker | None = None
        self.api_config: ApiConfig | None = None  # set by run_gateway when the API server runs inside the gateway

    async def run(self) -> None:
        self.loop = asyncio.get_running_loop()
        workers = self.settings.cfg.gateway.max_concurrent_turns  # more threads only fight for the GIL
        self.loop.set_default_executor(ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gateway"))
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.loop.add_signal_handler(sig, self._stop.set)
        self.hooks = HookRunner.discover(timeout=self.settings.cfg.gateway.hook_timeout)
        self.outbox = Outbox(self.settings, self.homes, self.adapters, self.loop)
        for adapter in self.adapters.values():
            if hasattr(adapter, "on_fatal"):  # an adapter whose receiving can end by itself (Telegram's polling)
                adapter.on_fatal = self._fatal
            if not await self._start_adapter(adapter):  # SIGINT/SIGTERM before its API answered
                await self.shutdown()
                return
            print(f"gateway: {adapter.name} {adapter.status().get('mode', 'polling')}", flush=True)
        self.hooks.emit("gateway:startup", {"platforms": list(self.adapters)})
        background = [asyncio.create_task(self._write_state_forever()), asyncio.create_task(self._evict_forever())]
        if self.adapters:
            background.append(asyncio.create_task(asyncio.to_thread(_warm_up, self.settings, next(iter(self.adapters)))))
        api = self._start_background()
        await self._stop.wait()
        for task in background:
            task.cancel()
        await self.shutdown()
        if api is not None:
            await asyncio.wait([api], timeout=10)
        if self._failure is not None:  # one line from the CLI, a non-zero exit (a service manager restarts it)
            raise self._failure

    async def _start_adapter(self, adapter: PlatformAdapter) -> bool:
        """adapter.start, or False when SIGINT/SIGTERM comes first: a start retries until its API answers (getMe
        with the network or DNS down at boot), and `hermes gateway stop` or Ctrl+C waited for it forever."""
        start = asyncio.ensure_future(adapter.start(self.handle))
        stop = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({start, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if start.done():
            start.result()  # its error (a refused token) ends the run as before
            return True
        start.cancel()
        await asyncio.wait({start})
        return False

    def _fatal(self, exc: BaseException) -> None:
        log.info("gateway stopping: %s", exc)  # the CLI prints the one line
        self._failure = self._failure or exc
        self._stop.set()

    def _start_background(self) -> asyncio.Task | None:
        """The cron ticker thread, and the API server task when it is enabled."""
        from hermes_agent.gateway.background import CronTicker, serve_api

        self.cron = CronTicker(self.settings, self.outbox)
        self.cron.start()
        if self.api_config is None:
            return None
        return asyncio.create_task(serve_api(self.settings, self.api_config, self._stop))

    async def shutdown(self) -> None:
        """Stop taking events; let running turns finish (5 s) and send their replies; then interrupt the rest
        without replying: their events stay unanswered in the inbox and are handled after the next start."""
        self.closing = True
        if self._inflight:  # a command reply on its way: let it land and be acknowledged, not sent twice
            await asyncio.wait(self._inflight, timeout=5)
        for s in self.sessions.values():
            s.queue.clear()
        workers = [s.worker for s in self.sessions.values() if s.worker is not None and s.busy]
        if workers:
            await asyncio.wait(workers, timeout=5)
        for s in self.sessions.values():
            s.closing = True
            s.stop("the gateway stopped (restart) before the user answered")
        if any(s.busy for s in self.sessions.values()):
            await asyncio.wait([s.worker for s in self.sessions.values() if s.worker is not None and s.busy], timeout=10)
        for adapter in self.adapters.values():
            await adapter.stop()
        for s in self.sessions.values():
            await asyncio.to_thread(s.close)
        if self.cron is not None:
            await asyncio.to_thread(self.cron.stop)
        await asyncio.to_thread(self.session_map.close)
        self.write_state(running=False)

    async def handle(self, event: Inbound) -> None:
        """One accepted event; the events of one chat are handled in order (one lock per chat). Strangers get
        no per-chat state at all: a flood of them from many chats costs no memory."""
        if not self.closing and not self._allowed(event):
            await self._stranger(event)
            return
        lock = self._locks.setdefault(f"{event.platform}:{event.chat_id}", asyncio.Lock())
        task = asyncio.current_task()
        if task is not None:
            self._inflight.add(task)
        try:
            async with lock:
                await self._handle(event)
        finally:
            self._inflight.discard(task)

    async def _handle(self, event: Inbound) -> None:
        """Unauthorised users cost no model call; commands never wait for the agent."""
        if self.closing:
            return  # left unanswered in the inbox: handled after the next start
        adapter = self.adapters[event.platform]
        if not self._allowed(event):  # revoked while it waited
            await self._stranger(event)
            return
        person = self.person(event)
        if event.callback_data is not None:
            await adapter.answer_callback(event.callback_id or "", self._button(event, person))
            adapter.ack([event.event_id])
            return
        session = self._session(event, person)
        session.user_id = event.user_id
        if event.extra.get("file_id"):
            event = await self._with_file(adapter, event)
        text = event.text.strip()
        if self.hooks.wants("message:received"):  # (the context reads the chat's session id: skipped unless heard)
            self.hooks.emit("message:received", {**session.hook_context(), "user_name": event.user_name,
                                                 "message": text[:500], "is_dm": event.is_dm})
        if text.startswith("/"):
            reply = await self._command(session, text, person, guest=person is None and not self._owner(event))
            if reply is not None:
                await adapter.send(event.chat_id, reply)
                adapter.ack([event.event_id])
                return
            event = await self._skill(event, text)
        from hermes_agent.estop import engaged, paused_reply  # (after start-up: the first message loads it)

        if (stop := engaged(self.settings.home)) is not None:  # Hermes's `hermes pause`: no new turn
            await adapter.send(event.chat_id, paused_reply(stop))
            adapter.ack([event.event_id])
            return
        session.submit(event)

    def _allowed(self, event: Inbound) -> bool:
        """The platform's access rules, plus (team mode) everyone given a role in config or by /role."""
        if self.team.enabled and self.team.knows(event.platform, event.user_id):  # a stat, before pairing's reads
            return True
        return authorized(self.access[event.platform], self.pairing, event)

    def _owner(self, event: Inbound) -> bool:
        """Outside team mode: the speaker is the owner (on the platform's allowlist, or the DM that is the
        platform's home channel), not a guest admitted by allow-all or pairing, whose words are untrusted."""
        if event.user_id in self.access[event.platform].allowed:
            return True
        return event.is_dm and str(event.chat_id) == str(self.homes.get(event.platform) or "")

    def person(self, event: Inbound) -> Person | None:
        """Who spoke and their role (team mode), None otherwise: allowlisted users are admins unless named."""
        if not self.team.enabled:
            return None
        trusted = event.user_id in self.access[event.platform].allowed
        return self.team.person(event.platform, event.user_id, event.user_name, trusted=trusted)

    def _button(self, event: Inbound, person: Person | None) -> str:
        """A button press: a team approval (any chat), or an approval in this chat (team mode: only the owner
        or an admin may press it, in a group too). Returns the toast text."""
        data = event.callback_data or ""
        if self.desk is not None and person is not None and data.startswith("team:"):
            return self.desk.answer_button(data, person)[1]
        if person is not None and not person.can_approve:
            return "Not allowed: only the owner or an admin can answer."
        if person is None and not self._owner(event):  # rt14 b17/b20: a guest never answers (nor "always"s) one
            return "Not allowed: only the owner can answer."
        session = self.sessions.get(self._key(event))
        choice = session.approver.answer_button(data) if session is not None else None
        return f"Answer: {choice}" if choice else "Expired."

    async def _stranger(self, event: Inbound) -> None:
        """Someone who may not talk to the agent: a pairing code in a DM (rate-limited), nothing else."""
        adapter = self.adapters[event.platform]
        reply = pairing_reply(self.access[event.platform], self.pairing, event)
        if event.callback_id:
            await adapter.answer_callback(event.callback_id, "Not allowed.")
        if reply:
            await adapter.send(event.chat_id, reply)
        adapter.ack([event.event_id])

    async def _skill(self, event: Inbound, text: str) -> Inbound:
        """`/skill-name task` runs an installed skill, as in the REPL; any other /word goes to the agent as is."""
        import dataclasses

        from hermes_agent.skills.invoke import skill_message

        message = await asyncio.to_thread(skill_message, self.settings, text)
        if message is None:
            return event
        self.hooks.emit("command:skill", {"platform": event.platform, "user_id": event.user_id,
                                          "command": text.split()[0][1:], "args": " ".join(text.split()[1:])})
        return dataclasses.replace(event, text=message)

    async def _with_file(self, adapter: PlatformAdapter, event: Inbound) -> Inbound:
        """Save an attachment under HERMES_HOME/cache/documents/<the chat's scope> (the one part of it this chat's
        sessions read, whoever sent it) and tell the agent where it is; a voice note is transcribed (stt.*) and the
        agent gets the transcript (the user sees it too unless stt.echo_transcripts is false)."""
        import dataclasses
        import re

        name = re.sub(r"[^A-Za-z0-9._-]", "_", str(event.extra.get("file_name") or "file"))[:100]
        # the chat's own folder: only this chat's sessions read it (a35), not another chat's nor a cron job
        target = paths.media_cache("documents", paths.media_scope_of(self._key(event))) / f"{event.event_id}_{name}"
        try:
            saved = await adapter.download(str(event.extra["file_id"]), target)
        except Exception as exc:  # frontend boundary: the agent is told the file could not be fetched
            log.warning("attachment download failed: %s", exc)
            note = f"[The user sent a file ({name}) that could not be downloaded: {exc}]"
            return dataclasses.replace(event, text=f"{note}\n{event.text}".strip())
        note = f"[The user sent a file, saved at {saved}]"
        if event.extra.get("voice"):
            note = await self._transcript(adapter, event, Path(saved))
        return dataclasses.replace(event, text=f"{note}\n{event.text}".strip())

    async def _transcript(self, adapter: PlatformAdapter, event: Inbound, saved: Path) -> str:
        from hermes_agent.media.http import MediaError
        from hermes_agent.media.transcribe import transcribe

        stt = self.settings.cfg.stt
        try:
            text = await asyncio.to_thread(transcribe, saved, stt, self.settings.env)
        except (MediaError, OSError) as exc:
            return f"[The user sent a voice message (saved at {saved}) that could not be transcribed: {exc}]"
        if stt.get("echo_transcripts", True) is not False:
            await adapter.send(event.chat_id, f"🎙️ {text}")
        return f'[The user sent a voice message. Transcript: "{text}"]'

    async def _command(self, session: ChatSession, text: str, person: Person | None = None,
                       guest: bool = False) -> str | None:
        """The reply to an in-chat command, or None when `text` is for the agent. `guest`: outside team mode, an
        admitted user not on the allowlist (commands.py)."""
        from hermes_agent.gateway.commands import (
            command_word,
            guest_may_run,
            guest_refusal,
            help_text,
            may_run,
            refusal,
        )

        word = command_word(text)
        if person is not None and not may_run(word, person):  # team mode: each command's minimum role (commands.py)
            return refusal(word, person)
        if guest and not guest_may_run(word):
            return guest_refusal(word, session.adapter.name)
        if person is not None and word in ("/approve", "/deny", "/role", "/users"):
            return await self._team_command(session, word, text, person)
        if word in ("/approve", "/deny", "/new", "/reset", "/stop", "/status", "/help", "/start", "/model", "/sethome",
                    "/budget"):
            self.hooks.emit(f"command:{word[1:]}", {"platform": session.adapter.name, "user_id": session.user_id,
                                                    "command": word[1:], "args": " ".join(text.split()[1:])})
        if word in ("/approve", "/deny"):
            choice = session.approver.answer_text(" ".join([word, *text.split()[1:]]))
            return f"Answer recorded: {choice}." if choice else "There is nothing waiting for approval."
        if word in ("/new", "/reset"):
            await session.reset()
            self.hooks.emit("session:reset", session.hook_context())
            return "✨ New conversation started."
        if word == "/stop":
            busy = session.busy
            adapter = self.adapters[session.adapter.name]
            adapter.ack([e.event_id for e in session.stop()])
            return "⏹ Stopping the current task." if busy else "Nothing is running."
        if word == "/status":
            sid = (session.agent.session_id if session.agent is not None else None) or session.sessions.get(session.key)
            home = self.homes.get(session.adapter.name)
            return (f"Session: {sid or '(new)'}\nModel: {session.model or self.settings.model.model}\n"
                    f"Working: {'yes' if session.busy else 'no'}; queued messages: {len(session.queue)}\n"
                    f"Turns since start: {session.turns}\nHome channel: "
                    + (f"{home}{' (this chat)' if home == session.chat_id else ''}" if home else "not set (/sethome)"))
        if word == "/budget":
            return await asyncio.to_thread(self._budget, session, person)
        if word == "/sethome":
            await asyncio.to_thread(self.homes.set, session.adapter.name, session.chat_id)
            return (f"✅ Home channel set to this chat (ID: {session.chat_id}).\n"
                    "Cron jobs and cross-platform messages will be delivered here.")
        if word in ("/help", "/start"):
            return help_text(person, guest)
        if word == "/skills":
            from hermes_agent.skills.invoke import skill_list

            return await asyncio.to_thread(skill_list, self.settings)
        if word == "/model":
            return await self._model(session, text.split()[1:])
        return None

    def _budget(self, session: ChatSession, person: Person | None = None) -> str:
        """What is left of the caps of the person who asked (their own budget, as their turns spend it)."""
        from hermes_agent.bootstrap.budget import report
        from hermes_agent.bootstrap.session import shared_store

        agent = session.agent
        meter = agent.services.meter if agent is not None else None
        sid = agent.session_id if agent is not None else session.sessions.get(session.key)
        return report(self.settings, f"{session.adapter.name}:{session.user_id}", meter,  # type: ignore[arg-type]
                      shared_store(), sid, person.role if person else None)  # the live meter is bootstrap's Meter behind the core's protocol

    async def _team_command(self, session: ChatSession, word: str, text: str, person: Person) -> str:
        """Team mode's /approve, /deny (owner and admins; a requester may /deny their own request), /users and
        /role (owner and admins)."""
        from hermes_agent.gateway.team import role_command, users_text

        if word in ("/approve", "/deny"):
            answer = " ".join([word, *text.split()[1:]])
            choice = session.approver.answer_text(answer) if person.can_approve or word == "/deny" else None
            if choice is None and self.desk is not None:
                choice = self.desk.answer_text(answer, person)
            if choice is None and not person.can_approve:
                return "Only the owner or an admin can answer approvals."
            return f"Answer recorded: {choice}." if choice else "There is nothing waiting for approval."
        if not person.can_approve:
            return "Only the owner or an admin can do that."
        if word == "/users":
            known = [row for p in self.pairing.platforms() for row in self.pairing.list_approved(p)]
            return users_text(self.team, known)
        reply, changed = role_command(self.team, person, session.adapter.name, text.split()[1:])
        if changed is not None:
            await self._forget(changed)
        return reply

    async def _forget(self, person_key: str) -> None:
        """After a role change: that person's idle agents are closed, so their next message builds one with the
        new role's tools (a busy one finishes its turn first and is closed at the next change or eviction)."""
        for key, s in list(self.sessions.items()):
            if getattr(s, "person", "") == person_key and not s.busy:
                del self.sessions[key]
                await asyncio.to_thread(s.close)

    async def _model(self, session: ChatSession, args: list[str]) -> str:
        current = session.model or self.settings.model.model
        if not args:
            return f"Model: {current}\nSwitch with /model NAME (this chat only)."
        if session.busy:
            return "I'm working: send /model again once the reply has arrived."
        session.model = args[0]
        if session.agent is not None:
            await asyncio.to_thread(self._switch_model, session.agent, args[0])
        return f"Model for this chat: {args[0]} (was {current})."

    def _switch_model(self, agent: AgentSession, model: str) -> None:
        from hermes_agent.bootstrap.provider import build_provider

        agent.set_provider(build_provider(self.settings.with_overrides({"model.default": model})))

    def _key(self, event: Inbound) -> str:
        """The chat's session key; in team mode a group always has one session per person (never shared)."""
        per_user = self.team.enabled or self.settings.cfg.group_sessions_per_user
        return session_key(event, per_user)

    def _session(self, event: Inbound, person: Person | None = None) -> ChatSession:
        key = self._key(event)
        session = self.sessions.get(key)
        if session is None:
            assert self.loop is not None
            session = ChatSession(key, event.chat_id, self.adapters[event.platform], self.session_map,
                                  self._builder(event.platform, event.chat_id, event.user_id, person, key), self.loop,
                                  self.hooks, tool_progress(self.settings, event.platform))
            session.switch_model = self._switch_model
            session.owners = self.access[event.platform].allowed  # the rest (pairing, allow-all) is untrusted
            if person is None and event.is_dm and not self._owner(event):  # rt14 b17/b20: a guest's DM holds no
                session.approver.can_ask = False  # owner to ask, and the guest may not answer: denied, said why
            if person is not None:
                self._team_session(session, person)
            self.sessions[key] = session
        return session

    def _team_session(self, session: ChatSession, person: Person) -> None:
        """A member's or guest's words are untrusted (lasting changes need an approval), and their approvals
        go to the owner and admins; the owner's and admins' are asked in their own chat as usual."""
        from hermes_agent.gateway.team import DeskApprover

        session.person = person.key
        session.owners = frozenset({person.key.partition(":")[2]}) if person.can_approve else frozenset()
        if not person.can_approve and self.desk is not None and self.loop is not None:
            session.approver = DeskApprover(self.desk, self.loop, session.adapter, session.chat_id, person)  # type: ignore[assignment]

    def _builder(self, platform: str, chat_id: str, user_id: str, person: Person | None = None,
                 key: str = "") -> Builder:
        def build(approver: ChatApprover, resume: str | None, on_event: Callable[[Event], None]) -> AgentSession:
            from dataclasses import replace

            from hermes_agent.bootstrap import RunOptions, build_agent, person_options

            settings, options = self.settings, RunOptions()
            if person is not None:  # team mode: their role's toolsets, their USER.md, their folder
                settings, options = person_options(self.settings, self.team, person)
            options = replace(options, spender=f"{platform}:{user_id}",  # each person's own budget
                              media_scope=paths.media_scope_of(key or f"{platform}:{chat_id}:{user_id}"))

            def make(session: str | None) -> AgentSession:
                return build_agent(settings, platform=platform, approver=approver, interactive=True,
                                   event_callback=on_event, resume=session, options=options)

            with _BUILD_LOCK:
                try:
                    agent = make(resume)
                except StorageError:  # the remembered session is gone: start a new one
                    log.warning("session %s not found: starting a new one", resume)
                    agent = make(None)
            if agent.services.session is not None:  # the chat continues it later (here or in Hermes)
                agent.services.session.keep_open = True
            ctx = agent.services.ctx  # send_message goes out through this gateway; cron jobs remember this chat
            ctx.messenger, ctx.origin = self.outbox, {"platform": platform, "chat_id": chat_id}
            ctx.person = ctx.person or f"{platform}:{user_id}"  # who made a cron job here
            return agent
        return build

    def write_state(self, running: bool = True) -> None:
        state = {"pid": os.getpid(), "running": running, "started_at": self.started, "updated_at": time.time(),
                 "platforms": {n: a.status() for n, a in self.adapters.items()},
                 "sessions": len(self.sessions), "busy": sum(s.busy for s in self.sessions.values()),
                 "cron": self.cron.status() if self.cron is not None else None,
                 "api_server": f"{self.api_config.host}:{self.api_config.port}" if self.api_config else None}
        path = state_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        tmp.replace(path)

    async def _evict_forever(self) -> None:
        """Idle chats give their agent back (memory stays flat); the next message resumes from state.db."""
        idle = self.settings.cfg.gateway.idle_evict_seconds
        while True:
            await asyncio.sleep(min(30.0, idle / 2))
            now = time.monotonic()
            for key, session in list(self.sessions.items()):
                if not session.busy and not session.queue and now - session.last_active > idle:
                    del self.sessions[key]
                    lock = self._locks.get(key)
                    if lock is not None and not lock.locked():
                        del self._locks[key]
                    await asyncio.to_thread(session.close)
                    log.info("evicted idle chat %s", key)

    async def _write_state_forever(self) -> None:
        while True:
            self.write_state()
            await asyncio.sleep(2)


def _warm_up(settings: Settings, platform: str) -> None:
    """Build and drop one throwaway agent (no MCP, nothing stored) while polling starts: the lazy imports and
    one-time discovery are paid now, not by the first chat."""
    from hermes_agent.approval.approvers import AutoDenyApprover
    from hermes_agent.bootstrap import build_agent

    try:
        with _BUILD_LOCK:
            agent = build_agent(settings.with_overrides({"mcp_servers": {}}), platform=platform,
                                approver=AutoDenyApprover(), persist=False)
    except Exception:  # a warm-up only: the real build reports any problem to the chat
        log.info("warm-up failed", exc_info=True)
        return
    agent.close()


def run_gateway(settings: Settings) -> int:
    """`hermes gateway run`: serve until SIGINT/SIGTERM. Agents work in MESSAGING_CWD (default: home)."""
    from hermes_agent.gateway.background import api_config, api_enabled

    adapters = build_adapters(settings)
    config = None
    if api_enabled(settings):
        from hermes_agent.api.server import ApiConfigError

        try:
            config = api_config(settings)
        except ApiConfigError as exc:
            print(f"hermes gateway: api server: {exc}", file=sys.stderr)
            return 2
    if not adapters and config is None:
        print("No messaging platform configured: set TELEGRAM_BOT_TOKEN (or platforms.telegram.token), "
              "DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN + SLACK_APP_TOKEN, or WHATSAPP_CLOUD_ACCESS_TOKEN + "
              "WHATSAPP_CLOUD_PHONE_NUMBER_ID (or API_SERVER_ENABLED=true for the API server alone).")
        return 1
    cwd = settings.env.get("MESSAGING_CWD") or os.path.expanduser("~")
    os.chdir(cwd)
    runner = GatewayRunner(settings, adapters)
    runner.api_config = config
    asyncio.run(runner.run())
    return 0
