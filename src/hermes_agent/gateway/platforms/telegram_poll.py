"""Our own Telegram Bot API client (HTTP/1.1 on a socket, providers/http11.py: not http.client, whose import
pulled the email package and ssl into every gateway start; kept-alive connections on daemon threads). It polls (getMe,
deleteWebhook, getUpdates: `hermes gateway run` polls at once, python-telegram-bot is never on the start-up path)
and carries the calls of every chat reply (sendMessage, sendChatAction, editMessageText, answerCallbackQuery,
editMessageReplyMarkup): ~0.2 ms of CPU a call where the library's httpx stack took ~2 ms (issue 24).
A call answers the result, or raises RetryLater (429), Refused (400/401/403/404: the caller maps it to the
library's own error) or Unavailable (anything else: 5xx, 409, a dropped or hanging connection)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
from collections.abc import Callable
from urllib.parse import urlsplit

from hermes_agent.messages import safe_loads
from hermes_agent.providers.http11 import Connection, HTTPError, RemoteDisconnected

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
    """`call(method, params, timeout)`: one Bot API call on a kept-alive connection. Calls at the same time use
    connections of their own (an idle one is reused), so a long poll never holds up a reply, nor one chat another."""

    def __init__(self, base_url: str, token: str, tls: object) -> None:
        parts = urlsplit(base_url)  # ".../bot": the token follows directly, as the library builds it
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port or (443 if self.https else 80)
        self.prefix = f"{parts.path}{token}/"
        self.tls = tls
        name = f"[{self.host}]" if ":" in self.host else self.host  # as http.client writes an IPv6 literal
        self.host_header = name if parts.port is None else f"{name}:{self.port}"
        self._idle: list[Connection] = []
        self._busy: set[Connection] = set()
        self._lock = threading.Lock()
        self._workers = _Workers()

    def _connection(self, timeout: float, reuse: bool) -> tuple[Connection, bool]:
        """An idle kept-alive connection (True) or a new one (False)."""
        with self._lock:
            conn = self._idle.pop() if self._idle and reuse else None
        reused = conn is not None
        if conn is None:
            context = None
            if self.https:
                import ssl

                context = self.tls if isinstance(self.tls, ssl.SSLContext) else ssl.create_default_context()
            conn = Connection(self.host, self.port, host_header=self.host_header, connect_timeout=timeout,
                              timeout=timeout, tls=context)
            conn.connect()  # TCP_NODELAY set there
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        with self._lock:
            self._busy.add(conn)
        return conn, reused

    def _release(self, conn: Connection, keep: bool) -> None:
        with self._lock:
            self._busy.discard(conn)
            if keep:
                self._idle.append(conn)
                return
        _drop(conn)

    def _exchange(self, method: str, body: bytes, timeout: float) -> tuple[int, bytes]:
        """One request and its answer; a kept-alive connection the server has closed meanwhile (it answers
        nothing) is replaced by a new one at once."""
        for reuse in (True, False):
            conn, reused = None, False
            try:
                conn, reused = self._connection(timeout, reuse)
                conn.request("POST", self.prefix + method, body,
                             {"Content-Type": "application/json", "Content-Length": str(len(body))})
                resp = conn.getresponse()
                status, raw = resp.status, resp.read()
            except (RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                if conn is not None:
                    self._release(conn, keep=False)
                if not reused:
                    raise Unavailable(f"{type(exc).__name__}: {exc}") from None
                continue
            except (OSError, HTTPError) as exc:
                if conn is not None:
                    self._release(conn, keep=False)
                raise Unavailable(f"{type(exc).__name__}: {exc}") from None
            self._release(conn, keep=not resp.will_close)
            return status, raw
        raise Unavailable("no connection")  # not reached: the second pass returns or raises

    def call(self, method: str, params: dict | None = None, timeout: float = 15.0) -> object:
        status, raw = self._exchange(method, json.dumps(params or {}).encode(), timeout)
        try:
            answer = safe_loads(raw)
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
        """`call` on one of the client's daemon threads (a long poll or a hung send neither holds an executor
        worker, which agent turns need, nor delays exit)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def run() -> None:
            try:
                result = self.call(method, params, timeout)
            except BaseException as exc:  # handed to the awaiting task
                loop.call_soon_threadsafe(_settle, future, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, future, result, None)

        self._workers.run(run)
        return await future

    def close(self) -> None:
        """Close every connection; one blocked in a call (a long poll) is woken with an error."""
        with self._lock:
            conns, self._idle = [*self._idle, *self._busy], []
            self._busy.clear()
        for conn in conns:
            _drop(conn)


class _Workers:
    """Daemon threads for blocking calls, started as calls overlap and kept for the next ones."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def run(self, job: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        self._jobs.put(job)
        if spawn:
            threading.Thread(target=self._serve, name="telegram-api", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._jobs.get()()
            with self._lock:
                self._idle += 1


def _drop(conn: Connection) -> None:
    conn.close()  # shuts the socket down first: wakes a thread blocked in a long poll


def _settle(future: asyncio.Future, result: object, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
