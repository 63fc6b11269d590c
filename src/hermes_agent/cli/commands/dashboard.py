"""`hermes dashboard [--host H] [--port N] [--no-open]`: the web dashboard in the foreground (port 9119 as in
Hermes; DASHBOARD_TOKEN or `dashboard.token` fixes the token, else a random one is printed per start)."""

from __future__ import annotations

import argparse
import sys

from hermes_agent import paths
from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes dashboard`."""
    p = subparsers.add_parser("dashboard", help="Start the web dashboard (sessions, cron, usage, config)",
                              description="A token-protected web dashboard for sessions, cron jobs, the gateway, "
                                          "usage, config, skills and memory")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, help="port (default dashboard.port or 9119; 0 picks a free one)")
    p.add_argument("--no-open", action="store_true", help="don't open a browser")


def port_number(text: str) -> int:
    """argparse type: a TCP port 0-65535 (a bigger one is a usage error, not a traceback from bind)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is out of range 0-65535")
    return value


def _has_gui(settings: Settings) -> bool:
    """Open a browser only for someone at a terminal with a desktop (never a text browser over the shell)."""
    desktop = sys.platform in ("darwin", "win32") or any(settings.env.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY"))
    return desktop and sys.stdout.isatty()


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until SIGINT/SIGTERM; a refused configuration is one line on stderr and exit 2."""
    try:
        from hermes_agent.dashboard.auth import DashboardConfig, DashboardConfigError
        from hermes_agent.dashboard.server import serve
    except ImportError:
        print(f"hermes dashboard: aiohttp is not installed ({paths.install_hint('gateway')})", file=sys.stderr)
        return 1
    token = settings.env.get("DASHBOARD_TOKEN", "") or settings.cfg.dashboard.token
    port = settings.cfg.dashboard.port if args.port is None else args.port
    config = DashboardConfig.make(args.host, port, token)
    try:
        config.check()
    except DashboardConfigError as exc:
        print(f"hermes dashboard: {exc}", file=sys.stderr)
        return 2

    from hermes_agent.cli.serving import serve_until_signal

    gui = not args.no_open and _has_gui(settings)
    try:
        serve_until_signal(lambda stop: serve(settings, config, stop, open_browser=gui))
    except OSError as exc:
        print(f"hermes dashboard: cannot listen on {args.host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0
