"""Who may use the dashboard: one token (fixed by DASHBOARD_TOKEN / `dashboard.token`, else random per start),
traded once via `/?token=` or the login form for an HttpOnly SameSite=Strict cookie; POSTs also need the
CSRF field and a same-origin Origin. Every response gets a strict Content-Security-Policy (no scripts)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlencode

from aiohttp import web

from hermes_agent.config.listen import bind_refusal, host_allowed
from hermes_agent.dashboard.html import CSS_HASH, Safe, esc, page

COOKIE = "hermes_dashboard"
PUBLIC = ("/login", "/favicon.ico")
CSP = (f"default-src 'none'; style-src '{CSS_HASH}'; img-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


class DashboardConfigError(ValueError):
    """The dashboard refuses to start with this configuration (the message says why)."""


@dataclass(frozen=True, slots=True)
class DashboardConfig:
    """Where to listen and the token; `fixed` is False for a random per-start token."""

    host: str = "127.0.0.1"
    port: int = 9119
    token: str = ""
    fixed: bool = False

    @classmethod
    def make(cls, host: str, port: int, configured_token: str) -> DashboardConfig:
        token = configured_token.strip()
        return cls(host, port, token or secrets.token_urlsafe(24), bool(token))

    def check(self) -> None:
        """Refuse a non-loopback host unless a fixed token of 16+ characters was configured."""
        refusal = bind_refusal(self.host, self.token if self.fixed else "", "DASHBOARD_TOKEN (or dashboard.token)",
                               "read your sessions and change your config")
        if refusal:
            raise DashboardConfigError(refusal)

    def _derive(self, purpose: str) -> str:
        return hmac.new(self.token.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    @property
    def cookie_value(self) -> str:
        return self._derive("cookie")

    @property
    def csrf(self) -> str:
        """The value every POST form carries (derived from the token: a third-party page cannot know it)."""
        return self._derive("csrf")

    def url(self, shown_host: str | None = None) -> str:
        host = shown_host or self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/?token={self.token}"


def see_other(location: str) -> web.Response:
    """303 to `location` (after a POST, or to drop the token from the address bar)."""
    return web.Response(status=303, headers={"Location": location})


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def _login_page(message: str = "") -> web.Response:
    err = Safe(f'<div class="err">{esc(message)}</div>') if message else ""
    body = Safe(f'{esc(err)}<p>Open the link <code>hermes dashboard</code> printed, or paste its token.</p>'
                '<form method="post" action="/login"><input type="password" name="token" autocomplete="off" '
                'aria-label="token" autofocus> <button type="submit">Sign in</button></form>')
    return web.Response(text=page("Sign in", body), content_type="text/html", status=401)


def _with_cookie(resp: web.StreamResponse, config: DashboardConfig) -> web.StreamResponse:
    resp.set_cookie(COOKIE, config.cookie_value, httponly=True, samesite="Strict", path="/")
    return resp


def _origin_ok(request: web.Request) -> bool:
    """A POST must come from one of our own pages (browsers send Origin on every POST form)."""
    origin = request.headers.get("Origin")
    return bool(origin) and origin == f"{request.scheme}://{request.host}"


async def _login(request: web.Request, config: DashboardConfig) -> web.StreamResponse:
    if request.method != "POST":
        return _login_page()
    if not _origin_ok(request):
        return web.Response(status=403, text="cross-origin request refused")
    form = await request.post()
    if not _same(str(form.get("token", "")), config.token):
        return _login_page("That token is not the one this dashboard printed.")
    return _with_cookie(see_other("/sessions"), config)


async def _check(request: web.Request, handler) -> web.StreamResponse:  # type: ignore[no-untyped-def]
    config: DashboardConfig = request.app["config"]
    if not host_allowed(request.headers.get("Host"), config.host):  # DNS rebinding: exact names only
        return web.Response(status=403, text="unexpected Host header; open the address hermes dashboard printed")
    why = await request.app["peers"].refusal(request.transport)
    if why:  # the token could leak into the sandbox (a browser's command line is readable under Landlock, a21)
        resp = web.Response(status=403, text=f"hermes dashboard refused this client: {why}")
        resp.force_close()
        return resp
    if request.path == "/favicon.ico":
        return web.Response(status=204)
    if request.path == "/login":
        return await _login(request, config)
    if "token" in request.query:
        if not _same(request.query["token"], config.token):
            return _login_page("That token is not the one this dashboard printed.")
        rest = {k: v for k, v in request.query.items() if k != "token"}
        path = "/" + request.path.lstrip("/\\")  # never `//host` or a backslash form: browsers read both as another site
        return _with_cookie(see_other(path + ("?" + urlencode(rest) if rest else "")), config)
    if not _same(request.cookies.get(COOKIE, ""), config.cookie_value):
        return _login_page() if request.method == "GET" else web.Response(status=401, text="sign in first")
    if request.method == "POST":
        if not _origin_ok(request):
            return web.Response(status=403, text="cross-origin request refused")
        form = await request.post()
        if not _same(str(form.get("csrf", "")), config.csrf):
            return web.Response(status=403, text="missing or wrong form token; reload the page")
    return await handler(request)


@web.middleware
async def guard(request: web.Request, handler) -> web.StreamResponse:  # type: ignore[no-untyped-def]
    """Authentication, CSRF, and the security headers on whatever comes back (errors included)."""
    try:
        resp = await _check(request, handler)
    except web.HTTPException as exc:
        resp = exc
    resp.headers.update({"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                         "Referrer-Policy": "same-origin", "Cache-Control": "no-store", "X-Frame-Options": "DENY"})
    return resp
