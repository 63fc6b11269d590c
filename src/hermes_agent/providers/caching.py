"""Anthropic prompt caching: `cache_control` breakpoints on the system prompt and the last three
non-system messages ("system and 3"), for Claude models natively or through OpenRouter. Pure."""

from __future__ import annotations

import copy

_MAX_MESSAGE_BREAKPOINTS = 3  # Anthropic allows 4 in all; the system prompt takes the first


def supports_cache_control(model: str, provider: str) -> bool:
    """True for Anthropic's own API and for Claude models routed through OpenRouter-style gateways."""
    p, m = (provider or "").lower(), (model or "").lower()
    if p == "anthropic":
        return True
    if m.startswith("anthropic/"):
        return True
    return p == "openrouter" and "claude" in m


def _marker(ttl: str) -> dict:
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def _mark(message: dict, marker: dict) -> bool:
    """Put the marker on the message's last text part (string content becomes one part); False if empty."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "text" and part.get("text"):
                part["cache_control"] = dict(marker)
                return True
    return False


def apply_cache_breakpoints(wire_messages: list[dict], model: str, provider: str, *,
                            ttl: str = "5m") -> list[dict]:
    """A copy of `wire_messages` with cache breakpoints for Claude; other models get them unchanged.
    Messages with no text (an assistant turn that only calls tools) are skipped, not counted."""
    if not supports_cache_control(model, provider):
        return wire_messages
    out = copy.deepcopy(wire_messages)
    marker = _marker(ttl)
    for msg in out:
        if msg.get("role") == "system":
            _mark(msg, marker)
            break
    placed = 0
    for msg in reversed(out):
        if placed >= _MAX_MESSAGE_BREAKPOINTS:
            break
        if msg.get("role") != "system" and _mark(msg, marker):
            placed += 1
    return out
