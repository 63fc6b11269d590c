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
    sub.add_parser("start", help="Run the gateway in the background (pid file; log in HERMES_HOME/logs/gateway.log)")
    sub.add_parser("stop", help="Stop the background gateway")
    sub.add_parser("restart", help="Stop, then start the background gateway")


def run(args: argparse.Namespace, settings: Settings) -> int:
    action = getattr(args, "gateway_command", None) or "run"
    if action == "status":
        return _status()
    if action in ("start", "stop", "restart"):
        return _service(action)
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


def _pid_file():  # type: ignore[no-untyped-def]
    from hermes_agent.gateway.delivery import gateway_dir

    return gateway_dir() / "gateway.pid"


def _running_pid() -> int | None:
    try:
        pid = int(_pid_file().read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _service(action: str) -> int:
    """A background gateway tracked by a pid file (no systemd unit yet)."""
    import signal
    import subprocess

    from hermes_agent import paths

    pid = _running_pid()
    if action in ("stop", "restart"):
        if pid is None and action == "stop":
            print("Gateway: not running.")
            return 1
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            deadline = time.time() + 30
            while _alive(pid) and time.time() < deadline:
                time.sleep(0.1)
            print(f"Gateway stopped (pid {pid}).")
            pid = None
        if action == "stop":
            return 0
    if pid is not None:
        print(f"Gateway: already running (pid {pid}).")
        return 0
    log_path = paths.logs_dir() / "gateway.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "hermes_agent", "gateway", "run"], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    _pid_file().parent.mkdir(parents=True, exist_ok=True)
    _pid_file().write_text(str(proc.pid))
    print(f"Gateway started (pid {proc.pid}); log: {log_path}")
    return 0


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
    cron = state.get("cron") or {}
    if cron:
        print(f"Cron: {'ticking' if cron.get('running') and running else 'stopped'}; {cron.get('runs', 0)} run(s)"
              + (f", last {cron['last']}" if cron.get("last") else ""))
    if state.get("api_server"):
        print(f"API server: http://{state['api_server']}/v1")
    return 0 if running else 1
