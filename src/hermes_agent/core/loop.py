"""The LLM <-> tool loop: call the model, persist, run tool calls, repeat until a plain answer.
It emits events and never prints; errors for the model are JSON, errors for the operator are raised."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_agent.core.executor import EntryFor, ToolExecutor
from hermes_agent.core.guards import RepeatGuard, with_warning
from hermes_agent.errors import BudgetExceeded, ContextTooLongError
from hermes_agent.events import Event, MessageAdded, Notice, ReasoningDelta, TextDelta, TurnFinished
from hermes_agent.messages import Message, ToolCall, Usage, tool_result
from hermes_agent.providers.base import ChatRequest, Provider
from hermes_agent.tools.hooks import HookBus

_LENGTH_NOTE = "\n\n[answer cut off: the output token limit was reached]"
Compactor = Callable[[list[Message], int | None, bool], list[Message] | None]


@dataclass(slots=True)
class TurnOutcome:
    """What one user turn produced."""

    final_text: str
    reason: str  # stop | max_iterations | loop | interrupted | budget
    usage: Usage = field(default_factory=Usage)
    api_calls: int = 0


@dataclass(slots=True)
class AgentLoop:
    """One conversation's loop. `messages` is mutated in place and every new message persisted."""

    provider: Provider
    tools: Callable[[], list[dict]]
    run_tool: Callable[[ToolCall], str]
    emit: Callable[[Event], None] = lambda e: None
    persist: Callable[[Message], None] = lambda m: None
    persist_many: Callable[[list[Message]], None] | None = None
    compact: Compactor | None = None
    tool_entry: EntryFor = lambda n: None
    max_iterations: int = 60
    guard: RepeatGuard = field(default_factory=RepeatGuard)
    max_tokens: int | None = None
    cache_breakpoints: bool = False
    last_prompt_tokens: int | None = None
    hooks: HookBus | None = None
    _executor: ToolExecutor | None = None

    def add(self, messages: list[Message], message: Message) -> None:
        messages.append(message)
        self.persist(message)
        self.emit(MessageAdded(message))

    def _on_delta(self, kind: str, text: str) -> None:
        self.emit(ReasoningDelta(text) if kind == "reasoning" else TextDelta(text))

    def _call_model(self, messages: list[Message], cancel: threading.Event) -> Message:
        if self.compact is not None:
            replaced = self.compact(messages, self.last_prompt_tokens, False)
            if replaced is not None:
                messages[:] = replaced
        for attempt in range(3):
            request = ChatRequest(tuple(messages), tuple(self.tools()), self.max_tokens,
                                  cache_breakpoints=self.cache_breakpoints)
            if self.hooks is not None:
                self.hooks.emit("pre_llm_call", messages=list(messages), tools=request.tools, model=self.provider.model)
            try:
                reply = self.provider.complete(request, self._on_delta, cancel)
                if self.hooks is not None:
                    self.hooks.emit("post_llm_call", message=reply, usage=reply.usage)
                return reply
            except ContextTooLongError:
                replaced = self.compact(messages, None, True) if self.compact else None
                if replaced is None or attempt == 2:
                    raise
                self.emit(Notice("context too long for the model: compressed the conversation and retrying", "warning"))
                messages[:] = replaced
        raise AssertionError("unreachable")

    def _run_tools(self, messages: list[Message], calls: tuple[ToolCall, ...]) -> str | None:
        """Execute calls and append results (stored together: one write); return a stop notice if the model
        is looping."""
        if self._executor is None:
            self._executor = ToolExecutor(self.run_tool, self.emit, self.tool_entry)
        results = self._executor.run(calls)
        stop, added = None, []
        for call, result in zip(calls, results, strict=True):
            count = self.guard.observe(call)
            warning = self.guard.warning(call, count)
            if warning:
                result = with_warning(result, warning)
            added.append(tool_result(call, result))
            if self.guard.should_stop(count):
                stop = (f"Stopped: the model called {call.name} with identical arguments {count} times in a row "
                        "without making progress.")
        messages.extend(added)
        if self.persist_many is not None:
            self.persist_many(added)
        else:
            for message in added:
                self.persist(message)
        for message in added:
            self.emit(MessageAdded(message))
        return stop

    def run(self, messages: list[Message], cancel: threading.Event) -> TurnOutcome:
        """Drive the loop until the model answers without tool calls (or a limit is reached)."""
        usage, calls = Usage(), 0
        for _ in range(self.max_iterations):
            if cancel.is_set():
                return self._finish("Interrupted.", "interrupted", usage, calls)
            try:
                reply = self._call_model(messages, cancel)
            except BudgetExceeded as exc:  # refused before the call: history ends on tool results, resumable
                self.emit(Notice(str(exc), "error", ends_turn=True))
                return self._finish(str(exc), "budget", usage, calls)
            calls += 1
            if reply.usage is not None:
                usage = usage + reply.usage
                self.last_prompt_tokens = reply.usage.prompt_tokens or None
            if cancel.is_set():
                self.add(messages, Message("assistant", reply.content, reasoning=reply.reasoning))
                return self._finish("Interrupted.", "interrupted", usage, calls)
            reply = self._flag_cut_off(reply)
            self.add(messages, reply)
            if not reply.tool_calls:
                return self._finish(reply.content or "", "stop", usage, calls)
            stop = self._run_tools(messages, reply.tool_calls)
            if stop:
                self.emit(Notice(stop, "warning", ends_turn=True))
                return self._finish(stop, "loop", usage, calls)
        notice = (f"Reached the maximum of {self.max_iterations} model calls for this turn before the task "
                  "finished. Say 'continue' to let it go on.")
        self.emit(Notice(notice, "warning", ends_turn=True))
        return self._finish(notice, "max_iterations", usage, calls)

    def _flag_cut_off(self, reply: Message) -> Message:
        """A reply cut by the token limit (finish_reason length) or by agent.max_reply_chars: warn the
        user, and mark a length cut in the answer itself so the model sees it on the next turn."""
        if reply.finish_reason == "length":
            self.emit(Notice("the answer was cut off: the model reached its output token limit "
                             "(model.max_tokens); ask it to continue", "warning"))
            if not reply.tool_calls:
                return reply.with_content((reply.content or "") + _LENGTH_NOTE)
        elif reply.finish_reason == "truncated":
            self.emit(Notice("the reply was too long and was truncated (agent.max_reply_chars)", "warning"))
        return reply

    def _finish(self, text: str, reason: str, usage: Usage, calls: int) -> TurnOutcome:
        self.emit(TurnFinished(text, usage, reason))
        return TurnOutcome(text, reason, usage, calls)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
