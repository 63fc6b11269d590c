"""ToolContext: everything a tool needs beyond its arguments, handed in by the caller as `ctx`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.base import TerminalBackend


@dataclass(slots=True)
class ToolContext:
    """Per-call context. `backend()` returns the terminal backend of this task (created lazily
    by the factory); optional callbacks are None when the frontend has no way to ask the user."""

    settings: Settings
    task_id: str = "default"
    session_id: str | None = None
    backend_factory: Callable[[str], TerminalBackend] | None = None
    clarify: Callable[[str, list[str]], str] | None = None
    spawn_subagent: Callable[..., str] | None = None
    checkpoint: Callable[[str, str], None] | None = None
    interrupt: threading.Event = field(default_factory=threading.Event)
    path_policy: PathPolicy | None = None
    extras: dict = field(default_factory=dict)

    def backend(self) -> TerminalBackend:
        """The terminal backend for this task."""
        if self.backend_factory is None:
            from hermes_agent.terminal.local import LocalBackend

            backend = self.extras.get("_local_backend")
            if backend is None:
                backend = self.extras["_local_backend"] = LocalBackend()
            return backend
        return self.backend_factory(self.task_id)
