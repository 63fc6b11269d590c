"""`hermes update`: upgrade the package with pip in this interpreter (only when the user runs it), then
migrate config.yaml with the NEW code in a fresh process. A source checkout is left to git."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys

from hermes_agent import paths
from hermes_agent.config.settings import Settings

TOLERATES_BROKEN_CONFIG = True  # upgrading may be exactly what fixes a config problem


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes update`."""
    p = subparsers.add_parser("update", help="upgrade hermes-agent with pip, then migrate config.yaml")
    p.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    p.add_argument("--no-migrate", action="store_true", help="skip `hermes config migrate` afterwards")


def source_checkout() -> str | None:
    """The project directory when hermes-agent is installed editable / from a local path (PEP 610)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        raw = distribution("hermes-agent").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except ValueError:
        return None
    url = str(info.get("url", ""))
    if (info.get("dir_info") or {}).get("editable") or url.startswith("file://"):
        return url.removeprefix("file://") or "a local directory"
    return None


def _run(cmd: list[str], dry_run: bool) -> int:
    print(f"{'would run' if dry_run else 'running'}: {shlex.join(cmd)}", flush=True)
    return 0 if dry_run else subprocess.call(cmd)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Upgrade (pip) and migrate; prints each command before running it."""
    checkout = source_checkout()
    if checkout:
        print(f"hermes-agent is installed from a source checkout ({checkout}): update it there with "
              "`git pull` (pip would replace your checkout); skipping the upgrade")
    else:
        code = _run(paths.python_module("pip", "install", "--upgrade", "hermes-agent"), args.dry_run)
        if code != 0:
            print(f"hermes update: pip exited with status {code}; nothing else was changed", file=sys.stderr)
            return 1
    if args.no_migrate:
        return 0
    migrate = paths.python_module("hermes_agent", "config", "migrate")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        migrate.append("--non-interactive")
    code = _run(migrate, args.dry_run)
    return 0 if code == 0 else 1
