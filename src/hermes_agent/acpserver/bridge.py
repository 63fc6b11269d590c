"""The agent's events as ACP session updates, and approvals as ACP permission requests. Both are called from
the worker thread that runs a turn and hop onto the connection's event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from typing import Any

import acp
from acp.schema import PermissionOption, ToolCallUpdate

from hermes_agent.approval.approvers import ApprovalRequest, Choice
from hermes_agent.events import Event, ReasoningDelta, TextDelta, ToolFinished, ToolStarted
from hermes_agent.tools.registry import registry

OPTIONS: tuple[tuple[str, str, str, Choice], ...] = (("allow_once", "allow_once", "Allow once", "once"), ("allow_session", "allow_always", "Allow for session", "session"),
           ("allow_always", "allow_always", "Allow always", "always"), ("deny", "reject_once", "Deny", "deny"))
_RESULT_CHARS = 4000


def tool_kind(name: str) -> str:
    """ACP's kind from the tool's traits (no tool names): commands execute, writers edit, path readers read."""
    entry = registry.get(name)
    if entry is None:
        return "other"
    if entry.approval == "command":
        return "execute"
    if entry.approval == "writes":
        return "edit"
    if entry.path_arg:
        return "read"
    return "fetch" if entry.toolset in ("web", "browser") else "other"


class Bridge:
    """One ACP session's link to the client: `emit(event)` and `ask(request)` from any thread."""

    can_ask = True

    def __init__(self, loop: asyncio.AbstractEventLoop, conn: Any, timeout: float = 300.0) -> None:
        self.loop, self.conn, self.timeout = loop, conn, timeout
        self.session_id = ""

    def _send(self, update: Any) -> None:
        if self.session_id and self.conn is not None:
            fut = asyncio.run_coroutine_threadsafe(self.conn.session_update(session_id=self.session_id, update=update),
                                                   self.loop)
            try:
                fut.result(timeout=30)  # keeps updates in order; a gone client must not hang the turn
            except (concurrent.futures.TimeoutError, ConnectionError, RuntimeError):
                pass

    def emit(self, event: Event) -> None:
        if isinstance(event, TextDelta) and event.text:
            self._send(acp.update_agent_message_text(event.text))
        elif isinstance(event, ReasoningDelta) and event.text:
            self._send(acp.update_agent_thought_text(event.text))
        elif isinstance(event, ToolStarted):
            title = f"{event.name}: {event.preview}".strip(": ") if event.preview else event.name
            self._send(acp.start_tool_call(event.call_id, title[:200], kind=tool_kind(event.name),  # type: ignore[arg-type]
                                           status="in_progress"))
        elif isinstance(event, ToolFinished):
            text = event.result if len(event.result) <= _RESULT_CHARS else event.result[:_RESULT_CHARS] + "…"
            self._send(acp.update_tool_call(event.call_id, status="completed" if event.ok else "failed",
                                            content=[acp.tool_content(acp.text_block(text))]))

    def ask(self, request: ApprovalRequest) -> Choice:
        """A permission request to the editor; no answer within the timeout, or a cancel, is deny."""
        offered = [o for o in OPTIONS if not request.once_only or o[3] in ("once", "deny")]  # leaving the sandbox
        options = [PermissionOption(option_id=oid, kind=kind, name=name) for oid, kind, name, _ in offered]  # type: ignore[arg-type]
        from hermes_agent.approval.display import fit, safe

        shown = fit(request.command, request.pattern_keys or (request.pattern_key,), rows=40, width=160, reserved=0)
        title = safe(request.description) + "".join(f" | dangerous part: {part}" for part in shown.flagged)
        call = ToolCallUpdate(tool_call_id=f"approval-{abs(hash(request.command)) % 10**8}", title=title[:400],
                              kind="execute" if request.kind == "command" else "edit", status="pending",
                              raw_input={"command": request.command, "reason": request.description},
                              content=[acp.tool_content(acp.text_block("\n".join(
                                  [*shown.rows, *(f"dangerous part: {p}" for p in shown.flagged),
                                   f"reason: {safe(request.description)}"])))])
        fut = asyncio.run_coroutine_threadsafe(
            self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options), self.loop)
        try:
            response = fut.result(timeout=min(self.timeout, request.timeout or self.timeout))
        except (concurrent.futures.TimeoutError, ConnectionError, RuntimeError, acp.RequestError):
            fut.cancel()
            return "deny"
        outcome = getattr(response, "outcome", None)
        chosen = getattr(outcome, "option_id", None)
        return next((choice for oid, _, _, choice in OPTIONS if oid == chosen), "deny")


def prompt_text(blocks: list[Any]) -> str:
    """The user's message from ACP content blocks: text, embedded text resources, links named."""
    parts = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            parts.append(f"<file uri=\"{res.uri}\">\n{text}\n</file>" if text is not None else f"[attached {res.uri}]")
        elif kind == "resource_link":
            parts.append(f"[linked file: {block.uri}]")
        else:
            parts.append(f"[{kind} attachment not supported]")
    return "\n\n".join(p for p in parts if p)


def to_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
