"""Mirror one MCP server's tools (and resource/prompt utilities) into the tool registry."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.tools.mcp.config import tool_name, toolset_name
from hermes_agent.tools.mcp.connection import ServerConnection
from hermes_agent.tools.mcp.convert import content_text, resource_contents_text, tool_schema, withhold_orders
from hermes_agent.tools.registry import ToolRegistry
from hermes_agent.tools.results import tool_error, tool_result

log = logging.getLogger(__name__)

# Runs a coroutine factory on the manager loop and returns its JSON string (blocking the caller).
Submit = Callable[[Callable[[], Awaitable[str]], float], str]

_UTILITIES: dict[str, tuple[str, str, dict]] = {
    "list_resources": ("resources", "List the resources (URIs) this MCP server offers.",
                       {"cursor": {"type": "string", "description": "next_cursor of a previous page"}}),
    "read_resource": ("resources", "Read one resource of this MCP server by URI.",
                      {"uri": {"type": "string", "description": "resource URI from list_resources"}}),
    "list_prompts": ("prompts", "List the prompt templates this MCP server offers.", {}),
    "get_prompt": ("prompts", "Render one prompt template of this MCP server.",
                   {"name": {"type": "string"},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"},
                                  "description": "template arguments"}}),
}
_REQUIRED = {"read_resource": ["uri"], "get_prompt": ["name"]}


class ServerTools:
    """The registry entries owned by one server; `sync` adds, replaces and removes them."""

    def __init__(self, registry: ToolRegistry, conn: ServerConnection, submit: Submit) -> None:
        self._registry = registry
        self._conn = conn
        self._submit = submit
        self.names: set[str] = set()
        self._warned: set[str] = set()

    def _available(self) -> bool:
        return self._conn.status.connected

    def _subject(self, args: dict) -> ApprovalSubject | None:
        """Every call is judged when the server's config says `approval: ask` (the default is never)."""
        if self._conn.cfg.approval != "ask":
            return None
        return ApprovalSubject(origin=f"MCP server '{self._conn.cfg.name}'")

    def sync(self, tools: list, capabilities: frozenset[str]) -> None:
        """Register the listed tools plus capability-gated utilities; drop what disappeared."""
        server = self._conn.cfg.name
        toolset = toolset_name(server)
        wanted: set[str] = set()
        for util, (cap, desc, props) in _UTILITIES.items():
            if cap in capabilities:
                name = tool_name(server, util)
                schema = {"name": name, "description": f"[{server}] {desc}",
                          "parameters": {"type": "object", "properties": props, "required": _REQUIRED.get(util, [])}}
                self._registry.register(name, toolset, schema, self._utility_handler(util),
                                        check_fn=self._available, emoji="🔌", parallel_safe=True,
                                        approval="external", approval_subject=self._subject,
                                        untrusted_output=not self._conn.cfg.trusted)
                wanted.add(name)
        for tool in tools:
            name = tool_name(server, tool.name)
            if name in wanted:
                log.warning("MCP server %s: tool %r replaces another tool named %s", server, tool.name, name)
            schema = tool_schema(name, tool.description, tool.input_schema)
            if not self._conn.cfg.trusted:
                schema = self._withheld(tool.name, schema)
            self._registry.register(name, toolset, schema, self._tool_handler(tool.name),
                                    check_fn=self._available, emoji="🔌", approval="external",
                                    approval_subject=self._subject, untrusted_output=not self._conn.cfg.trusted)
            wanted.add(name)
        for gone in self.names - wanted:
            self._registry.deregister(gone)
        self.names = wanted

    def _withheld(self, tool: str, schema: dict) -> dict:
        """The schema with descriptions that give the model orders withheld; one line for the user per tool."""
        schema, kinds = withhold_orders(schema)
        if kinds and tool not in self._warned:
            self._warned.add(tool)
            server = self._conn.cfg.name
            log.warning("MCP server %s: the description of its tool %r reads as instructions to the model (%s): "
                        "withheld from the model (mcp_servers.%s.trusted: true if you vouch for the server)",
                        server, tool, ", ".join(kinds), server)
        return schema

    def clear(self) -> None:
        """Remove every entry of this server."""
        for name in self.names:
            self._registry.deregister(name)
        self.names = set()

    def _tool_handler(self, mcp_name: str) -> Callable[..., str]:
        conn = self._conn

        def handler(args: dict, **_kw: object) -> str:
            return self._submit(lambda: conn.call_tool(mcp_name, dict(args or {})), conn.cfg.timeout)

        handler.__name__ = f"mcp_{mcp_name}"
        return handler

    def _utility_handler(self, util: str) -> Callable[..., str]:
        conn = self._conn
        op, render = _utility_op(util)

        def handler(args: dict, **_kw: object) -> str:
            args = dict(args or {})
            missing = [k for k in _REQUIRED.get(util, []) if not args.get(k)]
            if missing:
                return tool_error(f"missing required argument(s): {', '.join(missing)}")
            return self._submit(lambda: conn.request(op(args), conn.cfg.timeout, render), conn.cfg.timeout)

        handler.__name__ = f"mcp_{util}"
        return handler


def _utility_op(util: str) -> tuple[Callable[[dict], Callable[[object], Awaitable[object]]], Callable[[object], str]]:
    """(args -> session coroutine factory, result renderer) for one utility tool."""
    if util == "list_resources":
        def op(args: dict) -> Callable[[object], Awaitable[object]]:
            from mcp.types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=args["cursor"]) if args.get("cursor") else None
            return lambda s: s.list_resources(params=params)  # type: ignore[attr-defined]
        return op, _render_resources
    if util == "read_resource":
        return (lambda args: lambda s: s.read_resource(str(args["uri"]))), _render_read  # type: ignore[attr-defined]
    if util == "list_prompts":
        return (lambda args: lambda s: s.list_prompts()), _render_prompts  # type: ignore[attr-defined]
    return (lambda args: lambda s: s.get_prompt(  # type: ignore[attr-defined]
        str(args["name"]), {str(k): str(v) for k, v in (args.get("arguments") or {}).items()})), _render_prompt


def _render_resources(result: object) -> str:
    items = [{"uri": str(r.uri), "name": r.name, "description": r.description or "", "mime_type": r.mime_type or ""}
             for r in result.resources]  # type: ignore[attr-defined]
    out: dict = {"resources": items}
    if getattr(result, "next_cursor", None):
        out["next_cursor"] = result.next_cursor  # type: ignore[attr-defined]
    return tool_result(out)


def _render_read(result: object) -> str:
    parts = [resource_contents_text(c) for c in result.contents]  # type: ignore[attr-defined]
    return tool_result({"result": "\n".join(p for p in parts if p)})


def _render_prompts(result: object) -> str:
    items = [{"name": p.name, "description": p.description or "",
              "arguments": [{"name": a.name, "required": bool(a.required), "description": a.description or ""}
                            for a in (p.arguments or [])]}
             for p in result.prompts]  # type: ignore[attr-defined]
    return tool_result({"prompts": items})


def _render_prompt(result: object) -> str:
    messages = [{"role": str(m.role), "text": content_text([m.content])}
                for m in result.messages]  # type: ignore[attr-defined]
    return tool_result({"description": getattr(result, "description", "") or "", "messages": messages})
