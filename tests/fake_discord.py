"""A fake of Discord's wire API on 127.0.0.1 for the real discord.py: REST under /api/v10 (users/@me,
oauth2/applications/@me, gateway[/bot], channel messages incl. multipart files, message edits, typing,
interaction callbacks, DM channels, attachment downloads) and the gateway websocket (HELLO, IDENTIFY ->
READY, heartbeat ACK, RESUME replaying what was missed, dispatch). Users act with `user_says`,
`user_sends_file`, `press`; faults: `fail(route, status, count, retry_after)`, `drop(refuse_for)`,
`redispatch(message_id)` (Discord delivering a MESSAGE_CREATE twice), `replay_everything` (a RESUME
repeating events already delivered)."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from datetime import UTC, datetime

from aiohttp import WSMsgType, web

TOKEN = "fake.discord.token"
BOT = {"id": "900000000000000001", "username": "hermes", "discriminator": "0", "global_name": "Hermes",
       "avatar": None, "bot": True}
APP_ID = "900000000000000002"
DM_CHANNEL = 700000000000000111
ALICE = 800000000000000111
GUILD = 600000000000000001
_EPOCH_MS = 1420070400000


def _json(body: object, status: int = 200, headers: dict | None = None) -> web.Response:
    """Discord's JSON responses: Content-Type exactly application/json (discord.py compares it verbatim)."""
    return web.Response(body=json.dumps(body).encode(), status=status, headers={**(headers or {}),
                                                                               "Content-Type": "application/json"})


class FakeDiscord:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self._ids = itertools.count()
        self.sent: list[dict] = []
        self.edits: list[dict] = []
        self.typing: list[dict] = []
        self.callbacks: list[dict] = []
        self.calls: list[tuple[float, str, str]] = []
        self.faults: list[dict] = []
        self.identifies = 0
        self.connects: list[tuple[float, int]] = []  # gateway connection attempts: (time, 101 or 503)
        self.resumes = 0
        self.replay_everything = False  # a RESUME replays the whole session, not just what was missed
        self.dispatched: dict[int, dict] = {}  # message id -> MESSAGE_CREATE payload
        self.files: dict[str, bytes] = {}
        self._sessions: dict[str, dict] = {}  # session id -> {"seq", "log": [(seq, t, d)], "ws"}
        self._refuse_until = 0.0
        self.loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeDiscord:
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,), daemon=True, name="fake-discord").start()
        ready.wait(10)
        return self

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{key}/{name}", self._attachment)
        self._runner = web.AppRunner(app)
        self.loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self.loop.run_forever()

    def stop(self) -> None:
        async def _shutdown() -> None:
            for s in self._sessions.values():
                if s["ws"] is not None:
                    await s["ws"].close()
            if self._runner is not None:
                await self._runner.cleanup()
        asyncio.run_coroutine_threadsafe(_shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def snowflake(self) -> int:
        return ((int(time.time() * 1000) - _EPOCH_MS) << 22) + next(self._ids) % 4096

    # --- the user side ---------------------------------------------------------------------------
    def user_says(self, text: str, channel: int = DM_CHANNEL, user: int = ALICE, name: str = "alice",
                  guild: int | None = None, mention: bool = False, attachments: list | None = None) -> int:
        author = {"id": str(user), "username": name, "discriminator": "0", "global_name": name.title(),
                  "avatar": None}
        mentions = [BOT] if mention else []
        content = f"<@{BOT['id']}> {text}" if mention else text
        mid = self.snowflake()
        msg = {"id": str(mid), "channel_id": str(channel), "author": author, "content": content,
               "timestamp": datetime.now(UTC).isoformat(), "edited_timestamp": None, "tts": False,
               "mention_everyone": False, "mentions": mentions, "mention_roles": [], "attachments": attachments or [],
               "embeds": [], "pinned": False, "type": 0}
        if guild is not None:
            msg["guild_id"] = str(guild)
            msg["member"] = {"roles": [], "joined_at": msg["timestamp"], "deaf": False, "mute": False}
        self.dispatched[mid] = msg
        self.dispatch("MESSAGE_CREATE", msg)
        return mid

    def user_sends_file(self, name: str, content: bytes, text: str = "", channel: int = DM_CHANNEL) -> int:
        key = str(self.snowflake())
        self.files[f"{key}/{name}"] = content
        url = f"http://127.0.0.1:{self.port}/attachments/{key}/{name}"
        att = {"id": key, "filename": name, "size": len(content), "url": url, "proxy_url": url,
               "content_type": "text/plain"}
        return self.user_says(text, channel=channel, attachments=[att])

    def redispatch(self, message_id: int) -> None:
        self.dispatch("MESSAGE_CREATE", self.dispatched[message_id])

    def press(self, custom_id: str, channel: int = DM_CHANNEL, user: int = ALICE, name: str = "alice",
              guild: int | None = None) -> int:
        iid = self.snowflake()
        who = {"id": str(user), "username": name, "discriminator": "0", "global_name": name.title(), "avatar": None}
        data = {"id": str(iid), "application_id": APP_ID, "type": 3, "token": f"itok{iid}", "version": 1,
                "data": {"custom_id": custom_id, "component_type": 2}, "channel_id": str(channel),
                "channel": {"id": str(channel), "type": 1 if guild is None else 0}, "locale": "en-US",
                "app_permissions": "0", "entitlements": [], "authorizing_integration_owners": {},
                "attachment_size_limit": 26214400, "context": 1 if guild is None else 0}
        if guild is None:
            data["user"] = who
        else:
            data.update(guild_id=str(guild), member={"user": who, "roles": [], "joined_at": None,
                                                     "deaf": False, "mute": False, "permissions": "0"})
        self.dispatch("INTERACTION_CREATE", data)
        return iid

    # --- faults and assertions -------------------------------------------------------------------
    def fail(self, route: str, status: int, count: int = 1, retry_after: float = 1.0) -> None:
        """`route` like "POST /channels/{id}/messages" (ids as {id}) or "*"."""
        self.faults.append({"route": route, "status": status, "count": count, "retry_after": retry_after})

    def drop(self, refuse_for: float = 0.0) -> None:
        """Close the live gateway connections (code 4000, resumable); refuse new ones for `refuse_for` s."""
        self._refuse_until = time.time() + refuse_for

        async def _drop() -> None:
            for s in self._sessions.values():
                if s["ws"] is not None:
                    ws, s["ws"] = s["ws"], None
                    await ws.close(code=4000, message=b"dropped by the test")
        asyncio.run_coroutine_threadsafe(_drop(), self.loop).result(10)

    def texts(self, channel: int | None = None) -> list[str]:
        return [m["content"] for m in list(self.sent) if channel is None or m["channel_id"] == channel]

    def wait_for(self, pred, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.02)
        return bool(pred())

    # --- gateway ---------------------------------------------------------------------------------
    def dispatch(self, event: str, data: dict) -> None:
        """Send a dispatch on every session (kept in its log for a RESUME if it is not connected)."""
        async def _send() -> None:
            for s in self._sessions.values():
                s["seq"] += 1
                s["log"].append((s["seq"], event, data))
                if s["ws"] is not None:
                    await s["ws"].send_str(json.dumps({"op": 0, "s": s["seq"], "t": event, "d": data}))
        asyncio.run_coroutine_threadsafe(_send(), self.loop).result(10)

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        refused = time.time() < self._refuse_until
        self.connects.append((time.time(), 503 if refused else 101))
        if refused:
            return web.Response(status=503, text="gateway unavailable")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                break
            frame = json.loads(msg.data)
            op, d = frame.get("op"), frame.get("d")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif op == 2:
                await self._identify(ws, d)
            elif op == 6:
                await self._resume(ws, d)
        for s in self._sessions.values():
            if s["ws"] is ws:
                s["ws"] = None
        return ws

    async def _identify(self, ws: web.WebSocketResponse, d: dict) -> None:
        if d.get("token") != self.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        self.identifies += 1
        sid = f"session{self.identifies}"
        self._sessions[sid] = {"seq": 1, "log": [], "ws": ws}
        ready = {"v": 10, "user": BOT, "guilds": [], "session_id": sid, "resume_gateway_url": self.gateway_url,
                 "application": {"id": APP_ID, "flags": 0}, "private_channels": [], "relationships": []}
        await ws.send_str(json.dumps({"op": 0, "s": 1, "t": "READY", "d": ready}))

    async def _resume(self, ws: web.WebSocketResponse, d: dict) -> None:
        s = self._sessions.get(d.get("session_id", ""))
        if s is None or d.get("token") != self.token:
            await ws.send_str(json.dumps({"op": 9, "d": False}))
            return
        self.resumes += 1
        s["ws"] = ws
        since = 0 if self.replay_everything else int(d.get("seq") or 0)
        for seq, event, data in s["log"]:
            if seq > since:
                await ws.send_str(json.dumps({"op": 0, "s": seq, "t": event, "d": data}))
        s["seq"] += 1
        await ws.send_str(json.dumps({"op": 0, "s": s["seq"], "t": "RESUMED", "d": {}}))

    # --- REST ------------------------------------------------------------------------------------
    async def _attachment(self, request: web.Request) -> web.Response:
        content = self.files.get(f"{request.match_info['key']}/{request.match_info['name']}")
        return web.Response(body=content) if content is not None else web.Response(status=404)

    def _fault(self, route: str) -> web.Response | None:
        for f in self.faults:
            if f["route"] in (route, "*") and f["count"] > 0:
                f["count"] -= 1
                if f["status"] == 429:
                    body = {"message": "You are being rate limited.", "retry_after": f["retry_after"], "global": False}
                    return _json(body, status=429, headers={"Via": "1.1 google",
                                                                         "Retry-After": str(f["retry_after"])})
                return _json({"message": "fault", "code": 0}, status=f["status"])
        return None

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        parts = path.split("/")
        if parts[1:2] == ["interactions"] and len(parts) == 5:
            parts[3] = "{token}"
        route = f"{request.method} " + "/".join("{id}" if p.isdigit() else p for p in parts)
        self.calls.append((time.time(), route, path))
        if request.headers.get("Authorization") != f"Bot {self.token}" and "/interactions/" not in path:
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        fault = self._fault(route)
        if fault is not None:
            return fault
        handler = _ROUTES.get(route)
        if handler is None:
            return _json({"message": "404: Not Found", "code": 0}, status=404)
        return await handler(self, request, path.split("/"))

    async def _get_me(self, request: web.Request, parts: list[str]) -> web.Response:
        return _json(BOT)

    async def _app_info(self, request: web.Request, parts: list[str]) -> web.Response:
        return _json({"id": APP_ID, "name": "Hermes", "icon": None, "description": "", "bot_public": True,
                                  "bot_require_code_grant": False, "verify_key": "00", "flags": 0,
                                  "owner": {**BOT, "bot": False}, "team": None, "summary": ""})

    async def _get_gateway(self, request: web.Request, parts: list[str]) -> web.Response:
        return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": {
            "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})

    async def _create_message(self, request: web.Request, parts: list[str]) -> web.Response:
        channel = int(parts[2])
        files: list[dict] = []
        if request.content_type.startswith("multipart/"):
            body: dict = {}
            async for part in await request.multipart():
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                elif part.filename:
                    files.append({"filename": part.filename, "content": bytes(await part.read())})
        else:
            body = await request.json()
        content = body.get("content") or ""
        if len(content) > 2000:
            return _json({"message": "Invalid Form Body", "code": 50035, "errors": {"content": {
                "_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}},
                status=400)
        mid = self.snowflake()
        self.sent.append({"channel_id": channel, "content": content, "components": body.get("components") or [],
                          "allowed_mentions": body.get("allowed_mentions"), "files": files, "id": mid,
                          "time": time.time()})
        return _json(self._message(mid, channel, content))

    def _message(self, mid: int, channel: int, content: str) -> dict:
        return {"id": str(mid), "channel_id": str(channel), "author": BOT, "content": content,
                "timestamp": datetime.now(UTC).isoformat(), "edited_timestamp": None, "tts": False,
                "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [], "embeds": [],
                "pinned": False, "type": 0}

    async def _edit_message(self, request: web.Request, parts: list[str]) -> web.Response:
        body = await request.json()
        self.edits.append({"channel_id": int(parts[2]), "message_id": int(parts[4]), "content": body.get("content"),
                           "components": body.get("components")})
        return _json(self._message(int(parts[4]), int(parts[2]), body.get("content") or ""))

    async def _typing(self, request: web.Request, parts: list[str]) -> web.Response:
        self.typing.append({"channel_id": int(parts[2]), "time": time.time()})
        return web.Response(status=204)

    async def _callback(self, request: web.Request, parts: list[str]) -> web.Response:
        body = await request.json()
        if parts[3] != f"itok{parts[2]}":
            return _json({"message": "Unknown interaction", "code": 10062}, status=404)
        self.callbacks.append({"interaction_id": int(parts[2]), **body})
        return web.Response(status=204)

    async def _open_dm(self, request: web.Request, parts: list[str]) -> web.Response:
        body = await request.json()
        user = str(body["recipient_id"])
        return _json({"id": str(DM_CHANNEL if user == str(ALICE) else int(user) - 100), "type": 1,
                                  "recipients": [{"id": user, "username": "user", "discriminator": "0",
                                                  "avatar": None}], "last_message_id": None})


_ROUTES = {
    "GET /users/@me": FakeDiscord._get_me,
    "GET /oauth2/applications/@me": FakeDiscord._app_info,
    "GET /gateway": FakeDiscord._get_gateway,
    "GET /gateway/bot": FakeDiscord._get_gateway,
    "POST /channels/{id}/messages": FakeDiscord._create_message,
    "PATCH /channels/{id}/messages/{id}": FakeDiscord._edit_message,
    "POST /channels/{id}/typing": FakeDiscord._typing,
    "POST /interactions/{id}/{token}/callback": FakeDiscord._callback,
    "POST /users/@me/channels": FakeDiscord._open_dm,
}
