"""Typed events the agent loop emits; frontends render them, the loop never prints."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent.messages import Message, Usage


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """`label` is what a frontend shows for the call (`ls -la`, `read_file src/app.py`); empty means
    "name and preview"."""

    call_id: str
    name: str
    preview: str
    emoji: str = ""
    label: str = ""

    def shown(self) -> str:
        """The label, or `name preview` when the emitter gave none."""
        return self.label or (f"{self.name} {self.preview}" if self.preview else self.name)


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call's result and how long it took."""

    call_id: str
    name: str
    result: str
    duration_s: float
    ok: bool
    error: str = ""  # the first line of why the call failed or was refused ('' when ok)


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A message the conversation gained (assistant reply or tool result)."""

    message: Message


BUDGET_NOTICE = "budget: "  # how spending-cap notices begin (frontends that relay only these, e.g. chats)


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know (retry, fallback, loop stopped, compression)."""

    text: str
    level: str = "info"
    ends_turn: bool = False  # the turn stops here and its outcome carries the same text (cap, loop, max calls)


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn's end: its final text, usage and why it stopped."""

    final_text: str
    usage: Usage
    reason: str = "stop"


Event = TextDelta | ReasoningDelta | ToolStarted | ToolFinished | MessageAdded | Notice | TurnFinished
