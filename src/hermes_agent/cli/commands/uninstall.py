"""`hermes uninstall [--keep-config] [--yes]`: remove HERMES_HOME (unless kept), then pip-uninstall the
package from this interpreter. Asks first unless --yes; refuses to guess when there is no terminal."""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.settings import Settings

TOLERATES_BROKEN_CONFIG = True  # a broken config must not block removing it


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes uninstall`."""
    p = subparsers.add_parser("uninstall", help="uninstall hermes-agent (and delete HERMES_HOME unless kept)")
    p.add_argument("--keep-config", action="store_true",
                   help="keep HERMES_HOME (config, keys, sessions, memories, skills) for a reinstall")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--dry-run", action="store_true", help="print what would happen and change nothing")


def _unsafe_home(home: Path) -> str | None:
    """Why deleting `home` would be wrong ('' when it is fine)."""
    resolved = home.expanduser().resolve()
    if resolved in (Path("/"), Path.home().resolve()) or len(resolved.parts) < 3:
        return f"refusing to delete {resolved}: HERMES_HOME looks like a system or home directory"
    return None


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Confirm, delete data (unless --keep-config), uninstall the package."""
    from hermes_agent.cli.ask import confirm, interactive

    home = Path(settings.home)
    remove_home = not args.keep_config and home.exists()
    pip = paths.python_module("pip", "uninstall", "-y", "hermes-agent")
    plan = [f"uninstall the hermes-agent package ({shlex.join(pip)})"]
    plan.insert(0, f"delete {home} (config, .env keys, sessions, memories, skills)" if remove_home
                else f"keep {home}")
    print("This will:\n" + "\n".join(f"  - {step}" for step in plan))
    if remove_home and (why := _unsafe_home(home)):
        print(f"hermes uninstall: {why}; use --keep-config and remove it by hand", file=sys.stderr)
        return 2
    if args.dry_run:
        print("dry run: nothing was changed")
        return 0
    if not args.yes:
        if not interactive():
            print("hermes uninstall: not a terminal; pass --yes to confirm", file=sys.stderr)
            return 2
        if not confirm("Continue?", False):
            print("nothing was changed")
            return 1
    if remove_home:
        shutil.rmtree(home)  # before pip: once the package is gone nothing more can be imported
        print(f"deleted {home}")
    code = subprocess.call(pip)
    if code != 0:
        print(f"hermes uninstall: pip exited with status {code}", file=sys.stderr)
        return 1
    print("hermes-agent is uninstalled" + (f"; your data is still in {home}" if not remove_home else ""))
    return 0
