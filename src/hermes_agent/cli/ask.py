"""Plain terminal questions for the management commands (input()/getpass; no full-screen UI)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hermes_agent.errors import HermesError


class Aborted(HermesError):
    """The user closed input (Ctrl-D) in the middle of a question."""


def interactive() -> bool:
    """True when both stdin and stdout are terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _read(prompt: str, secret: bool) -> str:
    try:
        if secret:
            import getpass

            return getpass.getpass(prompt)
        return input(prompt)
    except EOFError:
        print()
        raise Aborted("input closed; nothing more was changed") from None


def ask(label: str, default: str = "", *, secret: bool = False, shown_default: str | None = None) -> str:
    """Ask one question; Enter keeps `default` (shown as `shown_default`, e.g. a masked key)."""
    shown = default if shown_default is None else shown_default
    suffix = f" [{shown}]" if shown else ""
    answer = _read(f"{label}{suffix}: ", secret).strip()
    return answer or default


def confirm(label: str, default: bool = False) -> bool:
    """Yes/no question; Enter takes the default."""
    hint = "Y/n" if default else "y/N"
    while True:
        answer = _read(f"{label} [{hint}]: ", False).strip().lower()
        if not answer:
            return default
        if answer in ("y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        print("  please answer y or n")


def choose(label: str, options: Sequence[tuple[str, str]], default: str | None = None) -> str:
    """Numbered menu of (value, description); the answer may be a number or a value."""
    print(label)
    width = len(str(len(options)))
    for i, (value, text) in enumerate(options, 1):
        mark = "*" if value == default else " "
        desc = f"  {text}" if text else ""
        print(f" {mark}{i:>{width}}. {value}{desc}")
    values = [v for v, _ in options]
    while True:
        answer = ask("Choose a number or name", default or "")
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return values[int(answer) - 1]
        if answer in values:
            return answer
        print(f"  {answer!r} is not one of the choices" if answer else "  please choose one")
