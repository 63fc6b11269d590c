"""Which tool calls confined code asked for (imported where first needed: a context variable costs the
start-up two modules)."""

from __future__ import annotations

from contextvars import ContextVar

# Set (to the tool's name, e.g. "execute_code") while a call that confined code asked for runs: execute_code's
# script calling tools over its RPC socket. Such a call is the confined side's: the network counters are read
# before it runs, and its writes are judged like the script's own (not vouched for, not trusted by the
# run-later guard). A context variable: the file tools' worker threads copy it (files.bounded).
CONFINED_ORIGIN: ContextVar[str] = ContextVar("hermes_confined_origin", default="")
