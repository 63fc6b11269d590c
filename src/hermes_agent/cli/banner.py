"""The welcome banner: plain ANSI (no rich import), printed before the prompt so start-up stays fast."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hermes_agent import __version__
from hermes_agent.config.settings import Settings

if TYPE_CHECKING:
    from hermes_agent.cli.early_line import EarlyLine


def _c(code: str, text: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def banner(settings: Settings, color: bool = True) -> str:
    """Name, version, model and endpoint, working directory, and the keys worth knowing."""
    m = settings.model
    model = m.model or "(no model configured)"
    where = m.base_url or m.provider
    cwd = os.getcwd()
    home = os.path.expanduser("~")
    if cwd.startswith(home + os.sep):
        cwd = "~" + cwd[len(home):]
    rows = [
        _c("1;36", "⚕ Hermes Agent", color) + _c("2", f" {__version__}", color),
        f"  model  {_c('1', model, color)}" + _c("2", f"  via {where}", color),
        f"  cwd    {cwd}",
        _c("2", "  /help commands · Alt-Enter newline · Ctrl-C stop · Ctrl-D quit", color),
    ]
    if settings.yolo:
        rows.append(_c("33", "  YOLO: flagged commands run without asking (hard-line rules still apply)", color))
    return "\n".join(rows) + "\n"


def show_early_prompt(settings: Settings) -> EarlyLine | None:
    """The banner and the prompt symbol, at once, with the first line's editor (cli/early_line.py) already
    reading keys in raw mode: what is typed while the full line editor loads is edited in place and handed to
    it (issue 24). None when stdin or stdout is not a terminal: the banner and the symbol are printed."""
    import sys

    from hermes_agent import paths
    from hermes_agent.cli.early_line import EarlyLine

    color = not settings.env.get("NO_COLOR")
    line = EarlyLine.start(paths.hermes_home() / ".hermes_history", color, before=banner(settings, color))
    if line is None:
        sys.stdout.write(banner(settings, color) + _c("1;36", "❯ ", color))
        sys.stdout.flush()
    return line
