"""Toolset table (data): name -> description, tools, includes; plus resolution of composite and legacy names."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from hermes_agent.errors import ToolError

log = logging.getLogger(__name__)
_reported: set[str] = set()
_reported_lock = threading.Lock()

_FILE = ["read_file", "write_file", "patch", "search_files"]
_BROWSER = ["browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
            "browser_back", "browser_press", "browser_get_images", "browser_console", "browser_vision"]

CORE_TOOLS: list[str] = [
    "terminal", "process", *_FILE, "web_search", "web_extract", *_BROWSER, "vision_analyze",
    "skills_list", "skill_view", "skill_manage", "todo", "memory", "session_search", "clarify",
    "execute_code", "delegate_task", "cronjob",
]

TOOLSETS: dict[str, dict] = {
    "terminal": {"description": "Shell commands and background processes", "tools": ["terminal", "process"]},
    "file": {"description": "Read, write, patch and search files", "tools": list(_FILE)},
    "web": {"description": "Web search and page extraction", "tools": ["web_search", "web_extract"]},
    "search": {"description": "Web search only", "tools": ["web_search"]},
    "browser": {"description": "Browser automation", "tools": [*_BROWSER, "web_search"]},
    "vision": {"description": "Image analysis", "tools": ["vision_analyze"]},
    "skills": {"description": "Skill library: list, view, manage", "tools": ["skills_list", "skill_view", "skill_manage"]},
    "todo": {"description": "Task list for multi-step work", "tools": ["todo"]},
    "memory": {"description": "Persistent memory across sessions", "tools": ["memory"]},
    "session_search": {"description": "Search past conversations", "tools": ["session_search"]},
    "clarify": {"description": "Ask the user a question", "tools": ["clarify"]},
    "code_execution": {"description": "Run Python that calls tools", "tools": ["execute_code"]},
    "delegation": {"description": "Subagents for independent subtasks", "tools": ["delegate_task"]},
    "cronjob": {"description": "Scheduled jobs", "tools": ["cronjob"]},
    "debugging": {"description": "Terminal, web and files", "tools": [], "includes": ["terminal", "web", "file"]},
    "safe": {"description": "No shell or file writes", "tools": [], "includes": ["web", "vision"]},
    "hermes-cli": {"description": "Default CLI toolset", "tools": list(CORE_TOOLS)},
    "hermes-cron": {"description": "Scheduled job runs", "tools": [t for t in CORE_TOOLS if t != "clarify"]},
    "hermes-telegram": {"description": "Telegram", "tools": list(CORE_TOOLS)},
    "hermes-discord": {"description": "Discord", "tools": list(CORE_TOOLS)},
    "hermes-slack": {"description": "Slack", "tools": list(CORE_TOOLS)},
    "hermes-acp": {"description": "Editors over ACP (coding tools)",
                   "tools": [t for t in CORE_TOOLS if t not in ("clarify", "cronjob")]},
    "hermes-api-server": {"description": "OpenAI-compatible API server",
                          "tools": [t for t in CORE_TOOLS if t != "clarify"]},
    "hermes-gateway": {"description": "All messaging platforms", "tools": [],
                       "includes": ["hermes-telegram", "hermes-discord", "hermes-slack"]},
}

LEGACY_TOOLSETS: dict[str, list[str]] = {
    "web_tools": ["web_search", "web_extract"],
    "terminal_tools": ["terminal"],
    "vision_tools": ["vision_analyze"],
    "image_tools": ["image_generate"],
    "skills_tools": ["skills_list", "skill_view", "skill_manage"],
    "browser_tools": _BROWSER[:9],
    "cronjob_tools": ["cronjob"],
    "file_tools": list(_FILE),
    "tts_tools": ["text_to_speech"],
}


def all_toolset_names(dynamic: dict[str, list[str]] | None = None) -> list[str]:
    """Static toolsets plus dynamic ones (MCP, plugins) from the registry."""
    return sorted(set(TOOLSETS) | set(dynamic or {}))


def resolve_toolset(name: str, dynamic: dict[str, list[str]] | None = None,
                    _stack: tuple[str, ...] = ()) -> list[str]:
    """Tool names of a toolset, expanding includes; unknown names and cycles raise ToolError."""
    if name in _stack:
        raise ToolError(f"toolset include cycle: {' -> '.join((*_stack, name))}")
    if name in ("all", "*"):
        names = {t for ts in TOOLSETS for t in resolve_or_skip(ts, dynamic, (*_stack, name))}
        names.update(t for tools in (dynamic or {}).values() for t in tools)
        return sorted(names)
    if name in LEGACY_TOOLSETS:
        return list(LEGACY_TOOLSETS[name])
    spec = TOOLSETS.get(name)
    if spec is None:
        if dynamic and name in dynamic:
            return list(dynamic[name])
        known = ", ".join(all_toolset_names(dynamic))
        raise ToolError(f"unknown toolset {name!r}; known toolsets: {known}")
    out = list(spec.get("tools", []))
    for inc in spec.get("includes", []):
        out.extend(t for t in resolve_toolset(inc, dynamic, (*_stack, name)) if t not in out)
    return out


def is_known(name: str, dynamic: dict[str, list[str]] | None = None) -> bool:
    """True for a toolset name of the table, a legacy name, a registered (MCP/plugin) toolset or all/*."""
    return name in TOOLSETS or name in LEGACY_TOOLSETS or name in (dynamic or {}) or name in ("all", "*")


def require_known(names: Iterable[str], dynamic: dict[str, list[str]] | None = None) -> None:
    """Raise ToolError for the first name nobody knows (a typo in -t or a config list)."""
    for name in names:
        if not is_known(name, dynamic):
            known = ", ".join(all_toolset_names(dynamic))
            raise ToolError(f"unknown toolset {name!r}; known toolsets: {known}")


def resolve_or_skip(name: str, dynamic: dict[str, list[str]] | None = None,
                    _stack: tuple[str, ...] = ()) -> list[str]:
    """resolve_toolset, except that a broken entry (include cycle, unknown include) is logged once
    and resolves to nothing instead of raising."""
    try:
        return resolve_toolset(name, dynamic, _stack)
    except ToolError as exc:
        with _reported_lock:
            first = name not in _reported
            _reported.add(name)
        if first:
            log.warning("toolset %r left out: %s", name, exc)
        return []
