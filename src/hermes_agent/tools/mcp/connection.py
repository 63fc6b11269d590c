"""One MCP server connection on the manager's event loop: connect, watch, reconnect with backoff.

Runs only inside the manager loop; the `mcp` SDK is imported here, when a server is first started."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.messages import safe_loads
from hermes_agent.terminal import judged
from hermes_agent.tools.mcp import stdio
from hermes_agent.tools.mcp.config import ServerConfig
from hermes_agent.tools.mcp.confine import Confinement, unconfined
from hermes_agent.tools.mcp.convert import call_result_json
from hermes_agent.tools.results import tool_error

if TYPE_CHECKING:
    from hermes_agent.tools.mcp.errlog import StderrRelay

log = logging.getLogger(__name__)

KEEPALIVE_S = 30.0
STABLE_AFTER_S = 30.0

_CONNECTION_CLOSED = -32000  # JSON-RPC code the SDK uses when the transport closed  # a connection that lived this long resets the backoff


class ConnectionLost(Exception):
    """The server went away (process exited, stream closed or ping failed)."""


@dataclass(slots=True)
class ServerStatus:
    """What `hermes mcp test` and wait_ready report about one server."""

    connected: bool = False
    attempts: int = 0
    connects: int = 0
    last_error: str = ""
    connect_ms: float = 0.0
    list_ms: float = 0.0
    tools: list[str] = field(default_factory=list)
    capabilities: frozenset[str] = frozenset()


def describe(exc: BaseException) -> str:
    """One line for the innermost meaningful exception (anyio wraps failures in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class _WatchedStream:
    """Read-stream proxy that reports end of stream (the server process exited)."""

    def __init__(self, inner: object, on_close: Callable[[], None]) -> None:
        self._inner = inner
        self._on_close = on_close

    @property
    def last_context(self) -> object:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> object:
        import anyio

        try:
            return await self._inner.receive()  # type: ignore[attr-defined]
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_close()
            raise

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> object:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> _WatchedStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._on_close()
        await self.aclose()


ToolsCallback = Callable[["ServerConnection", list, frozenset[str]], None]


def _guard_of(conf: Confinement) -> object | None:
    """The run-later guard (terminal/sandbox/guard.py) of a confined server that may write a workspace."""
    spec = conf.spec
    if spec is None or not spec.workspaces:
        return None
    from hermes_agent.terminal.sandbox.guard import guard_for

    return guard_for(spec.workspaces, spec.quarantine, roots=(*spec.writable, *spec.pinned))


def _with_notes(result: str, notes: list[str]) -> str:
    """The tool's JSON result with the guard's lines under "sandbox" (still one JSON object)."""
    import json

    try:
        data = safe_loads(result)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        data = {"result": result}
    data["sandbox"] = notes
    return json.dumps(data, ensure_ascii=False)


class ServerConnection:
    """Keeps one server connected until stop(); calls `on_tools` after every (re)listing and
    `on_down` whenever the connection is lost."""

    def __init__(self, cfg: ServerConfig, on_tools: ToolsCallback, on_down: Callable[[ServerConnection], None],
                 log_dir: Path | None = None, backoff_base: float = 1.0, backoff_cap: float = 30.0,
                 confine: Callable[[ServerConfig], Confinement] | None = None) -> None:
        self.cfg = cfg
        self._confine = confine or unconfined
        self.confinement: Confinement | None = None
        self.status = ServerStatus()
        self._on_tools = on_tools
        self._on_down = on_down
        self._log_dir = log_dir
        self._relay: StderrRelay | None = None
        self._backoff = (backoff_base, backoff_cap)
        self._session: object | None = None
        self._up = asyncio.Event()
        self._wake = asyncio.Event()
        self._stopping = False
        self._closed = False
        self._refresh = False
        self._check = False
        self._garbled = False  # said once that it sent something that is not JSON-RPC
        self._guard: object | None = None  # the run-later guard of a confined stdio server's workspace
        self.first_attempt = asyncio.Event()

    # lifecycle ---------------------------------------------------------------------------------
    async def run(self) -> None:
        """Connect, serve, and reconnect with exponential backoff until stop()."""
        from hermes_agent.terminal.sandbox.startfail import OneMoreStart

        failures = 0
        again = OneMoreStart()  # the sandbox did not start the server: plan and start it once more
        while not self._stopping:
            started = time.monotonic()
            self.status.attempts += 1
            log_start = self._log_size()
            try:
                await self._serve_once()
            except Exception as exc:
                said = self._said_since(log_start)
                if not self.status.connected and again.wanted(said):
                    self._mark_down()
                    continue
                self.status.last_error = describe(exc) + said
                level = logging.WARNING if failures == 0 else logging.DEBUG
                log.log(level, "MCP server %s: %s", self.cfg.name, self.status.last_error)
            finally:
                was_up = self.status.connected
                self._mark_down()
                if not (again.used and self.status.attempts == 1):
                    self.first_attempt.set()
            if self._stopping:
                break
            failures = 1 if was_up and time.monotonic() - started > STABLE_AFTER_S else failures + 1
            await self._sleep(min(self._backoff[1], self._backoff[0] * 2 ** (failures - 1)))

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()

    async def _sleep(self, delay: float) -> None:
        self._wake.clear()
        try:
            await asyncio.wait_for(self._wake.wait(), delay)
        except TimeoutError:
            pass

    def _mark_down(self) -> None:
        if self.status.connected:
            self.status.connected = False
            self._on_down(self)
        self._session = None
        self._up.clear()

    # one connection ----------------------------------------------------------------------------
    async def _serve_once(self) -> None:
        from contextlib import AsyncExitStack

        self._closed = self._refresh = self._check = False
        async with AsyncExitStack() as stack:
            t0 = time.perf_counter()
            read, write = await self._open_transport(stack)  # a stdio server starts before the SDK loads
            from mcp import ClientSession

            watched = _WatchedStream(read, self._note_closed)
            session = await stack.enter_async_context(
                ClientSession(watched, write, message_handler=self._on_message))
            init = await asyncio.wait_for(session.initialize(), self.cfg.connect_timeout)
            self.status.connect_ms = (time.perf_counter() - t0) * 1000
            self.status.capabilities = await self._useful_capabilities(session, init.capabilities)
            self._session = session
            await self._list_and_publish(session)
            self.status.connected = True
            self.status.connects += 1
            self.status.last_error = ""
            self._up.set()
            self.first_attempt.set()
            await self._watch(session)

    async def _open_transport(self, stack: object) -> tuple[object, object]:
        if self.cfg.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(headers=dict(self.cfg.headers),
                                        timeout=httpx2.Timeout(self.cfg.connect_timeout, read=300.0))
            await stack.enter_async_context(client)  # type: ignore[attr-defined]
            return await stack.enter_async_context(  # type: ignore[attr-defined]
                streamable_http_client(self.cfg.url, http_client=client))
        from hermes_agent.terminal.sandbox.launcher import SandboxError
        from hermes_agent.terminal.sandbox.wrapped import sandbox_launch
        from hermes_agent.tools.mcp.confine import remove_tmp

        conf = self.confinement = self._confine(self.cfg)
        if conf.error:
            raise SandboxError(conf.error)
        stack.callback(remove_tmp, conf.tmp)  # type: ignore[attr-defined]  # runs after the server is gone
        argv, plan = sandbox_launch(conf.spec, [conf.command or self.cfg.command,
                                                      *(self.cfg.args if conf.args is None else conf.args)], cwd=conf.cwd,
                                    unix_filter=True)  # no ssh-agent, docker.sock, tmux by path (Landlock)
        guard = self._guard = _guard_of(conf)
        if guard is not None:  # checked after each call and when the server is gone (callbacks run last)
            guard.separate_links(conf.spec)  # type: ignore[attr-defined]  # files hard-linked outside: copied apart
            guard.enter(deliver=False, why=f"MCP server {self.cfg.name} starts")  # type: ignore[attr-defined]
            stack.callback(guard.leave, hold=True)  # type: ignore[attr-defined]
        from hermes_agent.tools.mcp.errlog import StderrRelay

        relay = self._relay = StderrRelay(self._log_path())  # stored terminal-safe, never on the user's terminal
        try:
            proc = await stdio.spawn(argv, {**conf.env, **plan}, conf.cwd, relay.fd)
        finally:
            relay.close_writer()
        stack.push_async_callback(stdio.stop, proc)  # type: ignore[attr-defined]
        if conf.spec is not None:  # a confined server may rewrite a judged file (terminal/judged.py)
            judged.add_confined(id(self), lambda: proc.returncode is None)
            stack.callback(judged.drop_confined, id(self))  # type: ignore[attr-defined]
        await stdio.load_sdk_unless_exited(proc)  # a server dead at start fails now, no SDK import waited for
        return await stack.enter_async_context(stdio.streams(proc))  # type: ignore[attr-defined]

    def _log_path(self) -> Path | None:
        return self._log_dir / f"{self.cfg.name}.log" if self._log_dir is not None and not self.cfg.url else None

    def _log_size(self) -> int:
        path = self._log_path()
        try:
            return path.stat().st_size if path is not None else -1
        except OSError:
            return 0

    def _said_since(self, start: int) -> str:
        """The last line a stdio server wrote to its stderr log during the failed attempt (why it exited), shown
        after the error; "" when it said nothing. The log is hermes's own file; the server only has its fd."""
        path = self._log_path()
        if path is None or start < 0:
            return ""
        from hermes_agent.termsafe import visible

        if self._relay is not None:
            self._relay.wait()  # the copy catches up with what the server wrote before it exited

        try:
            with open(path, "rb") as fh:
                fh.seek(max(start, fh.seek(0, 2) - 4096))
                tail = fh.read(4096).decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return f" (server said: {visible(lines[-1])[:300]}; log: {path})" if lines else ""

    async def _list_and_publish(self, session: object) -> None:
        t0 = time.perf_counter()
        tools: list = []
        cursor = None
        while True:
            from mcp.types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await asyncio.wait_for(session.list_tools(params=params),  # type: ignore[attr-defined]
                                          self.cfg.connect_timeout)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.status.list_ms = (time.perf_counter() - t0) * 1000
        self.status.tools = [t.name for t in tools]
        self._on_tools(self, tools, self.status.capabilities)

    async def _watch(self, session: object) -> None:
        """Sleep until stop, end of stream, a list_changed notification, or the keepalive ping."""
        while True:
            self._wake.clear()
            if not (self._stopping or self._closed or self._refresh or self._check):
                try:
                    await asyncio.wait_for(self._wake.wait(), KEEPALIVE_S)
                except TimeoutError:
                    self._check = True
            if self._stopping:
                return
            if self._closed:
                raise ConnectionLost("the server closed the connection (process exited?)")
            if self._check:
                self._check = False
                await self._ping(session)
            if self._refresh:
                self._refresh = False
                await self._list_and_publish(session)

    async def _ping(self, session: object) -> None:
        try:
            await asyncio.wait_for(session.send_ping(), min(10.0, self.cfg.connect_timeout))  # type: ignore[attr-defined]
        except Exception as exc:
            raise ConnectionLost(f"ping failed: {describe(exc)}") from exc

    def _note_closed(self) -> None:
        self._closed = True
        self._wake.set()

    async def _on_message(self, message: object) -> None:
        if isinstance(message, Exception):
            self._check = True  # a transport error: verify the link with a ping
            if not self._garbled:  # one line per server, never its bytes (escapes) on the user's terminal
                self._garbled = True
                log.warning("MCP server %s: sent output that is not JSON-RPC (ignored; the link is checked with a "
                            "ping; its stdout is for protocol messages only)", self.cfg.name)
        elif getattr(message, "method", "") == "notifications/tools/list_changed":
            self._refresh = True
        else:
            return
        self._wake.set()

    # requests from tool handlers ---------------------------------------------------------------
    async def session_for_call(self, wait_s: float) -> object | None:
        """The live session, waiting up to `wait_s` while a restart is in progress."""
        if self._session is None:
            try:
                await asyncio.wait_for(self._up.wait(), wait_s)
            except TimeoutError:
                return None
        return self._session

    async def request(self, op: Callable[[object], Awaitable[object]], timeout: float,
                      render: Callable[[object], str]) -> str:
        """Run `op(session)` with a deadline; every failure becomes error JSON for the model."""
        name = self.cfg.name
        session = await self.session_for_call(min(timeout, 10.0))
        if session is None:
            why = f" ({self.status.last_error})" if self.status.last_error else ""
            return tool_error(f"MCP server '{name}' is not connected{why}; it is being restarted, retry later")
        try:
            result = await asyncio.wait_for(op(session), timeout)
        except TimeoutError:
            return tool_error(f"MCP server '{name}' did not answer within {timeout:g}s")
        except Exception as exc:
            self._check = True
            self._wake.set()
            if getattr(exc, "code", None) == _CONNECTION_CLOSED:
                if self._session is session:  # later calls wait for the restart instead of reusing it
                    self._session = None
                    self._up.clear()
                    self._note_closed()
                return tool_error(f"MCP server '{name}' disconnected during the call; it is being "
                                  "restarted: retry in a few seconds")
            return tool_error(f"MCP server '{name}' failed: {describe(exc)}")
        return render(result)

    async def call_tool(self, tool: str, args: dict) -> str:
        """tools/call with the server's per-call timeout."""
        timeout = self.cfg.timeout
        guard = self._guard
        if guard is not None:  # the user's uncommitted work, before the call may destroy it (terminal/base.py keep_work)
            await asyncio.to_thread(guard.keep, f"MCP {self.cfg.name}: {tool}")  # type: ignore[attr-defined]
        result = await self.request(
            lambda s: s.call_tool(tool, args, read_timeout_seconds=timeout),  # type: ignore[attr-defined]
            timeout, call_result_json)
        notes = guard.check() if guard is not None else []  # type: ignore[attr-defined]
        return _with_notes(result, notes) if notes else result


    async def _useful_capabilities(self, session: object, caps: object) -> frozenset[str]:
        """Advertised resources/prompts that are non-empty or may change (empty static ones cost
        schema tokens for nothing)."""
        found = set()
        probes = {"resources": (("list_resources", "resources"), ("list_resource_templates", "resource_templates")),
                  "prompts": (("list_prompts", "prompts"),)}
        for cap, methods in probes.items():
            advertised = getattr(caps, cap, None)
            if advertised is None:
                continue
            if getattr(advertised, "list_changed", False):
                found.add(cap)
                continue
            for method, attr in methods:
                try:
                    result = await asyncio.wait_for(getattr(session, method)(), self.cfg.connect_timeout)
                except Exception as exc:
                    log.debug("MCP server %s: %s failed: %s", self.cfg.name, method, describe(exc))
                    continue
                if getattr(result, attr, None):
                    found.add(cap)
                    break
        return frozenset(found)

