"""What the pages read: one `Home` per server (the Settings it started with, state.db opened on first use,
the cron job store) and blocking work moved off the event loop. Pages never run SQL themselves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from aiohttp import web

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.cron.jobs import JobStore
from hermes_agent.storage import SessionStore

T = TypeVar("T")


class Home:
    """The Hermes home the dashboard shows; `store()` is None until state.db exists (it is never created here)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.jobs = JobStore(paths.cron_dir())
        self._store: SessionStore | None = None
        self._lock = asyncio.Lock()
        self.children: set[asyncio.subprocess.Process] = set()

    async def run(self, fn: Callable[..., T], *args: object, **kw: object) -> T:
        """`fn(*args, **kw)` on a worker thread (SQLite and file reads block)."""
        return await asyncio.to_thread(fn, *args, **kw)

    async def store(self) -> SessionStore | None:
        async with self._lock:
            if self._store is None and paths.state_db_path().exists():
                self._store = await self.run(SessionStore, paths.state_db_path())
            return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def respond(html_text: str, status: int = 200) -> web.Response:
    """An HTML response (the guard middleware adds the security headers)."""
    return web.Response(text=html_text, content_type="text/html", charset="utf-8", status=status)
