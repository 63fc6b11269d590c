"""`hermes checkpoints list|diff|restore|rollback`: inspect and restore the shadow-git snapshots taken
before the agent changed files."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.memory.ctxledger import restoring
from hermes_agent.storage.checkpoints import CheckpointStore, RestoreResult


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes checkpoints ...`."""
    p = subparsers.add_parser("checkpoints", help="List, diff and restore file checkpoints")
    sub = p.add_subparsers(dest="checkpoints_command", metavar="ACTION")
    ls = sub.add_parser("list", help="Checkpoints of a directory, newest first")
    ls.add_argument("dir", nargs="?", default=".", help="Working directory (default: current)")
    ls.add_argument("--all", action="store_true", help="Every directory that has checkpoints")
    diff = sub.add_parser("diff", help="Changes from a checkpoint to the directory now")
    diff.add_argument("id", help="Checkpoint id (a unique prefix is enough)")
    diff.add_argument("dir", nargs="?", default=".")
    diff.add_argument("--stat", action="store_true", help="Only a per-file summary")
    rs = sub.add_parser("restore", help="Restore files from a checkpoint (a safety snapshot is taken first)")
    rs.add_argument("id")
    rs.add_argument("dir", nargs="?", default=".")
    rs.add_argument("--path", help="Only this file or directory (relative to DIR)")
    rb = sub.add_parser("rollback", help="Undo the last N recorded change sets")
    rb.add_argument("n", nargs="?", type=int, default=1)
    rb.add_argument("dir", nargs="?", default=".")


def store_from_settings(settings: Settings) -> CheckpointStore:
    """The checkpoint store configured by `checkpoints.*`."""
    return CheckpointStore(max_snapshots=settings.cfg.checkpoints.max_snapshots,
                           env=dict(settings.env) if settings.env else None)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes checkpoints` action; problems become one line on stderr and exit code 1."""
    action = getattr(args, "checkpoints_command", None) or "list"
    store = store_from_settings(settings)
    try:
        if action == "list":
            return _list(store, getattr(args, "dir", "."), getattr(args, "all", False))
        if action == "diff":
            sys.stdout.write(store.diff(args.dir, args.id, stat=args.stat) or "no differences\n")
            return 0
        with restoring(settings.home, os.path.realpath(args.dir)):  # restored context files: held unless vouched
            if action == "restore":
                result = store.restore(args.dir, args.id, args.path)
            else:
                result = store.rollback(args.dir, args.n)
        return _report(result)
    except HermesError as exc:
        print(f"hermes checkpoints: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the ledger could not be written: nothing was restored (restoring() comes first)
        print(f"hermes checkpoints: cannot record the restore in the context-file ledger: {exc.strerror or exc}",
              file=sys.stderr)
        return 1


def _list(store: CheckpointStore, directory: str, every: bool) -> int:
    dirs = store.workdirs() if every else [os.path.realpath(directory)]
    if not dirs:
        print("no checkpoints yet")
        return 0
    for wd in dirs:
        items = store.list(wd)
        if every or not items:
            print(f"{wd}: {len(items)} checkpoint(s)")
        for cp in items if not every else items[:5]:
            when = datetime.fromtimestamp(cp.created).strftime("%Y-%m-%d %H:%M:%S")
            mark = " (safety)" if cp.safety else ""
            print(f"  {cp.short}  {when}  {cp.reason}{mark}")
    return 0


def _report(result: RestoreResult) -> int:
    scope = f" ({result.path})" if result.path else ""
    print(f"restored checkpoint {result.restored[:10]}{scope}")
    if result.removed:
        print(f"removed {len(result.removed)} file(s) created since: {', '.join(result.removed[:10])}")
    if result.kept:
        from hermes_agent.termsafe import one_line

        shown = ", ".join(one_line(p) for p in result.kept[:5])
        print(f"kept {len(result.kept)} overwritten file(s) no checkpoint could hold: {shown}")
    if result.safety_id:
        print(f"the previous state is saved as checkpoint {result.safety_id[:10]} "
              f"(undo with `hermes checkpoints restore {result.safety_id[:10]}`)")
    return 0
