"""Search backends for web_search, as data rows: keyed HTTP APIs (Brave, Tavily, Exa, Firecrawl, SearXNG)
with their key and base-URL variables as Hermes names them, and the keyless default (ddgs)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from hermes_agent.messages import safe_loads
from hermes_agent.tools.builtin._webnet import FetchError, Limits, fetch

Hit = dict[str, str]
_SNIPPET = 300


@dataclass(frozen=True, slots=True)
class Backend:
    """One keyed search API: how to ask it and how to read its answer."""

    name: str
    key_env: str  # holds the key (SearXNG: the instance URL)
    url_env: str  # overrides the base URL
    default_url: str
    request: Callable[[str, str, int, str], tuple[str, str, dict[str, str], dict | None]]
    parse: Callable[[dict], list[dict]]
    fields: tuple[str, str, str] = ("title", "url", "description")


def _brave(base: str, query: str, limit: int, key: str) -> tuple[str, str, dict[str, str], dict | None]:
    url = f"{base}/res/v1/web/search?{urlencode({'q': query, 'count': min(limit, 20)})}"
    return "GET", url, {"X-Subscription-Token": key, "Accept": "application/json"}, None


def _tavily(base: str, query: str, limit: int, key: str) -> tuple[str, str, dict[str, str], dict | None]:
    return "POST", f"{base}/search", {"Authorization": f"Bearer {key}"}, {"query": query, "max_results": limit}


def _exa(base: str, query: str, limit: int, key: str) -> tuple[str, str, dict[str, str], dict | None]:
    body = {"query": query, "numResults": limit, "contents": {"highlights": True}}
    return "POST", f"{base}/search", {"x-api-key": key}, body


def _firecrawl(base: str, query: str, limit: int, key: str) -> tuple[str, str, dict[str, str], dict | None]:
    return "POST", f"{base}/v2/search", {"Authorization": f"Bearer {key}"} if key else {}, {
        "query": query, "limit": limit}


def _searxng(base: str, query: str, limit: int, key: str) -> tuple[str, str, dict[str, str], dict | None]:
    url = f"{base}/search?{urlencode({'q': query, 'format': 'json', 'pageno': 1})}"
    return "GET", url, {"Accept": "application/json"}, None


def _exa_rows(data: dict) -> list[dict]:
    return [{**r, "description": " ".join(r.get("highlights") or []) or r.get("text", "")}
            for r in data.get("results") or []]


def _firecrawl_rows(data: dict) -> list[dict]:
    inner = data.get("data")
    return (inner.get("web") or []) if isinstance(inner, dict) else (inner or [])


def _searxng_rows(data: dict) -> list[dict]:
    return sorted(data.get("results") or [], key=lambda r: -float(r.get("score") or 0))


BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("tavily", "TAVILY_API_KEY", "TAVILY_BASE_URL", "https://api.tavily.com", _tavily,
            lambda d: d.get("results") or [], ("title", "url", "content")),
    Backend("exa", "EXA_API_KEY", "EXA_BASE_URL", "https://api.exa.ai", _exa, _exa_rows),
    Backend("firecrawl", "FIRECRAWL_API_KEY", "FIRECRAWL_API_URL", "https://api.firecrawl.dev", _firecrawl,
            _firecrawl_rows),
    Backend("searxng", "SEARXNG_URL", "SEARXNG_URL", "", _searxng, _searxng_rows, ("title", "url", "content")),
    Backend("brave", "BRAVE_SEARCH_API_KEY", "BRAVE_BASE_URL", "https://api.search.brave.com", _brave,
            lambda d: (d.get("web") or {}).get("results") or []),
)}
ALIASES = {"brave-free": "brave", "duckduckgo": "ddgs"}
NAMES = (*BACKENDS, "ddgs")


def choose(configured: str, env: Mapping[str, str]) -> str:
    """The backend to use: the configured one (checked), else the first with a key set, else ddgs."""
    name = ALIASES.get(configured.strip().lower(), configured.strip().lower())
    if name:
        if name not in NAMES:
            raise FetchError(f"unknown web search backend {configured!r} (web.search_backend / web.backend); "
                             f"known: {', '.join(NAMES)}")
        return name
    ready = [b.name for b in BACKENDS.values() if _has(env, b.key_env) or
             (b.name == "firecrawl" and _has(env, b.url_env))]
    return ready[0] if ready else "ddgs"


def _has(env: Mapping[str, str], var: str) -> bool:
    return bool(str(env.get(var, "")).strip())


def search(name: str, query: str, limit: int, env: Mapping[str, str], timeout: float) -> list[Hit]:
    """Up to `limit` compact hits from backend `name`; a FetchError the model can act on otherwise."""
    if name == "ddgs":
        return _ddgs(query, limit, timeout)
    b = BACKENDS[name]
    key = str(env.get(b.key_env, "")).strip()
    base = (str(env.get(b.url_env, "")).strip() or b.default_url).rstrip("/")
    if not key and not (name == "firecrawl" and _has(env, b.url_env)):
        raise FetchError(f"web search backend {name!r} needs {b.key_env} "
                         f"(set it with `hermes config set {b.key_env} ...`)")
    method, url, headers, body = b.request(base, query, limit, key)
    data = body and json.dumps(body).encode()
    if data:
        headers = {**headers, "Content-Type": "application/json"}
    resp = fetch(url, Limits(timeout=timeout, max_bytes=2_000_000, max_redirects=3, allow_private=True),
                 method=method, headers=headers, body=data or None)
    if resp.status >= 400:
        raise FetchError(f"{name} search failed: HTTP {resp.status}: {resp.text()[:200]}")
    try:
        rows = b.parse(safe_loads(resp.body))
    except (ValueError, AttributeError, TypeError) as exc:
        raise FetchError(f"{name} search: unreadable answer ({type(exc).__name__}: {exc})") from None
    return compact(rows, limit, b.fields)


def compact(rows: list[dict], limit: int, fields: tuple[str, str, str]) -> list[Hit]:
    """title/url/description of the first `limit` rows that have a URL, snippets capped."""
    title, url, snippet = fields
    hits = [{"title": str(r.get(title) or "").strip(), "url": str(r.get(url) or "").strip(),
             "description": " ".join(str(r.get(snippet) or "").split())[:_SNIPPET]}
            for r in rows if isinstance(r, dict) and r.get(url)]
    return hits[:limit]


def _ddgs(query: str, limit: int, timeout: float) -> list[Hit]:
    try:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException
    except ImportError:
        raise FetchError("the keyless search backend needs ddgs: pip install 'hermes-agent[web]' "
                         "(or set web.search_backend to brave, tavily, exa, firecrawl or searxng)") from None
    try:
        rows = DDGS(timeout=max(1, int(timeout))).text(query, max_results=limit)
    except DDGSException as exc:
        raise FetchError(f"DuckDuckGo search (ddgs) failed: {exc}. The search engines may be unreachable "
                         "from here; set web.search_backend to brave, tavily, exa, firecrawl or searxng "
                         "with its key to use an API instead") from None
    return compact(list(rows or []), limit, ("title", "href", "body"))
