"""The ACP agent: sessions are hermes sessions (state.db, source "acp", toolset hermes-acp, terminal.cwd = the
editor's cwd), prompts run as turns in a worker thread with streamed updates, approvals become permission
requests, cancel interrupts the turn. stdout carries only the protocol: anything else printed goes to stderr."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionInfo,
)

from hermes_agent import __version__
from hermes_agent.acpserver.bridge import Bridge, prompt_text
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError

if TYPE_CHECKING:
    from hermes_agent.core.contract import AgentSession

log = logging.getLogger(__name__)
_STOP = {"stop": "end_turn", "interrupted": "cancelled", "max_iterations": "max_turn_requests", "loop": "refusal"}


@dataclass
class _Session:
    agent: AgentSession
    bridge: Bridge
    cwd: str
    busy: bool = False


class HermesACPAgent:
    """acp.Agent over build_agent; one hermes agent per ACP session."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.conn: Any = None
        self.sessions: dict[str, _Session] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION,
                                  agent_info=Implementation(name="hermes-agent", version=__version__),
                                  agent_capabilities=AgentCapabilities(load_session=True,
                                                                       prompt_capabilities=PromptCapabilities()))

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    def _build(self, cwd: str, bridge: Bridge, resume: str | None = None) -> AgentSession:
        from hermes_agent.bootstrap import build_agent

        settings = self.settings.with_overrides({"terminal.cwd": cwd}) if cwd and os.path.isdir(cwd) else self.settings
        return build_agent(settings, platform="acp", approver=bridge, interactive=True, event_callback=bridge.emit,
                           resume=resume)

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        bridge = Bridge(asyncio.get_running_loop(), self.conn, self.settings.cfg.approvals.timeout)
        agent = await asyncio.to_thread(self._build, cwd, bridge)
        binding = agent.services.session
        if binding is None:  # build_agent binds every persisting agent to state.db; never None for "acp"
            raise HermesError("the ACP agent has no session store")
        sid = await asyncio.to_thread(binding.start)
        bridge.session_id = sid
        self.sessions[sid] = _Session(agent, bridge, cwd)
        return NewSessionResponse(session_id=sid)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> LoadSessionResponse:
        old = self.sessions.get(session_id)
        if old is not None:
            if old.busy:
                raise acp.RequestError.invalid_request({"reason": "that session is running a prompt; cancel it first"})
            await self.close_session(session_id)  # loaded again: the old agent is closed, not leaked
        bridge = Bridge(asyncio.get_running_loop(), self.conn, self.settings.cfg.approvals.timeout)
        bridge.session_id = session_id
        try:
            agent = await asyncio.to_thread(self._build, cwd, bridge, session_id)
        except HermesError as exc:
            raise acp.RequestError.invalid_params({"sessionId": session_id, "reason": str(exc)}) from None
        self.sessions[session_id] = _Session(agent, bridge, cwd)
        for msg in agent.history:  # the editor rebuilds the conversation from these
            if msg.role == "user" and msg.content:
                await self.conn.session_update(session_id=session_id, update=acp.update_user_message_text(msg.content))
            elif msg.role == "assistant" and msg.content:
                await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(msg.content))
        return LoadSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        from hermes_agent.bootstrap.session import shared_store

        store = shared_store()
        rows = await asyncio.to_thread(store.list_sessions, 100, "acp")
        return ListSessionsResponse(sessions=[SessionInfo(session_id=r.id, cwd=cwd or os.getcwd(), title=r.title or None)
                                              for r in rows])

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})
        if session.busy:
            raise acp.RequestError.invalid_request({"reason": "a prompt is already running in this session"})
        session.busy = True
        try:
            outcome = await asyncio.to_thread(session.agent.run_turn, prompt_text(prompt))
        except HermesError as exc:
            await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(f"Error: {exc}"))
            return PromptResponse(stop_reason="end_turn")
        finally:
            session.busy = False
        return PromptResponse(stop_reason=_STOP.get(outcome.reason, "end_turn"))  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.agent.interrupt()

    async def close_session(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await asyncio.to_thread(session.agent.close)

    async def ext_method(self, method: str, params: dict) -> dict:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict) -> None:
        return None

    async def shutdown(self) -> None:
        for sid in list(self.sessions):
            await self.close_session(sid)


class _WriteProtocol(asyncio.streams.FlowControlMixin, asyncio.BaseProtocol):
    """What asyncio.StreamWriter needs to drain a pipe."""


def _pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _copy(src: int, dst: int) -> None:
    try:
        while chunk := os.read(src, 65536):
            os.write(dst, chunk)
    except OSError:
        pass
    finally:
        os.close(dst if src in (0, 1) else src)


def _through_pipe(fd: int, reading: bool) -> tuple[int, threading.Thread | None]:
    """fd itself when asyncio can watch it; for a regular file (`hermes acp < requests.jsonl > out`) a pipe fed
    or drained by a thread, since asyncio's pipe transports refuse files."""
    if _pipe_like(fd):
        return fd, None
    r, w = os.pipe()
    src, dst, ours = (fd, w, r) if reading else (r, fd, w)
    thread = threading.Thread(target=_copy, args=(src, dst), name="acp-file-pipe", daemon=reading)
    thread.start()
    return ours, thread


async def _streams(proto_out: Any, proto_in: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proto_in)
    protocol = _WriteProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, proto_out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def serve(settings: Settings) -> int:
    """Run until the editor closes stdin. The protocol gets a private copy of stdout; fd 1 becomes stderr."""
    out_fd, drain = _through_pipe(os.dup(1), reading=False)
    in_fd, _ = _through_pipe(0, reading=True)
    proto_out, proto_in = os.fdopen(out_fd, "wb", buffering=0), os.fdopen(in_fd, "rb", buffering=0, closefd=in_fd != 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    agent = HermesACPAgent(settings)

    async def main() -> None:
        reader, writer = await _streams(proto_out, proto_in)
        conn = acp.AgentSideConnection(agent, writer, reader, listening=False)
        try:
            await conn.listen()
        finally:
            await agent.shutdown()
            await asyncio.shield(conn.close())

    try:
        asyncio.run(main())
    finally:
        if drain is not None:  # the protocol's end of the pipe closes, the thread copies the rest to the file
            try:
                proto_out.close()
            except OSError:
                pass
            drain.join(timeout=10)
    return 0

