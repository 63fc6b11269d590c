"""`hermes acp`: serve editors (Zed, JetBrains, ...) over the Agent Client Protocol on stdio."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys

from hermes_agent import paths
from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes acp`."""
    p = subparsers.add_parser("acp", help="Serve editors over the Agent Client Protocol (stdio)")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")


def run(args: argparse.Namespace, settings: Settings) -> int:
    if importlib.util.find_spec("acp") is None:
        print(f"hermes acp needs the acp extra: {paths.install_hint('acp')}", file=sys.stderr)
        return 1
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if args.verbose else logging.WARNING)
    from hermes_agent.acpserver.server import serve

    return serve(settings)
