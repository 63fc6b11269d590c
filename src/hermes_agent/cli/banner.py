"""The welcome banner: plain ANSI (no rich import), printed before the prompt so start-up stays fast."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings

if TYPE_CHECKING:
    from hermes_agent.cli.early_line import EarlyLine


def banner(settings: Settings, color: bool = True) -> str:
    """Name, version, model and endpoint, working directory, and the keys worth knowing."""
    from hermes_agent.cli.fast_prompt import render

    m = settings.model
    return render(m.model or "(no model configured)", m.base_url or m.provider, settings.yolo, color)


def show_early_prompt(settings: Settings) -> EarlyLine | None:
    """The banner and the prompt symbol, at once, with the first line's editor (cli/early_line.py) already
    reading keys in raw mode: what is typed while the full line editor loads is edited in place and handed to
    it (issue 24). None when stdin or stdout is not a terminal: the banner and the symbol are printed."""
    import sys

    from hermes_agent import paths
    from hermes_agent.cli import fast_prompt
    from hermes_agent.cli.early_line import EarlyLine

    color = not settings.env.get("NO_COLOR")
    m = settings.model
    line = fast_prompt.take()  # drawn before the settings loaded, from the last run's banner (same key)
    if line is None:
        text = banner(settings, color)
        line = EarlyLine.start(paths.hermes_home() / ".hermes_history", color, before=text)
        if line is None:
            sys.stdout.write(text + ("\x1b[1;36m❯ \x1b[0m" if color else "❯ "))
            sys.stdout.flush()
    fast_prompt.save(str(paths.hermes_home()), m.model or "(no model configured)", m.base_url or m.provider,
                     settings.yolo, not color)
    return line
