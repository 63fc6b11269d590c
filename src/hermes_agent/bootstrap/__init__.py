"""Composition root: Settings + platform -> a ready AIAgent. The only place concrete classes are chosen."""

from __future__ import annotations

import logging
from collections.abc import Callable

from hermes_agent.config.settings import Settings
from hermes_agent.core.agent import AgentServices, new_task_id
from hermes_agent.core.agent import AIAgent as CoreAgent
from hermes_agent.events import Event, Notice
from hermes_agent.plugins import PluginReport, load_plugins
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.dispatch import resolve_tool_names
from hermes_agent.tools.hooks import HookBus
from hermes_agent.tools.registry import discover_builtin_tools

from .delegation import wire_delegation
from .provider import auxiliary_provider, build_provider, titler
from .safety import wire_approval
from .session import SessionBinding, shared_store
from .stores import prompt_parts, wire_checkpoints, wire_compression, wire_memory_and_todo, wire_terminal

__all__ = ["AIAgent", "build_agent", "build_provider", "build_services", "platform_toolsets"]

log = logging.getLogger(__name__)


def platform_toolsets(settings: Settings, platform: str, override: list[str] | None,
                      plugin_toolsets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Toolsets for a platform: CLI flag > platform_toolsets.<platform> > toolsets > hermes-<platform>.
    Without a CLI flag, loaded plugins' toolsets are added as Hermes does: on unless the user turned
    one off (listed in known_plugin_toolsets.<platform> but not in platform_toolsets.<platform>)."""
    if override:
        return override
    per = (settings.get("platform_toolsets") or {}).get(platform)
    if per:
        chosen = list(per)
    elif platform == "cli":
        chosen = list(settings.get("toolsets") or ["hermes-cli"])
    else:
        chosen = [f"hermes-{platform}"]
    known = (settings.get("known_plugin_toolsets") or {}).get(platform) or []
    return chosen + [t for t in plugin_toolsets if t not in chosen and t not in known]


def build_services(settings: Settings, *, platform: str = "cli", toolsets: list[str] | None = None,
                   event_callback: Callable[[Event], None] | None = None, approver: object = None,
                   interactive: bool = False, persist: bool = True) -> tuple[AgentServices, list[str]]:
    """Provider chain, tools, hooks, approval, context, stores: everything an agent runs on."""
    notify = (lambda text: event_callback(Notice(text, "warning"))) if event_callback else None
    provider = build_provider(settings, notify)
    discover_builtin_tools()
    hooks = HookBus()
    plugin_report = _load_plugins(settings, hooks)
    ctx = ToolContext(settings=settings, task_id=new_task_id(), extras={"hook_bus": hooks, "plugins": plugin_report})
    services = AgentServices(provider=provider, settings=settings, ctx=ctx, hooks=hooks)
    _start_mcp(services, settings, wait=not interactive)
    wire_approval(services, settings, approver, interactive)  # type: ignore[arg-type]
    memory = wire_memory_and_todo(services, settings)
    enabled = platform_toolsets(settings, platform, toolsets, plugin_report.toolsets)
    tool_names = resolve_tool_names(enabled)
    with_skills = "skill_view" in tool_names
    services.prompt_parts = prompt_parts(settings, memory, with_skills=with_skills)
    services.refresh_prompt = lambda: prompt_parts(settings, memory, with_skills=with_skills, refresh=True)
    binding = _wire_session(services, settings, platform) if persist else None
    wire_compression(services, settings, event_callback, binding.on_compressed if binding else None)
    wire_checkpoints(services, settings)
    wire_terminal(services, settings)
    if "delegate_task" in tool_names:
        wire_delegation(services, enabled, persist=persist, emit=event_callback)
    return services, enabled


def build_agent(settings: Settings, *, platform: str = "cli", toolsets: list[str] | None = None,
                event_callback: Callable[[Event], None] | None = None, max_iterations: int | None = None,
                approver: object = None, interactive: bool = False, save_trajectories: bool = False,
                resume: str | None = None, persist: bool = True,
                clarify: Callable[[str, list[str]], str] | None = None) -> CoreAgent:
    """A ready agent for a frontend (validates toolsets now, restores a session when asked)."""
    services, enabled = build_services(settings, platform=platform, toolsets=toolsets, event_callback=event_callback,
                                       approver=approver, interactive=interactive, persist=persist)
    agent = CoreAgent(max_iterations=max_iterations or int(settings.get("agent.max_turns", 90) or 90),
                      enabled_toolsets=enabled, services=services, event_callback=event_callback,
                      save_trajectories=save_trajectories)
    services.ctx.clarify = clarify
    agent.tool_definitions()  # a toolset typo is a clear error now, not a mid-turn surprise
    binding = services.ctx.extras.get("session_binding")
    if resume and binding is not None:
        agent.history = binding.resume(resume)
    return agent


class AIAgent(CoreAgent):
    """`from hermes_agent import AIAgent`: the library entry point, composed like the CLI's agent
    (memory, todo, skills, sessions, approval that denies flagged commands since a library cannot ask)."""

    def __init__(self, model: str | None = None, api_key: str | None = None, base_url: str | None = None,
                 max_iterations: int = 60, enabled_toolsets: list[str] | None = None,
                 disabled_toolsets: list[str] | None = None, quiet_mode: bool = False,
                 tool_progress_callback: Callable[[str, str], None] | None = None, save_trajectories: bool = False,
                 *, services: AgentServices | None = None, event_callback: Callable[[Event], None] | None = None,
                 platform: str = "cli", provider: str | None = None) -> None:
        if services is None:
            from hermes_agent.config.loader import load_settings

            settings = load_settings({"model.default": model, "model.base_url": base_url,
                                      "model.api_key": api_key, "model.provider": provider})
            services, default_toolsets = build_services(settings, platform=platform, toolsets=enabled_toolsets,
                                                        event_callback=event_callback)
            enabled_toolsets = enabled_toolsets or default_toolsets
        super().__init__(max_iterations=max_iterations, enabled_toolsets=enabled_toolsets,
                         disabled_toolsets=disabled_toolsets, quiet_mode=quiet_mode,
                         tool_progress_callback=tool_progress_callback, save_trajectories=save_trajectories,
                         services=services, event_callback=event_callback)


def _load_plugins(settings: Settings, hooks: HookBus) -> PluginReport:
    report = load_plugins(settings, hooks)
    for name, why in report.failed.items():
        log.warning("plugin %s skipped: %s", name, why)
    return report


def _start_mcp(services: AgentServices, settings: Settings, *, wait: bool) -> None:
    """MCP servers connect in the background; a one-shot run waits briefly so their tools are usable."""
    if not settings.get("mcp_servers"):
        return
    from hermes_agent.tools.mcp import start_mcp

    mcp = start_mcp(settings)
    if mcp is None:
        return
    services.closers.append(mcp.shutdown)
    timeout = float(settings.get("mcp_discovery_timeout", 1.5) or 0)
    if wait and timeout > 0:
        mcp.wait_ready(timeout)


def _wire_session(services: AgentServices, settings: Settings, platform: str) -> SessionBinding:
    mode = settings.get("sessions.title_mode", "first_message")
    store = shared_store(auto_title=mode != "off")
    binding = SessionBinding(store, services, platform)
    if mode == "llm":  # the user opted in to one extra (auxiliary) model call per session
        binding.titler = titler(auxiliary_provider(settings, "title_generation", services.provider))
    services.persist = binding.persist
    services.intercepts["session_search"] = binding.search
    services.on_reset.append(binding.new_session)
    services.on_rewind.append(binding.on_rewind)
    services.closers.append(binding.end)
    services.ctx.extras["session_binding"] = binding
    return binding
