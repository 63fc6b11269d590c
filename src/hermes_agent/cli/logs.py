"""Logging for every `hermes` command: details (with tracebacks) to $HERMES_HOME/logs/agent.log;
optionally a one-line `hermes: warning: ...` on stderr for one-shot runs. Never a traceback on screen.

Both set up as `logging` loads (hermes_agent/lazylog.py): a run that logs nothing never imports it."""

from __future__ import annotations

import sys

from hermes_agent import lazylog, paths

_MAX_LOG_BYTES = 5_000_000
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the layout Hermes's `hermes logs` reads


def setup_logging() -> None:
    """Route library logs to agent.log (rotated once past 5 MB) from when `logging` loads; idempotent."""
    lazylog.when_loaded(_setup)


def _setup() -> None:
    import logging

    root = logging.getLogger()
    if any(getattr(h, "_hermes", False) for h in root.handlers):
        return
    try:
        directory = paths.logs_dir()
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "agent.log"
        if path.exists() and path.stat().st_size > _MAX_LOG_BYTES:
            path.replace(path.with_suffix(".log.1"))
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter(_FORMAT))
        errors: logging.Handler = logging.FileHandler(directory / "errors.log", encoding="utf-8", delay=True)
        errors.setFormatter(logging.Formatter(_FORMAT))
        errors.setLevel(logging.WARNING)
    except OSError:
        handler = errors = logging.NullHandler()
    for h in (handler, errors):
        h._hermes = True  # type: ignore[attr-defined]
        root.addHandler(h)
    root.setLevel(logging.INFO)


def warnings_to_stderr() -> None:
    """Also show WARNING and above as one line on stderr (one-shot runs; the REPL draws its own)."""
    lazylog.when_loaded(_warnings_to_stderr)


def _warnings_to_stderr() -> None:
    import logging

    class _OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return f"hermes: {record.levelname.lower()}: {record.getMessage().splitlines()[0]}"

    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_OneLine())
    logging.getLogger("hermes_agent").addHandler(handler)
