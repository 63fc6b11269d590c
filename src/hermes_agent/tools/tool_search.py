"""Tool search: when MCP/plugin schemas would take too much of the context window, send two bridge
tools (`tool_search`, `tool_call`) instead of them. Core tools are always sent directly. What is
deferred belongs to one agent (`ctx.deferred_tools`): nothing else can reach it through the bridge."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from hermes_agent import lazyre
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import ToolRegistry
from hermes_agent.tools.registry import registry as default_registry
from hermes_agent.tools.results import tool_error, tool_result

BRIDGE_TOOLSET = "tool_search"
SEARCH, CALL = "tool_search", "tool_call"
DEFAULT_LIMIT, MAX_LIMIT = 5, 20
_WORD = lazyre.compile(r"[a-z0-9]+")


def estimate_tokens(definitions: Iterable[dict]) -> int:
    """Rough token count of schemas as sent (compact JSON characters / 4)."""
    return len(json.dumps(list(definitions), separators=(",", ":"), ensure_ascii=False)) // 4


def _name(definition: dict) -> str:
    return str(definition.get("function", {}).get("name", ""))


def normalize_mode(value: object) -> str:
    """`tools.tool_search.enabled` as auto|on|off (booleans accepted)."""
    if value is True or str(value).lower() in ("on", "true", "yes", "always", "1"):
        return "on"
    if value is False or str(value).lower() in ("off", "false", "no", "never", "0"):
        return "off"
    return "auto"


def core_names(reg: ToolRegistry | None = None) -> set[str]:
    """Tools that are never deferred: our own built-ins (not MCP, not plugins)."""
    reg = reg or default_registry
    out = set()
    for entry in reg.entries():
        module = getattr(entry.handler, "__module__", "") or ""
        external = entry.toolset.startswith(("mcp-", "plugin-")) or module.startswith("hermes_agent.tools.mcp")
        if module.startswith("hermes_agent.") and not external and entry.toolset != BRIDGE_TOOLSET:
            out.add(entry.name)
    return out


def assemble(definitions: list[dict], core_names: set[str], context_length: int, threshold_pct: float = 10,
             mode: str = "auto", reg: ToolRegistry | None = None, ctx: ToolContext | None = None) -> list[dict]:
    """Definitions to send: everything directly, or core tools plus the two bridge tools when the
    non-core schemas exceed `threshold_pct` of `context_length` (always with mode "on"). The deferred
    definitions are stored on `ctx` (the one agent whose bridge may reach them)."""
    mode = normalize_mode(mode)
    plain = [d for d in definitions if _name(d) not in (SEARCH, CALL)]
    extra = [d for d in plain if _name(d) not in core_names]
    deferring = bool(extra) and mode != "off" and not (
        mode == "auto" and estimate_tokens(extra) <= context_length * threshold_pct / 100)
    if ctx is not None:
        ctx.deferred_tools = {_name(d): d for d in extra} if deferring else {}
    if not deferring:
        return plain
    register_bridge(reg)
    direct = [d for d in plain if _name(d) in core_names]
    return [*direct, *bridge_definitions(extra, reg)]


def _groups(extra: list[dict], reg: ToolRegistry) -> str:
    counts: dict[str, int] = {}
    for d in extra:
        entry = reg.get(_name(d))
        group = entry.toolset if entry else "other"
        counts[group] = counts.get(group, 0) + 1
    return ", ".join(f"{g} ({n})" for g, n in sorted(counts.items()))


def bridge_definitions(extra: list[dict], reg: ToolRegistry | None = None) -> list[dict]:
    """The two bridge tool definitions, naming the deferred tool groups."""
    groups = _groups(extra, reg or default_registry)
    search = {
        "name": SEARCH,
        "description": (f"Find more tools by keyword: {len(extra)} tools are not listed directly "
                        f"({groups}). Returns matching names with their parameter schemas; run one with "
                        f"{CALL}."),
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "keywords, e.g. 'github issue create'"},
            "limit": {"type": "integer", "description": f"max results (default {DEFAULT_LIMIT}, max {MAX_LIMIT})"},
        }, "required": ["query"]},
    }
    call = {
        "name": CALL,
        "description": f"Run a tool found with {SEARCH}: its exact name and arguments matching its schema.",
        "parameters": {"type": "object", "properties": {
            "name": {"type": "string"},
            "arguments": {"type": "object", "description": "arguments for that tool"},
        }, "required": ["name"]},
    }
    return [{"type": "function", "function": search}, {"type": "function", "function": call}]


def _allowed(kw: Mapping[str, object]) -> Mapping[str, dict]:
    """Deferred tools this call may reach: those of the calling agent's context, else none."""
    return getattr(kw.get("ctx"), "deferred_tools", None) or {}


def _score(terms: list[str], definition: dict) -> float:
    fn = definition.get("function", {})
    name = str(fn.get("name", "")).lower()
    name_words = set(_WORD.findall(name))
    desc_words = set(_WORD.findall(str(fn.get("description", "")).lower()))
    param_words = {w for p in (fn.get("parameters") or {}).get("properties", {}) for w in _WORD.findall(p.lower())}
    score = 0.0
    for term in terms:
        if term in name_words:
            score += 3
        elif any(w.startswith(term) for w in name_words) or term in name:
            score += 2
        if term in desc_words or any(w.startswith(term) for w in desc_words if len(term) > 3):
            score += 1
        if term in param_words:
            score += 0.5
    return score


def search(args: dict, **kw: object) -> str:
    """Handler of tool_search: best matches with their schemas."""
    query = str(args.get("query") or "").lower()
    try:
        limit = max(1, min(MAX_LIMIT, int(args.get("limit") or DEFAULT_LIMIT)))
    except (TypeError, ValueError):
        limit = DEFAULT_LIMIT
    pool = _allowed(kw)
    terms = _WORD.findall(query)
    ranked = sorted(((_score(terms, d), n) for n, d in pool.items()), key=lambda x: (-x[0], x[1]))
    hits = [pool[n]["function"] for s, n in ranked if s > 0][:limit]
    ctx = kw.get("ctx")
    if hits and ctx is not None and not getattr(ctx, "untrusted", ""):  # descriptions the model reads now
        from hermes_agent.tools.provenance import described_by_untrusted

        ctx.taint(described_by_untrusted([h["name"] for h in hits], default_registry))  # type: ignore[attr-defined]
    if not hits:
        return tool_result({"matches": [], "note": "no match; try other keywords", "tools": sorted(pool)[:100]})
    return tool_result({"matches": hits})


def call(args: dict, **kw: object) -> str:
    """Handler of tool_call: run a deferred tool through the normal guarded call path."""
    name = str(args.get("name") or "")
    arguments = args.get("arguments") or {}
    if name in (SEARCH, CALL):
        return tool_error(f"{name} cannot be called through {CALL}")
    if name not in _allowed(kw):
        return tool_error(f"'{name}' is not a deferred tool; use {SEARCH} to find one, "
                          "or call listed tools directly")
    from hermes_agent.tools import dispatch

    return dispatch.handle_function_call(name, arguments, kw.get("task_id"), kw.get("user_task"),  # type: ignore[arg-type]
                                         ctx=kw.get("ctx"))  # type: ignore[arg-type]


def register_bridge(reg: ToolRegistry | None = None) -> None:
    """Put the bridge tools in the registry (idempotent) so dispatch can route them."""
    reg = reg or default_registry
    if reg.get(SEARCH) is not None and reg.get(CALL) is not None:
        return
    search_def, call_def = (d["function"] for d in bridge_definitions([], reg))
    reg.register(SEARCH, BRIDGE_TOOLSET, search_def, search, emoji="🔎", parallel_safe=True)
    reg.register(CALL, BRIDGE_TOOLSET, call_def, call, emoji="🧰")
