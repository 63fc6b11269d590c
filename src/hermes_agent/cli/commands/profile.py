"""`hermes profile list|use|create|delete|show`: separate Hermes homes under <root>/profiles/<name>,
with the sticky default in <root>/active_profile (Hermes's layout); `hermes -p NAME` picks one per run."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.settings import Settings

CLONED = ("config.yaml", ".env", "SOUL.md")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("profile", help="separate Hermes homes: list, use, create, delete, show")
    sub = p.add_subparsers(dest="profile_cmd", metavar="ACTION")
    sub.add_parser("list", help="list profiles (* marks the active one)")
    use = sub.add_parser("use", help="make a profile the default for every run ('default' for the main home)")
    use.add_argument("name")
    create = sub.add_parser("create", help="create a profile")
    create.add_argument("name")
    create.add_argument("--clone", action="store_true", help="copy config.yaml, .env and SOUL.md of the current home")
    delete = sub.add_parser("delete", help="delete a profile and everything in it")
    delete.add_argument("name")
    delete.add_argument("-y", "--yes", action="store_true", help="do not ask")
    show = sub.add_parser("show", help="where a profile lives and what it holds")
    show.add_argument("name", nargs="?")


def profile_home(name: str, root: Path | None = None) -> Path:
    """The home of profile `name` ('default' is the root itself); raises ValueError on a bad name."""
    root = root or paths.hermes_root()
    if name == "default":
        return root
    if not re.fullmatch(paths.PROFILE_NAME, name):
        raise ValueError(f"invalid profile name {name!r} (lowercase letters, digits, - and _; at most 64)")
    return root / "profiles" / name


def active(root: Path) -> str:
    try:
        name = (root / "active_profile").read_text(encoding="utf-8").strip()
    except OSError:
        return "default"
    return name if name and (root / "profiles" / name).is_dir() else "default"


def names(root: Path) -> list[str]:
    base = root / "profiles"
    return ["default", *sorted(p.name for p in base.iterdir() if p.is_dir())] if base.is_dir() else ["default"]


def _list(root: Path) -> int:
    current = active(root)
    for name in names(root):
        print(f"{'*' if name == current else ' '} {name:<20} {profile_home(name, root)}")
    return 0


def _use(root: Path, name: str) -> int:
    home = profile_home(name, root)
    if not home.is_dir():
        print(f"hermes profile: no profile {name!r} (create it with: hermes profile create {name})", file=sys.stderr)
        return 1
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    (root / "active_profile").write_text(f"{name}\n", encoding="utf-8")
    print(f"Active profile: {name} ({home})")
    return 0


def _create(root: Path, name: str, clone: bool, current: Path) -> int:
    home = profile_home(name, root)
    if name == "default" or home.exists():
        print(f"hermes profile: {name!r} already exists", file=sys.stderr)
        return 1
    home.mkdir(parents=True, mode=0o700)
    if clone:
        for item in CLONED:
            if (current / item).is_file():
                shutil.copy2(current / item, home / item)
    print(f"Created profile {name} at {home}. Use it with: hermes -p {name}  (or: hermes profile use {name})")
    return 0


def _delete(root: Path, name: str, yes: bool) -> int:
    home = profile_home(name, root)
    if name == "default" or not home.is_dir():
        print(f"hermes profile: cannot delete {name!r}", file=sys.stderr)
        return 1
    if not yes:
        if not sys.stdin.isatty():
            print("hermes profile: pass --yes to delete without a terminal", file=sys.stderr)
            return 1
        if input(f"Delete profile {name} and everything in {home}? [y/N] ").strip().lower() not in ("y", "yes"):
            return 1
    shutil.rmtree(home)
    if active(root) == "default":
        (root / "active_profile").unlink(missing_ok=True)
    print(f"Deleted profile {name}.")
    return 0


def _show(root: Path, name: str) -> int:
    home = profile_home(name, root)
    if not home.is_dir():
        print(f"hermes profile: no profile {name!r}", file=sys.stderr)
        return 1
    print(f"{name}: {home}")
    for item in ("config.yaml", ".env", "SOUL.md", "state.db", "memories", "skills"):
        print(f"  {item:<12} {'yes' if (home / item).exists() else '-'}")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    root = paths.hermes_root()
    action = getattr(args, "profile_cmd", None) or "list"
    try:
        if action == "list":
            return _list(root)
        if action == "use":
            return _use(root, args.name)
        if action == "create":
            return _create(root, args.name, args.clone, Path(settings.home))
        if action == "delete":
            return _delete(root, args.name, args.yes)
        return _show(root, args.name or active(root))
    except ValueError as exc:
        print(f"hermes profile: {exc}", file=sys.stderr)
        return 2
