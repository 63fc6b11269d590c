"""Discord through discord.py: the gateway websocket (discord.py's reconnect with backoff and RESUME), REST
for everything we send (discord.py's rate limiter: 429 `retry_after` honoured), message and interaction ids
in the durable Inbox (a replayed or duplicated event is answered once), 2000-char pieces that never cut a
code fence open, approvals as buttons answered through interactions."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import Handler, Inbound, PlatformAdapter, split_fenced
from hermes_agent.gateway.delivery import Inbox

log = logging.getLogger(__name__)

MAX_LENGTH = 2000
DEFAULT_API = "https://discord.com/api/v10"
_OFF = ("false", "0", "no", "off")
# approval choice -> Discord button style (1 primary, 2 secondary, 3 success, 4 danger)
_STYLES = {"once": 3, "session": 1, "always": 2, "deny": 4}


def _ids(value: object) -> set[int]:
    """Channel ids from config: a list, one id, or a comma-separated string."""
    if value is None or value == "":
        return set()
    items = value if isinstance(value, list | tuple | set) else str(value).split(",")
    return {int(str(i).strip()) for i in items if str(i).strip().isdigit()}


def from_settings(settings: Settings, conf: dict) -> PlatformAdapter | None:
    """A DiscordAdapter when DISCORD_BOT_TOKEN (or platforms.discord.token) is set, else None."""
    token = settings.env.get("DISCORD_BOT_TOKEN") or conf.get("token")
    if not token:
        return None
    extra = conf.get("extra") or {}
    channels = (_ids(extra.get("channels")) | _ids(extra.get("free_response_channels"))
                | _ids(settings.env.get("DISCORD_FREE_RESPONSE_CHANNELS")))
    mention = extra.get("require_mention", settings.env.get("DISCORD_REQUIRE_MENTION", "true"))
    return DiscordAdapter(str(token), base_url=extra.get("base_url"), gateway_url=extra.get("gateway_url"),
                          channels=frozenset(channels), require_mention=str(mention).lower() not in _OFF)


def _point_at(http, base_url: str, gateway_url: str | None) -> None:  # type: ignore[no-untyped-def]
    """discord.py has no base-URL option: `Route.BASE` is a class constant and the gateway defaults to
    `DiscordWebSocket.DEFAULT_GATEWAY`. Rather than change either for the whole process, this one client's
    HTTPClient gets two instance-level wrappers: a request's URL has the default API prefix swapped for
    `base_url`, and a websocket to the default gateway host goes to `gateway_url` (same query). The resume URL
    READY hands out is used as given."""
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    default_api, default_host = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY.host
    request, ws_connect = http.request, http.ws_connect

    async def routed(route, **kw):  # type: ignore[no-untyped-def]
        if base_url != default_api and route.url.startswith(default_api):
            route.url = base_url + route.url[len(default_api):]
        return await request(route, **kw)

    async def connect(url: str, **kw):  # type: ignore[no-untyped-def]
        parsed = yarl.URL(url)
        if gateway_url and parsed.host == default_host:
            url = str(yarl.URL(gateway_url).with_query(parsed.query))
        return await ws_connect(url, **kw)

    http.request, http.ws_connect = routed, connect


class DiscordAdapter:
    """The PlatformAdapter for Discord (a discord.py Client on the gateway, raw REST routes to send)."""

    name = "discord"
    max_length = MAX_LENGTH

    def __init__(self, token: str, *, base_url: str | None = None, gateway_url: str | None = None,
                 channels: frozenset[int] = frozenset(), require_mention: bool = True,
                 inbox: Inbox | None = None) -> None:
        self.token = token
        self.base_url = (base_url or DEFAULT_API).rstrip("/")
        self.gateway_url = gateway_url
        self.channels, self.require_mention = channels, require_mention
        self.inbox = inbox or Inbox(self.name)
        self.handler: Handler | None = None
        self.client = None
        self._task: asyncio.Task | None = None
        self._handling: set[asyncio.Task] = set()
        self._ready: asyncio.Event | None = None
        self.connected = False
        self.last_error = ""
        self.username = ""
        self.bot_id = 0
        self.disconnects = 0
        self._dms: dict[str, str] = {}  # user id -> their DM channel id

    # --- connection ------------------------------------------------------------------------------
    def _make_client(self):  # type: ignore[no-untyped-def]
        import discord

        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice here: no warning about it
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enable "Message Content Intent" for the bot
        client = discord.Client(intents=intents)
        _point_at(client.http, self.base_url, self.gateway_url)
        for event in ("on_connect", "on_resumed", "on_disconnect", "on_message", "on_interaction"):
            setattr(client, event, getattr(self, "_" + event))
        return client

    async def start(self, handler: Handler) -> None:
        """Log in and connect (retried until Discord answers; a refused token is raised), then re-handle the
        inbox's unanswered events."""
        self.handler = handler
        self._ready = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="discord-gateway")
        ready = asyncio.create_task(self._ready.wait())
        await asyncio.wait([ready, self._task], return_when=asyncio.FIRST_COMPLETED)
        if self._task.done():
            ready.cancel()
            self._refused_login(self._task)
        for event_id, payload in self.inbox.unanswered():
            await handler(self._translate(event_id, payload))

    async def connect(self) -> None:
        """For a one-shot send (no gateway websocket): log in over REST once; a refused token raises."""
        import discord

        from hermes_agent.errors import ConfigError

        self.client = client = self._make_client()
        try:
            await client.login(self.token)
        except discord.LoginFailure as exc:
            raise ConfigError(f"Discord refused the bot token ({exc}): check DISCORD_BOT_TOKEN "
                              "(or platforms.discord.token)") from None
        if client.user is not None:
            self.bot_id, self.username = client.user.id, client.user.name
        self.connected = True

    @staticmethod
    def _refused_login(task: asyncio.Task) -> None:
        """A refused token or a missing privileged intent: a configuration error, said plainly."""
        import discord

        from hermes_agent.errors import ConfigError

        try:
            task.result()
        except discord.LoginFailure as exc:
            raise ConfigError(f"Discord refused the bot token ({exc}): check DISCORD_BOT_TOKEN "
                              "(or platforms.discord.token)") from None
        except discord.PrivilegedIntentsRequired:
            raise ConfigError("Discord refused the connection: enable the Message Content Intent for the bot "
                              "(Developer Portal > Bot > Privileged Gateway Intents)") from None

    async def _run(self) -> None:
        """discord.py reconnects a dropped websocket itself (backoff, RESUME); this loop covers what it
        gives up on: an unreachable API at login or a closed connection (backoff 1 s doubling to 30 s)."""
        import aiohttp
        import discord

        delay = 1.0
        while True:
            self.client = self._make_client()
            try:
                await self.client.start(self.token, reconnect=True)
                return
            except (discord.LoginFailure, discord.PrivilegedIntentsRequired) as exc:
                if self._ready is None or not self._ready.is_set():
                    raise  # start() turns it into a config error
                self._outage(exc)  # revoked while running: nothing to retry, `gateway status` shows why
                return
            except (OSError, aiohttp.ClientError, TimeoutError, discord.HTTPException,
                    discord.GatewayNotFound, discord.ConnectionClosed) as exc:
                self._outage(exc)
            await self.client.close()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    def _outage(self, exc: BaseException) -> None:
        self.connected = False
        self.last_error = f"{time.strftime('%H:%M:%S')} {type(exc).__name__}: {exc}"
        log.warning("discord: %s", self.last_error)

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _on_connect(self) -> None:
        user = self.client.user  # type: ignore[union-attr]
        self.bot_id, self.username, self.connected = user.id, user.name, True
        assert self._ready is not None
        self._ready.set()

    async def _on_resumed(self) -> None:
        self.connected = True

    async def _on_disconnect(self) -> None:
        self.connected = False
        self.disconnects += 1

    # --- inbound ---------------------------------------------------------------------------------
    async def _on_message(self, message) -> None:  # type: ignore[no-untyped-def]
        if message.author.bot or message.author.id == self.bot_id:
            return
        payload = self._message_payload(message)
        if payload is not None:
            self._deliver(message.id, payload)

    def _message_payload(self, message) -> dict | None:  # type: ignore[no-untyped-def]
        """What the inbox keeps of a message; None for a guild message not meant for us (no mention, not in
        `channels`) and for one with neither text nor files."""
        in_guild = message.guild is not None or getattr(message.channel, "guild_id", None) is not None
        text = message.content or ""
        if in_guild:
            mentioned = self.bot_id in message.raw_mentions or any(u.id == self.bot_id for u in message.mentions)
            if not (mentioned or message.channel.id in self.channels or not self.require_mention):
                return None
            text = re.sub(rf"<@!?{self.bot_id}>", "", text).strip()
        files = [{"url": a.url, "name": a.filename} for a in message.attachments]
        if not text and not files:
            return None
        return {"chat_id": str(message.channel.id), "user_id": str(message.author.id),
                "user_name": message.author.name, "text": text, "is_dm": not in_guild, "files": files}

    async def _on_interaction(self, interaction) -> None:  # type: ignore[no-untyped-def]
        data = interaction.data or {}
        if "custom_id" not in data or interaction.user is None:
            return  # slash commands and modals are not ours
        self._deliver(interaction.id, {
            "chat_id": str(interaction.channel_id), "user_id": str(interaction.user.id),
            "user_name": interaction.user.name, "is_dm": interaction.guild_id is None, "text": "",
            "button": str(data["custom_id"]), "callback": f"{interaction.id}:{interaction.token}"})

    def _deliver(self, event_id: int, payload: dict) -> None:
        """Into the inbox first (a duplicate or replayed id is dropped there), then to the handler as a task."""
        if not self.inbox.accept([(event_id, payload)], ordered=False) or self.handler is None:
            return
        task = asyncio.create_task(self.handler(self._translate(event_id, payload)))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    def _translate(self, event_id: int, p: dict) -> Inbound:
        if "button" in p:
            return Inbound("discord", event_id, p["chat_id"], p["user_id"], p["user_name"], "",
                           is_dm=p["is_dm"], callback_data=p["button"], callback_id=p["callback"])
        files = p.get("files") or []
        extra = {"file_id": files[0]["url"], "file_name": files[0]["name"]} if files else {}
        more = "".join(f"\n[Another attachment: {f['name']} at {f['url']}]" for f in files[1:])
        return Inbound("discord", event_id, p["chat_id"], p["user_id"], p["user_name"], p["text"] + more,
                       is_dm=p["is_dm"], extra=extra)

    def ack(self, event_ids: list[int] | tuple[int, ...]) -> None:
        self.inbox.done(event_ids)

    async def download(self, file_id: str, target: Path) -> Path:
        """Fetch an attachment (its CDN URL is the file id) to `target`."""
        data = await self.client.http.get_from_cdn(file_id)  # type: ignore[union-attr]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target

    # --- outbound --------------------------------------------------------------------------------
    async def _api(self, method: str, path: str, **kw):  # type: ignore[no-untyped-def]
        """One REST call through discord.py's HTTPClient (its rate limiter: 429 retry_after, 5xx retries);
        an unreachable API is retried (0.5 s doubling to 5 s) so a reply waits out an outage."""
        import aiohttp
        from discord import DiscordServerError
        from discord.http import Route

        ids = {k: kw.pop(k) for k in [k for k in kw if k.endswith(("_id", "_token"))]}
        delay = 0.5
        while True:
            try:
                return await self.client.http.request(Route(method, path, **ids), **kw)  # type: ignore[union-attr]
            except (OSError, aiohttp.ClientError, DiscordServerError) as exc:
                self._outage(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _refused(self, what: str, exc: BaseException) -> None:
        self.last_error = f"{time.strftime('%H:%M:%S')} {what} refused: {exc}"
        log.warning("discord: %s", self.last_error)

    async def send(self, chat_id: str, text: str, buttons: list[tuple[str, str]] | None = None) -> str | None:
        """Pieces of at most 2000 chars; buttons under the last one. Nobody is pinged by a reply."""
        from discord import HTTPException

        pieces = split_fenced(text or "(empty reply)", MAX_LENGTH)
        last = None
        for i, piece in enumerate(pieces):
            body: dict = {"content": piece, "allowed_mentions": {"parse": []}}
            if buttons and i == len(pieces) - 1:
                body["components"] = [{"type": 1, "components": [
                    {"type": 2, "style": _STYLES.get(data.rsplit(":", 1)[-1], 2), "label": label, "custom_id": data}
                    for label, data in buttons]}]
            try:
                msg = await self._api("POST", "/channels/{channel_id}/messages", channel_id=int(chat_id), json=body)
            except HTTPException as exc:  # channel gone, no access: answered as far as it can be
                self._refused(f"send to {chat_id}", exc)
                return last
            last = str(msg["id"])
        return last

    async def open_dm(self, user_id: str) -> str:
        """POST /users/@me/channels {recipient_id}: the DM channel with a user (a user id is no channel id)."""
        from discord import HTTPException

        if user_id in self._dms:
            return self._dms[user_id]
        try:
            channel = await self._api("POST", "/users/@me/channels", json={"recipient_id": str(user_id)})
        except HTTPException as exc:
            self._refused(f"opening a DM with {user_id}", exc)
            raise OSError(f"discord refused a DM with {user_id}: {exc}") from None
        self._dms[user_id] = str(channel["id"])
        return self._dms[user_id]

    async def send_file(self, chat_id: str, path: Path, caption: str = "") -> str | None:
        import discord

        try:
            channel = self.client.get_partial_messageable(int(chat_id))  # type: ignore[union-attr]
            msg = await channel.send(content=caption or None, file=discord.File(path, filename=path.name))
        except (discord.HTTPException, OSError) as exc:
            self._refused(f"file {path.name} to {chat_id}", exc)
            return None
        return str(msg.id)

    async def edit(self, chat_id: str, message_id: str, text: str) -> None:
        from discord import HTTPException

        try:
            await self._api("PATCH", "/channels/{channel_id}/messages/{message_id}", channel_id=int(chat_id),
                            message_id=int(message_id), json={"content": text[:MAX_LENGTH]})
        except HTTPException as exc:
            log.info("edit refused: %s", exc)

    async def clear_buttons(self, chat_id: str, message_id: str) -> None:
        """Remove a message's buttons (an answered approval)."""
        from discord import HTTPException

        try:
            await self._api("PATCH", "/channels/{channel_id}/messages/{message_id}", channel_id=int(chat_id),
                            message_id=int(message_id), json={"components": []})
        except HTTPException as exc:
            log.info("removing buttons refused: %s", exc)

    async def typing(self, chat_id: str) -> None:
        """Discord shows it for 10 s or until our next message: the session refreshes it every 4 s."""
        import aiohttp
        from discord import HTTPException

        try:
            await self.client.http.send_typing(int(chat_id))  # type: ignore[union-attr]
        except (HTTPException, OSError, aiohttp.ClientError) as exc:  # cosmetic: never retried, never fatal
            log.debug("typing failed: %s", exc)

    async def answer_callback(self, callback_id: str, text: str = "") -> None:
        """Answer the button's interaction with a message only the presser sees (flags 64: ephemeral)."""
        from discord import HTTPException

        interaction_id, _, token = callback_id.partition(":")
        try:
            await self._api("POST", "/interactions/{interaction_id}/{interaction_token}/callback",
                            interaction_id=int(interaction_id), interaction_token=token,
                            json={"type": 4, "data": {"content": text or "OK", "flags": 64}})
        except (HTTPException, ValueError) as exc:  # expired (15 min) or already answered
            log.debug("interaction callback failed: %s", exc)

    def status(self) -> dict:
        return {"mode": "gateway", "connected": self.connected, "last_error": self.last_error, "bot": self.username,
                "disconnects": self.disconnects, "unanswered": len(self.inbox.pending)}
