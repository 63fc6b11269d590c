"""`hermes version`: version, Python and install location."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hermes_agent import __version__
from hermes_agent.config.settings import Settings


def add_parser(subparsers) -> None:
    subparsers.add_parser("version", help="show version information")


def run(args: argparse.Namespace, settings: Settings) -> int:
    import hermes_agent

    print(f"hermes-agent {__version__}")
    print(f"python {sys.version.split()[0]} ({sys.executable})")
    print(f"package {Path(hermes_agent.__file__).parent}")
    print(f"home {settings.home}")
    return 0
