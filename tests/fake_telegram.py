"""A fake of the Telegram Bot API on 127.0.0.1 (tests and bench): getMe, getUpdates (long polling,
offset confirmation as Telegram does), sendMessage (MarkdownV2 checked), editMessageText, sendVoice,
editMessageReplyMarkup,
sendChatAction, answerCallbackQuery, deleteWebhook. Users "type" with `user_says` / `press`.
Faults: `outage(seconds, status=502)`, `hang(seconds)`, `fail(method, status, count, retry_after=,
description=)`, `redeliver()` (the next getUpdates repeats already-confirmed updates)."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote

BOT = {"id": 4242, "is_bot": True, "first_name": "Hermes", "username": "hermes_test_bot"}
_UNESCAPED = re.compile(r"(?<!\\)[_\[\]()~>#+\-=|{}.!]")


def _markdown_v2_ok(text: str) -> bool:
    """Telegram refuses reserved characters that are not escaped (code spans aside)."""
    outside = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.S)
    return _UNESCAPED.search(outside) is None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients that gave up on a hanging request are expected here."""


class FakeTelegram:
    def __init__(self, token: str = "123:TEST") -> None:
        self.token = token
        self.updates: list[dict] = []
        self.confirmed: list[dict] = []
        self.next_update = 1000
        self.next_message = 1
        self.sent: list[dict] = []
        self.actions: list[dict] = []
        self.callbacks: list[dict] = []
        self.edits: list[dict] = []
        self.calls: list[tuple[float, str]] = []
        self.faults: list[dict] = []
        self.down_until = 0.0
        self.down_status = 502
        self.hang_until = 0.0
        self._redeliver = False
        self.polls: list[float] = []  # when each getUpdates arrived (the bench's "start to polling")
        self.webhook: dict | None = None  # {"url", "secret"} after setWebhook: updates are pushed
        self.pushes: list[tuple[int, int]] = []
        self.files: dict[str, tuple[str, bytes]] = {}
        self.voices: list[dict] = []  # sendVoice: {"chat_id", "filename", "content"}
        self.markups: list[dict] = []  # editMessageReplyMarkup calls
        self.documents: list[dict] = []  # file_id -> (file_path, content)  # (update_id, HTTP status of our POST)
        self.cond = threading.Condition()
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/bot"

    def start(self) -> FakeTelegram:
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fake-telegram").start()
        return self

    def stop(self) -> None:
        with self.cond:
            self.cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the user side -------------------------------------------------------------------------
    def user_says(self, text: str, chat_id: int = 111, user_id: int | None = None, name: str = "Alice",
                  chat_type: str = "private", reply_to: int | None = None) -> int:
        """`reply_to`: the message_id of a message the bot sent (the user replies to it)."""
        user = {"id": user_id or chat_id, "is_bot": False, "first_name": name, "username": name.lower()}
        msg = {"message_id": self._mid(), "date": int(time.time()), "text": text, "from": user,
               "chat": {"id": chat_id, "type": chat_type, "first_name": name}}
        entities = [{"type": "bot_command" if m.group().startswith("/") else "mention", "offset": m.start(),
                     "length": len(m.group())} for m in re.finditer(r"^/\w+(@\w+)?|(?<![\w@])@\w{5,}", text)]
        if entities:  # as Telegram marks them (ASCII text: UTF-16 offsets = character offsets)
            msg["entities"] = entities
        if reply_to is not None:
            msg["reply_to_message"] = {"message_id": reply_to, "date": int(time.time()), "from": BOT,
                                       "chat": msg["chat"], "text": "(an earlier reply)"}
        return self._push({"message": msg})

    def user_sends_file(self, name: str, content: bytes, caption: str = "", chat_id: int = 111) -> int:
        file_id = f"file{len(self.files) + 1}"
        self.files[file_id] = (f"documents/{name}", content)
        user = {"id": chat_id, "is_bot": False, "first_name": "Alice"}
        msg = {"message_id": self._mid(), "date": int(time.time()), "from": user, "caption": caption,
               "chat": {"id": chat_id, "type": "private"},
               "document": {"file_id": file_id, "file_unique_id": file_id + "u", "file_name": name,
                            "file_size": len(content)}}
        return self._push({"message": msg})

    def user_sends_voice(self, content: bytes, chat_id: int = 111) -> int:
        file_id = f"file{len(self.files) + 1}"
        self.files[file_id] = (f"voice/{file_id}.oga", content)
        user = {"id": chat_id, "is_bot": False, "first_name": "Alice"}
        msg = {"message_id": self._mid(), "date": int(time.time()), "from": user, "chat": {"id": chat_id, "type": "private"},
               "voice": {"file_id": file_id, "file_unique_id": file_id + "u", "duration": 2, "mime_type": "audio/ogg",
                         "file_size": len(content)}}
        return self._push({"message": msg})

    def press(self, data: str, chat_id: int = 111, user_id: int | None = None, name: str = "Alice",
              chat_type: str = "private") -> int:
        user = {"id": user_id or chat_id, "is_bot": False, "first_name": name}
        msg = {"message_id": self._mid(), "date": int(time.time()), "text": "(buttons)", "from": BOT,
               "chat": {"id": chat_id, "type": chat_type}}
        return self._push({"callback_query": {"id": f"cb{self.next_update}", "from": user, "message": msg,
                                              "chat_instance": "x", "data": data}})

    def _mid(self) -> int:
        self.next_message += 1
        return self.next_message

    def _push(self, body: dict) -> int:
        with self.cond:
            uid = self.next_update
            self.next_update += 1
            self.updates.append({"update_id": uid, **body})
            self.cond.notify_all()
        if self.webhook is not None:
            threading.Thread(target=self._push_webhook, args=(self.updates[-1],), daemon=True).start()
        return uid

    def _push_webhook(self, update: dict, secret: str | None = None, tries: int = 50) -> int:
        """POST one update to the webhook as Telegram does, retrying until it is answered 200."""
        import urllib.error
        import urllib.request

        hook = self.webhook or {}
        status = 0
        for _ in range(tries):
            req = urllib.request.Request(hook["url"], data=json.dumps(update).encode(), method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "X-Telegram-Bot-Api-Secret-Token": secret or hook["secret"]})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    status = resp.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except OSError:
                status = 0
            self.pushes.append((update["update_id"], status))
            if status == 200 or secret is not None:
                return status
            time.sleep(0.2)
        return status

    # --- faults --------------------------------------------------------------------------------
    def outage(self, seconds: float, status: int = 502) -> None:
        self.down_until, self.down_status = time.time() + seconds, status

    def hang(self, seconds: float) -> None:
        self.hang_until = time.time() + seconds

    def fail(self, method: str, status: int, count: int = 1, retry_after: int | None = None,
             description: str = "") -> None:
        self.faults.append({"method": method, "status": status, "count": count, "retry_after": retry_after,
                            "description": description})

    def redeliver(self) -> None:
        self._redeliver = True

    # --- helpers for assertions ----------------------------------------------------------------
    def texts(self, chat_id: int | None = None) -> list[str]:
        """The messages as the user sees them (MarkdownV2 escapes removed)."""
        return [re.sub(r"\\(.)", r"\1", m["text"]) if m["parse_mode"] == "MarkdownV2" else m["text"]
                for m in list(self.sent) if chat_id is None or m["chat_id"] == chat_id]

    def wait_for(self, pred, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.02)
        return bool(pred())

    # --- the API -------------------------------------------------------------------------------
    def fault_for(self, method: str) -> dict | None:
        if time.time() < self.down_until:
            return {"status": self.down_status, "description": "Bad Gateway"}
        for f in self.faults:
            if f["method"] in (method, "*") and f["count"] > 0:
                f["count"] -= 1
                return f
        return None

    def call(self, method: str, params: dict) -> dict:
        fn = getattr(self, "api_" + method, None)
        if fn is None:
            return {"ok": False, "error_code": 404, "description": "Not Found: method not found"}
        return fn(params)

    def api_getFile(self, p: dict) -> dict:
        path, content = self.files[p["file_id"]]
        return {"ok": True, "result": {"file_id": p["file_id"], "file_unique_id": p["file_id"] + "u",
                                       "file_size": len(content), "file_path": path}}

    def file_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/file/bot"

    def api_getMe(self, p: dict) -> dict:
        return {"ok": True, "result": BOT}

    def api_deleteWebhook(self, p: dict) -> dict:
        self.webhook = None
        return {"ok": True, "result": True}

    def api_setWebhook(self, p: dict) -> dict:
        self.webhook = {"url": p["url"], "secret": p.get("secret_token", "")}
        with self.cond:
            waiting = list(self.updates)
        for update in waiting:  # what arrived before the webhook was set is pushed now
            threading.Thread(target=self._push_webhook, args=(update,), daemon=True).start()
        return {"ok": True, "result": True}

    def api_getUpdates(self, p: dict) -> dict:
        if self.webhook is not None:
            return {"ok": False, "error_code": 409, "description": "Conflict: can't use getUpdates method while "
                    "webhook is active; use deleteWebhook to delete the webhook first"}
        self.polls.append(time.time())
        offset = int(p.get("offset") or 0)
        timeout = float(p.get("timeout") or 0)
        deadline = time.time() + timeout
        with self.cond:
            if offset:
                self.confirmed += [u for u in self.updates if u["update_id"] < offset]
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and time.time() < deadline and not self._redeliver:
                self.cond.wait(min(0.5, max(0.01, deadline - time.time())))
            out = list(self.updates)
            if self._redeliver:
                self._redeliver = False
                out = self.confirmed[-5:] + out
            return {"ok": True, "result": out[:100]}

    def api_sendMessage(self, p: dict) -> dict:
        text = str(p.get("text", ""))
        if p.get("parse_mode") == "MarkdownV2" and not _markdown_v2_ok(text):
            return {"ok": False, "error_code": 400, "description": "Bad Request: can't parse entities: "
                    "character is reserved and must be escaped"}
        if len(text) > 4096:
            return {"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}
        msg = {"message_id": self._mid(), "date": int(time.time()), "text": text, "from": BOT,
               "chat": {"id": int(p["chat_id"]), "type": "private"}}
        self.sent.append({"chat_id": int(p["chat_id"]), "text": text, "parse_mode": p.get("parse_mode"),
                          "reply_markup": p.get("reply_markup"), "message_id": msg["message_id"], "time": time.time()})
        return {"ok": True, "result": msg}

    def api_sendDocument(self, p: dict) -> dict:
        doc = p.get("document")
        if not isinstance(doc, dict):
            return {"ok": False, "error_code": 400, "description": "Bad Request: there is no document in the request"}
        self.documents.append({"chat_id": int(p["chat_id"]), "filename": doc["filename"], "content": doc["content"]})
        msg = {"message_id": self._mid(), "date": int(time.time()), "from": BOT,
               "chat": {"id": int(p["chat_id"]), "type": "private"},
               "document": {"file_id": "sent", "file_unique_id": "sentu", "file_name": doc["filename"]}}
        return {"ok": True, "result": msg}

    def api_sendVoice(self, p: dict) -> dict:
        voice = p.get("voice")
        if not isinstance(voice, dict):
            return {"ok": False, "error_code": 400, "description": "Bad Request: there is no voice in the request"}
        self.voices.append({"chat_id": int(p["chat_id"]), "filename": voice["filename"], "content": voice["content"]})
        msg = {"message_id": self._mid(), "date": int(time.time()), "from": BOT,
               "chat": {"id": int(p["chat_id"]), "type": "private"},
               "voice": {"file_id": "sentv", "file_unique_id": "sentvu", "duration": 1}}
        return {"ok": True, "result": msg}

    def api_editMessageReplyMarkup(self, p: dict) -> dict:
        self.markups.append(dict(p))
        return {"ok": True, "result": {"message_id": int(p.get("message_id", 0)), "date": int(time.time()),
                                       "text": "(edited)", "chat": {"id": int(p["chat_id"]), "type": "private"}}}

    def api_editMessageText(self, p: dict) -> dict:
        self.edits.append(dict(p))
        return {"ok": True, "result": {"message_id": int(p.get("message_id", 0)), "date": int(time.time()),
                                       "text": p.get("text", ""), "chat": {"id": int(p["chat_id"]), "type": "private"}}}

    def api_sendChatAction(self, p: dict) -> dict:
        self.actions.append({"chat_id": int(p["chat_id"]), "action": p.get("action"), "time": time.time()})
        return {"ok": True, "result": True}

    def api_answerCallbackQuery(self, p: dict) -> dict:
        self.callbacks.append(dict(p))
        return {"ok": True, "result": True}


def _parse(body: bytes, ctype: str) -> dict:
    if ctype.startswith("multipart/form-data"):
        from email.parser import BytesParser
        from email.policy import HTTP

        msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + body)
        out: dict = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            filename = part.get_filename()
            out[name] = {"filename": filename, "content": payload} if filename else payload.decode()
        return out
    if "json" in ctype:
        return json.loads(body or b"{}")
    params = {k: v[0] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()}
    for key in ("reply_markup", "allowed_updates"):
        if key in params:
            params[key] = json.loads(params[key])
    return params


def _handler(fake: FakeTelegram) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Telegram answers in one go; without this the header and body writes of one answer meet Nagle and
        # the client's delayed ACK: every call would wait ~40 ms that the real API never adds
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            prefix = f"/file/bot{fake.token}/"
            path = unquote(self.path)
            if path.startswith(prefix):
                return self._file(path[len(prefix):])
            parts = self.path.strip("/").split("/")
            if len(parts) != 2 or parts[0] != "bot" + fake.token:
                return self._send(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
            method = parts[1]
            fake.calls.append((time.time(), method))
            if time.time() < fake.hang_until:
                time.sleep(max(0.0, fake.hang_until - time.time()))
                self.close_connection = True
                return
            fault = fake.fault_for(method)
            if fault is not None:
                return self._fault(fault)
            self._send(200, fake.call(method, _parse(body, self.headers.get("Content-Type", ""))))

        do_GET = do_POST

        def _file(self, path: str) -> None:
            content = next((c for p, c in fake.files.values() if p == path), None)
            self.send_response(200 if content is not None else 404)
            self.send_header("Content-Length", str(len(content or b"")))
            self.end_headers()
            self.wfile.write(content or b"")

        def _fault(self, f: dict) -> None:
            status = f["status"]
            if status == 429:
                ra = f.get("retry_after") or 1
                return self._send(429, {"ok": False, "error_code": 429, "description": f"Too Many Requests: retry after {ra}",
                                        "parameters": {"retry_after": ra}})
            if status >= 500:
                data = b"<html><body>502 Bad Gateway</body></html>"
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self._send(status, {"ok": False, "error_code": status, "description": f.get("description") or "Bad Request"})

        def _send(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
