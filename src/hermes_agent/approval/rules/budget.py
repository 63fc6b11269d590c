"""One judgement's time budget: the evaluator runs unconfined inside hermes, on text a model wrote, so a
command that makes it loop or grow (`x=$x$x` x40, `${x//?/$x}`, a pattern strip over a long value) must end
in a verdict, not in a hung or swapping hermes. `budget()` opens a deadline for the judgement (nested calls
keep the outer one); `check()` raises Unfinished past it, `too_large()` before a value past MAX_VALUE_CHARS is
built; the caller turns that into a finding that asks (fail closed: "a safety check could not finish"). Pure: a monotonic clock and a context variable."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

BUDGET_S = 3.0
MAX_VALUE_CHARS = 65_536  # a variable's value (or one expanded word) longer than this is "unknown"
UNFINISHED_KEY = "check_unfinished"
UNFINISHED = "a safety check could not finish in its time budget (the command makes the checker's work grow)"
_deadline: ContextVar[float | None] = ContextVar("hermes_rules_deadline", default=None)


TOO_LARGE = (f"a value the command builds grows past {MAX_VALUE_CHARS} characters: the safety check does not "
             "model it (`x=$x$x` repeated, `${x//?/$x}`)")


class Unfinished(Exception):
    """The judgement ran past its budget, or a value past its size cap (args[0]: why, for the user)."""


def too_large(size: int) -> None:
    """Raise Unfinished when a value of `size` characters would pass the cap (before it is built)."""
    if size > MAX_VALUE_CHARS:
        raise Unfinished(TOO_LARGE)


@contextmanager
def budget(seconds: float = BUDGET_S) -> Iterator[None]:
    """A deadline for the judgement inside the block (an enclosing one, if any, stays in force)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def check() -> None:
    """Raise Unfinished when the current judgement is past its deadline."""
    deadline = _deadline.get()
    if deadline is not None and time.monotonic() > deadline:
        raise Unfinished
