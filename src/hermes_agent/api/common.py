"""What the API routes share: the session header name and the OpenAI-shaped error response."""

from __future__ import annotations

from aiohttp import web

SESSION_HEADER = "X-Hermes-Session-Id"
USER_HEADER = "X-Hermes-User"  # team mode: the person calling, with their own key (team.api_keys)


def error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    """An OpenAI-style error body with this HTTP status."""
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status)
