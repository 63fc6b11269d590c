"""WhatsApp over Meta's Cloud API with aiohttp only: a signed webhook in (whatsapp_webhook.py, messages
durably in the Inbox before the 200), the Graph API out (`/{phone_number_id}/messages` for text, reply
buttons, files and the read receipt + typing indicator; `/{phone_number_id}/media` to upload, `/{media_id}`
to download). 429 (Retry-After honoured) and 5xx are retried with backoff. Messages cannot be edited."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import Handler, Inbound, PlatformAdapter, split_text
from hermes_agent.gateway.delivery import Inbox
from hermes_agent.gateway.platforms.whatsapp_webhook import HookConfig, serve_webhook
from hermes_agent.messages import safe_loads

log = logging.getLogger(__name__)

MAX_LENGTH = 4096  # a text message body
BODY_LIMIT = 1024  # the body of an interactive (buttons) message
MAX_BUTTONS, TITLE_LIMIT = 3, 20
TYPING_EVERY = 20.0  # the indicator shows until we reply or for 25 s
MEDIA_KINDS = ("document", "image", "audio", "video", "sticker")
SIZE_LIMITS = {"image": 5 * 1024 * 1024, "document": 100 * 1024 * 1024}
RATE_CODES = {4, 80007, 130429, 131048, 131056}  # Graph's throughput / pair rate-limit error codes
_CODE = lazyre.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_BOLD = "\x02"


def to_whatsapp(text: str) -> str:
    """Model markdown -> WhatsApp: **bold**/__bold__ -> *bold*, *italic* -> _italic_, ~~x~~ -> ~x~,
    # headings -> *heading*, [text](url) -> text (url); code spans kept (``` without its language tag)."""
    out = []
    for i, part in enumerate(_CODE.split(text)):
        if i % 2:
            out.append(re.sub(r"^```[\w+-]+\n", "```\n", part))
            continue
        part = re.sub(r"^#{1,6}\s+(.+?)\s*#*$", lambda m: _BOLD + m.group(1).strip("*_ ") + _BOLD, part, flags=re.M)
        part = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: _BOLD + (m.group(1) or m.group(2)) + _BOLD, part)
        part = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"_\1_", part)
        part = re.sub(r"~~(.+?)~~", r"~\1~", part)
        part = re.sub(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)",
                      lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", part)
        out.append(part.replace(_BOLD, "*"))
    return "".join(out)


def fit_buttons(buttons: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """WhatsApp shows at most 3 reply buttons (titles <= 20 characters): an approval's four become
    Once / Always / Deny, and `session` stays available as `/approve session` (the prompt says so)."""
    if len(buttons) > MAX_BUTTONS:
        buttons = [b for b in buttons if not b[1].endswith(":session")]
    if len(buttons) > MAX_BUTTONS:
        buttons = buttons[:MAX_BUTTONS - 1] + buttons[-1:]
    return [(label[:TITLE_LIMIT], data[:256]) for label, data in buttons]


def event_id(wamid: str) -> int:
    """The Inbox keys events by int: a stable 56-bit digest of the WhatsApp message id (wamid...)."""
    return int.from_bytes(hashlib.sha256(wamid.encode()).digest()[:7], "big")


class GraphError(Exception):
    """The Graph API refused a call (4xx other than a rate limit)."""

    def __init__(self, status: int, message: str, code: int | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.code = status, code


@dataclass(frozen=True, slots=True)
class CloudConfig:
    token: str
    phone_number_id: str
    hook: HookConfig
    base_url: str = "https://graph.facebook.com"
    api_version: str = "v21.0"

    @property
    def api(self) -> str:
        base = self.base_url.rstrip("/")
        return base if re.search(r"/v\d+\.\d+$", base) else f"{base}/{self.api_version}"


def _setting(settings, extra: dict, key: str) -> str:  # type: ignore[no-untyped-def]
    """Hermes's WHATSAPP_CLOUD_<KEY>, then WHATSAPP_<KEY>, then platforms.whatsapp.extra.<key>."""
    env = settings.env
    name = key.upper()
    return str(env.get(f"WHATSAPP_CLOUD_{name}") or env.get(f"WHATSAPP_{name}") or extra.get(key) or "").strip()


def from_settings(settings: Settings, conf: dict) -> PlatformAdapter | None:
    """A WhatsAppAdapter when an access token and a phone number id are set, else None. Inbound needs both
    secrets: WHATSAPP_CLOUD_APP_SECRET (signatures) and WHATSAPP_CLOUD_VERIFY_TOKEN (the handshake)."""
    extra = conf.get("extra") or {}
    token = _setting(settings, extra, "access_token") or str(conf.get("token") or "")
    phone = _setting(settings, extra, "phone_number_id")
    if not token or not phone:
        return None
    secret, verify = _setting(settings, extra, "app_secret"), _setting(settings, extra, "verify_token")
    if not secret or not verify:
        from hermes_agent.errors import ConfigError

        raise ConfigError("WhatsApp needs WHATSAPP_CLOUD_APP_SECRET (webhook signatures) and "
                          "WHATSAPP_CLOUD_VERIFY_TOKEN (Meta's subscription handshake)")
    hook = HookConfig(secret, verify, _setting(settings, extra, "webhook_host") or "0.0.0.0",
                      int(_setting(settings, extra, "webhook_port") or 8090),
                      _setting(settings, extra, "webhook_path") or "/whatsapp/webhook")
    return WhatsAppAdapter(CloudConfig(token, phone, hook, str(extra.get("base_url") or "https://graph.facebook.com"),
                                       _setting(settings, extra, "api_version") or "v21.0"))


class WhatsAppAdapter:
    """The PlatformAdapter for the WhatsApp Cloud API. Chats are DMs: chat id = the user's wa_id (phone)."""

    name = "whatsapp"
    max_length = MAX_LENGTH

    def __init__(self, config: CloudConfig, inbox: Inbox | None = None) -> None:
        self.config = config
        self.inbox = inbox or Inbox(self.name)
        self.handler: Handler | None = None
        self._http = None
        self._web = None
        self._handling: set[asyncio.Task] = set()
        self._last_in: dict[str, str] = {}  # chat -> latest inbound wamid (read receipt + typing attach to it)
        self._typed: dict[str, float] = {}
        self.connected = False
        self.last_error = ""

    async def start(self, handler: Handler) -> None:
        """Re-handle what was accepted but not answered, then listen for webhooks."""
        import aiohttp

        self.handler = handler
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60, connect=10))
        for eid, payload in self.inbox.unanswered():
            inbound = self._translate(eid, payload)
            if inbound is not None:
                await handler(inbound)
            else:
                self.inbox.done([eid])
        self._web = await serve_webhook(self.config.hook, self._pushed)
        self.connected = True

    async def connect(self) -> None:
        """For a one-shot send (no webhook served): the HTTP session the Graph API calls go through."""
        import aiohttp

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60, connect=10))
        self.connected = True

    async def stop(self) -> None:
        if self._web is not None:
            await self._web.cleanup()
        if self._http is not None:
            await self._http.close()

    async def _pushed(self, messages: list[dict]) -> None:
        """Write the batch to the inbox (a re-delivered wamid is dropped there), then hand each new event
        to the handler as its own task."""
        batch = [(event_id(str(m["message"]["id"])), m) for m in messages]
        fresh = set(self.inbox.accept(batch, ordered=False))
        for eid, payload in batch:
            if eid not in fresh:
                continue
            inbound = self._translate(eid, payload)
            if inbound is None:
                self.inbox.done([eid])
            elif self.handler is not None:
                task = asyncio.create_task(self.handler(inbound))
                self._handling.add(task)
                task.add_done_callback(self._handling.discard)

    def _translate(self, eid: int, payload: dict) -> Inbound | None:
        """Text, button taps (callback_data = the button id), template quick replies and media; others
        (reactions, locations, contacts, unsupported) need no answer."""
        msg = payload.get("message") or {}
        sender, wamid, kind = str(msg.get("from") or ""), str(msg.get("id") or ""), msg.get("type")
        if not sender or not wamid:
            return None
        self._last_in[sender] = wamid
        self._typed.pop(sender, None)
        who = {"platform": self.name, "event_id": eid, "chat_id": sender, "user_id": sender,
               "user_name": str(payload.get("name") or sender)}
        if kind == "text":
            return Inbound(**who, text=str((msg.get("text") or {}).get("body") or ""))
        if kind == "interactive":
            inter = msg.get("interactive") or {}
            reply = inter.get("button_reply") or inter.get("list_reply") or {}
            if not reply.get("id"):
                return None
            return Inbound(**who, text="", callback_data=str(reply.get("id") or ""), callback_id=f"{sender}:{wamid}")
        if kind == "button":
            return Inbound(**who, text=str((msg.get("button") or {}).get("text") or ""))
        if kind in MEDIA_KINDS:
            media = msg.get(kind) or {}
            if not media.get("id"):
                return None
            mime = str(media.get("mime_type") or "").split(";")[0]
            name = media.get("filename") or f"{kind}_{str(media['id'])[-8:]}{_extension(mime)}"
            return Inbound(**who, text=str(media.get("caption") or ""),
                           extra={"file_id": str(media["id"]), "file_name": str(name), "mime_type": mime})
        return None

    def ack(self, event_ids: list[int] | tuple[int, ...]) -> None:
        self.inbox.done(event_ids)

    # --- the Graph API ---------------------------------------------------------------------------
    async def _call(self, method: str, url: str, *, json_body: dict | None = None, form=None,  # type: ignore[no-untyped-def]
                    retry: bool = True) -> bytes:
        """One Graph call with the bearer token. 429, Graph's rate-limit codes, 5xx and dropped connections
        are retried (Retry-After honoured, else 0.2 s doubling to 2 s; rate limits wait 4x that, at most 8 s); any other
        refusal raises GraphError. `form` is a factory: a multipart body can be sent only once."""
        import aiohttp

        delay, headers = 0.2, {"Authorization": f"Bearer {self.config.token}"}
        while True:
            try:
                async with self._http.request(method, url, headers=headers, json=json_body,  # type: ignore[union-attr]
                                              data=form() if form else None) as resp:
                    body = await resp.read()
                    if resp.status < 400:
                        self.connected = True
                        return body
                    message, code = _graph_error(body)
                    limited = resp.status == 429 or code in RATE_CODES
                    if not limited and resp.status < 500:
                        raise GraphError(resp.status, message, code)
                    wait = _retry_after(resp.headers.get("Retry-After")) or (delay * 4 if limited else delay)
                    self._trouble(f"HTTP {resp.status}: {message}")
            except (TimeoutError, aiohttp.ClientError) as exc:
                self.connected = False
                self._trouble(f"{type(exc).__name__}: {exc}")
                wait = delay
            if not retry:
                raise GraphError(0, self.last_error)
            await asyncio.sleep(wait)
            delay = min(delay * 2, 2.0)

    def _trouble(self, what: str) -> None:
        self.last_error = f"{time.strftime('%H:%M:%S')} {what}"
        log.warning("whatsapp Graph API: %s", what)

    async def _message(self, chat_id: str, body: dict, retry: bool = True) -> str | None:
        """POST /{phone_number_id}/messages; returns the new message's wamid."""
        payload = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": chat_id, **body}
        raw = await self._call("POST", f"{self.config.api}/{self.config.phone_number_id}/messages",
                               json_body=payload, retry=retry)
        ids = (safe_loads(raw or b"{}").get("messages") or [{}])
        return str(ids[0].get("id") or "") or None

    async def send(self, chat_id: str, text: str, buttons: list[tuple[str, str]] | None = None) -> str | None:
        """Text in 4096-character pieces; with buttons, the last piece (at most 1024) carries them."""
        pieces = split_text(to_whatsapp(text or "(empty reply)"), MAX_LENGTH)
        choices = fit_buttons(buttons or [])
        if choices and len(pieces[-1]) > BODY_LIMIT:
            pieces[-1:] = split_text(pieces[-1], BODY_LIMIT)
        tail = pieces.pop() if choices else ""
        last = None
        try:
            for piece in pieces:
                last = await self._message(chat_id, {"type": "text", "text": {"body": piece, "preview_url": False}})
            if choices:
                action = {"buttons": [{"type": "reply", "reply": {"id": data, "title": label}}
                                      for label, data in choices]}
                last = await self._message(chat_id, {"type": "interactive", "interactive": {
                    "type": "button", "body": {"text": tail}, "action": action}})
        except GraphError as exc:  # number not on WhatsApp, 24-hour window closed: answered as far as it can be
            self._trouble(f"send to {chat_id} refused: {exc}")
        return last

    async def send_file(self, chat_id: str, path: Path, caption: str = "") -> str | None:
        """Upload to /{phone_number_id}/media, then send it: JPEG/PNG as an image, anything else as a document."""
        import mimetypes  # where used: its tables are read at import

        import aiohttp

        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        kind = "image" if mime in ("image/jpeg", "image/png") else "document"
        try:
            content = path.read_bytes()
            if len(content) > SIZE_LIMITS[kind]:
                raise GraphError(413, f"{path.name} is {len(content)} bytes; the {kind} limit is {SIZE_LIMITS[kind]}")

            def form() -> aiohttp.FormData:
                data = aiohttp.FormData()
                data.add_field("messaging_product", "whatsapp")
                data.add_field("type", mime)
                data.add_field("file", content, filename=path.name, content_type=mime)
                return data

            raw = await self._call("POST", f"{self.config.api}/{self.config.phone_number_id}/media", form=form)
            media = {"id": str(safe_loads(raw)["id"])}
            if kind == "document":
                media["filename"] = path.name
            if caption:
                media["caption"] = caption[:BODY_LIMIT]
            return await self._message(chat_id, {"type": kind, kind: media})
        except (GraphError, OSError, ValueError, KeyError) as exc:
            self._trouble(f"file {path.name} to {chat_id} refused: {exc}")
            return None

    async def download(self, file_id: str, target: Path) -> Path:
        """GET /{media_id} gives a short-lived URL; GET that URL (with the token) gives the bytes."""
        if not re.fullmatch(r"[A-Za-z0-9._-]+", file_id):
            raise GraphError(400, f"malformed media id {file_id[:40]!r}")
        meta = safe_loads(await self._call("GET", f"{self.config.api}/{file_id}"))
        blob = await self._call("GET", str(meta["url"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        return target

    async def edit(self, chat_id: str, message_id: str, text: str) -> None:
        """The Cloud API cannot edit a sent message: tool progress shows its first line only."""

    async def typing(self, chat_id: str) -> None:
        """Mark the chat's latest message read and show "typing..." (one call per 20 s: it lasts 25 s)."""
        wamid = self._last_in.get(chat_id)
        now = time.monotonic()
        if not wamid or now - self._typed.get(chat_id, -TYPING_EVERY) < TYPING_EVERY:
            return
        self._typed[chat_id] = now
        url = f"{self.config.api}/{self.config.phone_number_id}/messages"
        try:
            await self._call("POST", url, retry=False, json_body={
                "messaging_product": "whatsapp", "status": "read", "message_id": wamid,
                "typing_indicator": {"type": "text"}})
        except GraphError as exc:  # cosmetic: never retried, never fatal
            log.debug("typing indicator failed: %s", exc)

    async def answer_callback(self, callback_id: str, text: str = "") -> None:
        """WhatsApp has no toast for a button tap: the answer is a short message in the chat."""
        chat_id = callback_id.split(":", 1)[0]
        if text and chat_id:
            await self.send(chat_id, text)

    async def open_dm(self, user_id: str) -> str:
        return user_id  # a chat is the other side's phone number

    def status(self) -> dict:
        return {"mode": "webhook", "connected": self.connected, "last_error": self.last_error,
                "phone_number_id": self.config.phone_number_id, "unanswered": len(self.inbox.pending)}


def _graph_error(body: bytes) -> tuple[str, int | None]:
    try:
        err = safe_loads(body).get("error") or {}
    except (ValueError, AttributeError):
        return body[:200].decode(errors="replace"), None
    code = err.get("code")
    return str(err.get("message") or err), int(code) if isinstance(code, int) else None


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


def _extension(mime: str) -> str:
    fixed = {"image/jpeg": ".jpg", "audio/ogg": ".ogg", "audio/mpeg": ".mp3", "text/plain": ".txt"}
    import mimetypes

    return fixed.get(mime) or mimetypes.guess_extension(mime or "") or ".bin"
