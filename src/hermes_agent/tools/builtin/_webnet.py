"""Guarded HTTP for the web tools: every hop's host is resolved and its addresses checked (loopback,
private, link-local, metadata refused unless allowed), then the connection goes to the checked IP, so a
second DNS answer cannot switch it. One deadline per request, a byte cap, limited redirects. Stdlib only."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urljoin, urlsplit

from hermes_agent import lazyre
from hermes_agent.errors import ToolError
from hermes_agent.tools.builtin._urlguard import METADATA_HOSTS as _METADATA_HOSTS
from hermes_agent.tools.builtin._urlguard import address_problem

USER_AGENT = "Mozilla/5.0 (compatible; hermes-agent/0.1; +https://github.com/NousResearch/hermes-agent)"
_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 65536
_SAFE = "/%:@!$&'()*+,;=-._~"  # left as they are when a path or query is percent-encoded

_KEY_SHAPES = lazyre.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|"
    r"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}|"
    r"hf_[A-Za-z0-9]{30,}|tvly-[A-Za-z0-9]{20,}|fc-[a-f0-9]{32})")
_SECRET_PARAM = lazyre.compile(r"(?i)(api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret|password|passwd|"
                           r"client[_-]?secret|private[_-]?key|token)")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchError(ToolError):
    """A page could not be fetched; the message is for the model."""


class BlockedAddress(FetchError):
    """The URL's host resolves to an address the web tools must not reach."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How far one request may go."""

    timeout: float = 20.0
    max_bytes: int = 10_000_000
    max_redirects: int = 5
    allow_private: bool = False


@dataclass(frozen=True, slots=True)
class Response:
    """A fetched response: the final URL after redirects, its media type and the (capped) body."""

    url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes
    truncated: bool

    def text(self) -> str:
        return self.body.decode(self.charset or "utf-8", errors="replace")


def blocked_reason(ip: IPAddress, allow_private: bool) -> str | None:
    """Why the web tools must not connect to `ip` (None: they may): the shared policy of _urlguard."""
    return address_problem(ip, allow_private)


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to: every address `host` resolves to must pass `blocked_reason`."""
    if host.lower().rstrip(".") in _METADATA_HOSTS:
        raise BlockedAddress(f"Blocked: {host} is a cloud metadata host")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve host {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))
    for address in addresses:
        reason = blocked_reason(ipaddress.ip_address(address), allow_private)
        if reason:
            hint = "" if "metadata" in reason else " (set web.allow_private_urls or security.allow_private_urls: true to allow)"
            where = f"{host} is" if host.strip("[]") == address else f"{host} resolves to {address},"
            raise BlockedAddress(f"Blocked: {where} {reason}{hint}")
    if not addresses:
        raise FetchError(f"cannot resolve host {host!r}")
    return addresses[0]


class _PinnedHTTP(http.client.HTTPConnection):
    """HTTP to an already checked IP; the Host header keeps the name."""

    def __init__(self, host: str, port: int, ip: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._ip = ip

    def connect(self) -> None:
        self.sock = socket.create_connection((self._ip, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to an already checked IP; SNI and certificate checks use the name."""

    def __init__(self, host: str, port: int, ip: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._ip = ip

    def connect(self) -> None:
        raw = socket.create_connection((self._ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


def secret_in_url(url: str) -> str | None:
    """Why a model-supplied URL looks like it carries a credential (None: it does not)."""
    text = unquote(unquote(url))
    if _KEY_SHAPES.search(text):
        return "Blocked: the URL contains what looks like an API key or token; secrets are never sent in URLs"
    for name, _ in parse_qsl(urlsplit(text).query, keep_blank_values=True):
        if _SECRET_PARAM.fullmatch(name):
            return f"Blocked: the URL has a credential-like query parameter ({name}); remove it"
    return None


def check_url(url: str) -> str:
    """`url` stripped, if it is an http(s) URL with a host and no credentials; else a FetchError."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"not an http(s) URL: {url[:200]!r}")
    if parts.username or parts.password:
        raise FetchError("Blocked: URLs with user:password@ credentials are not fetched")
    try:
        parts.port  # noqa: B018 - a malformed port (e.g. a redirect to http://%5B::%5D:80/) is refused here
    except ValueError as exc:
        raise FetchError(f"not a valid URL: {url[:200]!r} ({exc})") from None
    return url


def fetch(url: str, limits: Limits, *, method: str = "GET", headers: Mapping[str, str] | None = None,
          body: bytes | None = None) -> Response:
    """One request with redirects followed (each hop checked again); a FetchError when it cannot be had."""
    deadline = time.monotonic() + limits.timeout
    for _hop in range(limits.max_redirects + 1):
        url = check_url(url)
        try:
            result = _one_hop(url, limits, deadline, method, headers or {}, body)
        except TimeoutError:
            raise FetchError(f"timed out after {limits.timeout:g}s fetching {url}") from None
        except (OSError, http.client.HTTPException, UnicodeError) as exc:
            raise FetchError(f"could not fetch {url}: {type(exc).__name__}: {exc}") from None
        if isinstance(result, Response):
            return result
        url = urljoin(url, result)
        if method == "POST":
            method, body = "GET", None
    raise FetchError(f"too many redirects (more than {limits.max_redirects}) from {url}")


def _one_hop(url: str, limits: Limits, deadline: float, method: str, headers: Mapping[str, str],
             body: bytes | None) -> Response | str:
    """The response, or the Location to follow."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    ip = resolve(parts.hostname or "", port, limits.allow_private)
    cls = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    conn = cls(parts.hostname or "", port, ip, _remaining(deadline))
    try:
        path = quote(parts.path or "/", safe=_SAFE) + (f"?{quote(parts.query, safe=_SAFE + '?')}" if parts.query else "")
        sent = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", "Accept": "*/*", **headers}
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        location = resp.getheader("Location")
        if resp.status in _REDIRECTS and location:
            return location
        data, truncated = _read_capped(resp, conn, limits.max_bytes, deadline)
        media, _, params = (resp.getheader("Content-Type") or "").partition(";")
        charset = next((p.split("=", 1)[1].strip().strip('"') for p in params.split(";")
                        if p.strip().lower().startswith("charset=")), None)
        return Response(url, resp.status, media.strip().lower(), charset, data, truncated)
    finally:
        conn.close()


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _read_capped(resp: http.client.HTTPResponse, conn: http.client.HTTPConnection, cap: int,
                 deadline: float) -> tuple[bytes, bool]:
    """Read (and un-gzip) at most `cap` bytes before the deadline; True when more was left."""
    gz = zlib.decompressobj(16 + zlib.MAX_WBITS) if resp.getheader("Content-Encoding") == "gzip" else None
    out = bytearray()
    while len(out) < cap:
        if conn.sock is not None:
            conn.sock.settimeout(_remaining(deadline))
        chunk = resp.read1(_CHUNK)
        if not chunk:
            return bytes(out), False
        if gz is not None:
            try:
                chunk = gz.decompress(chunk, cap - len(out) + 1)
            except zlib.error as exc:
                raise FetchError(f"bad gzip body: {exc}") from None
        out += chunk
    return bytes(out[:cap]), True
