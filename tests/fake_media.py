"""A fake of the media APIs on 127.0.0.1 (OpenAI images/speech/transcriptions, FAL, ElevenLabs): records each
request (path, headers, JSON or multipart body) and answers as those services do. `fail[path] = status`
makes a path fail once per entry."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
MP3 = b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 64


class FakeMedia:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail: dict[str, int] = {}
        self.transcript = "please water the plants"
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeMedia:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, body: bytes, headers: dict) -> tuple[int, str, bytes]:
        ctype = headers.get("content-type", "")
        parsed: object = json.loads(body) if "json" in ctype and body else body
        self.requests.append({"path": path, "headers": headers, "body": parsed})
        if path in self.fail:
            status = self.fail.pop(path)
            return status, "application/json", json.dumps({"error": {"message": "scripted failure"}}).encode()
        if path.endswith("/images/generations"):
            return 200, "application/json", json.dumps({"data": [{"b64_json": base64.b64encode(PNG).decode()}]}).encode()
        if path.startswith("/fal/"):
            return 200, "application/json", json.dumps({"images": [{"url": f"{self.url}/files/out.png"}]}).encode()
        if path == "/files/out.png":
            return 200, "image/png", PNG
        if path.endswith("/audio/speech") or "/text-to-speech/" in path:
            return 200, "audio/mpeg", MP3
        if path.endswith("/audio/transcriptions"):
            return 200, "application/json", json.dumps({"text": self.transcript}).encode()
        return 404, "application/json", b'{"error": {"message": "not found"}}'


def _handler(fake: FakeMedia) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, ctype, out = fake.answer(self.path, body, {k.lower(): v for k, v in self.headers.items()})
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = _serve

    return Handler
