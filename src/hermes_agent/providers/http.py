"""A small keep-alive HTTP/1.1 client on the standard library (sockets, http11.py): streaming responses,
proxies via CONNECT, and cancellation from another thread. Importing it costs a few ms, where
httpx/the openai SDK cost 100-300 ms before the first request (and http.client ~16 ms with email and ssl)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_agent.errors import ProviderError, StreamStalledError, TransientError
from hermes_agent.providers.http11 import (
    Connection,
    HTTPError,
    RawResponse,
    RemoteDisconnected,
    create_connection,
)

_READ_CHUNK = 65536


@dataclass(frozen=True, slots=True)
class IdlePolicy:
    """How long an endpoint may stay silent (no byte) before it is reported (`notice_after`, through
    `on_notice(seconds)`) and before the attempt is abandoned (`give_up_after`)."""

    notice_after: float = 30.0
    give_up_after: float = 120.0
    on_notice: Callable[[float], None] | None = None


class Progress:
    """When the last byte arrived; `stalled_for` is set when the watchdog gave up on the response."""

    __slots__ = ("last", "stalled_for")

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.stalled_for = 0.0

    def advance(self) -> None:
        self.last = time.monotonic()


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

    def __init__(self, raw: RawResponse, done: threading.Event, progress: Progress | None = None,
                 origin: str = "", release: Callable[[bool], None] | None = None) -> None:
        self.raw, self.status, self._done, self._release = raw, raw.status, done, release
        self.progress, self.origin = progress or Progress(), origin
        self.oversized = False  # set by a reader that stopped early: the rest must not be drained
        self.headers = {k.lower(): v for k, v in raw.getheaders()}

    def raise_if_stalled(self) -> None:
        """Raise StreamStalledError when the idle watchdog abandoned this response."""
        if self.progress.stalled_for:
            raise stalled_error(self.origin, self.progress.stalled_for)

    def finish(self, drain: bool = True) -> bool:
        """Stop the watcher; consume what is left of the body so the connection can be reused.
        Returns False when the connection must not be reused (it is closed then)."""
        self._done.set()
        reusable = self._reusable(drain)
        release, self._release = self._release, None
        if release is not None:
            release(reusable)
        return reusable

    def _ended(self) -> None:
        """The body was read to its end: the connection is free for the next request (as with http.client)."""
        if self.raw.isclosed():
            self.finish()

    def _reusable(self, drain: bool) -> bool:
        if self.raw.isclosed():
            return True  # read whole (after a `Connection: close` the next request opens a new socket)
        if not drain:
            return False
        try:
            self.raw.read()
        except (OSError, HTTPError):
            return False
        return not self.raw.will_close

    def read(self, limit: int | None = None) -> bytes:
        """The body (at most `limit` bytes), read in chunks so the idle watchdog sees progress."""
        parts: list[bytes] = []
        got = 0
        while limit is None or got < limit:
            want = _READ_CHUNK if limit is None else min(_READ_CHUNK, limit - got)
            chunk = self.raw.read(want)
            if not chunk:
                self._ended()
                break
            self.progress.advance()
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def iter_lines(self, touch: bool = True) -> Iterator[str]:
        """The body's lines; with `touch` False the caller says what counts as progress (`progress.advance()`): an
        endpoint sending SSE comments or empty events forever is not making any."""
        while True:
            line = self.raw.readline()
            if not line:
                self._ended()
                return
            if touch:
                self.progress.advance()
            yield line.decode("utf-8", "replace").rstrip("\r\n")


def stalled_error(origin: str, silent_for: float) -> StreamStalledError:
    return StreamStalledError(f"{origin}: the model sent nothing for {silent_for:.0f}s "
                              "(agent.stream_idle_timeout); gave up on this attempt", silent_for=silent_for)


class HttpClient:
    """A kept-alive connection to one origin; `post()` reconnects once when a kept-alive socket died. A request
    takes the idle connection (or opens one) and gives it back when its response is finished, so a second
    thread never queues behind a response another thread is still waiting for (a summary abandoned after
    its timeout keeps its own socket); `close()` also shuts down connections whose responses are in flight."""

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
        self._conn: Connection | None = None  # the idle kept-alive connection
        self._active: set[Connection] = set()  # connections whose responses are being read
        self._lock = threading.Lock()

    def _connect(self) -> Connection:
        host, port = self.host, self.port
        if self.proxy is not None:
            p = urlsplit(self.proxy.url)
            host, port = p.hostname or "", p.port or 8080
        tls, tunnel = None, None
        if self.scheme == "https":
            import ssl

            tls = ssl.create_default_context()
            tunnel = (self.host, self.port) if self.proxy is not None else None
        name = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        conn = Connection(host, port, host_header=name if self.port == default else f"{name}:{self.port}",
                          connect_timeout=self.connect_timeout, timeout=self.timeout, tls=tls,
                          server_name=self.host, tunnel=tunnel, connect=create_connection)
        conn.connect()
        return conn

    def _target(self, path: str) -> str:
        full = f"{self.prefix}{path}"
        if self.proxy is not None and self.scheme == "http":
            return f"http://{self.host}:{self.port}{full}"
        return full

    def post(self, path: str, body: bytes, cancel: threading.Event | None = None,
             idle: IdlePolicy | None = None) -> Response:
        """Send a POST; raises TransientError when the server cannot be reached."""
        return self.request("POST", path, body, cancel, idle)

    def request(self, method: str, path: str, body: bytes | None = None,
                cancel: threading.Event | None = None, idle: IdlePolicy | None = None) -> Response:
        headers = {**self.headers, "Content-Length": str(len(body or b""))}
        for attempt in (0, 1):
            conn = self._claim()
            fresh = conn is None
            if cancel is not None and cancel.is_set():
                self._release(conn, reusable=True)
                raise TransientError("request cancelled")
            progress = Progress()
            try:
                if conn is None:
                    conn = self._connect()
                    self._track(conn)
                conn.request(method, self._target(path), body=body, headers=headers)
                done = threading.Event()
                self._watch(conn, cancel, done, idle, progress)
                try:
                    return Response(conn.getresponse(), done, progress, f"{self.origin}{self.prefix}",
                                    release=lambda reusable, c=conn: self._release(c, reusable))
                except BaseException:
                    done.set()
                    raise
            except (OSError, HTTPError) as exc:
                self._release(conn, reusable=False)
                failure = self._failure(exc, retry=not fresh and attempt == 0, progress=progress)
                if failure is not None:
                    raise failure from None
        raise AssertionError("unreachable")

    def _claim(self) -> Connection | None:
        """Take the idle connection (None: open one); it is this request's until released."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                self._active.add(conn)
            return conn

    def _track(self, conn: Connection) -> None:
        with self._lock:
            self._active.add(conn)

    def _release(self, conn: Connection | None, reusable: bool) -> None:
        """A finished request gives its connection back (kept when reusable and none is idle), else closes it."""
        if conn is None:
            return
        with self._lock:
            self._active.discard(conn)
            keep = reusable and self._conn is None and conn.sock is not None
            if keep:
                self._conn = conn
        if not keep:
            conn.close()

    def _failure(self, exc: BaseException, *, retry: bool, progress: Progress) -> ProviderError | None:
        """The error for a failed request, or None when it is worth resending once (a dead kept-alive socket)."""
        if progress.stalled_for:
            return stalled_error(f"{self.origin}{self.prefix}", progress.stalled_for)
        if isinstance(exc, RemoteDisconnected | BrokenPipeError | ConnectionResetError):
            return None if retry else TransientError(
                f"{self.origin} closed the connection ({type(exc).__name__})")
        if isinstance(exc, TimeoutError):
            return TransientError(f"{self.origin}: timed out")
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc) or type(exc).__name__
            return TransientError(f"cannot reach {self.origin}{self.prefix}: {reason}")
        return TransientError(f"{self.origin}: malformed HTTP response ({type(exc).__name__})")

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def _watch(self, conn: Connection, cancel: threading.Event | None, done: threading.Event,
               idle: IdlePolicy | None, progress: Progress) -> None:
        """Shut the socket down when `cancel` is set, or when the server stays silent past the idle
        policy, so a stalled read returns at once; report a long silence through `idle.on_notice`."""
        if (cancel is None and idle is None) or conn is None or conn.sock is None:
            return
        _WATCHDOG.add(_Watched(conn.sock, cancel, done, idle, progress))

    def discard(self) -> None:
        """Drop every connection (a response's own is dropped by `Response.finish`)."""
        self.close()

    def close(self) -> None:
        """Close the idle connection and shut down those with a response in flight (their readers wake)."""
        with self._lock:
            conns = [c for c in (self._conn, *self._active) if c is not None]
            self._conn = None
            self._active.clear()
        for conn in conns:
            conn.close()


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Watched:
    """One response in flight, as the watchdog sees it."""

    __slots__ = ("cancel", "done", "idle", "noticed", "progress", "sock")

    def __init__(self, sock: socket.socket, cancel: threading.Event | None, done: threading.Event,
                 idle: IdlePolicy | None, progress: Progress) -> None:
        self.sock, self.cancel, self.done, self.idle, self.progress = sock, cancel, done, idle, progress
        self.noticed = False

    def check(self, now: float) -> bool:
        """Look once (every 50 ms); False when this response needs no more watching."""
        if self.done.is_set():
            return False
        if self.cancel is not None and self.cancel.is_set():
            _shutdown(self.sock)
            return False
        if self.idle is None:
            return True
        silent = now - self.progress.last
        if silent < self.idle.notice_after:
            self.noticed = False
        elif not self.noticed and self.idle.on_notice is not None:
            self.noticed = True
            self.idle.on_notice(silent)
        if silent >= self.idle.give_up_after:
            self.progress.stalled_for = silent
            _shutdown(self.sock)
            return False
        return True


class _Watchdog:
    """One thread for every response in flight in the process (a thread started per request cost a scheduling
    round trip each: ~1 ms a model call on a loaded machine); it sleeps while there is nothing to watch."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: list[_Watched] = []
        self._thread: threading.Thread | None = None

    def add(self, item: _Watched) -> None:
        with self._cond:
            self._items.append(item)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="hermes-http-watch", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items:
                    self._cond.wait()
            time.sleep(0.05)
            with self._cond:
                items = list(self._items)
            now = time.monotonic()
            finished = []
            for item in items:
                try:
                    keep = item.check(now)
                except Exception:  # a notice callback failed: the watch goes on for the others
                    keep = True
                if not keep:
                    finished.append(item)
            if finished:
                with self._cond:
                    self._items = [i for i in self._items if all(i is not f for f in finished)]


_WATCHDOG = _Watchdog()
