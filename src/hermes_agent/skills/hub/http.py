"""Plain HTTP(S) for hub sources (stdlib urllib): bounded bodies, timeouts, one-line SourceErrors.

Redirects are followed only to http(s) URLs; nothing here caches or retries."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from urllib.parse import urlencode

from hermes_agent.messages import safe_loads
from hermes_agent.skills.hub.model import RateLimited, SourceError

MAX_BODY = 8 * 1024 * 1024
USER_AGENT = "hermes-agent-skills-hub"


@dataclass(frozen=True, slots=True)
class Response:
    """Status, lower-cased headers and body of one HTTP exchange."""

    status: int
    headers: dict[str, str]
    body: bytes
    url: str

    def json(self) -> object:
        try:
            return safe_loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise SourceError(f"{self.url} did not return JSON") from exc

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def request(url: str, *, method: str = "GET", params: dict | None = None, headers: dict | None = None,
            body: object = None, timeout: float = 10.0, max_bytes: int = MAX_BODY) -> Response:
    """One request; any status comes back as a Response, network failures as SourceError."""
    import urllib.error
    import urllib.request

    if not url.startswith(("http://", "https://")):
        raise SourceError(f"not an http(s) URL: {url}")
    if params:
        url += ("&" if "?" in url else "?") + urlencode(params)
    data = json.dumps(body).encode("utf-8") if body is not None else None
    hdrs = {"User-Agent": USER_AGENT, **(headers or {})}
    if data is not None:
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, headers=hdrs, method=method)
    try:
        with _opener().open(req, timeout=timeout) as resp:
            return Response(resp.status, _lower(resp.headers), _read(resp, max_bytes, url), resp.geturl())
    except urllib.error.HTTPError as exc:
        return Response(exc.code, _lower(exc.headers), _read(exc, max_bytes, url), url)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceError(f"cannot reach {_host(url)}: {reason}") from exc


def _opener() -> object:
    """urllib with redirects limited to http(s), dropping Authorization when the host changes."""
    import urllib.request
    from urllib.parse import urlparse

    class Redirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
            if not newurl.startswith(("http://", "https://")):
                raise SourceError(f"refusing a redirect from {_host(req.full_url)} to {newurl}")
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None and urlparse(newurl).netloc != urlparse(req.full_url).netloc:
                new.remove_header("Authorization")
            return new

    return urllib.request.build_opener(Redirect)


def get_ok(url: str, **kw: object) -> Response:
    """GET that must answer 200; other statuses become a SourceError (rate limits a RateLimited)."""
    resp = request(url, **kw)  # type: ignore[arg-type]
    if resp.status != 200:
        raise status_error(resp)
    return resp


def status_error(resp: Response) -> SourceError:
    """The error for a non-success response, explaining 403/429 rate limits with their reset time."""
    if resp.status in (403, 429) and (resp.status == 429 or resp.headers.get("x-ratelimit-remaining") == "0"):
        reset = _reset_epoch(resp.headers)
        when = time.strftime("%H:%M:%S UTC", time.gmtime(reset)) if reset else "later"
        return RateLimited(f"rate limited by {_host(resp.url)} (HTTP {resp.status}); resets at {when}", reset)
    detail = ""
    try:
        data = safe_loads(resp.body.decode("utf-8"))
        detail = f": {data.get('message')}" if isinstance(data, dict) and data.get("message") else ""
    except (UnicodeDecodeError, ValueError):
        pass
    return SourceError(f"HTTP {resp.status} from {resp.url}{detail}")


def _reset_epoch(headers: dict[str, str]) -> float | None:
    reset, retry = headers.get("x-ratelimit-reset", ""), headers.get("retry-after", "")
    if reset.isdigit():
        return float(reset)
    if retry.isdigit():
        return time.time() + float(retry)
    return None


def _read(resp: object, max_bytes: int, url: str) -> bytes:
    body = resp.read(max_bytes + 1)  # type: ignore[attr-defined]
    if len(body) > max_bytes:
        raise SourceError(f"response from {url} is larger than {max_bytes} bytes")
    return body


def _lower(headers: object) -> dict[str, str]:
    return {k.lower(): v for k, v in (headers.items() if headers is not None else [])}  # type: ignore[attr-defined]


def _host(url: str) -> str:
    from urllib.parse import urlparse

    return urlparse(url).netloc or url
