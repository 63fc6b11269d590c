"""A fake of Slack on 127.0.0.1 (aiohttp, its own thread and loop) for the real slack-bolt/slack_sdk:
Web API (`POST /api/<method>`: auth.test, apps.connections.open, conversations.open, chat.postMessage, chat.update,
chat.postEphemeral, reactions.add/remove, files.getUploadURLExternal, the upload URL,
files.completeUploadExternal), the Socket Mode websocket (hello, events_api and interactive envelopes,
acks, `drop()`), shared files at url_private (bot token required) and, in HTTP mode, Events API pushes to
the app's endpoint signed with the v0 HMAC scheme (`X-Slack-Retry-Num` on retries).
Users act with `user_says` / `mention` / `user_sends_file` / `press`; faults: `fail(method, status, ...)`,
`outage(seconds)`, `drop()`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.parse

from aiohttp import WSMsgType, web

BOT_TOKEN, APP_TOKEN, SECRET = "xoxb-test-token", "xapp-test-token", "test-signing-secret"
BOT_USER, TEAM = "UBOT0001", "T0001"


class FakeSlack:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.cond = threading.Condition()
        self.sent: list[dict] = []  # chat.postMessage params (+ "time")
        self.updates: list[dict] = []
        self.ephemeral: list[dict] = []
        self.reactions: list[tuple[str, str, str]] = []  # (add|remove, ts, name)
        self.uploads: list[dict] = []  # {"channel", "thread_ts", "filename", "content"}
        self.acks: list[str] = []
        self.pushes: list[tuple[str, int]] = []  # (event_id, HTTP status) in HTTP mode
        self.connections = 0
        self.calls: list[str] = []
        self.faults: list[dict] = []
        self.down_until = 0.0
        self.files: dict[str, bytes] = {}
        self._staged: dict[str, dict] = {}
        self.events_url = ""  # HTTP mode: where events are POSTed
        self._ws: web.WebSocketResponse | None = None
        self._seq = itertools.count(1)
        self.port = 0
        self._runner: web.AppRunner | None = None

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,), daemon=True, name="fake-slack").start()
        ready.wait(10)
        return self

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/link", self._socket)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/files/{file_id}/{name}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self.loop.run_forever()

    def stop(self) -> None:
        async def close() -> None:
            if self._ws is not None:
                await self._ws.close()
            await self._runner.cleanup()  # type: ignore[union-attr]

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def _run(self, coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(15)

    # --- the user side ---------------------------------------------------------------------------
    def user_says(self, text: str, user: str = "UALICE", channel: str = "DALICE", thread_ts: str | None = None,
                  event_id: str | None = None, files: list[dict] | None = None) -> dict:
        """A DM (`message`, channel_type im) or, for a C... channel, plain channel chatter."""
        ev = {"type": "message", "user": user, "text": text, "channel": channel, "ts": self._ts(),
              "channel_type": "im" if channel.startswith("D") else "channel", "event_ts": self._ts()}
        if thread_ts:
            ev["thread_ts"] = thread_ts
        if files:
            ev.update(subtype="file_share", files=files)
        return self.deliver(ev, event_id)

    def mention(self, text: str, user: str = "UALICE", channel: str = "CGENERAL") -> dict:
        """An @-mention in a channel: Slack sends the `message` event and an `app_mention` twin."""
        ts = self._ts()
        full = f"<@{BOT_USER}> {text}"
        self.deliver({"type": "message", "user": user, "text": full, "channel": channel, "ts": ts,
                      "channel_type": "channel"})
        return self.deliver({"type": "app_mention", "user": user, "text": full, "channel": channel, "ts": ts})

    def user_sends_file(self, name: str, content: bytes, text: str = "", channel: str = "DALICE") -> dict:
        file_id = f"F{next(self._seq):05d}"
        self.files[file_id] = content
        url = f"http://127.0.0.1:{self.port}/files/{file_id}/{name}"
        return self.user_says(text, channel=channel, files=[{"id": file_id, "name": name, "size": len(content),
                                                              "url_private": url, "url_private_download": url}])

    def deliver(self, event: dict, event_id: str | None = None, retry: int = 0) -> dict:
        """One event_callback, over the socket (an events_api envelope) or POSTed to `events_url`."""
        body = {"token": "x", "team_id": TEAM, "api_app_id": "A0001", "type": "event_callback",
                "event_id": event_id or f"Ev{next(self._seq):08d}", "event_time": int(time.time()), "event": event,
                "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}
        if self.events_url:
            status = self.post_event(json.dumps(body), retry=retry)
            self.pushes.append((body["event_id"], status))
        else:
            self._envelope("events_api", body, retry)
        return body

    def press(self, value: str, prompt: dict, user: str = "UALICE") -> None:
        """A Block Kit button press (block_actions) on the message `prompt` (a `sent` entry)."""
        button = next(b for blk in prompt["blocks"] if blk["type"] == "actions" for b in blk["elements"]
                      if b["value"] == value)
        body = {"type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": TEAM},
                "api_app_id": "A0001", "token": "x", "team": {"id": TEAM}, "trigger_id": f"tr{next(self._seq)}",
                "container": {"type": "message", "message_ts": prompt["ts"], "channel_id": prompt["channel"]},
                "channel": {"id": prompt["channel"]}, "message": {"ts": prompt["ts"], "text": prompt["text"],
                                                                 "thread_ts": prompt.get("thread_ts")},
                "actions": [{"type": "button", "action_id": button["action_id"], "block_id": "hermes_buttons",
                             "value": value, "action_ts": str(time.time())}]}
        if self.events_url:
            self.post_event("payload=" + urllib.parse.quote(json.dumps(body)),
                            ctype="application/x-www-form-urlencoded")
        else:
            self._envelope("interactive", body, 0)

    def _envelope(self, kind: str, payload: dict, retry: int) -> None:
        async def send() -> None:
            for _ in range(200):  # wait for a connection (the app may be reconnecting)
                if self._ws is not None and not self._ws.closed:
                    break
                await asyncio.sleep(0.05)
            await self._ws.send_json({"envelope_id": f"env{next(self._seq)}", "type": kind, "payload": payload,  # type: ignore[union-attr]
                                      "accepts_response_payload": False, "retry_attempt": retry,
                                      "retry_reason": "timeout" if retry else ""})

        self._run(send())

    def post_event(self, body: str, *, secret: str = SECRET, retry: int = 0,
                   ctype: str = "application/json") -> int:
        """POST to the app's Events API endpoint as Slack does: X-Slack-Signature = v0 HMAC of the body."""
        import urllib.error
        import urllib.request

        stamp = str(int(time.time()))
        sig = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"Content-Type": ctype, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": sig}
        if retry:
            headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
        req = urllib.request.Request(self.events_url, data=body.encode(), method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                self.last_response = resp.read().decode()
                return resp.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def drop(self) -> None:
        """Cut the websocket without a goodbye (as a network failure would)."""
        async def cut() -> None:
            ws, self._ws = self._ws, None
            if ws is not None and ws._req is not None and ws._req.transport is not None:  # type: ignore[attr-defined]
                ws._req.transport.abort()  # type: ignore[attr-defined]

        self._run(cut())

    def outage(self, seconds: float, status: int = 502) -> None:
        """Every Web API call answers `status` (an HTML error page) for `seconds`; the websocket stays up."""
        self.down_until, self.down_status = time.time() + seconds, status

    def fail(self, method: str, status: int, count: int = 1, retry_after: int | None = None,
             error: str = "") -> None:
        self.faults.append({"method": method, "status": status, "count": count, "retry_after": retry_after,
                            "error": error})

    # --- assertions ------------------------------------------------------------------------------
    def texts(self) -> list[str]:
        return [m["text"] for m in self.sent]

    def wait_for(self, pred, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.cond:
                if pred():
                    return True
                self.cond.wait(0.05)
        return bool(pred())

    def _ts(self) -> str:
        return f"{int(time.time())}.{next(self._seq):06d}"

    def _changed(self) -> None:
        with self.cond:
            self.cond.notify_all()

    # --- the server side -------------------------------------------------------------------------
    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.calls.append(method)
        params = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        else:
            params.update(dict(await request.post()))
        if time.time() < self.down_until:
            return web.Response(status=self.down_status, text="<html>Bad Gateway</html>", content_type="text/html")
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or params.get("token", "")
        fault = next((f for f in self.faults if f["method"] == method and f["count"] > 0), None)
        if fault is not None:
            fault["count"] -= 1
            headers = {"Retry-After": str(fault["retry_after"])} if fault["retry_after"] is not None else {}
            body = {"ok": False, "error": fault["error"] or ("ratelimited" if fault["status"] == 429 else "fatal")}
            return web.json_response(body, status=fault["status"], headers=headers)
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != wanted:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        handler = getattr(self, "api_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        result = handler(params)
        self._changed()
        return web.json_response({"ok": True, **result})

    def api_auth_test(self, p: dict) -> dict:
        return {"url": "https://fake.slack.com/", "team": "Fake", "user": "hermes", "team_id": TEAM,
                "user_id": BOT_USER, "bot_id": "B0001"}

    def api_apps_connections_open(self, p: dict) -> dict:
        return {"url": f"ws://127.0.0.1:{self.port}/link?ticket={next(self._seq)}"}

    def api_conversations_open(self, p: dict) -> dict:
        """The DM channel with a user: D + the user id without its U (DALICE for UALICE)."""
        user = str(p.get("users") or "")
        return {"channel": {"id": "D" + user.removeprefix("U"), "is_im": True}}

    def api_chat_postMessage(self, p: dict) -> dict:
        ts = self._ts()
        self.sent.append({**p, "ts": ts, "time": time.time()})
        return {"channel": p["channel"], "ts": ts, "message": {"text": p.get("text"), "ts": ts}}

    def api_chat_update(self, p: dict) -> dict:
        self.updates.append(p)
        return {"channel": p["channel"], "ts": p["ts"]}

    def api_chat_postEphemeral(self, p: dict) -> dict:
        self.ephemeral.append(p)
        return {"message_ts": self._ts()}

    def api_reactions_add(self, p: dict) -> dict:
        self.reactions.append(("add", p["timestamp"], p["name"]))
        return {}

    def api_reactions_remove(self, p: dict) -> dict:
        self.reactions.append(("remove", p["timestamp"], p["name"]))
        return {}

    def api_files_getUploadURLExternal(self, p: dict) -> dict:
        file_id = f"F{next(self._seq):05d}"
        self._staged[file_id] = {"filename": p.get("filename"), "length": int(p.get("length") or 0)}
        return {"upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}", "file_id": file_id}

    def api_files_completeUploadExternal(self, p: dict) -> dict:
        done = []
        for f in json.loads(p["files"]):
            staged = self._staged.pop(f["id"])
            self.uploads.append({"channel": p.get("channel_id"), "thread_ts": p.get("thread_ts"), **staged})
            done.append({"id": f["id"], "title": f.get("title"), "name": staged["filename"]})
        return {"files": done}

    async def _upload(self, request: web.Request) -> web.Response:
        staged = self._staged.get(request.match_info["file_id"])
        if staged is None:
            return web.Response(status=404)
        staged["content"] = await request.read()
        return web.Response(text="OK - " + str(len(staged["content"])))

    async def _file(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return web.Response(status=302, headers={"Location": "https://fake.slack.com/login"})
        content = self.files.get(request.match_info["file_id"])
        return web.Response(body=content) if content is not None else web.Response(status=404)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        self.connections += 1
        self._changed()
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0001"},
                            "debug_info": {"host": "fake", "approximate_connection_time": 3600}})
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                envelope = json.loads(msg.data).get("envelope_id")
                if envelope:
                    self.acks.append(envelope)
                    self._changed()
        return ws
