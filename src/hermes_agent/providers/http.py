"""A small keep-alive HTTP/1.1 client on the standard library (http.client): streaming responses,
proxies via CONNECT, and cancellation from another thread. Importing it costs a few ms, where
httpx/the openai SDK cost 100-300 ms before the first request."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_agent.errors import ProviderError, TransientError


@dataclass(frozen=True, slots=True)
class Proxy:
    """An HTTP proxy (`http://host:port`) and the hosts that bypass it."""

    url: str
    no_proxy: tuple[str, ...] = ()

    def applies_to(self, host: str) -> bool:
        host = host.lower()
        for rule in self.no_proxy:
            rule = rule.strip().lower().lstrip(".")
            if rule == "*" or host == rule or host.endswith("." + rule):
                return False
        return True


class Response:
    """A response whose body can be read whole or line by line (chunked bodies included).
    Call `finish()` when done with it (stops the cancellation watcher)."""

    def __init__(self, raw: http.client.HTTPResponse, done: threading.Event) -> None:
        self.raw, self.status, self._done = raw, raw.status, done
        self.headers = {k.lower(): v for k, v in raw.getheaders()}

    def finish(self, drain: bool = True) -> bool:
        """Stop the watcher; consume what is left of the body so the connection can be reused.
        Returns False when the connection must not be reused."""
        self._done.set()
        if self.raw.isclosed():
            return True
        if not drain:
            return False
        try:
            self.raw.read()
        except (OSError, http.client.HTTPException):
            return False
        return not self.raw.will_close

    def read(self) -> bytes:
        return self.raw.read()

    def iter_lines(self) -> Iterator[str]:
        while True:
            line = self.raw.readline()
            if not line:
                return
            yield line.decode("utf-8", "replace").rstrip("\r\n")


class HttpClient:
    """One persistent connection to one origin; `post()` reconnects once when a kept-alive socket died."""

    def __init__(self, base_url: str, *, timeout: float = 600.0, connect_timeout: float = 15.0,
                 headers: dict[str, str] | None = None, proxy: Proxy | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderError(f"invalid base URL {base_url!r}: expected http(s)://host[:port]/path")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.headers = dict(headers or {})
        self.proxy = proxy if proxy and proxy.applies_to(self.host) else None
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> http.client.HTTPConnection:
        host, port = self.host, self.port
        if self.proxy is not None:
            p = urlsplit(self.proxy.url)
            host, port = p.hostname or "", p.port or 8080
        if self.scheme == "https":
            import ssl

            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=self.connect_timeout, context=ssl.create_default_context())
            if self.proxy is not None:
                conn.set_tunnel(self.host, self.port)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self.connect_timeout)
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(self.timeout)
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle/delayed-ACK stalls
        return conn

    def _target(self, path: str) -> str:
        full = f"{self.prefix}{path}"
        if self.proxy is not None and self.scheme == "http":
            return f"http://{self.host}:{self.port}{full}"
        return full

    def post(self, path: str, body: bytes, cancel: threading.Event | None = None) -> Response:
        """Send a POST; raises TransientError when the server cannot be reached."""
        return self.request("POST", path, body, cancel)

    def request(self, method: str, path: str, body: bytes | None = None,
                cancel: threading.Event | None = None) -> Response:
        headers = {**self.headers, "Content-Length": str(len(body or b""))}
        for attempt in (0, 1):
            fresh = self._conn is None
            if cancel is not None and cancel.is_set():
                raise TransientError("request cancelled")
            try:
                if self._conn is None:
                    self._conn = self._connect()
                self._conn.request(method, self._target(path), body=body, headers=headers)
                done = threading.Event()
                self._watch(cancel, done)
                try:
                    return Response(self._conn.getresponse(), done)
                except BaseException:
                    done.set()
                    raise
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if fresh or attempt == 1:
                    raise TransientError(f"{self.origin} closed the connection ({type(exc).__name__})") from None
            except TimeoutError:
                self.close()
                raise TransientError(f"{self.origin}: timed out") from None
            except OSError as exc:
                self.close()
                reason = exc.strerror or str(exc) or type(exc).__name__
                raise TransientError(f"cannot reach {self.origin}{self.prefix}: {reason}") from None
        raise AssertionError("unreachable")

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def _watch(self, cancel: threading.Event | None, done: threading.Event) -> None:
        """Shut the socket down when `cancel` is set before `done`, so a stalled read returns at once."""
        conn = self._conn
        if cancel is None or conn is None or conn.sock is None:
            return
        sock = conn.sock

        def watcher() -> None:
            while not done.is_set():
                if cancel.wait(0.05):
                    if not done.is_set():
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                    return

        threading.Thread(target=watcher, name="hermes-http-cancel", daemon=True).start()

    def discard(self) -> None:
        """Drop the connection after an unfinished or cancelled response."""
        self.close()

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
