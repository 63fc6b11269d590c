"""The HTTP/1.1 exchange under providers/http.py, on a plain socket: one request written in one send, the status
line and headers parsed, bodies read by Content-Length, chunked encoding or until close (lines too, across
chunk boundaries, for server-sent events). It replaces http.client there, whose import pulls the email package
(~9 ms before the first request) and ssl even for a plain-http endpoint (~7 ms; issue 24: start-up).
Errors: OSError from the socket; RemoteDisconnected (a ConnectionResetError) when the server closes without
answering; HTTPError for a malformed or cut-off response."""

from __future__ import annotations

import socket
from collections.abc import Callable
from io import BufferedReader

_MAX_LINE = 65536
_MAX_HEADERS = 200


class HTTPError(Exception):
    """A malformed or incomplete HTTP response."""


class RemoteDisconnected(ConnectionResetError):
    """The server closed the connection without sending a response."""


def _line(fp: BufferedReader) -> bytes:
    line = fp.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise HTTPError("header line too long")
    return line


def read_head(fp: BufferedReader) -> tuple[str, int, str, list[tuple[str, str]]]:
    """Status line and headers: (version, status, reason, [(name, value)])."""
    first = _line(fp)
    if not first:
        raise RemoteDisconnected("the server closed the connection without a response")
    parts = first.decode("iso-8859-1").rstrip("\r\n").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HTTPError(f"bad status line {first[:80]!r}")
    headers: list[tuple[str, str]] = []
    while True:
        line = _line(fp)
        if line in (b"\r\n", b"\n", b""):
            break
        if len(headers) >= _MAX_HEADERS:
            raise HTTPError("too many headers")
        name, sep, value = line.decode("iso-8859-1").partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "", headers


def create_connection(address: tuple[str, int], timeout: float | None = None,
                      source_address: tuple[str, int] | None = None) -> socket.socket:
    """socket.create_connection with an ASCII host handed over as bytes: a str host makes getaddrinfo load
    the idna codec (and unicodedata) on every process's first connection (issue 24: start-up)."""
    host, port = address
    try:
        return socket.create_connection((host.encode("ascii"), port), timeout, source_address)  # type: ignore[arg-type]
    except UnicodeEncodeError:
        return socket.create_connection(address, timeout, source_address)


class RawResponse:
    """One response; `read(n)` and `readline()` return b"" at the end of the body."""

    def __init__(self, fp: BufferedReader, method: str, on_done: Callable[[], None] | None = None) -> None:
        self.fp, self._on_done = fp, on_done
        version, self.status, self.reason, self._headers = read_head(fp)
        h = {k.lower(): v for k, v in self._headers}
        conn = h.get("connection", "").lower()
        self.chunked = "chunked" in h.get("transfer-encoding", "").lower()
        self.length: int | None = None
        if not self.chunked and h.get("content-length", "").strip().isdigit():
            self.length = int(h["content-length"])
        if method == "HEAD" or self.status in (204, 304) or 100 <= self.status < 200:
            self.length = 0
        self.chunk_left = 0  # bytes left in the current chunk (chunked bodies)
        self.will_close = "close" in conn or (version == "HTTP/1.0" and "keep-alive" not in conn) or \
            (self.length is None and not self.chunked)
        self.done = False
        self._set_done(self.length == 0)

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._headers)

    def isclosed(self) -> bool:
        """The whole body has been read."""
        return self.done

    def _next_chunk(self) -> bool:
        """Move to the next chunk; False at the last (0-size) one, whose trailers are consumed."""
        size = _line(self.fp).split(b";", 1)[0].strip()
        try:
            self.chunk_left = int(size, 16)
        except ValueError:
            raise HTTPError(f"bad chunk size {size[:20]!r}") from None
        if self.chunk_left == 0:
            while _line(self.fp) not in (b"\r\n", b"\n", b""):
                pass
            self._set_done(True)
            return False
        return True

    def _take(self, data: bytes) -> bytes:
        """Count bytes read from a sized or chunked body. Where some were due and none came, as http.client does:
        a chunked body read is cut off (an error); a sized one simply ends short."""
        if not data:
            if self.chunked:
                raise HTTPError("the response was cut off")
            self._set_done(True)
            return data
        if self.chunked:
            self.chunk_left -= len(data)
            if self.chunk_left == 0:
                _line(self.fp)  # the CRLF after the chunk's data
        elif self.length is not None:
            self.length -= len(data)
            self._set_done(self.length == 0)
        return data

    def _set_done(self, done: bool) -> None:
        if done and not self.done:
            self.done = True
            if self.will_close:  # nothing more comes on this connection
                self.fp.close()
            if self._on_done is not None:
                self._on_done()

    def read(self, amt: int | None = None) -> bytes:
        if amt is None:
            parts = []
            while chunk := self.read(65536):
                parts.append(chunk)
            return b"".join(parts)
        if self.done or amt <= 0:
            return b""
        if self.chunked:
            if self.chunk_left == 0 and not self._next_chunk():
                return b""
            return self._take(self.fp.read(min(amt, self.chunk_left)))
        if self.length is None:  # until the server closes
            data = self.fp.read1(amt)
            self._set_done(not data)
            return data
        return self._take(self.fp.read(min(amt, self.length)))

    def readline(self) -> bytes:
        """One line (with its newline), spanning chunk boundaries; b"" at the end of the body. A connection that
        ends mid-body ends the lines there, without an error (as http.client's readline: a stream cut by a
        cancellation keeps what came)."""
        out = b""
        try:
            while not self.done:
                if self.chunked:
                    if self.chunk_left == 0 and not self._next_chunk():
                        break
                    limit = self.chunk_left
                else:
                    limit = _MAX_LINE if self.length is None else min(self.length, _MAX_LINE)
                part = self.fp.readline(limit)
                if not part:
                    self._set_done(True)
                    break
                if self.chunked or self.length is not None:
                    self._take(part)
                out += part
                if out.endswith(b"\n"):
                    break
        except HTTPError:  # a chunk header cut off: the end of what came
            self._set_done(True)
        return out



class Connection:
    """A client connection to one host (or a proxy): `request` then `getresponse`, again once that response
    is read; after a response that ends the connection, the next request opens a new one. `host_header`
    names the origin (the target, not a proxy); `tunnel` = (host, port) to CONNECT to through a proxy.
    `busy` is True from `request` until that response's body has been read whole (or the connection closed):
    a second request meanwhile raises HTTPError instead of queueing behind the first (as http.client's
    CannotSendRequest) — the caller that gave up waiting on a response must not share its socket."""

    def __init__(self, host: str, port: int, *, host_header: str, connect_timeout: float, timeout: float,
                 tls: object = None, server_name: str = "", tunnel: tuple[str, int] | None = None,
                 connect: Callable[..., socket.socket] = create_connection) -> None:
        self.host, self.port, self.host_header = host, port, host_header
        self.connect_timeout, self.timeout = connect_timeout, timeout
        self.tls, self.server_name, self.tunnel = tls, server_name or host, tunnel
        self._connect = connect
        self.sock: socket.socket | None = None
        self._fp: BufferedReader | None = None
        self._method = "GET"
        self.busy = False

    def connect(self) -> None:
        sock = self._connect((self.host, self.port), self.connect_timeout)
        try:
            if self.tunnel is not None:
                self._open_tunnel(sock)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.server_name)  # type: ignore[attr-defined]
            sock.settimeout(self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle/delayed-ACK stalls
        except BaseException:
            sock.close()
            raise
        self.sock = sock

    def _open_tunnel(self, sock: socket.socket) -> None:
        host, port = self.tunnel  # type: ignore[misc]
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("ascii"))
        fp = sock.makefile("rb")
        try:
            _, status, reason, _ = read_head(fp)
        finally:
            fp.close()
        if status != 200:
            raise OSError(f"proxy refused the tunnel: {status} {reason}".strip())

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> None:
        if self.busy:
            raise HTTPError("the previous response on this connection is still being read")
        if self.sock is None:
            self.connect()
        self.busy = True
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host_header}", "Accept-Encoding: identity",
                 *(f"{k}: {v}" for k, v in headers.items())]
        self._method = method
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))  # type: ignore[union-attr]

    def getresponse(self) -> RawResponse:
        if self.sock is None:
            raise HTTPError("no request was sent")
        if self._fp is None:
            self._fp = self.sock.makefile("rb")
        resp = RawResponse(self._fp, self._method, self._idle)
        if resp.will_close:  # the response keeps reading from its file; the next request reconnects
            self.sock, self._fp = None, None
        return resp

    def _idle(self) -> None:
        self.busy = False

    def close(self) -> None:
        """Safe from another thread while a response is being read: the socket is shut down first, so the
        reader wakes at once and lets go of its buffered file, whose close() waits for that reader."""
        sock, fp, self.sock, self._fp = self.sock, self._fp, None, None
        self.busy = False
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if fp is not None:
            fp.close()
        if sock is not None:
            sock.close()
