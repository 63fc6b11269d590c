"""The Telegram Bot API calls the gateway makes before python-telegram-bot has loaded (getMe, deleteWebhook,
getUpdates long polling), over one kept-alive http.client connection on a daemon thread: `hermes gateway run`
polls at once while that library (~0.25 s of imports) loads in the background for sending (issue 24).
A call answers the result, or raises RetryLater (429), Refused (400/401/403/404: the caller maps it to the
library's own error) or Unavailable (anything else: 5xx, 409, a dropped or hanging connection)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
from urllib.parse import urlsplit

_PROXY_VARS = ("https_proxy", "http_proxy", "all_proxy")


class RetryLater(Exception):
    def __init__(self, retry_after: float, description: str) -> None:
        super().__init__(description)
        self.retry_after = retry_after


class Refused(Exception):
    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status


class Unavailable(Exception):
    pass


def usable(base_url: str) -> bool:
    """True when our client reaches the API as the library would: http(s), and no proxy from the environment
    (httpx honours those; with one set, the library polls)."""
    if any(k.lower() in _PROXY_VARS and v for k, v in os.environ.items()):
        return False
    return urlsplit(base_url).scheme in ("http", "https")


class RawApi:
    """`call(method, params, timeout)`: one Bot API call; calls are serialised on one connection."""

    def __init__(self, base_url: str, token: str, tls: object) -> None:
        parts = urlsplit(base_url)  # ".../bot": the token follows directly, as the library builds it
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port or (443 if self.https else 80)
        self.prefix = f"{parts.path}{token}/"
        self.tls = tls
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.https:
                import ssl

                context = self.tls if isinstance(self.tls, ssl.SSLContext) else ssl.create_default_context()
                self._conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=context)
            else:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            self._conn.connect()
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout)
        return self._conn

    def call(self, method: str, params: dict | None = None, timeout: float = 15.0) -> object:
        body = json.dumps(params or {}).encode()
        with self._lock:
            try:
                conn = self._connection(timeout)
                conn.request("POST", self.prefix + method, body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                status, raw = resp.status, resp.read()
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise Unavailable(f"{type(exc).__name__}: {exc}") from None
        try:
            answer = json.loads(raw)
        except ValueError:
            raise Unavailable(f"HTTP {status}: not a Bot API answer") from None
        if isinstance(answer, dict) and answer.get("ok") is True:
            return answer.get("result")
        answer = answer if isinstance(answer, dict) else {}
        code = int(answer.get("error_code") or status)
        description = str(answer.get("description") or f"HTTP {status}")
        if code == 429:
            retry = (answer.get("parameters") or {}).get("retry_after") or 1
            raise RetryLater(float(retry), description)
        if code in (400, 401, 403, 404):
            raise Refused(code, description)
        raise Unavailable(f"HTTP {code}: {description}")

    async def acall(self, method: str, params: dict | None = None, timeout: float = 15.0) -> object:
        """`call` on a daemon thread (a long poll must neither hold an executor worker nor delay exit)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def run() -> None:
            try:
                result = self.call(method, params, timeout)
            except BaseException as exc:  # handed to the awaiting task
                loop.call_soon_threadsafe(_settle, future, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, future, result, None)

        threading.Thread(target=run, name=f"telegram-{method}", daemon=True).start()
        return await future

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in a long poll
            except OSError:
                pass
        if conn is not None:
            conn.close()


def _settle(future: asyncio.Future, result: object, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
