"""The browser behind the browser tools: one Chromium (the system's, or a CDP endpoint) started on first
use, one isolated context and page per task_id (a subagent has its own task_id, hence its own cookies),
released with the agent (bootstrap registers `release_task` as a closer) and stopped with the last task.

Why Playwright's async API on a private loop: tool handlers are synchronous and run on the executor's
worker threads, several at once when one model message holds parallel calls or subagents run side by
side. Playwright objects belong to the event loop that created them, so every browser operation is a
coroutine submitted to one loop thread that owns them all; async lets two tasks' pages work at the same
time there, where the sync API (greenlets bound to one thread) would serialise every task's commands."""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_agent.tools.builtin._urlguard import loopback_problem, url_problem

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
LAUNCH_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update", "--disable-sync")
VIEWPORT = {"width": 1280, "height": 800}
# WebRTC's STUN/TURN traffic (UDP and TCP to any host:port) is not routed through the address guard: pages get
# no WebRTC at all (every frame, before its own scripts run).
_NO_WEBRTC = ("for (const n of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCIceTransport', "
              "'RTCRtpSender', 'RTCRtpReceiver']) { try { delete window[n]; Object.defineProperty(window, n, "
              "{value: undefined, configurable: false, writable: false}); } catch (e) {} }")


class BrowserError(Exception):
    """A browser command that could not run (the message is for the model)."""


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    executable: str  # the Chromium binary (unused with cdp_url)
    cdp_url: str  # attach to this endpoint instead of launching
    allow_private: bool  # pages may load loopback/private addresses
    timeout_s: float  # one browser command's limit (browser.command_timeout)
    loopback_ports: tuple[int, ...] | None = None  # own network namespace: the host loopback ports it reaches


@dataclass(slots=True)
class Tab:
    """One task's browser context and page, plus what the private-address guard refused last."""

    context: Any
    page: Any
    allow_private: bool = False
    loopback_ports: tuple[int, ...] | None = None  # LaunchOptions.loopback_ports (_urlguard.loopback_problem)
    blocked: list[str] = field(default_factory=list)
    verdicts: dict[str, str | None] = field(default_factory=dict)
    redirect_to: str | None = None  # where the main frame is being sent by a checked redirect hop
    redirect_refused: str | None = None  # why the main frame's last redirect was refused

    async def follow_redirects(self, limit: int = 10, wait_s: float = 15.0) -> None:
        """Wait while the main frame moves through checked redirect hops (each a meta-refresh page); stops
        at a refused hop (`redirect_refused`) or after `wait_s` without progress."""
        import asyncio  # loaded with the first browser command, not at start-up

        from playwright.async_api import Error as PlaywrightError

        for _ in range(limit):
            target, self.redirect_to = self.redirect_to, None
            if target is None:
                return
            left, deadline = self.page.url, time.monotonic() + wait_s
            while self.page.url == left and not self.redirect_refused and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            try:
                await self.page.wait_for_load_state("load", timeout=wait_s * 1000)
            except PlaywrightError:
                return

    async def checked_url(self) -> str:
        """The page's URL; BrowserError (and a blank page) when a redirect landed on a refused address."""
        import asyncio  # loaded with the first browser command, not at start-up

        url = self.page.url
        if url.startswith(("http://", "https://")):
            problem = await asyncio.get_running_loop().run_in_executor(None, _problem, url, self.allow_private,
                                                                              self.loopback_ports)
            if problem:
                await self.page.goto("about:blank")
                raise BrowserError(f"{problem} (the page went there by a redirect: {url})")
        return url


class BrowserPool:
    """Process-wide: the loop thread, Playwright, the browser and the tabs by task_id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._tabs: dict[str, Tab] = {}
        self._opening: asyncio.Lock | None = None
        self._exit_hooked = False

    @property
    def running(self) -> bool:
        return self._browser is not None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        import asyncio  # loaded with the first browser command, not at start-up

        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="hermes-browser", daemon=True)
                self._thread.start()
                self._loop = loop
                if not self._exit_hooked:
                    atexit.register(self.shutdown)
                    self._exit_hooked = True
            return self._loop

    def call(self, fn: Callable[[], Awaitable[T]], timeout_s: float, cancel: threading.Event | None = None) -> T:
        """Run `fn()` on the browser loop and wait for it (BrowserError after `timeout_s` or on `cancel`)."""
        import asyncio  # loaded with the first browser command, not at start-up
        import concurrent.futures

        future = asyncio.run_coroutine_threadsafe(_as_coro(fn), self._ensure_loop())
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return future.result(0.2)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise BrowserError("interrupted") from None
                if time.monotonic() >= deadline:
                    future.cancel()
                    raise BrowserError(f"the browser did not answer within {timeout_s:g}s "
                                       "(browser.command_timeout)") from None

    def run(self, task_id: str, opts: LaunchOptions, op: Callable[[Tab], Awaitable[T]],
            cancel: threading.Event | None = None) -> T:
        """Run `op` on the task's tab (created, with the browser, on first use)."""

        async def with_tab() -> T:
            return await op(await self._tab(task_id, opts))

        return self.call(with_tab, opts.timeout_s + 30, cancel)

    def has_tab(self, task_id: str) -> bool:
        return task_id in self._tabs

    async def _tab(self, task_id: str, opts: LaunchOptions) -> Tab:
        import asyncio  # loaded with the first browser command, not at start-up

        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            tab = self._tabs.get(task_id)
            if tab is not None and not tab.page.is_closed():
                return tab
            browser = await self._start(opts)
            context = await browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(opts.timeout_s * 1000)
            tab = Tab(context, None, opts.allow_private, opts.loopback_ports)
            await context.route("**/*", lambda route: _guard(route, tab, opts.allow_private))
            await context.route_web_socket(lambda _url: True, lambda ws: _guard_socket(ws, tab, opts.allow_private))
            await context.add_init_script(_NO_WEBRTC)
            tab.page = await context.new_page()
            self._tabs[task_id] = tab
            return tab

    async def _start(self, opts: LaunchOptions) -> Any:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        from playwright.async_api import async_playwright

        if self._playwright is None:
            self._playwright = await async_playwright().start()
        chromium = self._playwright.chromium
        if opts.cdp_url:
            self._browser = await chromium.connect_over_cdp(opts.cdp_url, timeout=opts.timeout_s * 1000)
        else:
            from playwright.async_api import Error as PlaywrightError

            from hermes_agent.terminal.sandbox.startfail import OneMoreStart

            again = OneMoreStart()
            while True:
                try:
                    self._browser = await chromium.launch(executable_path=opts.executable, headless=True,
                                                          args=list(LAUNCH_ARGS), timeout=opts.timeout_s * 1000)
                    break
                except PlaywrightError as exc:
                    if not again.wanted(str(exc)):  # the sandbox did not start the browser: once more
                        raise
        return self._browser

    def release(self, task_id: str) -> bool:
        """Close the task's context; the last one out stops the browser. True when a tab was closed."""
        if self._loop is None or task_id not in self._tabs:
            return False
        self.call(lambda: self._close_tab(task_id), 30)
        if not self._tabs:
            self.shutdown()
        return True

    async def _close_tab(self, task_id: str) -> None:
        tab = self._tabs.pop(task_id, None)
        if tab is not None:
            await tab.context.close()

    async def _stop(self) -> None:
        self._tabs.clear()
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.close()
        pw, self._playwright = self._playwright, None
        if pw is not None:
            await pw.stop()

    def shutdown(self) -> None:
        """Close every context, the browser and Playwright, and end the loop thread."""
        import asyncio  # loaded with the first browser command, not at start-up

        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(30)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(10)
            self._opening = None


async def _as_coro(fn: Callable[[], Awaitable[T]]) -> T:
    return await fn()


async def _guard(route: Any, tab: Tab, allow_private: bool) -> None:
    """Every request of a context: http(s) to a metadata (or, unless allowed, private) address is aborted.
    Playwright does not route the hops of a navigation's redirect, so a navigation (page or frame) is fetched
    here without following redirects (`_navigate_hop`): each hop is a new navigation through this guard.
    (A sub-resource's redirect hops do come back through it; pages are also checked after they load.)"""
    url = route.request.url
    if not url.startswith(("http://", "https://")):
        await route.continue_()
        return
    problem = await _verdict(tab, url, allow_private)
    if problem is not None:
        tab.blocked.append(f"{problem}: {url}")
        await route.abort("blockedbyclient")
    elif route.request.is_navigation_request():
        await _navigate_hop(route, tab, allow_private)
    else:
        await route.continue_()


async def _navigate_hop(route: Any, tab: Tab, allow_private: bool) -> None:
    """A navigation fetched without following redirects. A redirect becomes a page that moves on by meta
    refresh (a new navigation, so routed and checked); a fulfilled 3xx would be followed unchecked."""
    from html import escape
    from urllib.parse import urljoin

    response = await route.fetch(max_redirects=0)
    location = response.headers.get("location") if 300 <= response.status < 400 else None
    if not location:
        await route.fulfill(response=response)
        return
    target = urljoin(route.request.url, location)
    main = route.request.frame == tab.page.main_frame
    if target.startswith(("http://", "https://")) and (problem := await _verdict(tab, target, allow_private)):
        tab.blocked.append(f"{problem}: {target} (a redirect from {route.request.url})")
        if main:
            tab.redirect_refused = tab.blocked[-1]
        await route.abort("blockedbyclient")
        return
    if main:
        tab.redirect_to = target
    body = f'<meta http-equiv="refresh" content="0;url={escape(target, quote=True)}">'
    await route.fulfill(status=200, content_type="text/html", body=body)


def _problem(url: str, allow_private: bool, loopback_ports: tuple[int, ...] | None) -> str | None:
    return url_problem(url, allow_private) or loopback_problem(url, loopback_ports)


async def _verdict(tab: Tab, url: str, allow_private: bool) -> str | None:
    import asyncio  # loaded with the first browser command, not at start-up

    host = url.split("/", 3)[2]
    if host not in tab.verdicts:
        loop = asyncio.get_running_loop()
        tab.verdicts[host] = await loop.run_in_executor(None, _problem, url, allow_private, tab.loopback_ports)
    return tab.verdicts[host]


async def _guard_socket(ws: Any, tab: Tab, allow_private: bool) -> None:
    """WebSockets are not routed with the page's requests: a page must not open one to a refused address."""
    import asyncio  # loaded with the first browser command, not at start-up

    url = ws.url
    http = "http" + url[2:] if url.startswith("ws") else url
    problem = await asyncio.get_running_loop().run_in_executor(None, _problem, http, allow_private, tab.loopback_ports)
    if problem is not None:
        tab.blocked.append(f"{problem}: {url}")
        await ws.close(code=1008, reason="blocked")
    else:
        ws.connect_to_server()


POOL = BrowserPool()


def release_task(task_id: str) -> bool:
    """Release one task's browser context (bootstrap's closer for each agent and subagent)."""
    return POOL.release(task_id)
