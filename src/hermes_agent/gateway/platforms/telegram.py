"""Telegram: long polling with our own loop (offsets in the durable Inbox, backoff on outages, 429 retry_after
honoured), MarkdownV2 with a plain-text retry, 4096-char pieces. Polls and replies go through our own client
(telegram_poll.py) and updates are read as JSON (telegram_update.py); python-telegram-bot loads only for files,
webhook mode, or when a proxy is set (it polls and sends then, as httpx honours proxies)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import Handler, Inbound, PlatformAdapter, split_text
from hermes_agent.gateway.delivery import Inbox
from hermes_agent.gateway.platforms.telegram_poll import RawApi, Refused, RetryLater, Unavailable, usable
from hermes_agent.gateway.platforms.telegram_update import translate
from hermes_agent.gateway.platforms.telegram_webhook import WebhookConfig, serve_webhook

log = logging.getLogger(__name__)

MAX_LENGTH = 4096
_SPECIAL = lazyre.compile(r"([_*\[\]()~`>#+\-=|{}.!\\])")
_CODE = lazyre.compile(r"(```.*?```|`[^`\n]+`)", re.S)


def escape_markdown_v2(text: str) -> str:
    """Model markdown -> Telegram MarkdownV2: code spans kept, **bold** kept, every other special escaped."""
    out = []
    for i, part in enumerate(_CODE.split(text)):
        if i % 2:  # a code span: only ` and \ need escaping inside
            fence = "```" if part.startswith("```") else "`"
            inner = part[len(fence):-len(fence)]
            out.append(fence + inner.replace("\\", "\\\\").replace("`", "\\`") + fence)
            continue
        bits = part.split("**")
        esc = [_SPECIAL.sub(r"\\\1", b) for b in bits]
        if len(bits) % 2 == 1:  # balanced ** pairs become *bold*
            out.append("".join(b if j % 2 == 0 else f"*{b}*" for j, b in enumerate(esc)))
        else:
            out.append("\\*\\*".join(esc))
    return "".join(out)


def _truthy(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def from_settings(settings: Settings, conf: dict) -> PlatformAdapter | None:
    """A TelegramAdapter when TELEGRAM_BOT_TOKEN (or platforms.telegram.token) is set, else None.
    Groups: `extra.require_mention` (else TELEGRAM_REQUIRE_MENTION; default false, as Hermes)."""
    token = settings.env.get("TELEGRAM_BOT_TOKEN") or conf.get("token")
    if not token:
        return None
    extra = conf.get("extra") or {}
    mention = extra.get("require_mention")
    mention = _truthy(mention if mention is not None else settings.env.get("TELEGRAM_REQUIRE_MENTION", "false"))
    return TelegramAdapter(str(token), base_url=extra.get("base_url"), base_file_url=extra.get("base_file_url"),
                           poll_timeout=float(extra.get("poll_timeout", 25)), webhook=_webhook(settings, extra),
                           require_mention=mention)


def _tls_context(base_url: str | None) -> object:
    """The TLS verification both Bot clients share: a plain-http base_url (a local Bot API server) needs no CA
    store; anything else gets one default context (loading the CA store costs ~40 ms a time)."""
    if base_url and base_url.startswith("http://"):
        return False
    import ssl

    try:  # the CA bundle httpx itself would use
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()


def _webhook(settings, extra: dict) -> WebhookConfig | None:  # type: ignore[no-untyped-def]
    """Webhook mode when `extra.webhook_url` is set; it requires a secret (TELEGRAM_WEBHOOK_SECRET or
    extra.webhook_secret) so nobody else can inject updates."""
    url = extra.get("webhook_url") or settings.env.get("TELEGRAM_WEBHOOK_URL")
    if not url:
        return None
    from hermes_agent.errors import ConfigError

    secret = settings.env.get("TELEGRAM_WEBHOOK_SECRET") or extra.get("webhook_secret")
    if not secret:
        raise ConfigError("Telegram webhook mode needs a secret: set TELEGRAM_WEBHOOK_SECRET "
                          "(or platforms.telegram.extra.webhook_secret)")
    return WebhookConfig(str(url), str(secret), str(extra.get("webhook_host") or "127.0.0.1"),
                         int(extra.get("webhook_port") or 8443))


class TelegramAdapter:
    """The PlatformAdapter for Telegram. Our own client (telegram_poll.py) polls (getMe, deleteWebhook,
    getUpdates) and makes every call of a reply (messages, typing, edits, buttons); python-telegram-bot's Bot
    loads on a worker thread the first time a file goes either way, and does everything when a proxy is set."""

    name = "telegram"
    max_length = MAX_LENGTH

    def __init__(self, token: str, *, base_url: str | None = None, base_file_url: str | None = None,
                 poll_timeout: float = 25.0, inbox: Inbox | None = None, webhook: WebhookConfig | None = None,
                 require_mention: bool = False) -> None:
        kw = {}
        if base_url:
            kw["base_url"] = base_url.rstrip("/") + ("" if base_url.rstrip("/").endswith("/bot") else "/bot")
        if base_file_url:
            kw["base_file_url"] = base_file_url
        self.poll_timeout = poll_timeout
        self.require_mention = require_mention
        verify = _tls_context(base_url)  # one CA store load for every client, not one each
        self._bot_args = (token, kw, verify)
        self._bot = None
        self._bot_task: asyncio.Task | None = None
        api = str(kw.get("base_url") or "https://api.telegram.org/bot")
        self._raw = RawApi(api, token, verify) if usable(api) else None
        self.inbox = inbox or Inbox(self.name)
        self.handler: Handler | None = None
        self._task: asyncio.Task | None = None
        self.on_fatal: Callable[[BaseException], None] | None = None  # the runner's: polling ended by itself
        self._handling: set[asyncio.Task] = set()
        self.webhook = webhook
        self._web = None
        self.connected = False
        self.last_error = ""
        self.username = ""
        self.bot_id = 0

    @property
    def bot(self):  # type: ignore[no-untyped-def]
        """python-telegram-bot's Bot (built here if the background load has not finished yet)."""
        if self._bot is None:
            self._bot = self._make_bot()
        return self._bot

    def _make_bot(self):  # type: ignore[no-untyped-def]
        import warnings

        from telegram import Bot
        from telegram.request import HTTPXRequest
        from telegram.warnings import PTBUserWarning

        # _library_call names the Bot API method itself (its camelCase aliases exist: the library warns)
        warnings.filterwarnings("ignore", message="Please use 'Bot[.]", category=PTBUserWarning)

        token, kw, verify = self._bot_args
        tls = {"httpx_kwargs": {"verify": verify}}
        return Bot(token, request=HTTPXRequest(connection_pool_size=32, read_timeout=15, connect_timeout=5, **tls),
                   get_updates_request=HTTPXRequest(read_timeout=self.poll_timeout + 5, connect_timeout=5, **tls), **kw)

    async def _load_bot(self) -> None:
        bot = await asyncio.to_thread(self._make_bot)  # its imports run beside the first poll
        if self._bot is None:
            self._bot = bot
        await self._retrying(self._bot.initialize)

    async def _library(self):  # type: ignore[no-untyped-def]
        """The initialized Bot, loaded on a worker thread the first time it is needed."""
        if self._bot is not None and self._bot_task is None:
            return self._bot  # built in start() (a proxy or webhook mode) and initialized there
        if self._bot_task is None:
            self._bot_task = asyncio.create_task(self._load_bot(), name="telegram-library")
        await asyncio.shield(self._bot_task)
        return self.bot

    async def start(self, handler: Handler) -> None:
        """getMe (retried until the API answers), re-handle the unanswered inbox, then poll (after deleteWebhook)
        or serve the webhook (after setWebhook with the secret)."""
        self.handler = handler
        if self._raw is not None and self.webhook is None:
            me = await self._raw_retrying("getMe")
            me = me if isinstance(me, dict) else {}
            self.username, self.bot_id = str(me.get("username") or ""), int(me.get("id") or 0)
            await self._raw_retrying("deleteWebhook")
        else:
            await self._retrying(self.bot.initialize)
            self.username, self.bot_id = getattr(self.bot, "username", "") or "", int(self.bot.id)
            if self.webhook is None:
                await self._retrying(self.bot.delete_webhook)
        self.connected = True
        for event_id, payload in list(self.inbox.unanswered()):
            inbound = self._translate(event_id, payload)
            if inbound is not None:
                await handler(inbound)
            else:
                self.inbox.done([event_id])
        if self.webhook is None:
            self._task = asyncio.create_task(self._poll_forever(), name="telegram-poll")
            self._task.add_done_callback(self._poll_ended)
            return
        self._web = await serve_webhook(self.webhook, self._pushed)
        await self._retrying(self.bot.set_webhook, url=self.webhook.url, secret_token=self.webhook.secret,
                             allowed_updates=["message", "callback_query"])

    async def connect(self) -> None:
        """For a one-shot send (no polling, webhook left as it is): getMe once; a refusal raises."""
        await self.bot.initialize()
        self.username, self.bot_id = getattr(self.bot, "username", "") or "", int(self.bot.id)
        self.connected = True

    async def _pushed(self, update: dict) -> None:
        payload = update if ("message" in update or "callback_query" in update) else None
        await self._deliver([(update["update_id"], payload)], ordered=False)

    async def stop(self) -> None:
        if self._web is not None:
            await self._web.cleanup()
        for task in (self._task, self._bot_task):
            if task is None:
                continue
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        if self._raw is not None:
            self._raw.close()
        if self._bot is None:
            return
        try:
            await self._bot.shutdown()
        except Exception:  # frontend shutdown: a dead API must not block exit
            log.debug("telegram shutdown failed", exc_info=True)

    async def _retrying(self, call, *args, **kw):  # type: ignore[no-untyped-def]
        """`call` until the API answers: 429 waits retry_after, outages back off (0.2 s doubling to 1 s);
        a refusal (400 bad request, 403 forbidden, 401 bad token) is raised to the caller."""
        from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter, TelegramError

        delay = 0.2
        while True:
            try:
                return await call(*args, **kw)
            except RetryAfter as exc:
                self.last_error = f"rate limited: retry after {exc.retry_after}"
                await asyncio.sleep(_seconds(exc.retry_after))
            except (BadRequest, Forbidden, InvalidToken):
                raise
            except TelegramError as exc:  # TimedOut, NetworkError (502, dropped connection), anything else
                self._outage(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _outage(self, exc: BaseException) -> None:
        self.connected = False
        self.last_error = f"{time.strftime('%H:%M:%S')} {type(exc).__name__}: {exc}"
        log.warning("telegram API: %s", self.last_error)

    async def _api(self, method: str, params: dict | None = None, *, retry: bool = True,
                   timeout: float = 15.0) -> object:
        """One Bot API call through our client (through the library when a proxy is set, its errors read as
        ours). With `retry`, 429 waits retry_after and outages back off (0.2 s doubling to 1 s) until the API
        answers, as `_retrying` does; a refusal (400/401/403/404) raises Refused."""
        delay = 0.2
        while True:
            try:
                if self._raw is not None:
                    return await self._raw.acall(method, params, timeout)
                return await self._library_call(method, params or {})
            except RetryLater as exc:
                if not retry:
                    raise
                self.last_error = f"rate limited: retry after {exc.retry_after}"
                await asyncio.sleep(exc.retry_after)
            except Unavailable as exc:
                if not retry:
                    raise
                self._outage(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _library_call(self, method: str, params: dict) -> object:
        from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter, TelegramError

        bot = await self._library()
        try:
            return await bot.do_api_request(method, api_kwargs=params)
        except RetryAfter as exc:
            raise RetryLater(_seconds(exc.retry_after), str(exc)) from None
        except BadRequest as exc:  # (a NetworkError too: first)
            raise Refused(400, str(exc)) from None
        except Forbidden as exc:
            raise Refused(403, str(exc)) from None
        except InvalidToken as exc:
            raise Refused(401, str(exc)) from None
        except TelegramError as exc:
            raise Unavailable(f"{type(exc).__name__}: {exc}") from None

    async def _raw_retrying(self, method: str, params: dict | None = None, timeout: float = 15.0) -> object:
        """`_api` for start-up and polling: a refusal ends the start with one line."""
        try:
            return await self._api(method, params, timeout=timeout)
        except Refused as exc:  # one line from `hermes gateway run`, not a traceback
            from hermes_agent.errors import ConfigError, HermesError

            if exc.status in (401, 404):
                raise ConfigError(f"Telegram refused the bot token ({exc}): check TELEGRAM_BOT_TOKEN") from None
            raise HermesError(f"Telegram refused {method}: {exc}") from None

    def _poll_ended(self, task: asyncio.Task) -> None:
        """Polling ended by itself (the token refused mid-run: revoked, or a bug): the gateway stops with that
        error, one line and a non-zero exit as a refusal at start, instead of running on without polling."""
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        self.connected, self.last_error = False, str(exc)
        if self.on_fatal is not None:
            self.on_fatal(exc)  # type: ignore[arg-type]

    async def _poll_forever(self) -> None:
        if self._raw is not None:
            await self._poll_raw()
        while True:
            updates = await self._retrying(self.bot.get_updates, offset=self.inbox.offset or None,
                                           timeout=int(self.poll_timeout),
                                           allowed_updates=["message", "callback_query"])
            self.connected = True
            await self._deliver([(u.update_id, u.to_dict() if (u.message or u.callback_query) else None)
                                 for u in updates])

    async def _poll_raw(self) -> None:
        while True:
            params: dict = {"timeout": int(self.poll_timeout), "allowed_updates": ["message", "callback_query"]}
            if self.inbox.offset:
                params["offset"] = self.inbox.offset
            updates = await self._raw_retrying("getUpdates", params, timeout=self.poll_timeout + 5)
            self.connected = True
            await self._deliver([(u["update_id"], u if ("message" in u or "callback_query" in u) else None)
                                 for u in (updates if isinstance(updates, list) else []) if isinstance(u, dict)])

    async def _deliver(self, batch: list[tuple[int, dict | None]], *, ordered: bool = True) -> None:
        """Write the batch to the inbox first (fsynced on a worker thread: the loop keeps serving other chats),
        then hand each new event to the handler (a task each: one slow chat never holds up the others)."""
        fresh = set(await asyncio.to_thread(self.inbox.accept, batch, ordered=ordered))
        for event_id, payload in batch:
            if event_id not in fresh or payload is None:
                continue
            inbound = self._translate(event_id, payload)
            if inbound is None:
                self.inbox.done([event_id])
            elif self.handler is not None:
                task = asyncio.create_task(self.handler(inbound))
                self._handling.add(task)
                task.add_done_callback(self._handling.discard)

    def _translate(self, event_id: int, payload: dict) -> Inbound | None:
        return translate(event_id, payload, self.bot_id, self.username, self.require_mention)

    async def download(self, file_id: str, target: Path) -> Path:
        """Fetch an attachment (getFile, then the file URL) to `target`."""
        bot = await self._library()
        remote = await self._retrying(bot.get_file, file_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        await remote.download_to_drive(target)
        return target

    def ack(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """On the loop: the fsynced write goes to the inbox's own thread (never an agent turn's worker)."""
        self.inbox.done_soon(tuple(event_ids))

    async def send(self, chat_id: str, text: str, buttons: list[tuple[str, str]] | None = None) -> str | None:
        markup = None
        if buttons:
            markup = {"inline_keyboard": [[{"text": label, "callback_data": data} for label, data in buttons]]}
        last = None
        pieces = split_text(text or "(empty reply)", MAX_LENGTH)
        try:
            for i, piece in enumerate(pieces):
                last = await self._send_one(chat_id, piece, markup if i == len(pieces) - 1 else None)
        except Refused as exc:  # chat gone, bot blocked: the event is answered as far as it can be
            if exc.status not in (400, 403):
                raise
            self.last_error = f"{time.strftime('%H:%M:%S')} send to {chat_id} refused: {exc}"
            log.warning("telegram: %s", self.last_error)
        return last

    async def _send_one(self, chat_id: str, text: str, markup: dict | None) -> str:
        base: dict = {"chat_id": int(chat_id)}
        if markup is not None:
            base["reply_markup"] = markup
        escaped = escape_markdown_v2(text)
        if len(escaped) <= MAX_LENGTH:
            try:
                msg = await self._api("sendMessage", {**base, "text": escaped, "parse_mode": "MarkdownV2"})
                return _message_id(msg)
            except Refused as exc:
                if exc.status != 400:
                    raise
                log.info("MarkdownV2 refused (%s): sending plain text", exc)
        return _message_id(await self._api("sendMessage", {**base, "text": text}))

    async def send_file(self, chat_id: str, path: Path, caption: str = "") -> str | None:
        """Send a local file as a document (photos too: Telegram keeps them uncompressed that way)."""
        from telegram.error import BadRequest, Forbidden

        bot = await self._library()
        try:
            with open(path, "rb") as fh:
                msg = await self._retrying(bot.send_document, chat_id=int(chat_id), document=fh,
                                           filename=path.name, caption=caption or None)
        except (BadRequest, Forbidden, OSError) as exc:
            self.last_error = f"{time.strftime('%H:%M:%S')} file {path.name} to {chat_id} refused: {exc}"
            log.warning("telegram: %s", self.last_error)
            return None
        return str(msg.message_id)

    async def send_voice(self, chat_id: str, path: Path) -> str | None:
        """An OGG/Opus file as a voice message (sendVoice); None when Telegram refused it."""
        from telegram.error import BadRequest, Forbidden

        bot = await self._library()
        try:
            with open(path, "rb") as fh:
                msg = await self._retrying(bot.send_voice, chat_id=int(chat_id), voice=fh, filename=path.name)
        except (BadRequest, Forbidden, OSError) as exc:
            self.last_error = f"{time.strftime('%H:%M:%S')} voice {path.name} to {chat_id} refused: {exc}"
            log.warning("telegram: %s", self.last_error)
            return None
        return str(msg.message_id)

    async def clear_buttons(self, chat_id: str, message_id: str) -> None:
        """Remove a message's inline keyboard (an answered approval)."""
        try:
            await self._api("editMessageReplyMarkup", {"chat_id": int(chat_id), "message_id": int(message_id)},
                            retry=False)
        except (Refused, RetryLater, Unavailable) as exc:  # cosmetic: the answer is already recorded
            log.info("editMessageReplyMarkup failed: %s", exc)

    async def edit(self, chat_id: str, message_id: str, text: str) -> None:
        for body, mode in ((escape_markdown_v2(text), "MarkdownV2"), (text, None)):
            params = {"chat_id": int(chat_id), "message_id": int(message_id), "text": body[:MAX_LENGTH]}
            try:
                await self._api("editMessageText", {**params, "parse_mode": mode} if mode else params)
                return
            except Refused as exc:
                if exc.status != 400:
                    raise
                log.info("edit refused (%s): %s", mode or "plain", exc)

    async def typing(self, chat_id: str) -> None:
        try:
            await self._api("sendChatAction", {"chat_id": int(chat_id), "action": "typing"}, retry=False)
        except (Refused, RetryLater, Unavailable) as exc:  # typing is cosmetic: never retried, never fatal
            log.debug("typing failed: %s", exc)

    async def answer_callback(self, callback_id: str, text: str = "") -> None:
        params = {"callback_query_id": callback_id, **({"text": text} if text else {})}
        try:
            await self._api("answerCallbackQuery", params, retry=False)
        except (Refused, RetryLater, Unavailable) as exc:
            log.debug("answerCallbackQuery failed: %s", exc)

    async def open_dm(self, user_id: str) -> str:
        return user_id  # a private chat's id is the user's id

    def status(self) -> dict:
        return {"mode": "webhook" if self.webhook else "polling", "connected": self.connected, "last_error": self.last_error, "bot": self.username,
                "offset": self.inbox.offset, "unanswered": len(self.inbox.pending)}


def _seconds(value: object) -> float:
    total = getattr(value, "total_seconds", None)
    return float(total()) if callable(total) else float(value)  # type: ignore[arg-type]


def _message_id(result: object) -> str:
    return str(result.get("message_id") if isinstance(result, dict) else "")
