"""`hermes gateway run|status`: the messaging gateway in the foreground, and what it is doing."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes gateway ...`."""
    p = subparsers.add_parser("gateway", help="Messaging gateway (Telegram): run it, see its status")
    sub = p.add_subparsers(dest="gateway_command", metavar="ACTION")
    run = sub.add_parser("run", help="Run the gateway in the foreground (Ctrl+C stops it)")
    run.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub.add_parser("status", help="Platforms, connected or not, sessions, last error")


def run(args: argparse.Namespace, settings: Settings) -> int:
    action = getattr(args, "gateway_command", None) or "run"
    if action == "status":
        return _status()
    try:
        import telegram  # noqa: F401
    except ImportError:
        from hermes_agent.paths import install_hint

        print(f"hermes gateway needs the gateway extra: {install_hint('gateway')}", file=sys.stderr)
        return 1
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from hermes_agent.gateway.runner import run_gateway

    return run_gateway(settings)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _status() -> int:
    from hermes_agent.gateway.runner import state_path

    try:
        state = json.loads(state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print("Gateway: not running (it never ran here).")
        return 1
    running = state.get("running") and _alive(int(state.get("pid", 0)))
    age = time.time() - float(state.get("updated_at", 0))
    print(f"Gateway: {'running' if running else 'stopped'} (pid {state.get('pid')}, state {age:.0f} s old)")
    for name, info in (state.get("platforms") or {}).items():
        conn = "connected" if info.get("connected") and running else "not connected"
        bot = f" as @{info['bot']}" if info.get("bot") else ""
        print(f"  {name}: {conn}{bot}; unanswered {info.get('unanswered', 0)}")
        if info.get("last_error"):
            print(f"    last error: {info['last_error']}")
    print(f"Sessions: {state.get('sessions', 0)} ({state.get('busy', 0)} working)")
    return 0 if running else 1
