"""The Provider seam. Contract: wire formats live only in adapters; `complete()` returns the final
assistant Message (usage attached) and reports streamed text through `on_delta`; every failure is a
typed ProviderError (errors.py) so retry, fallback and compression can react by type."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from hermes_agent.messages import Message

DeltaKind = Literal["text", "reasoning"]
OnDelta = Callable[[DeltaKind, str], None]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model call: conversation, tool definitions (OpenAI format) and sampling options."""

    messages: tuple[Message, ...]
    tools: tuple[dict, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    cache_breakpoints: bool = False
    extra_body: dict = field(default_factory=dict)


class Provider(Protocol):
    """A chat-completions endpoint."""

    name: str
    model: str

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        """Run one model call (streamed when possible) and return the assistant message."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
