"""What the REPL hub (repl.py) offers its parts: the prompt (prompt.py), the agent's build (session.py) and the
slash commands (slash*.py) see the REPL as a `ReplHost`, so they import this leaf and never repl.py itself."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hermes_agent.messages import Usage

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from hermes_agent.bootstrap.options import RunOptions
    from hermes_agent.cli.approver import Asker, ReplApprover
    from hermes_agent.cli.live import LiveView
    from hermes_agent.cli.screen import Screen
    from hermes_agent.config.settings import Settings
    from hermes_agent.core.contract import AgentSession


class SlashCommand(Protocol):
    """What the runner needs of a slash command (slash.Command is one): its handler."""

    @property
    def handler(self) -> Callable[[ReplHost, str], None]: ...


@dataclass(slots=True)
class Job:
    """One unit of runner work: a message for the agent, or a slash command that must not overlap a turn."""

    text: str
    command: SlashCommand | None = None  # a slash.Command when this is a command
    arg: str = ""
    message: str | None = None  # what the agent receives when it differs from what was typed (/skill-name)
    echoed: bool = False  # on screen already (typed before the line editor loaded: cli/early_line.py)


@dataclass(slots=True)
class Totals:
    """Token usage of this REPL session (what /usage reports)."""

    usage: Usage = field(default_factory=Usage)
    api_calls: int = 0
    turns: int = 0


class ReplHost(Protocol):
    """State shared by the prompt, the runner thread and the slash-command handlers (repl.Repl is the one)."""

    args: argparse.Namespace
    settings: Settings
    toolsets: list[str] | None
    agent: AgentSession | None  # None until the background build finishes (or when it failed)
    ready: threading.Event
    totals: Totals
    session: PromptSession[Any] | None
    screen: Screen
    live: LiveView
    asker: Asker
    approver: ReplApprover
    personality: str | None
    options: RunOptions | None  # the chat flags' bootstrap options (-s, --ignore-rules, --safe-mode, -c NAME)

    def require_agent(self, timeout: float = 60.0) -> AgentSession:
        """The agent, waiting for the background build; raises HermesError when it failed."""
        ...

    def run_message(self, text: str) -> None: ...

    def invalidate(self) -> None: ...

    def request_exit(self, code: int = 0) -> None: ...

    def on_ctrl_c(self, app: Any) -> None: ...

    def prompt_fragments(self) -> StyleAndTextTuples: ...

    def command_names(self) -> list[tuple[str, str]]: ...

    def command_arguments(self, name: str) -> list[str]: ...
