"""`hermes import ZIP [-f]`: restore a backup made by `hermes backup` (ours or Hermes's) into the
Hermes home; entries escaping the home and machine-local runtime files are never written."""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from pathlib import Path, PurePosixPath

from hermes_agent import paths
from hermes_agent.config.settings import Settings

MARKERS = frozenset({"config.yaml", ".env", "state.db"})
SKIP_NAMES = frozenset({"gateway_state.json", "gateway.pid", "cron.pid", "gateway.lock", "processes.json"})
SECRET_NAMES = frozenset({".env", "auth.json", "state.db"})


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("import", help="restore a Hermes backup zip into the Hermes home")
    p.add_argument("zipfile", help="path to the backup zip")
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing files without asking")


def _prefix(names: list[str]) -> str:
    """`.hermes/` or `hermes/` when every entry sits under it (a zipped directory)."""
    firsts = {PurePosixPath(n).parts[0] for n in names if len(PurePosixPath(n).parts) > 1}
    tops = {n for n in names if len(PurePosixPath(n).parts) == 1}
    if len(firsts) == 1 and not tops and next(iter(firsts)) in (".hermes", "hermes"):
        return next(iter(firsts)) + "/"
    return ""


def _target(root: Path, rel: str) -> Path | None:
    """Where `rel` goes, or None when it would land outside `root`."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    target = root.joinpath(*pure.parts)
    try:
        target.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return target


def restore(zf: zipfile.ZipFile, root: Path) -> tuple[int, list[str]]:
    """Extract members into `root`; returns (files restored, problems)."""
    names = [n for n in zf.namelist() if not n.endswith("/")]
    prefix = _prefix(names)
    restored, problems = 0, []
    for name in names:
        rel = name[len(prefix):] if prefix and name.startswith(prefix) else name
        if not rel or PurePosixPath(rel).name in SKIP_NAMES or rel.startswith("_external/"):
            continue
        target = _target(root, rel)
        if target is None:
            problems.append(f"{name}: outside the Hermes home, not restored")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".import-tmp")
        with zf.open(name) as src, open(tmp, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        if target.name in SECRET_NAMES:
            os.chmod(tmp, 0o600)
        if target.is_symlink():
            target.unlink()
        os.replace(tmp, target)
        restored += 1
    return restored, problems


def run(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.zipfile).expanduser()
    if not path.is_file() or not zipfile.is_zipfile(path):
        print(f"hermes import: {path} is not a zip file", file=sys.stderr)
        return 1
    root = paths.hermes_root()
    with zipfile.ZipFile(path) as zf:
        if not {PurePosixPath(n).name for n in zf.namelist()} & MARKERS:
            print("hermes import: this zip is not a Hermes backup (no config.yaml, .env or state.db)", file=sys.stderr)
            return 1
        if not args.force and ((root / "config.yaml").exists() or (root / ".env").exists()):
            if not sys.stdin.isatty():
                print(f"hermes import: {root} already has a configuration; pass --force to overwrite", file=sys.stderr)
                return 1
            if input(f"{root} already has a configuration; overwrite it with the backup? [y/N] ").strip().lower() \
                    not in ("y", "yes"):
                print("Aborted.")
                return 1
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        restored, problems = restore(zf, root)
    for problem in problems:
        print(f"hermes import: {problem}", file=sys.stderr)
    print(f"Restored {restored} files into {root}.")
    return 0
