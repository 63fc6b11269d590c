"""`hermes api`: run the OpenAI-compatible API server in the foreground (API_SERVER_HOST, API_SERVER_PORT,
API_SERVER_KEY, API_SERVER_MODEL_NAME from the environment or .env; flags override)."""

from __future__ import annotations

import argparse
import os
import sys

from hermes_agent import paths
from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes api`."""
    p = subparsers.add_parser("api", help="Serve the agent as an OpenAI-compatible API (/v1/chat/completions)")
    p.add_argument("--host", help="listen address (default: API_SERVER_HOST or 127.0.0.1)")
    from hermes_agent.cli.commands.dashboard import port_number

    p.add_argument("--port", type=port_number, help="port (default: API_SERVER_PORT or 8642)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until SIGINT/SIGTERM; a refused configuration is one line on stderr and exit 2."""
    try:
        from hermes_agent.api.conversations import ConversationPool
        from hermes_agent.api.server import ApiConfig, ApiConfigError, serve
    except ImportError:
        print(f"hermes api: aiohttp is not installed ({paths.install_hint('gateway')})", file=sys.stderr)
        return 1
    try:
        config = ApiConfig.from_env(settings.env, (settings.cfg.platforms.get("api_server") or {}).get("extra"),
                                    host=args.host, port=args.port)
        config.check()
    except ApiConfigError as exc:
        print(f"hermes api: {exc}", file=sys.stderr)
        return 2

    from hermes_agent.cli.serving import serve_until_signal

    try:
        serve_until_signal(lambda stop: serve(ConversationPool(settings), config, stop))
    except OSError as exc:  # the port is taken, the address is not ours, ...
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        print(f"hermes api: cannot listen on {config.host}:{config.port}: {why}", file=sys.stderr)
        return 1
    return 0
