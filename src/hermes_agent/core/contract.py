"""The door contract: what every frontend (CLI, gateway, API server, ACP, batch, cron) may do with an agent.

`bootstrap.build_agent` returns one; core's `AIAgent` is the implementation. A door holds an `AgentSession`,
never `object`, and asks for nothing outside this Protocol, so the type checker sees every call it makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hermes_agent.core.agent import AgentServices
    from hermes_agent.core.loop import TurnOutcome
    from hermes_agent.events import Event
    from hermes_agent.messages import Message
    from hermes_agent.providers.base import Provider


class AgentSession(Protocol):
    """One conversation with tools. Turns are not concurrent; `interrupt()` is safe from any thread."""

    history: list[Message]  # the conversation so far (a door may replace it, e.g. the API's stateless history)
    event_callback: Callable[[Event], None] | None  # where the turn's events go (deltas, tool start/finish, ...)
    services: AgentServices  # what bootstrap wired in: the session binding, prompt parts, settings
    enabled_toolsets: list[str] | None  # the toolsets its tools come from (None: the platform's default)

    @property
    def session_id(self) -> str | None: ...

    @property
    def provider(self) -> Provider: ...

    def run_turn(self, user_message: str, system_message: str | None = None, images: tuple[str, ...] = (),
                 untrusted: str = "", continue_pending: bool = False) -> TurnOutcome:
        """Run one user turn to its end (stop, interrupted, max_iterations, loop); `untrusted` names a sender who
        is not the owner; `continue_pending` goes on with a turn a restart cut short."""
        ...

    def interrupt(self) -> None: ...

    def reset(self) -> None:
        """A fresh conversation (/new, /reset)."""
        ...

    def rewind(self, index: int) -> None:
        """Drop history[index:] (/undo, /retry)."""
        ...

    def set_provider(self, provider: Provider) -> None:
        """Another model endpoint for the rest of the session (/model)."""
        ...

    def tool_definitions(self) -> list[dict]: ...

    def close(self) -> None:
        """Release the provider, tool workers and the session binding; never raises."""
        ...
