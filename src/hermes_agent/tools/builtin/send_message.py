"""The `send_message` tool (Hermes 0.19's schema: action send|list, target, message with MEDIA:<path> for
files): sends through the agent's `Messenger` (ToolContext.messenger), which the gateway (its live
adapters) or the cron scheduler hands in. Agents without one (CLI, API server) are told it is unavailable."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

from hermes_agent.errors import HermesError
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

if TYPE_CHECKING:
    from hermes_agent.approval.policy import PathPolicy


class DeliveryError(HermesError):
    """A message could not be delivered (unknown platform, no home channel, the platform refused)."""


class Messenger(Protocol):
    """Where messages to platforms go: one send path for send_message and cron delivery."""

    def send(self, target: str, text: str, scope: str = "", policy: PathPolicy | None = None) -> str:
        """Deliver `text` (MEDIA:/path lines become attachments: what the sender's path `policy` lets its commands
        read, and under HERMES_HOME only the media of its `scope`) to `target` ('telegram' = its home channel, 'telegram:<chat_id>'); returns 'platform:chat_id' it
        went to, or raises DeliveryError."""
        ...

    def targets(self) -> list[dict]:
        """The platforms that can be sent to, with their home channel (or None)."""
        ...


SEND_MESSAGE_SCHEMA = {
    "name": "send_message",
    "description": (
        "Send a message to a connected messaging platform, or list available targets.\n\n"
        "IMPORTANT: When the user asks to send to a specific channel or person (not just a bare platform "
        "name), call send_message(action='list') FIRST to see available targets, then send to the correct one.\n"
        "If the user just says a platform name like 'send to telegram', send directly to the home channel "
        "without listing first."),
    "parameters": {"type": "object", "properties": {
        "action": {"type": "string", "enum": ["send", "list"],
                   "description": "'send' (default) sends a message; 'list' returns the available targets."},
        "target": {"type": "string", "description": (
            "Delivery target. Format: 'platform' (uses its home channel) or 'platform:chat_id'. "
            "Examples: 'telegram', 'telegram:-1001234567890'. Default: this chat's platform home channel.")},
        "message": {"type": "string", "description": (
            "The message text to send. To send an image or file, include MEDIA:<local_path> (e.g. "
            "'MEDIA:/tmp/report.pdf') on its own line: the platform delivers it as an attachment.")},
    }, "required": []},
}


def send_message(args: dict, ctx: object = None, **_: object) -> str:
    """Send (or list targets) through the context's messenger; failures come back as JSON errors."""
    messenger: Messenger = ctx.messenger  # type: ignore[attr-defined]  # `needs` guarantees it is set
    action = str(args.get("action") or "send").strip().lower()
    if action == "list":
        return json.dumps({"targets": messenger.targets()}, ensure_ascii=False)
    if action != "send":
        return tool_error(f"unknown action {action!r}: use 'send' or 'list'")
    message = str(args.get("message") or "")
    origin = getattr(ctx, "origin", None) or {}
    target = str(args.get("target") or origin.get("platform") or "").strip()
    if not target or not message.strip():
        return tool_error("Both 'target' and 'message' are required when action='send'")
    try:
        sent_to = messenger.send(target, message, scope=ctx.media_scope,  # type: ignore[attr-defined]
                                 policy=getattr(ctx, "path_policy", None))
    except DeliveryError as exc:
        return tool_error(str(exc))
    note = "" if ":" in target else f"Sent to {target} home channel (chat_id: {sent_to.split(':', 1)[1]})"
    return json.dumps({"success": True, "target": sent_to, **({"note": note} if note else {})}, ensure_ascii=False)


registry.register("send_message", "messaging", SEND_MESSAGE_SCHEMA, send_message, emoji="📨",
                  subagent_ok=False, parallel_safe=False, needs=("messenger",), preview_arg="target")
