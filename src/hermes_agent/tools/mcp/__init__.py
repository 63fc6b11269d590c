"""MCP client: servers from `mcp_servers:` connect in a background loop and their tools join the
registry as `mcp__<server>__<tool>` (toolset `mcp-<server>`). The `mcp` SDK loads only on start.

Names are looked up on first use (PEP 562): importing `hermes_agent.tools.mcp.config` to sort the configured
servers out loads neither the manager nor asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.tools.mcp.config import (
        ServerConfig,
        parse_server,
        parse_servers,
        tool_name,
        toolset_name,
    )
    from hermes_agent.tools.mcp.manager import McpManager, start_mcp

__all__ = ["McpManager", "ServerConfig", "parse_server", "parse_servers", "start_mcp", "tool_name", "toolset_name"]
_HOME = {"McpManager": "manager", "start_mcp": "manager"}


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_HOME.get(name, 'config')}"), name)
