"""`hermes gateway run|start|stop|restart|status|install|uninstall`: the messaging gateway and its service."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time

from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes gateway ...`."""
    p = subparsers.add_parser("gateway", help="Messaging gateway (Telegram, Discord, Slack, WhatsApp): run it, install it as a service, see its status")
    sub = p.add_subparsers(dest="gateway_command", metavar="ACTION")
    run = sub.add_parser("run", help="Run the gateway in the foreground (Ctrl+C stops it)")
    run.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub.add_parser("status", help="Platforms, connected or not, sessions, last error")
    sub.add_parser("start", help="Run the gateway in the background (the systemd unit when installed, else a pid file)")
    sub.add_parser("stop", help="Stop the background gateway")
    sub.add_parser("restart", help="Stop, then start the background gateway")
    inst = sub.add_parser("install", help="Install the systemd user unit (hermes-gateway) and enable it")
    inst.add_argument("--force", action="store_true", help="rewrite the unit even if it is current")
    sub.add_parser("uninstall", help="Disable and remove the systemd user unit")


def run(args: argparse.Namespace, settings: Settings) -> int:
    action = getattr(args, "gateway_command", None) or "run"
    if action == "status":
        return _status()
    if action in ("start", "stop", "restart", "install", "uninstall"):
        from hermes_agent.cli.commands import gateway_service as svc

        if action == "install":
            return svc.install(force=getattr(args, "force", False))
        return svc.uninstall() if action == "uninstall" else svc.control(action)
    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:  # found, not imported: each adapter imports what it needs
        from hermes_agent.paths import install_hint

        print(f"hermes gateway needs the gateway extra: {install_hint('gateway')}", file=sys.stderr)
        return 1
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from hermes_agent.gateway.runner import run_gateway

    return run_gateway(settings)


def _status() -> int:
    from hermes_agent.gateway.runner import state_path

    try:
        state = json.loads(state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print("Gateway: not running (it never ran here).")
        return 1
    from hermes_agent.cli.commands.gateway_service import service_name, systemd_managed, unit_path
    from hermes_agent.paths import pid_alive as alive

    running = state.get("running") and alive(int(state.get("pid", 0)))
    age = time.time() - float(state.get("updated_at", 0))
    print(f"Gateway: {'running' if running else 'stopped'} (pid {state.get('pid')}, state {age:.0f} s old)")
    for name, info in (state.get("platforms") or {}).items():
        conn = "connected" if info.get("connected") and running else "not connected"
        bot = f" as @{info['bot']}" if info.get("bot") else ""
        print(f"  {name}: {conn}{bot}; unanswered {info.get('unanswered', 0)}")
        if info.get("last_error"):
            print(f"    last error: {info['last_error']}")
    print(f"Sessions: {state.get('sessions', 0)} ({state.get('busy', 0)} working)")
    cron = state.get("cron") or {}
    if cron:
        print(f"Cron: {'ticking' if cron.get('running') and running else 'stopped'}; {cron.get('runs', 0)} run(s)"
              + (f", last {cron['last']}" if cron.get("last") else ""))
    if state.get("api_server"):
        print(f"API server: http://{state['api_server']}/v1")
    if unit_path().is_file():
        print(f"Service: systemd user unit {service_name()} ({'managed' if systemd_managed() else 'no user systemd here'})")
    return 0 if running else 1
