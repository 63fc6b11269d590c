"""The dashboard's aiohttp application: routes, the guard middleware, start and stop. Pages live in
sessions.py, ops.py, usage.py, config_page.py and knowledge.py."""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from hermes_agent.config.settings import Settings
from hermes_agent.dashboard import config_page, knowledge, ops, people, sessions, usage
from hermes_agent.dashboard.auth import DashboardConfig, guard, see_other
from hermes_agent.dashboard.state import Home


async def _root(request: web.Request) -> web.Response:
    return see_other("/sessions")


def build_app(home: Home, config: DashboardConfig) -> web.Application:
    """The application: every route behind `guard` (token cookie, CSRF, security headers)."""
    app = web.Application(middlewares=[guard], client_max_size=1024 * 1024)
    from hermes_agent.terminal.sandbox.peer import PeerGuard

    app["home"], app["config"] = home, config
    app["peers"] = PeerGuard()  # no confined process, token or not (terminal/sandbox/peer.py)
    add = app.router.add_get
    add("/", _root)
    add("/sessions", sessions.sessions)
    add("/sessions/{id}", sessions.conversation)
    add("/cron", ops.cron)
    app.router.add_post(r"/cron/{id}/{action:pause|resume|run}", ops.cron_action)
    add("/gateway", ops.gateway)
    add("/usage", usage.usage)
    add("/config", config_page.show)
    app.router.add_post("/config", config_page.update)
    add("/skills", knowledge.skills)
    add("/skills/{name}", knowledge.skill)
    add("/memory", knowledge.memory)
    add("/people", people.people)
    app.router.add_route("*", "/login", _root)  # answered by the guard
    return app


async def serve(settings: Settings, config: DashboardConfig, stop: asyncio.Event, *, open_browser: bool) -> None:
    """Listen until `stop` is set; prints the sign-in URL (with the token) first."""
    config.check()
    home = Home(settings)
    runner = web.AppRunner(build_app(home, config), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    await site.start()
    port = runner.addresses[0][1] if runner.addresses else config.port
    shown = DashboardConfig(config.host, port, config.token, config.fixed)
    url = shown.url("127.0.0.1" if config.host in ("0.0.0.0", "::") else None)
    print(f"hermes dashboard: listening on {url}", flush=True)
    if open_browser:
        import webbrowser

        with contextlib.suppress(webbrowser.Error):
            webbrowser.open(url)
    try:
        await stop.wait()
    finally:
        for child in list(home.children):
            with contextlib.suppress(ProcessLookupError):
                child.terminate()
        await runner.cleanup()
        home.close()
