"""Slack through slack-bolt's AsyncApp and slack_sdk: Socket Mode (SLACK_APP_TOKEN) or the HTTP Events API
(SLACK_SIGNING_SECRET, v0 signatures checked by Bolt). DMs, and channel messages that mention the bot (answered
in the message's thread). Every event is written to the durable Inbox before it is acknowledged, keyed by its
event_id, so a retried or re-delivered event is answered once and a restart neither drops nor repeats one."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from hermes_agent import lazyre
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import Handler, Inbound, PlatformAdapter
from hermes_agent.gateway.delivery import Inbox
from hermes_agent.gateway.platforms.slack_format import (
    MAX_LENGTH,
    approval_blocks,
    pieces,
    to_mrkdwn,
    unescape,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://slack.com/api/"
WORKING = "eyes"  # the reaction on a message while its reply is being worked on
_MENTION = lazyre.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
THREADS = 2000
OUTAGE_PATIENCE = 120.0  # seconds a reply keeps being retried through a Slack outage


@dataclass(frozen=True, slots=True)
class SlackConfig:
    """How to reach Slack: Socket Mode when `app_token` is set, else HTTP events on host:port/path."""

    bot_token: str
    app_token: str = ""
    signing_secret: str = ""
    base_url: str = DEFAULT_BASE_URL
    http_host: str = "127.0.0.1"
    http_port: int = 3000
    http_path: str = "/slack/events"
    ping_interval: float = 10.0
    reactions: bool = True
    require_mention: bool = True  # channel messages need an @-mention (or to be in a thread we posted in)
    reply_in_thread: bool = True  # channel replies go in the message's thread (one session per thread)
    rate_limit_retries: int = 5

    @property
    def mode(self) -> str:
        return "socket" if self.app_token else "http"


def from_settings(settings: Settings, conf: dict) -> PlatformAdapter | None:
    """A SlackAdapter when SLACK_BOT_TOKEN (or platforms.slack.token) is set, else None. It needs
    SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP Events API)."""
    env = settings.env
    token = env.get("SLACK_BOT_TOKEN") or conf.get("token")
    if not token:
        return None
    extra = conf.get("extra") or {}
    app_token = env.get("SLACK_APP_TOKEN") or extra.get("app_token") or ""
    secret = env.get("SLACK_SIGNING_SECRET") or extra.get("signing_secret") or ""
    if not (app_token or secret):
        from hermes_agent.errors import ConfigError

        raise ConfigError("Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP Events API)")
    return SlackAdapter(SlackConfig(
        str(token), str(app_token), str(secret), str(extra.get("base_url") or DEFAULT_BASE_URL),
        str(extra.get("http_host") or "127.0.0.1"), int(extra.get("http_port") or 3000),
        str(extra.get("http_path") or "/slack/events"), float(extra.get("ping_interval") or 10),
        _flag(env.get("SLACK_REACTIONS", extra.get("reactions"))),
        _flag(extra.get("require_mention", env.get("SLACK_REQUIRE_MENTION"))), _flag(extra.get("reply_in_thread"))))


def _flag(value: object, default: bool = True) -> bool:
    """Hermes's explicit-false parsing: only false/0/no/off turn a default-on switch off."""
    if value is None or value == "":
        return default
    return str(value).lower() not in ("false", "0", "no", "off")


def _failures() -> tuple[type[BaseException], ...]:
    """What a Web API call raises when Slack refuses or cannot be reached (after slack_sdk's own retries)."""
    import aiohttp
    from slack_sdk.errors import SlackApiError, SlackClientError

    return SlackApiError, SlackClientError, aiohttp.ClientError, OSError, TimeoutError


def event_key(event_id: str) -> int:
    """Slack's string event ids as the Inbox's integer ids (56 bits of their SHA-256)."""
    return int.from_bytes(hashlib.sha256(event_id.encode()).digest()[:7], "big")


def split_chat(chat_id: str) -> tuple[str, str]:
    """`C123:1700000000.000100` (a thread) or `D123` (a DM) -> (channel, thread_ts or "")."""
    channel, _, thread = chat_id.partition(":")
    return channel, thread


class SlackAdapter:
    """The PlatformAdapter for Slack."""

    name = "slack"
    max_length = MAX_LENGTH

    def __init__(self, config: SlackConfig, inbox: Inbox | None = None) -> None:
        from slack_bolt.async_app import AsyncApp
        from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
        from slack_sdk.web.async_client import AsyncWebClient

        self.config = config
        base = config.base_url if config.base_url.endswith("/") else config.base_url + "/"
        retry = [AsyncRateLimitErrorRetryHandler(max_retry_count=config.rate_limit_retries)]  # waits Retry-After
        self.client = AsyncWebClient(token=config.bot_token, base_url=base, timeout=30, retry_handlers=retry)
        tokenless = AsyncWebClient(base_url=base, timeout=30, retry_handlers=retry)  # Bolt adds authorize's token
        bolt_log = logging.getLogger(f"{__name__}.bolt")
        bolt_log.setLevel(logging.ERROR)  # Bolt warns that SLACK_BOT_TOKEN (read from os.environ) goes unused
        self.app = AsyncApp(client=tokenless, signing_secret=config.signing_secret or "socket-mode", logger=bolt_log,
                            authorize=self._authorizer(), process_before_response=True,
                            request_verification_enabled=config.mode == "http")
        bolt_log.setLevel(logging.NOTSET)
        self.app.event("message")(self._on_event)
        self.app.event("app_mention")(self._on_event)
        self.app.action(re.compile(r"^hermes_button_\d+$"))(self._on_action)
        self.inbox = inbox or Inbox(self.name)
        self.handler: Handler | None = None
        self._handling: set[asyncio.Task] = set()
        self._socket = None
        self._web = None
        self.connected = False
        self.last_error = ""
        self.bot_user = ""
        self.bot_name = ""
        self.bot_id = ""
        self.team_id = ""
        self._dms: dict[str, str] = {}  # user id -> their DM channel id
        self._latest: dict[str, tuple[int, str, str]] = {}  # chat -> (event key, channel, ts) being answered
        self._reacted: dict[int, tuple[str, str]] = {}  # event key -> (channel, ts) carrying the WORKING reaction
        self._threads: dict[str, None] = {}  # thread_ts we have posted in (insertion-ordered)
        self._prompts: dict[str, tuple[str, str, str]] = {}  # button press -> (channel, ts, prompt text)

    def _authorizer(self):  # type: ignore[no-untyped-def]
        """Bolt's per-request authorization from our one auth.test at start (Bolt's own would call auth.test on
        the first event and, in an outage, acknowledge that event unhandled). A closure: Bolt passes arguments
        by their names."""
        from slack_bolt.authorization import AuthorizeResult

        async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
            return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id or self.team_id,
                                   bot_token=self.config.bot_token, bot_id=self.bot_id, bot_user_id=self.bot_user)
        return authorize

    # --- connection ------------------------------------------------------------------------------
    async def start(self, handler: Handler) -> None:
        """auth.test (retried until the API answers), re-handle the unanswered inbox, then connect the socket
        (apps.connections.open + websocket; reconnects by itself) or serve the HTTP endpoint."""
        self.handler = handler
        auth = (await self._checked("SLACK_BOT_TOKEN", "auth_test")).data
        self.bot_user, self.bot_name = str(auth.get("user_id") or ""), str(auth.get("user") or "")
        self.bot_id, self.team_id = str(auth.get("bot_id") or ""), str(auth.get("team_id") or "")
        for key, payload in self.inbox.unanswered():
            inbound = self._translate(key, payload)
            if inbound is None:
                self.inbox.done([key])
            else:
                await handler(inbound)
        if self.config.mode == "socket":
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            await self._checked("SLACK_APP_TOKEN", "apps_connections_open", app_token=self.config.app_token)
            self._socket = AsyncSocketModeHandler(self.app, self.config.app_token, web_client=self.client,
                                                  ping_interval=self.config.ping_interval)
            await self._socket.connect_async()
        else:
            self._web = await self._serve_http()
        self.connected = True

    async def _checked(self, name: str, method: str, **kw):  # type: ignore[no-untyped-def]
        """A start-up call, retried until Slack answers; a refused token is a configuration error (the socket
        client would otherwise retry a bad app token forever, silently)."""
        from slack_sdk.errors import SlackApiError

        from hermes_agent.errors import ConfigError

        try:
            return await self._call(method, patience=None, **kw)
        except SlackApiError as exc:
            raise ConfigError(f"Slack refused {name}: {exc.response.get('error')}") from exc

    async def _call(self, method: str, *, patience: float | None = OUTAGE_PATIENCE, **kw):  # type: ignore[no-untyped-def]
        """A Web API call through outages: 5xx answers, refused or dropped connections and timeouts are retried
        (0.2 s doubling to 1 s) for `patience` seconds (None: until the API answers); a refusal (ok=false with
        a 4xx/200, e.g. channel_not_found, invalid_auth) is raised at once. 429s are waited out (Retry-After) by
        slack_sdk's rate-limit handler below this."""
        from slack_sdk.errors import SlackApiError

        delay, deadline = 0.2, None if patience is None else time.monotonic() + patience
        while True:
            try:
                answer = await getattr(self.client, method)(**kw)
            except SlackApiError as exc:
                if exc.response.status_code < 500 or (deadline is not None and time.monotonic() > deadline):
                    raise
                self._outage(exc)
            except _failures() as exc:
                if deadline is not None and time.monotonic() > deadline:
                    raise
                self._outage(exc)
            else:
                self.connected = self._socket is not None or self._web is not None
                return answer
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _serve_http(self):  # type: ignore[no-untyped-def]
        """The Events API endpoint: Bolt checks the v0 signature (401 without it), answers url_verification,
        and runs our listeners before the 200 (process_before_response), so 200 means "in the inbox"."""
        from aiohttp import web
        from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

        async def events(request: web.Request) -> web.Response:
            return await to_aiohttp_response(await self.app.async_dispatch(await to_bolt_request(request)))

        web_app = web.Application()
        web_app.router.add_post(self.config.http_path, events)
        runner = web.AppRunner(web_app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, self.config.http_host, self.config.http_port).start()
        return runner

    async def connect(self) -> None:
        """For a one-shot send (no socket, no HTTP endpoint): auth.test once; a refused token raises."""
        auth = (await self._checked("SLACK_BOT_TOKEN", "auth_test")).data
        self.bot_user, self.bot_name = str(auth.get("user_id") or ""), str(auth.get("user") or "")
        self.bot_id, self.team_id = str(auth.get("bot_id") or ""), str(auth.get("team_id") or "")
        self.connected = True

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
        if self._web is not None:
            await self._web.cleanup()
        await asyncio.gather(*self._handling, return_exceptions=True)
        if self.client.session is not None and not self.client.session.closed:
            await self.client.session.close()

    def _outage(self, exc: BaseException) -> None:
        self.connected = False
        self.last_error = f"{time.strftime('%H:%M:%S')} {type(exc).__name__}: {exc}"
        log.warning("slack API: %s", self.last_error)

    # --- inbound ---------------------------------------------------------------------------------
    async def _on_event(self, body: dict) -> None:
        """A `message` or `app_mention` event: into the inbox (fsynced) before Bolt acknowledges it; a retry
        or re-delivery of an event id already seen is acknowledged and dropped."""
        event_id = str(body.get("event_id") or "")
        if not event_id:
            return
        key = event_key(event_id)
        payload = {"event_id": event_id, "team_id": body.get("team_id"), "event": body.get("event") or {}}
        fresh = self.inbox.accept([(key, payload)], ordered=False)
        if not fresh:
            return
        inbound = self._translate(key, payload)
        if inbound is None:
            self.inbox.done([key])
        else:
            self._dispatch(inbound)

    async def _on_action(self, ack, body: dict) -> None:  # type: ignore[no-untyped-def]
        """A Block Kit button press (block_actions): answered at once, never stored (the approval it answers
        does not outlive the process)."""
        await ack()
        action = (body.get("actions") or [{}])[0]
        user = body.get("user") or {}
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or ""
        message = body.get("message") or {}
        thread = message.get("thread_ts") or ""
        press = f"{channel}|{message.get('ts', '')}|{action.get('action_ts', '')}|{user.get('id', '')}"
        self._prompts[press] = (channel, str(message.get("ts") or ""), str(message.get("text") or ""))
        self._dispatch(Inbound(self.name, event_key(press), f"{channel}:{thread}" if thread else channel,
                               str(user.get("id") or ""), str(user.get("username") or user.get("name") or ""), "",
                               is_dm=channel.startswith("D"), callback_data=str(action.get("value") or ""),
                               callback_id=press))

    def _dispatch(self, inbound: Inbound) -> None:
        """Each event its own task: one slow chat never holds up the others (or the ack)."""
        if self.handler is None:
            return
        task = asyncio.create_task(self.handler(inbound))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    def _translate(self, key: int, payload: dict) -> Inbound | None:
        """An event addressed to us (`_addressed`) as an Inbound; bots, edits and our own messages are dropped.
        A channel message is answered in its thread (one session per thread) unless reply_in_thread is off."""
        ev = payload.get("event") or {}
        user = str(ev.get("user") or "")
        if not user or ev.get("bot_id") or user == self.bot_user:
            return None
        if ev.get("subtype") not in (None, "file_share", "thread_broadcast"):
            return None
        channel = str(ev.get("channel") or "")
        is_dm = ev.get("channel_type") == "im" or channel.startswith("D")
        if not self._addressed(ev, is_dm):
            return None
        ts = str(ev.get("ts") or "")
        thread = str(ev.get("thread_ts") or ("" if is_dm or not self.config.reply_in_thread else ts))
        chat_id = f"{channel}:{thread}" if thread else channel
        text = unescape(_MENTION.sub(lambda m: "" if m.group(1) == self.bot_user else m.group(0),
                                     str(ev.get("text") or ""))).strip()
        extra = {}
        files = [f for f in ev.get("files") or [] if f.get("url_private_download") or f.get("url_private")]
        if files:
            extra = {"file_id": files[0].get("url_private_download") or files[0]["url_private"],
                     "file_name": files[0].get("name") or "file"}
        if not (text or extra):
            return None
        self._latest[chat_id] = (key, channel, ts)
        profile = ev.get("user_profile") or {}
        name = profile.get("display_name") or profile.get("real_name") or profile.get("name") or user
        return Inbound(self.name, key, chat_id, user, str(name), text, is_dm=is_dm, extra=extra)

    def _addressed(self, ev: dict, is_dm: bool) -> bool:
        """DMs come as `message`; in channels, an `app_mention`, or a reply in a thread we have posted in, or
        any message with require_mention off (a `message` that mentions us is left to its `app_mention` twin)."""
        if ev.get("type") == "app_mention":
            return not is_dm
        if is_dm:
            return True
        if f"<@{self.bot_user}" in str(ev.get("text") or ""):
            return False
        return not self.config.require_mention or ev.get("thread_ts") in self._threads

    def ack(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """These events are answered: out of the inbox, and their WORKING reaction comes off."""
        self.inbox.done(event_ids)
        for key in event_ids:
            spot = self._reacted.pop(key, None)
            if spot is not None:
                task = asyncio.ensure_future(self._react("reactions_remove", *spot))
                self._handling.add(task)
                task.add_done_callback(self._handling.discard)

    # --- outbound --------------------------------------------------------------------------------
    async def send(self, chat_id: str, text: str, buttons: list[tuple[str, str]] | None = None) -> str | None:
        """mrkdwn pieces of at most 39,000 characters, in the chat's thread; buttons (Block Kit) on the last."""

        channel, thread = split_chat(chat_id)
        parts = pieces(text)
        last = None
        try:
            for i, piece in enumerate(parts):
                kw: dict = {"channel": channel, "text": piece, "mrkdwn": True}
                if thread:
                    kw["thread_ts"] = thread
                    self._join(thread)
                if buttons and i == len(parts) - 1:
                    kw["blocks"] = approval_blocks(piece, buttons)
                last = str((await self._call("chat_postMessage", **kw)).get("ts") or "") or None
        except _failures() as exc:  # channel gone, not in channel: answered as far as it can be
            self.last_error = f"{time.strftime('%H:%M:%S')} send to {chat_id} refused: {exc}"
            log.warning("slack: %s", self.last_error)
        return last

    def _join(self, thread: str) -> None:
        """Threads we have posted in: their replies need no mention (the newest THREADS are remembered)."""
        self._threads[thread] = None
        while len(self._threads) > THREADS:
            del self._threads[next(iter(self._threads))]

    async def edit(self, chat_id: str, message_id: str, text: str) -> None:

        channel, _ = split_chat(chat_id)
        try:
            await self._call("chat_update", channel=channel, ts=message_id, text=to_mrkdwn(text)[:MAX_LENGTH])
        except _failures() as exc:
            log.info("chat.update refused: %s", exc)

    async def typing(self, chat_id: str) -> None:
        """Slack has no typing indicator for bots through the Web API: the message being answered gets an
        :eyes: reaction (once), removed when its reply has been sent (SLACK_REACTIONS=false turns this off)."""
        spot = self._latest.get(chat_id)
        if not self.config.reactions or spot is None or spot[0] in self._reacted or spot[0] not in self.inbox.pending:
            return
        key, channel, ts = spot
        self._reacted[key] = (channel, ts)
        await self._react("reactions_add", channel, ts)

    async def _react(self, method: str, channel: str, ts: str) -> None:

        try:
            await getattr(self.client, method)(channel=channel, timestamp=ts, name=WORKING)
        except _failures() as exc:  # cosmetic: missing reactions:write scope, already there
            log.debug("%s failed: %s", method, exc)

    async def open_dm(self, user_id: str) -> str:
        """conversations.open {users}: the DM channel (D...) with a user."""
        if user_id in self._dms:
            return self._dms[user_id]
        try:
            answer = await self._call("conversations_open", users=user_id)
        except _failures() as exc:
            log.warning("slack: opening a DM with %s refused: %s", user_id, exc)
            raise OSError(f"slack refused a DM with {user_id}: {exc}") from None
        self._dms[user_id] = str((answer.get("channel") or {}).get("id") or user_id)
        return self._dms[user_id]

    async def answer_callback(self, callback_id: str, text: str = "") -> None:
        """A recorded answer replaces the buttons (chat.update); anything else ("Not allowed.", "Expired.") is
        shown only to the presser (chat.postEphemeral)."""

        channel, ts, prompt = self._prompts.pop(callback_id, ("", "", ""))
        user = callback_id.rsplit("|", 1)[-1]
        try:
            if text.startswith("Answer:") and ts:
                await self.client.chat_update(channel=channel, ts=ts, text=f"{prompt}\n\n*{text}*", blocks=[])
            elif channel and text:
                await self.client.chat_postEphemeral(channel=channel, user=user, text=text)
        except _failures() as exc:
            log.debug("button answer failed: %s", exc)

    async def download(self, file_id: str, target: Path) -> Path:
        """Fetch a shared file (its url_private) with the bot token, which is only ever sent to Slack's own
        hosts or the configured API host."""
        import aiohttp

        host = urlparse(file_id).hostname or ""
        allowed = {urlparse(self.config.base_url).hostname}
        if host not in allowed and not host.endswith((".slack.com", ".slack-edge.com")):
            raise PermissionError(f"not a Slack file URL: {host}")
        headers = {"Authorization": f"Bearer {self.config.bot_token}"}
        async with aiohttp.ClientSession() as session, session.get(file_id, headers=headers) as resp:
            resp.raise_for_status()
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as fh:
                async for chunk in resp.content.iter_chunked(1 << 16):
                    fh.write(chunk)
        os.chmod(target, 0o600)
        return target

    async def send_file(self, chat_id: str, path: Path, caption: str = "") -> str | None:
        """files.getUploadURLExternal, the upload, files.completeUploadExternal (slack_sdk's files_upload_v2)."""

        channel, thread = split_chat(chat_id)
        try:
            done = await self._call("files_upload_v2", channel=channel, file=str(path), filename=path.name,
                                                     title=path.name, thread_ts=thread or None,
                                                     initial_comment=caption or None)
        except _failures() as exc:
            self.last_error = f"{time.strftime('%H:%M:%S')} file {path.name} to {chat_id} refused: {exc}"
            log.warning("slack: %s", self.last_error)
            return None
        return str((done.get("file") or {}).get("id") or "") or None

    def status(self) -> dict:
        connected = self.connected
        if self._socket is not None:
            session = self._socket.client.current_session
            connected = connected and session is not None and not session.closed
        return {"mode": self.config.mode, "connected": connected, "last_error": self.last_error,
                "bot": self.bot_name, "unanswered": len(self.inbox.pending)}
