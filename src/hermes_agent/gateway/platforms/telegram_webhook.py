"""Telegram's webhook mode: setWebhook with a secret token, and an aiohttp server that accepts an update
only with the matching X-Telegram-Bot-Api-Secret-Token header and answers 200 once it is durably in the inbox."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hermes_agent.messages import safe_loads

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """`url` is what Telegram calls (public); the server listens on host:port at url's path."""

    url: str
    secret: str
    host: str = "127.0.0.1"
    port: int = 8443

    @property
    def path(self) -> str:
        from urllib.parse import urlsplit

        return urlsplit(self.url).path or "/"


async def serve_webhook(config: WebhookConfig, accept: Callable[[dict], Awaitable[None]]):
    """Start the server; returns the aiohttp runner (its cleanup() stops it)."""
    import hmac  # here: not on a polling gateway's start

    from aiohttp import web

    async def receive(request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not hmac.compare_digest(given, config.secret):
            return web.Response(status=403, text="forbidden")
        try:
            update = safe_loads(await request.read())
        except ValueError:
            return web.Response(status=400, text="bad json")
        if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
            return web.Response(status=400, text="not an update")
        await accept(update)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post(config.path, receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, config.host, config.port).start()
    return runner
