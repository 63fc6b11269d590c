"""MCP client: servers from `mcp_servers:` connect in a background loop and their tools join the
registry as `mcp__<server>__<tool>` (toolset `mcp-<server>`). The `mcp` SDK loads only on start."""

from __future__ import annotations

from hermes_agent.tools.mcp.config import ServerConfig, parse_server, parse_servers, tool_name, toolset_name
from hermes_agent.tools.mcp.manager import McpManager, start_mcp

__all__ = ["McpManager", "ServerConfig", "parse_server", "parse_servers", "start_mcp", "tool_name", "toolset_name"]
