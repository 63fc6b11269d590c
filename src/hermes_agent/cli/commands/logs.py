"""`hermes logs [agent|errors|gateway|mcp] [-n N] [-f] [--level L] [--since 1h] [--session ID]`: read logs."""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.config.settings import Settings

LOG_FILES = {"agent": "agent.log", "errors": "errors.log", "gateway": "gateway.log", "mcp": "mcp/<server>.log"}
_TS = lazyre.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})")
_LEVEL = lazyre.compile(r"\s(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s")
_ORDER = {"DEBUG": 0, "INFO": 1, "WARNING": 2, "ERROR": 3, "CRITICAL": 4}
_SPAN = lazyre.compile(r"^(\d+)\s*([smhd])$")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("logs", help="view and filter log files (agent.log, errors.log, ...)")
    p.add_argument("name", nargs="?", default="agent", help=f"which log: {', '.join(LOG_FILES)} (default agent; mcp: every server's stderr, "
                                                     "the last N lines of each)")
    p.add_argument("-n", "--lines", type=int, default=50, help="how many lines (default 50)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new lines (Ctrl-C stops)")
    p.add_argument("--level", help="only lines at this level or above (DEBUG, INFO, WARNING, ERROR)")
    p.add_argument("--since", help="only lines newer than this (30m, 2h, 1d)")
    p.add_argument("--session", help="only lines mentioning this session id")
    p.add_argument("--component", help="only lines whose logger name starts with this (tools, gateway, ...)")


def parse_since(text: str | None) -> datetime | None:
    """`30m`/`2h`/`1d` as the datetime that long ago (None when not given)."""
    if not text:
        return None
    m = _SPAN.match(text.strip().lower())
    if not m:
        raise ValueError(f"--since expects a span such as 30m, 2h or 1d, got {text!r}")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m.group(2)]
    return datetime.now() - timedelta(**{unit: int(m.group(1))})


def line_filter(args: argparse.Namespace):
    """A predicate over log lines built from the flags."""
    since = parse_since(args.since)
    floor = _ORDER.get((args.level or "").upper(), -1) if args.level else -1
    if args.level and floor < 0:
        raise ValueError(f"--level expects one of {', '.join(_ORDER)}, got {args.level!r}")

    def keep(line: str) -> bool:
        if since is not None:
            m = _TS.match(line)
            if m is None or datetime.fromisoformat(m.group(1).replace("T", " ")) < since:
                return False
        if floor >= 0:
            m = _LEVEL.search(line)
            if m is None or _ORDER[m.group(1)] < floor:
                return False
        if args.session and args.session not in line:
            return False
        if args.component:
            m = _LEVEL.search(line)
            rest = line[m.end():] if m else ""
            if not rest.startswith((args.component, f"hermes_agent.{args.component}")):
                return False
        return True

    return keep


def _tail(lines: Iterable[str], keep, n: int) -> list[str]:
    return list(deque((ln for ln in lines if keep(ln)), maxlen=max(n, 0)))


def _sources(home: Path, name: str) -> list[tuple[str, Path]]:
    """(label, file) pairs to read: one log, or for `mcp` every server's stderr log (logs/mcp/<server>.log, the
    file hermes's warnings name), each line labelled with its server."""
    logs = home / "logs"
    if name != "mcp":
        return [("", logs / LOG_FILES[name])]
    folder = logs / "mcp"
    files = sorted(folder.glob("*.log")) if folder.is_dir() else []
    return [(f"[{p.stem}] ", p) for p in files if p.is_file() and not p.is_symlink()]


def _out(label: str, line: str) -> None:
    """A log line as text: whatever a tool or server wrote never drives the terminal (termsafe)."""
    from hermes_agent.termsafe import visible

    sys.stdout.write(label + visible(line if line.endswith("\n") else line + "\n"))


def run(args: argparse.Namespace, settings: Settings) -> int:
    name = args.name if args.name in LOG_FILES else None
    if name is None:
        print(f"hermes logs: unknown log {args.name!r} (choose one of: {', '.join(LOG_FILES)})", file=sys.stderr)
        return 2
    try:
        keep = line_filter(args)
    except ValueError as exc:
        print(f"hermes logs: {exc}", file=sys.stderr)
        return 2
    sources = [(label, path) for label, path in _sources(Path(settings.home), name) if path.exists()]
    if not sources:
        where = Path(settings.home) / "logs" / LOG_FILES[name]
        print(f"No {LOG_FILES[name]} yet ({where}).")
        return 0
    handles = [(label, open(path, encoding="utf-8", errors="replace")) for label, path in sources]
    try:
        for label, fh in handles:
            for line in _tail(fh, keep, args.lines):
                _out(label, line)
        if args.follow:
            sys.stdout.flush()
            _follow_all(handles, keep)
    except KeyboardInterrupt:
        return 0
    finally:
        for _, fh in handles:
            fh.close()
    return 0


def _follow_all(handles: list, keep) -> None:
    """Print lines as they are added to any of the files, until Ctrl-C."""
    while True:
        idle = True
        for label, fh in handles:
            while line := fh.readline():
                idle = False
                if keep(line):
                    _out(label, line)
        sys.stdout.flush()
        if idle:
            time.sleep(0.2)
