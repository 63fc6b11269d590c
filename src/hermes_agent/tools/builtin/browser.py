"""Browser tools (Hermes's names, arguments and result JSON) over Playwright and the system Chromium:
navigate, snapshot (accessibility tree with element refs), click, type, scroll, back, press, images,
vision (screenshot to the vision model) and close. One context per task (see _browser_pool)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from hermes_agent.errors import HermesError
from hermes_agent.tools.builtin import _images
from hermes_agent.tools.builtin._browser_pool import POOL, BrowserError, LaunchOptions, Tab
from hermes_agent.tools.builtin._checks import browser_available, chromium_path
from hermes_agent.tools.builtin._snapshot import capped, compact, element_count, normalise_ref
from hermes_agent.tools.builtin._urlguard import allow_private, loopback_problem, url_problem
from hermes_agent.tools.registry import registry

_NO_PAGE = "Call browser_navigate first."
_REF = {"ref": {"type": "string", "description": "Element ref from the snapshot, e.g. e12"}}


def _schema(name: str, description: str, props: dict | None = None, required: tuple[str, ...] = ()) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": props or {}, "required": list(required)}}


SCHEMAS = [
    _schema("browser_navigate", "Open a URL in a real browser (JavaScript runs); returns the page's snapshot. For "
            "pages to interact with (forms, clicks, dynamic content); web_extract reads pages faster. The other "
            "browser tools are offered after it.",
            {"url": {"type": "string"}}, ("url",)),
    _schema("browser_snapshot", "The current page as an accessibility tree; elements carry refs [ref=e12] for "
            "browser_click and browser_type. Refresh it after the page changes. "
            "For what the tree cannot show (layout, images, CAPTCHAs) use browser_vision.",
            {"full": {"type": "boolean", "description": "Keep every wrapper node (default: compact)"}}),
    _schema("browser_click", "Click an element by ref.", _REF, ("ref",)),
    _schema("browser_type", "Clear an input by ref and type text into it.",
            {**_REF, "text": {"type": "string"}}, ("ref", "text")),
    _schema("browser_scroll", "Scroll the page one screen.",
            {"direction": {"type": "string", "enum": ["up", "down"]}}, ("direction",)),
    _schema("browser_back", "Go back in browser history."),
    _schema("browser_press", "Press a key (Enter, Tab, Escape, ArrowDown, Control+a).",
            {"key": {"type": "string"}}, ("key",)),
    _schema("browser_get_images", "List the page's images (src, alt, size). "
            "vision_analyze can look at one."),
    _schema("browser_vision", "Screenshot the page and have a vision model answer a question about it.",
            {"question": {"type": "string"}}, ("question",)),
    _schema("browser_close", "Close this task's browser (cookies and pages are dropped)."),
]




def _options(ctx: Any) -> LaunchOptions:
    cfg, env = ctx.settings.cfg, ctx.settings.env
    cdp = str(env.get("BROWSER_CDP_URL") or cfg.browser.cdp_url or "").strip()
    allowed = allow_private(env, cfg.security.allow_private_urls, cfg.browser.allow_private_urls)
    executable = chromium_path(env) or ""
    if executable and not cdp:
        from dataclasses import asdict

        from hermes_agent.tools.builtin._browser_confine import confined_executable

        executable, problem, ports = confined_executable(executable, ctx.path_policy, asdict(cfg.sandbox),
                                                         str(ctx.settings.home))
        if problem:
            raise BrowserError(problem)
    return LaunchOptions(executable, cdp, allowed, cfg.browser.command_timeout, ports)


def _fail(error: str, **extra: object) -> str:
    return json.dumps({"success": False, "error": error, **extra}, ensure_ascii=False)


def _exec(ctx: Any, op: Callable[[Tab], Awaitable[dict]], *, needs_page: bool = True) -> dict:
    """Run `op` on the task's tab; every browser failure becomes {"success": false, "error": ...}."""
    from playwright.async_api import Error as PlaywrightError

    if needs_page and not POOL.has_tab(ctx.task_id):
        return {"success": False, "error": f"No page is open. {_NO_PAGE}"}
    try:
        return POOL.run(ctx.task_id, _options(ctx), op, ctx.interrupt)
    except BrowserError as exc:
        return {"success": False, "error": str(exc)}
    except PlaywrightError as exc:
        return {"success": False, "error": _short(exc.message)}


def _run(ctx: Any, op: Callable[[Tab], Awaitable[dict]], *, needs_page: bool = True) -> str:
    return json.dumps(_exec(ctx, op, needs_page=needs_page), ensure_ascii=False)


def _short(message: str) -> str:
    """Playwright's first line, without its call log."""
    return message.split("\nCall log:")[0].strip().splitlines()[0] if message.strip() else "browser command failed"


async def _settle(page: Any) -> None:
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.wait_for_load_state("load", timeout=5000)
    except PlaywrightError:
        pass  # a page that keeps loading is still usable


async def _snap(tab: Tab, full: bool = False) -> dict:
    await tab.checked_url()
    raw = await tab.page.aria_snapshot(mode="ai")
    text = raw if full else compact(raw)
    return {"snapshot": capped(text), "element_count": element_count(text)}


def _navigate(args: dict, **kw: Any) -> str:
    ctx, url = kw["ctx"], str(args.get("url") or "").strip()
    if url and "://" not in url:
        url = "https://" + url
    try:
        opts = _options(ctx)
    except BrowserError as exc:
        return _fail(str(exc))
    problem = url_problem(url, opts.allow_private) or loopback_problem(url, opts.loopback_ports)
    if problem:
        return _fail(problem)

    async def op(tab: Tab) -> dict:
        from playwright.async_api import Error as PlaywrightError

        tab.blocked.clear()
        tab.redirect_to = tab.redirect_refused = None
        try:
            response = await tab.page.goto(url, wait_until="load")
            await tab.follow_redirects()
        except PlaywrightError:
            if tab.blocked:
                return {"success": False, "error": tab.blocked[-1]}
            raise
        if tab.redirect_refused:
            return {"success": False, "error": tab.redirect_refused}
        snapshot = await _snap(tab)
        out: dict = {"success": True, "url": tab.page.url, "title": await tab.page.title()}
        if response is not None and response.status >= 400:
            out["status"] = response.status
        return {**out, **snapshot}

    return _run(ctx, op, needs_page=False)


def _snapshot(args: dict, **kw: Any) -> str:
    full = args.get("full") is True

    async def op(tab: Tab) -> dict:
        return {"success": True, **await _snap(tab, full)}

    return _run(kw["ctx"], op)


def _element(tab: Tab, ref: str) -> Any:
    return tab.page.locator(f"aria-ref={ref}")


def _ref_or_error(args: dict) -> tuple[str | None, str]:
    ref = normalise_ref(args.get("ref"))
    if ref is None:
        return None, _fail(f"ref {args.get('ref')!r} is not an element ref; use one like e12 from browser_snapshot")
    return ref, ""


async def _locate(tab: Tab, ref: str) -> Any:
    from playwright.async_api import Error as PlaywrightError

    element = _element(tab, ref)
    try:
        found = await element.count()
    except PlaywrightError:
        found = 0
    if not found:
        raise BrowserError(f"element {ref} is not on the page; take a new browser_snapshot (refs change with the page)")
    return element


def _click(args: dict, **kw: Any) -> str:
    ref, error = _ref_or_error(args)
    if ref is None:
        return error

    async def op(tab: Tab) -> dict:
        await (await _locate(tab, ref)).click()
        await _settle(tab.page)
        return {"success": True, "clicked": ref}

    return _run(kw["ctx"], op)


def _type(args: dict, **kw: Any) -> str:
    ref, error = _ref_or_error(args)
    if ref is None:
        return error
    text = str(args.get("text") or "")

    async def op(tab: Tab) -> dict:
        await (await _locate(tab, ref)).fill(text)
        return {"success": True, "typed": text, "element": ref}

    return _run(kw["ctx"], op)


def _scroll(args: dict, **kw: Any) -> str:
    direction = str(args.get("direction") or "down").lower()
    if direction not in ("up", "down"):
        return _fail(f"Invalid direction '{direction}'. Use 'up' or 'down'.")
    sign = -1 if direction == "up" else 1

    async def op(tab: Tab) -> dict:
        await tab.page.evaluate(f"window.scrollBy(0, {sign} * window.innerHeight * 0.9)")
        return {"success": True, "scrolled": direction}

    return _run(kw["ctx"], op)


def _back(args: dict, **kw: Any) -> str:
    async def op(tab: Tab) -> dict:
        await tab.page.go_back(wait_until="load")
        return {"success": True, "url": await tab.checked_url()}

    return _run(kw["ctx"], op)


def _press(args: dict, **kw: Any) -> str:
    key = str(args.get("key") or "").strip()
    if not key:
        return _fail("key is empty")

    async def op(tab: Tab) -> dict:
        await tab.page.keyboard.press(key)
        await _settle(tab.page)
        return {"success": True, "pressed": key}

    return _run(kw["ctx"], op)


_IMAGES_JS = """() => [...document.images].filter(i => i.src && !i.src.startsWith('data:')).slice(0, 100)
  .map(i => ({src: i.src, alt: i.alt || '', width: i.naturalWidth, height: i.naturalHeight}))"""


def _get_images(args: dict, **kw: Any) -> str:
    async def op(tab: Tab) -> dict:
        await tab.checked_url()
        images = await tab.page.evaluate(_IMAGES_JS)
        return {"success": True, "images": images, "count": len(images)}

    return _run(kw["ctx"], op)


def _vision(args: dict, **kw: Any) -> str:
    ctx = kw["ctx"]
    question = str(args.get("question") or "").strip() or "What does this page show?"

    async def op(tab: Tab) -> dict:
        url = await tab.checked_url()
        return {"success": True, "png": await tab.page.screenshot(type="png"), "url": url}

    shot = _exec(ctx, op)
    if not shot["success"]:
        return json.dumps(shot, ensure_ascii=False)
    folder = ctx.settings.home / "cache" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"browser_screenshot_{time.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}.png"
    path.write_bytes(shot["png"])
    prompt = (f"This is a screenshot of the web page {shot['url']}. Answer the question from what you see; "
              f"name visible controls and any verification challenge.\n\nQuestion: {question}")
    try:
        analysis = _images.ask(ctx, prompt, _images.data_url(*_images.shrink(shot["png"])))
    except (_images.ImageError, HermesError) as exc:
        return _fail(f"vision analysis failed: {exc}", screenshot_path=str(path))
    return json.dumps({"success": True, "analysis": analysis or "The vision model returned no text.",
                       "screenshot_path": str(path)}, ensure_ascii=False)


def _close(args: dict, **kw: Any) -> str:
    return json.dumps({"success": True, "closed": POOL.release(kw["ctx"].task_id)})


_SCHEMA = {s["name"]: s for s in SCHEMAS}
# one page per task: calls run in order; every result may carry the page's words
_TRAITS: dict = {"check_fn": browser_available, "parallel_safe": False, "untrusted_output": True}
_FAMILY: dict = {**_TRAITS, "unlocked_by": "browser_navigate"}  # sent once a page is open: a small first request

registry.register("browser_navigate", "browser", _SCHEMA["browser_navigate"], _navigate, emoji="🌐",
                  preview_arg="url", **_TRAITS)
registry.register("browser_snapshot", "browser", _SCHEMA["browser_snapshot"], _snapshot, emoji="📸", **_FAMILY)
registry.register("browser_click", "browser", _SCHEMA["browser_click"], _click, emoji="👆", preview_arg="ref", **_FAMILY)
registry.register("browser_type", "browser", _SCHEMA["browser_type"], _type, emoji="⌨️", preview_arg="ref", **_FAMILY)
registry.register("browser_scroll", "browser", _SCHEMA["browser_scroll"], _scroll, emoji="📜",
                  preview_arg="direction", **_FAMILY)
registry.register("browser_back", "browser", _SCHEMA["browser_back"], _back, emoji="◀️", **_FAMILY)
registry.register("browser_press", "browser", _SCHEMA["browser_press"], _press, emoji="⌨️", preview_arg="key", **_FAMILY)
registry.register("browser_get_images", "browser", _SCHEMA["browser_get_images"], _get_images, emoji="🖼️", **_FAMILY)
registry.register("browser_vision", "browser", _SCHEMA["browser_vision"], _vision, emoji="👁️", preview_arg="question",
                  needs={"vision"}, **_FAMILY)
registry.register("browser_close", "browser", _SCHEMA["browser_close"], _close, emoji="🚪", **_FAMILY)
