"""Toolset table (data, every name Hermes has): name -> description, tools, includes; plus resolution of
composite and legacy names, and the tools a toolset names that this hermes does not have."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from hermes_agent.errors import ToolError
from hermes_agent.lazylog import get_logger

log = get_logger(__name__)
_reported: set[str] = set()
_reported_lock = threading.Lock()

_FILE = ["read_file", "write_file", "patch", "search_files"]
_BROWSER = ["browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
            "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
            "browser_cdp", "browser_dialog", "browser_close"]
_SKILLS = ["skills_list", "skill_view", "skill_manage"]
_HA = ["ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"]
_KANBAN = ["kanban_show", "kanban_list", "kanban_complete", "kanban_block", "kanban_heartbeat", "kanban_comment",
           "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach", "kanban_attach_url",
           "kanban_attachments"]
_YUANBAO = ["yb_query_group_info", "yb_query_group_members", "yb_send_dm", "yb_search_sticker", "yb_send_sticker"]
_FEISHU_DRIVE = ["feishu_drive_list_comments", "feishu_drive_list_comment_replies", "feishu_drive_reply_comment",
                 "feishu_drive_add_comment"]
_SPOTIFY = ["spotify_playback", "spotify_devices", "spotify_queue", "spotify_search", "spotify_playlists",
            "spotify_albums", "spotify_library"]

# Hermes's core list (same order): what every hermes-<platform> preset offers.
CORE_TOOLS: list[str] = [
    "web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal", *_FILE,
    "vision_analyze", "image_generate", *_SKILLS, *_BROWSER, "text_to_speech", "todo", "memory",
    "session_search", "clarify", "execute_code", "delegate_task", "cronjob", *_HA, *_KANBAN, "computer_use",
]
_CODING = ["web_search", "web_extract", "terminal", "process", "read_terminal", "close_terminal", *_FILE,
           "vision_analyze", *_SKILLS, *_BROWSER, "todo", "memory", "session_search", "clarify",
           "execute_code", "delegate_task"]
_ACP = [t for t in _CODING if t not in ("read_terminal", "close_terminal", "clarify")]
_API_SERVER = [*_ACP[:8], "vision_analyze", "image_generate", *_SKILLS, *_BROWSER, "todo", "memory",
               "session_search", "execute_code", "delegate_task", "cronjob", *_HA]
_WEBHOOK = ["web_search", "web_extract", "vision_analyze", "clarify"]
_CHAT = [*CORE_TOOLS, "send_message"]  # messaging platforms add send_message (the seeds' toolsets.py rule)


def _ts(description: str, tools: list[str], includes: tuple[str, ...] = ()) -> dict:
    return {"description": description, "tools": list(tools), "includes": list(includes)}


# Every toolset name Hermes 0.19 has, with its tools and includes. Tools this hermes does not have
# are left out when a toolset resolves (see missing_tools), so a Hermes config keeps working.
TOOLSETS: dict[str, dict] = {
    "web": _ts("Web search, page extraction and site crawling", ["web_search", "web_extract", "web_crawl"]),
    "search": _ts("Web search only", ["web_search"]),
    "x_search": _ts("Search X (Twitter) posts through xAI", ["x_search"]),
    "vision": _ts("Image analysis", ["vision_analyze"]),
    "video": _ts("Video analysis", ["video_analyze"]),
    "image_gen": _ts("Image generation", ["image_generate"]),
    "rl": _ts("RL environments and local rollout runs (no trainer here)",
              ["rl_list_environments", "rl_start_training", "rl_check_status", "rl_stop_training", "rl_get_results",
               "rl_list_runs"]),
    "a2a": _ts("Other agents over A2A: discover and call those configured under a2a.agents",
               ["a2a_discover", "a2a_call"]),
    "moa": _ts("Mixture of agents: a hard question to several models, one merged answer", ["mixture_of_agents"]),
    "video_gen": _ts("Video generation", ["video_generate", "xai_video_edit", "xai_video_extend"]),
    "computer_use": _ts("Desktop control (screenshots, mouse, keyboard)", ["computer_use"]),
    "terminal": _ts("Shell commands and background processes", ["terminal", "process"]),
    "skills": _ts("Skill library: list, view, manage", _SKILLS),
    "browser": _ts("Browser automation, with web search to find URLs", [*_BROWSER, "web_search"]),
    "cronjob": _ts("Scheduled jobs", ["cronjob"]),
    "messaging": _ts("Send messages to messaging platforms (gateway chats)", ["send_message"]),
    "file": _ts("Read, write, patch and search files", _FILE),
    "tts": _ts("Text to speech", ["text_to_speech"]),
    "todo": _ts("Task list for multi-step work", ["todo"]),
    "memory": _ts("Persistent memory across sessions", ["memory"]),
    "context_engine": _ts("Tools of the active context engine", []),
    "session_search": _ts("Search past conversations", ["session_search"]),
    "project": _ts("Desktop projects (GUI sessions only)", ["project_list", "project_create", "project_switch"]),
    "clarify": _ts("Ask the user a question", ["clarify"]),
    "code_execution": _ts("Run Python that calls tools", ["execute_code"]),
    "delegation": _ts("Subagents for independent subtasks", ["delegate_task"]),
    "homeassistant": _ts("Home Assistant control", _HA),
    "kanban": _ts("Kanban coordination for dispatched workers", _KANBAN),
    "discord": _ts("Discord: read and take part", ["discord"]),
    "discord_admin": _ts("Discord server management", ["discord_admin"]),
    "yuanbao": _ts("Yuanbao platform tools", _YUANBAO),
    "feishu_doc": _ts("Read Feishu/Lark documents", ["feishu_doc_read"]),
    "feishu_drive": _ts("Feishu/Lark document comments", _FEISHU_DRIVE),
    "spotify": _ts("Spotify playback, search and library", _SPOTIFY),
    "debugging": _ts("Terminal, web and files for troubleshooting", ["terminal", "process"], ("web", "file")),
    "safe": _ts("No terminal: web, vision, image generation", [], ("web", "vision", "image_gen")),
    "coding": {**_ts("Coding: files, terminal, web docs, skills, todo, delegation, vision, browser", _CODING),
               "posture": True},  # a composite made of basic toolsets, chosen whole (as in Hermes)
    "hermes-acp": _ts("Editors over ACP: coding tools without clarify", _ACP),
    "hermes-api-server": _ts("OpenAI-compatible API server (no interactive tools)", _API_SERVER),
    "hermes-cli": _ts("Default CLI toolset", CORE_TOOLS),
    "hermes-cron": _ts("Scheduled job runs", CORE_TOOLS),
    "hermes-telegram": _ts("Telegram", _CHAT),
    "hermes-discord": _ts("Discord", [*_CHAT, "discord", "discord_admin"]),
    "hermes-whatsapp": _ts("WhatsApp", _CHAT),
    "hermes-slack": _ts("Slack", _CHAT),
    "hermes-signal": _ts("Signal", _CHAT),
    "hermes-bluebubbles": _ts("iMessage through BlueBubbles", _CHAT),
    "hermes-homeassistant": _ts("Home Assistant", _CHAT),
    "hermes-email": _ts("Email (IMAP/SMTP)", _CHAT),
    "hermes-mattermost": _ts("Mattermost", _CHAT),
    "hermes-matrix": _ts("Matrix", _CHAT),
    "hermes-dingtalk": _ts("DingTalk", _CHAT),
    "hermes-feishu": _ts("Feishu/Lark", [*_CHAT, "feishu_doc_read", *_FEISHU_DRIVE]),
    "hermes-weixin": _ts("Weixin", _CHAT),
    "hermes-qqbot": _ts("QQ", _CHAT),
    "hermes-wecom": _ts("WeCom", _CHAT),
    "hermes-wecom-callback": _ts("WeCom callback app", _CHAT),
    "hermes-yuanbao": _ts("Yuanbao", [*_CHAT, *_YUANBAO]),
    "hermes-sms": _ts("SMS (Twilio)", _CHAT),
    "hermes-webhook": _ts("Webhook events (untrusted input: no terminal or files)", _WEBHOOK),
    "hermes-gateway": _ts("All messaging platforms", [], (
        "hermes-telegram", "hermes-discord", "hermes-whatsapp", "hermes-slack", "hermes-signal",
        "hermes-bluebubbles", "hermes-homeassistant", "hermes-email", "hermes-sms", "hermes-mattermost",
        "hermes-matrix", "hermes-dingtalk", "hermes-feishu", "hermes-wecom", "hermes-wecom-callback",
        "hermes-weixin", "hermes-qqbot", "hermes-webhook", "hermes-yuanbao")),
}

LEGACY_TOOLSETS: dict[str, list[str]] = {
    "web_tools": ["web_search", "web_extract"],
    "terminal_tools": ["terminal"],
    "vision_tools": ["vision_analyze"],
    "image_tools": ["image_generate"],
    "skills_tools": ["skills_list", "skill_view", "skill_manage"],
    "browser_tools": _BROWSER[:10],
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


def missing_tools(names: Iterable[str], dynamic: dict[str, list[str]] | None = None,
                  have: Iterable[str] = ()) -> list[str]:
    """Tools the named toolsets list that are not in `have` (Hermes tools this hermes lacks), in order."""
    present, out = set(have), []
    for name in names:
        for tool in resolve_or_skip(name, dynamic):
            if tool not in present and tool not in out:
                out.append(tool)
    return out


def not_yet_reported(missing: list[str]) -> list[str]:
    """The tools of `missing` not yet named in this process's warnings (so one run warns once)."""
    with _reported_lock:
        fresh = [t for t in missing if f"tool:{t}" not in _reported]
        _reported.update(f"tool:{t}" for t in missing)
    return fresh
