"""`hermes completion bash|zsh|fish`: print a completion script built from the real argparse tree."""

from __future__ import annotations

import argparse

from hermes_agent.config.settings import Settings

TOLERATES_BROKEN_CONFIG = True  # printing a script needs no config


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes completion`."""
    p = subparsers.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"))


def run(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.completion_gen import GENERATORS, walk
    from hermes_agent.cli.main import build_parser

    print(GENERATORS[args.shell](walk(build_parser())), end="")
    return 0
