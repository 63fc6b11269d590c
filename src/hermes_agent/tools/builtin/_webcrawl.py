"""web_crawl's walk: breadth-first over one site (same scheme, host and port), robots.txt obeyed, every
fetch through the guarded client; each page reported compactly (title and the start of its text)."""

from __future__ import annotations

from collections import deque
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from hermes_agent.tools.builtin import _webconvert as conv
from hermes_agent.tools.builtin._webnet import (
    USER_AGENT,
    BlockedAddress,
    FetchError,
    Limits,
    check_url,
    fetch,
)

PAGE_CHARS = 1500
_AGENT = "hermes-agent"


class _Robots:
    """robots.txt per origin, fetched once: 4xx means no rules; unreachable or 5xx means no crawl at all."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._parsers: dict[str, RobotFileParser] = {}

    def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._parsers:
            self._parsers[origin] = self._load(origin)
        parser = self._parsers[origin]
        return parser.can_fetch(_AGENT, url) and parser.can_fetch(USER_AGENT, url)

    def _load(self, origin: str) -> RobotFileParser:
        parser = RobotFileParser()
        try:
            resp = fetch(f"{origin}/robots.txt", self._limits)
        except BlockedAddress:
            raise
        except FetchError as exc:
            raise FetchError(f"robots.txt of {origin} could not be read, so the site is not crawled: {exc}") from None
        if resp.status >= 500:
            raise FetchError(f"robots.txt of {origin} answered HTTP {resp.status}, so the site is not crawled")
        parser.parse(resp.text().splitlines() if resp.status < 400 else [])
        return parser


def crawl(start: str, limits: Limits, max_pages: int, max_depth: int) -> dict:
    """{"pages": [{url, title, content} | {url, error}], "skipped": [...], "unvisited": n}."""
    start = check_url(start)
    robots = _Robots(limits)
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    seen = {start}
    pages: list[dict] = []
    skipped: list[str] = []
    while queue and len(pages) < max_pages:
        url, depth = queue.popleft()
        if not robots.allowed(url):
            skipped.append(url)
            continue
        page, links = _visit(url, limits, depth < max_depth)
        pages.append(page)
        for link in links:
            if link not in seen and urlsplit(link).netloc == urlsplit(start).netloc:
                seen.add(link)
                queue.append((link, depth + 1))
    result: dict = {"pages": pages}
    if skipped:
        result["robots_disallowed"] = skipped[:20]
    if queue:
        result["unvisited"] = len(queue)
    return result


def _visit(url: str, limits: Limits, follow: bool) -> tuple[dict, list[str]]:
    """One page's compact entry and (when `follow`) its same-site links."""
    try:
        resp = fetch(url, limits, headers={"Accept": "text/html,application/pdf,text/*;q=0.9"})
        if resp.status >= 400:
            return {"url": url, "error": f"HTTP {resp.status}"}, []
        page = conv.convert(resp)
    except FetchError as exc:
        return {"url": url, "error": str(exc)}, []
    text = page.text if len(page.text) <= PAGE_CHARS else page.text[:PAGE_CHARS].rsplit(" ", 1)[0] + " [...]"
    entry = {"url": page.url, "title": page.title, "content": conv.wrap_untrusted(page.url, text)}
    links = conv.same_site_links(page.html, page.url) if follow and page.html else []
    return entry, links
