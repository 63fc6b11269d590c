"""McpManager: one background asyncio loop (daemon thread) holding every configured MCP server.

start() returns at once; servers connect in the background and their tools appear in the
registry as they become ready. Nothing is started unless at least one server is enabled."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from hermes_agent.config.settings import Settings
from hermes_agent.tools.mcp.config import ServerConfig, missing_command, parse_servers
from hermes_agent.tools.mcp.confine import Confinement
from hermes_agent.tools.mcp.connection import ServerConnection, ServerStatus
from hermes_agent.tools.mcp.registration import ServerTools
from hermes_agent.tools.registry import ToolRegistry
from hermes_agent.tools.registry import registry as default_registry
from hermes_agent.tools.results import tool_error

log = logging.getLogger(__name__)

_SUBMIT_GRACE_S = 15.0  # on top of a server's own call timeout, for connection waits and teardown


class McpManager:
    """Owns the loop thread, one ServerConnection per enabled server and their registry entries."""

    def __init__(self, servers: Iterable[ServerConfig], *, registry: ToolRegistry | None = None,
                 log_dir: Path | None = None, config_errors: dict[str, str] | None = None,
                 backoff_base: float = 1.0, backoff_cap: float = 30.0,
                 confine: Callable[[ServerConfig], Confinement] | None = None) -> None:
        self._confine = confine
        self.servers = [s for s in servers if s.enabled]
        self.config_errors = dict(config_errors or {})
        self._registry = registry or default_registry
        self._log_dir = log_dir
        self._backoff = (backoff_base, backoff_cap)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._conns: dict[str, ServerConnection] = {}
        self._failed: dict[str, ServerStatus] = {}  # servers that could not even start (missing command)
        self._tools: dict[str, ServerTools] = {}
        self._tasks: list[asyncio.Task] = []
        self._ready: concurrent.futures.Future | None = None

    @classmethod
    def from_settings(cls, settings: Settings, servers: list[ServerConfig] | None = None,
                      errors: dict[str, str] | None = None, **kw: object) -> McpManager:
        """A manager for `mcp_servers` of the settings (broken entries land in config_errors), or for `servers`
        already sorted out by config.startable (`errors`: those left out, already reported by the caller)."""
        if servers is None:
            servers, errors = parse_servers(settings.cfg.mcp_servers, settings.env)
            for name, err in errors.items():
                log.warning("mcp_servers.%s ignored: %s", name, err)
        kw.setdefault("confine", confiner(settings))
        return cls(servers, config_errors=errors, log_dir=Path(settings.home) / "logs" / "mcp", **kw)  # type: ignore[arg-type]

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> McpManager:
        """Start the loop thread and begin connecting every server; never blocks on a server. A stdio server
        whose command does not exist is left out at once (config_errors says why): it costs nothing."""
        self.servers = [s for s in self.servers if not self._missing_command(s)]
        if self.running or not self.servers:
            return self
        import importlib.util

        if importlib.util.find_spec("mcp") is None:
            from hermes_agent.paths import install_hint

            self.config_errors["*"] = f"the `mcp` package is not installed: {install_hint('mcp')}"
            log.warning("MCP servers are configured but %s", self.config_errors["*"])
            return self
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=self._run_loop, args=(loop,), name="hermes-mcp", daemon=True)
        self._thread.start()
        self._ready = asyncio.run_coroutine_threadsafe(self._start_all(), loop)
        atexit.register(self.shutdown)
        return self

    def _missing_command(self, cfg: ServerConfig) -> bool:
        why = missing_command(cfg)
        if why:
            self.config_errors[cfg.name] = why
            self._failed[cfg.name] = ServerStatus(attempts=1, last_error=why)
            log.info("MCP server %s skipped: %s", cfg.name, why)  # the frontend says it in one line
        return bool(why)

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    async def _start_all(self) -> None:
        for cfg in self.servers:
            conn = ServerConnection(cfg, self._on_tools, self._on_down, log_dir=self._log_dir,
                                    backoff_base=self._backoff[0], backoff_cap=self._backoff[1],
                                    confine=self._confine)
            self._conns[cfg.name] = conn
            self._tools[cfg.name] = ServerTools(self._registry, conn, self.submit)
            self._tasks.append(asyncio.create_task(conn.run(), name=f"mcp-{cfg.name}"))

    def _on_tools(self, conn: ServerConnection, tools: list, capabilities: frozenset[str]) -> None:
        self._tools[conn.cfg.name].sync(tools, capabilities)
        log.info("MCP server %s: %d tools registered", conn.cfg.name, len(tools))

    def _on_down(self, conn: ServerConnection) -> None:
        if not conn.stopping:
            log.warning("MCP server %s disconnected; reconnecting in the background", conn.cfg.name)

    def submit(self, factory: Callable[[], Awaitable[str]], timeout: float) -> str:
        """Run a coroutine on the manager loop from any other thread and return its JSON string."""
        loop = self._loop
        if loop is None or not self.running:
            return tool_error("MCP is not running (the session is shutting down)")
        try:
            if asyncio.get_running_loop() is loop:
                return tool_error("MCP tools cannot be called from the MCP loop itself")
        except RuntimeError:
            pass
        future = asyncio.run_coroutine_threadsafe(_call(factory), loop)
        try:
            return future.result(timeout + _SUBMIT_GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return tool_error(f"MCP call did not finish within {timeout + _SUBMIT_GRACE_S:g}s")

    def wait_ready(self, timeout: float) -> bool:
        """Block until every server connected or failed its first attempt; True when all connected."""
        if not self.running or self._loop is None or self._ready is None:
            return not self.servers
        try:
            self._ready.result(timeout)
            waits = [c.first_attempt.wait() for c in self._conns.values()]
            fut = asyncio.run_coroutine_threadsafe(asyncio.wait_for(_gather(waits), timeout), self._loop)
            fut.result(timeout + 1)
        except (TimeoutError, concurrent.futures.TimeoutError):
            pass
        return all(s.connected for s in self.status().values())

    def status(self) -> dict[str, ServerStatus]:
        """Server name -> its current status (a live object; read-only for callers)."""
        return {**self._failed, **{name: conn.status for name, conn in self._conns.items()}}

    def tool_names(self, server: str) -> list[str]:
        """Registry names currently registered for `server`."""
        tools = self._tools.get(server)
        return sorted(tools.names) if tools else []

    def shutdown(self, timeout: float = 10.0) -> None:
        """Close every session (stopping stdio server processes), stop the loop, drop the tools."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = None
        try:
            asyncio.run_coroutine_threadsafe(self._stop_all(timeout), loop).result(timeout + 0.5)
        except Exception:
            log.warning("MCP shutdown did not finish cleanly", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(min(timeout, 1.0))  # a server still closing is left to the daemon thread
        if not thread.is_alive():
            loop.close()
        self._thread = None
        for tools in self._tools.values():
            tools.clear()
        atexit.unregister(self.shutdown)

    async def _stop_all(self, timeout: float) -> None:
        for conn, task in zip(self._conns.values(), self._tasks, strict=False):
            await conn.stop()
            if not conn.status.connected:
                task.cancel()  # still connecting or backing off: nothing to close gracefully
        if not self._tasks:
            return
        done, pending = await asyncio.wait(self._tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)


async def _call(factory: Callable[[], Awaitable[str]]) -> str:
    return await factory()


async def _gather(waits: list[Awaitable[object]]) -> None:
    await asyncio.gather(*waits)


def confiner(settings: Settings, policy: object = None) -> Callable[[ServerConfig], Confinement]:
    """Every stdio server of these settings runs inside the session's sandbox (see confine.py)."""
    from dataclasses import asdict

    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.tools.mcp.confine import confine

    policy = policy or policy_for_settings(settings)
    sandbox = asdict(settings.cfg.sandbox)
    return lambda cfg: confine(cfg, policy, sandbox)  # type: ignore[arg-type]


def start_mcp(settings: Settings, **kw: object) -> McpManager | None:
    """Start MCP in the background when `mcp_servers` has an enabled server; None otherwise."""
    manager = McpManager.from_settings(settings, **kw)
    if not manager.servers:
        return None
    return manager.start()
