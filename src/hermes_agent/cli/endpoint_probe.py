"""GET {base_url}/models on the user's own endpoint, with a short timeout: reachability and model lists."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_agent.errors import HermesError
from hermes_agent.messages import safe_loads


class ProbeError(HermesError):
    """The endpoint could not be reached or did not answer like an OpenAI-compatible server."""


@dataclass(frozen=True, slots=True)
class ProbeResult:
    models: tuple[str, ...]
    seconds: float


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def list_models(base_url: str, api_key: str = "", timeout: float = 5.0) -> ProbeResult:
    """Model ids the endpoint lists; raises ProbeError with one line saying what went wrong."""
    import urllib.error
    import urllib.request

    url = base_url.rstrip("/") + "/models"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProbeError(f"{base_url!r} is not an http(s) URL")
    headers = {"Accept": "application/json", "User-Agent": "hermes-agent"}
    if api_key and api_key != "no-key":
        headers["Authorization"] = f"Bearer {api_key}"
    # A proxy in the environment must not swallow requests to this machine.
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(parts.hostname) else []
    opener = urllib.request.build_opener(*handlers)
    start = time.monotonic()
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=timeout) as resp:
            body = resp.read(4_000_000)
    except urllib.error.HTTPError as exc:
        hint = " (the API key was refused)" if exc.code in (401, 403) else ""
        raise ProbeError(f"GET {url} answered HTTP {exc.code}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ProbeError(f"cannot reach {url}: {reason}") from None
    seconds = time.monotonic() - start
    try:
        data = safe_loads(body)
        items = data.get("data", []) if isinstance(data, dict) else data
        models = tuple(sorted(str(m["id"]) for m in items if isinstance(m, dict) and m.get("id")))
    except (ValueError, TypeError, AttributeError):
        raise ProbeError(f"GET {url} did not return a JSON model list") from None
    return ProbeResult(models, seconds)
