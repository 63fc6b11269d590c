"""The WhatsApp Cloud API webhook: Meta's GET verification handshake (hub.mode / hub.verify_token /
hub.challenge) and signed POSTs (X-Hub-Signature-256 = HMAC-SHA256 of the raw body under the app secret).
A POST is answered 200 only once its messages are durably in the inbox; a wrong or missing signature is
refused 403, so Meta's retries (which last days) carry anything we did not take."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hermes_agent.messages import safe_loads

log = logging.getLogger(__name__)

MAX_BODY = 3 * 1024 * 1024  # Meta's documented payload cap


@dataclass(frozen=True, slots=True)
class HookConfig:
    """Where the webhook listens and the two secrets shared with the Meta app."""

    app_secret: str
    verify_token: str
    host: str = "0.0.0.0"
    port: int = 8090
    path: str = "/whatsapp/webhook"


def signature_ok(secret: str, body: bytes, header: str) -> bool:
    """`header` is `sha256=<hex>` of HMAC-SHA256(body, secret); compared in constant time."""
    if not secret or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header[len("sha256="):].strip().lower().encode())


def messages_of(payload: dict) -> list[dict]:
    """The inbound messages of a webhook payload, each `{"message": ..., "name": profile name}`;
    statuses (sent/delivered/read receipts of our own messages) and other fields are left out."""
    if payload.get("object") != "whatsapp_business_account":
        return []
    found: list[dict] = []
    for entry in payload.get("entry") or []:
        for change in (entry.get("changes") or []) if isinstance(entry, dict) else []:
            if not isinstance(change, dict) or change.get("field") != "messages":
                continue
            value = change.get("value") or {}
            names = {str(c.get("wa_id")): str((c.get("profile") or {}).get("name") or "")
                     for c in value.get("contacts") or [] if isinstance(c, dict)}
            for msg in value.get("messages") or []:
                if isinstance(msg, dict) and msg.get("id") and msg.get("from"):
                    found.append({"message": msg, "name": names.get(str(msg["from"]), "")})
    return found


async def serve_webhook(config: HookConfig, accept: Callable[[list[dict]], Awaitable[None]]):
    """Start the server; returns the aiohttp runner (its cleanup() stops it)."""
    from aiohttp import web

    async def verify(request: web.Request) -> web.Response:
        query = request.query
        if query.get("hub.mode") != "subscribe":
            return web.Response(status=400, text="bad hub.mode")
        if not hmac.compare_digest(query.get("hub.verify_token", "").encode(), config.verify_token.encode()):
            return web.Response(status=403, text="verify token mismatch")
        return web.Response(text=query.get("hub.challenge", ""), content_type="text/plain")

    async def receive(request: web.Request) -> web.Response:
        body = await request.read()  # over client_max_size: aiohttp answers 413
        if not signature_ok(config.app_secret, body, request.headers.get("X-Hub-Signature-256", "")):
            log.warning("whatsapp webhook: refused a POST with a wrong or missing signature")
            return web.Response(status=403, text="bad signature")
        try:
            payload = safe_loads(body)
        except ValueError:
            return web.Response(status=400, text="bad json")
        if not isinstance(payload, dict):
            return web.Response(status=400, text="not an object")
        await accept(messages_of(payload))
        return web.Response(text="ok")

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_get(config.path, verify)
    app.router.add_post(config.path, receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, config.host, config.port).start()
    return runner
