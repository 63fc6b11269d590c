"""`hermes backup [-o PATH]`: zip the Hermes home (profiles included) in the layout Hermes's
`hermes import` reads; databases copied consistently with SQLite's backup API."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.settings import Settings

EXCLUDED_DIRS = frozenset({
    "hermes-agent", "__pycache__", ".git", "node_modules", "backups", "checkpoints", ".venv", "venv",
    "site-packages", ".cache", ".tox", ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache", "run",
})
EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".db-wal", ".db-shm", ".db-journal", ".db.reserve")  # reserve: storage/db.py
EXCLUDED_NAMES = frozenset({"gateway.pid", "cron.pid"})


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("backup", help="back up the Hermes home to a zip file")
    p.add_argument("-o", "--output", help="zip path or directory (default: <HERMES_HOME>/backups/hermes-backup-<timestamp>.zip, "
                   "where confined work cannot read it)")


def backup_files(root: Path) -> Iterator[tuple[Path, str]]:
    """(absolute path, archive name) of every file worth keeping under `root`."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS)
        for name in sorted(filenames):
            if name in EXCLUDED_NAMES or name.endswith(EXCLUDED_SUFFIXES):
                continue
            full = Path(dirpath) / name
            if full.is_symlink() or not full.is_file():
                continue
            yield full, full.relative_to(root).as_posix()


def _output_path(raw: str | None) -> Path:
    stamp = datetime.now().strftime("%Y-%m-%d-%H%M%S")
    if not raw:
        return paths.backups_dir() / f"hermes-backup-{stamp}.zip"  # not HOME (Hermes 0.19's): rt14 b28
    out = Path(raw).expanduser().resolve()
    if out.is_dir():
        out = out / f"hermes-backup-{stamp}.zip"
    return out if out.suffix.lower() == ".zip" else out.with_suffix(out.suffix + ".zip")


def _add_db(zf: zipfile.ZipFile, src: Path, arcname: str) -> None:
    """A consistent snapshot of a live SQLite database (WAL readers and writers may be active)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        source = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=10)
        try:
            target = sqlite3.connect(copy)
            with target:
                source.backup(target)
            target.close()
        finally:
            source.close()
        zf.write(copy, arcname)


def write_backup(root: Path, out: Path) -> int:
    """Write the zip; returns the number of files stored."""
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for full, arcname in backup_files(root):
            if full.resolve() == out.resolve():
                continue
            try:
                if full.suffix == ".db":
                    _add_db(zf, full, arcname)
                else:
                    zf.write(full, arcname)
            except (OSError, sqlite3.Error) as exc:
                print(f"hermes backup: skipped {arcname}: {exc}", file=sys.stderr)
                continue
            count += 1
    os.chmod(tmp, 0o600)
    os.replace(tmp, out)
    return count


def run(args: argparse.Namespace, settings: Settings) -> int:
    root = paths.hermes_root()
    if not root.is_dir():
        print(f"hermes backup: no Hermes home at {root}", file=sys.stderr)
        return 1
    out = _output_path(args.output)
    count = write_backup(root, out)
    size = out.stat().st_size
    print(f"Backed up {count} files from {root} to {out} ({size / 1_048_576:.1f} MB).")
    print(f"Restore with: hermes import {out}")
    if not paths.is_under(str(out.resolve()), str(root.resolve())) and not out.name.startswith("hermes-backup-"):
        print("Note: this zip holds your keys (.env, auth.json): keep it out of the folders hermes works in, where its "
              "commands could read it (the default, <HERMES_HOME>/backups, is hidden from them).")
    return 0
