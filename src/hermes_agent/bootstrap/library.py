"""`from hermes_agent import AIAgent`: the library entry point (loaded on first use, not by every run)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_agent.core.agent import AgentServices
from hermes_agent.core.agent import AIAgent as CoreAgent
from hermes_agent.events import Event


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
            from hermes_agent.bootstrap import build_services
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
