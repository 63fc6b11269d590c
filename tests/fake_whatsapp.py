"""A fake of Meta's WhatsApp Cloud API on 127.0.0.1: the Graph API the gateway calls
(POST /{version}/{phone_number_id}/messages for text, interactive buttons, media and read + typing;
POST /{version}/{phone_number_id}/media; GET /{version}/{media_id} -> a URL; GET that URL -> bytes, each
with the bearer token checked) and Meta's side of the webhook: users "type" with `user_says` / `press` /
`user_sends_file`, and each becomes a signed POST to the gateway retried until it is answered 200, as Meta
does. Faults: `fail(kind, status, count, retry_after=, code=)` with kind "messages", "read", "media", "meta" or "*"."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler

from tests.fake_telegram import _parse, _Server

ALICE = "15550001111"


class FakeWhatsApp:
    def __init__(self, token: str = "EAAtest", phone_number_id: str = "1098765", app_secret: str = "app-secret",
                 verify_token: str = "verify-me", version: str = "v21.0") -> None:
        self.token, self.phone_number_id, self.version = token, phone_number_id, version
        self.app_secret, self.verify_token = app_secret, verify_token
        self.webhook_url = ""
        self.sent: list[dict] = []  # the messages the gateway sent (text, interactive, image, document)
        self.reads: list[dict] = []  # read receipts (+ typing indicator)
        self.uploads: dict[str, dict] = {}  # media id -> {"filename", "mime", "content"}
        self.user_media: dict[str, tuple[str, bytes]] = {}  # media id -> (mime, content) users sent
        self.calls: list[tuple[float, str, int]] = []  # (time, kind, status answered)
        self.pushes: list[tuple[str, int]] = []  # (wamid, status our webhook POST got)
        self.payloads: dict[str, dict] = {}  # wamid -> the webhook payload carrying it
        self.faults: list[dict] = []
        self._ids = itertools.count(1)
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeWhatsApp:
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fake-whatsapp").start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the user side (Meta's webhook) ------------------------------------------------------------
    def _payload(self, wa_id: str, name: str, message: dict | None, statuses: list | None = None) -> dict:
        value: dict = {"messaging_product": "whatsapp",
                       "metadata": {"display_phone_number": "15550009999", "phone_number_id": self.phone_number_id}}
        if message is not None:
            value["contacts"] = [{"profile": {"name": name}, "wa_id": wa_id}]
            value["messages"] = [message]
        if statuses is not None:
            value["statuses"] = statuses
        return {"object": "whatsapp_business_account",
                "entry": [{"id": "WABA1", "changes": [{"value": value, "field": "messages"}]}]}

    def message_payload(self, kind: str, body: dict, wamid: str, wa_id: str = ALICE, name: str = "Alice") -> dict:
        message = {"from": wa_id, "id": wamid, "timestamp": str(int(time.time())), "type": kind, kind: body}
        return self._payload(wa_id, name, message)

    def _incoming(self, wa_id: str, name: str, kind: str, body: dict, background: bool = True) -> str:
        wamid = f"wamid.IN{next(self._ids)}=="
        self.payloads[wamid] = self.message_payload(kind, body, wamid, wa_id, name)
        self.push(wamid, background=background)
        return wamid

    def user_says(self, text: str, wa_id: str = ALICE, name: str = "Alice", background: bool = True) -> str:
        return self._incoming(wa_id, name, "text", {"body": text}, background)

    def press(self, button_id: str, title: str, wa_id: str = ALICE, name: str = "Alice") -> str:
        return self._incoming(wa_id, name, "interactive",
                              {"type": "button_reply", "button_reply": {"id": button_id, "title": title}})

    def user_sends_file(self, name: str, content: bytes, mime: str, caption: str = "", wa_id: str = ALICE) -> str:
        media_id = f"{next(self._ids)}4455"
        self.user_media[media_id] = (mime, content)
        doc = {"id": media_id, "filename": name, "mime_type": mime, "sha256": hashlib.sha256(content).hexdigest()}
        if caption:
            doc["caption"] = caption
        return self._incoming(wa_id, "Alice", "document", doc)

    def status_update(self, wamid_out: str, wa_id: str = ALICE) -> int:
        """Meta's delivery receipt for one of our messages (the gateway must ignore it)."""
        status = {"id": wamid_out, "status": "delivered", "timestamp": str(int(time.time())), "recipient_id": wa_id}
        return self.post(self._payload(wa_id, "Alice", None, [status]))

    def push(self, wamid: str, background: bool = True, tries: int = 300) -> int:
        """POST the payload of `wamid` until it is answered 200 (Meta retries a failed delivery)."""
        if background:
            threading.Thread(target=self.push, args=(wamid, False, tries), daemon=True).start()
            return 0
        status = 0
        for _ in range(tries):
            status = self.post(self.payloads[wamid])
            self.pushes.append((wamid, status))
            if status == 200:
                break
            time.sleep(0.1)
        return status

    def post(self, payload: dict, signature: str | None = None) -> int:
        """One signed webhook POST; the HTTP status (0: nobody listening)."""
        body = json.dumps(payload).encode()
        if signature is None:
            signature = "sha256=" + hmac.new(self.app_secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json"}
        if signature:
            headers["X-Hub-Signature-256"] = signature
        req = urllib.request.Request(self.webhook_url, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except (urllib.error.URLError, OSError):
            return 0

    def verify(self, token: str, challenge: str = "1158201444", mode: str = "subscribe") -> tuple[int, str]:
        """Meta's subscription handshake: GET ?hub.mode=&hub.verify_token=&hub.challenge=."""
        from urllib.parse import urlencode

        query = urlencode({"hub.mode": mode, "hub.verify_token": token, "hub.challenge": challenge})
        try:
            with urllib.request.urlopen(f"{self.webhook_url}?{query}", timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    # --- helpers for assertions ----------------------------------------------------------------
    def fail(self, kind: str, status: int, count: int = 1, retry_after: int | None = None, code: int = 0,
             message: str = "") -> None:
        self.faults.append({"kind": kind, "status": status, "count": count, "retry_after": retry_after,
                            "code": code, "message": message})

    def texts(self, wa_id: str | None = None) -> list[str]:
        """What the user sees: text bodies and the body of button messages."""
        out = []
        for m in list(self.sent):
            if wa_id is None or m["to"] == wa_id:
                if m["type"] == "text":
                    out.append(m["text"]["body"])
                elif m["type"] == "interactive":
                    out.append(m["interactive"]["body"]["text"])
        return out

    def wait_for(self, pred, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.02)
        return bool(pred())

    # --- the Graph API -------------------------------------------------------------------------
    def fault_for(self, kind: str) -> dict | None:
        for f in self.faults:
            if f["kind"] in (kind, "*") and f["count"] > 0:
                f["count"] -= 1
                return f
        return None

    def api_messages(self, body: dict) -> tuple[int, dict]:
        if body.get("messaging_product") != "whatsapp":
            return 400, _error(100, "(#100) The parameter messaging_product is required.")
        if body.get("status") == "read":
            self.reads.append({**body, "time": time.time()})
            return 200, {"success": True}
        problem = _invalid(body)
        if problem:
            return 400, _error(100, f"(#100) Invalid parameter: {problem}")
        wamid = f"wamid.OUT{next(self._ids)}=="
        self.sent.append({**body, "id": wamid, "time": time.time()})
        return 200, {"messaging_product": "whatsapp", "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                     "messages": [{"id": wamid}]}

    def api_media(self, fields: dict) -> tuple[int, dict]:
        file = fields.get("file")
        if fields.get("messaging_product") != "whatsapp" or not isinstance(file, dict):
            return 400, _error(100, "(#100) file and messaging_product are required")
        media_id = f"{next(self._ids)}7788"
        self.uploads[media_id] = {"filename": file["filename"], "mime": fields.get("type"), "content": file["content"]}
        return 200, {"id": media_id}

    def media_meta(self, media_id: str) -> tuple[int, dict]:
        if media_id not in self.user_media:
            return 404, _error(100, "Unsupported get request.")
        mime, content = self.user_media[media_id]
        return 200, {"messaging_product": "whatsapp", "url": f"{self.base_url}/lookaside/{media_id}",
                     "mime_type": mime, "sha256": hashlib.sha256(content).hexdigest(),
                     "file_size": len(content), "id": media_id}


def _invalid(body: dict) -> str:
    """What the Cloud API would refuse in an outgoing message, or ""."""
    kind = body.get("type")
    if not str(body.get("to") or "").isdigit():
        return "to"
    if kind == "text":
        return "text.body too long" if len(body["text"]["body"]) > 4096 else ""
    if kind == "interactive":
        inter = body["interactive"]
        buttons = inter["action"]["buttons"]
        if not 1 <= len(buttons) <= 3 or any(len(b["reply"]["title"]) > 20 for b in buttons):
            return "buttons"
        return "body too long" if len(inter["body"]["text"]) > 1024 else ""
    if kind in ("image", "document"):
        return "" if body.get(kind, {}).get("id") else "media id"
    return "type"


def _error(code: int, message: str) -> dict:
    return {"error": {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "AbCdEf"}}


def _handler(fake: FakeWhatsApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def _route(self, method: str) -> tuple[int, dict | bytes, str]:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Authorization") != f"Bearer {fake.token}":
                return 401, _error(190, "Invalid OAuth access token."), "auth"
            parts = self.path.strip("/").split("/")
            if method == "GET" and parts[0] == "lookaside" and parts[1] in fake.user_media:
                return 200, fake.user_media[parts[1]][1], "download"
            if parts[0] != fake.version:
                return 400, _error(2635, "Unknown API version"), "?"
            kind = parts[-1] if method == "POST" else "meta"
            if kind == "messages" and b'"status": "read"' in body:
                kind = "read"  # the read receipt + typing indicator goes to /messages too
            fault = fake.fault_for(kind)
            if fault is not None:
                return fault["status"], _error(fault["code"] or fault["status"], fault["message"] or "fault"), kind
            if method == "GET" and len(parts) == 2:
                return (*fake.media_meta(parts[1]), kind)
            if method == "POST" and parts[1] == fake.phone_number_id and parts[-1] == "messages":
                return (*fake.api_messages(json.loads(body or b"{}")), kind)
            if method == "POST" and parts[1] == fake.phone_number_id and kind == "media":
                return (*fake.api_media(_parse(body, self.headers.get("Content-Type", ""))), kind)
            return 404, _error(100, "Unknown path"), kind

        def _answer(self, method: str) -> None:
            status, obj, kind = self._route(method)
            fake.calls.append((time.time(), kind, status))
            data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream" if isinstance(obj, bytes) else "application/json")
            if status == 429:
                fault = next((f for f in fake.faults if f["status"] == 429), {})
                self.send_header("Retry-After", str(fault.get("retry_after") or 1))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    return Handler
