"""Composition root: Settings + platform -> a ready AIAgent. The only place concrete classes are chosen."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from hermes_agent.config.settings import ModelSettings, Settings
from hermes_agent.core.agent import AgentServices, AIAgent, new_task_id
from hermes_agent.core.context import PromptParts
from hermes_agent.errors import ConfigError
from hermes_agent.events import Event, Notice
from hermes_agent.providers.base import Provider
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.providers.profiles import resolve_endpoint
from hermes_agent.providers.retry import FallbackProvider, RetryingProvider
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import HookBus
from hermes_agent.tools.registry import discover_builtin_tools

log = logging.getLogger(__name__)


def _fallback_models(settings: Settings) -> list[ModelSettings]:
    out = []
    for i, row in enumerate(settings.get("fallback_providers") or []):
        if not isinstance(row, dict):
            raise ConfigError(f"{settings.config_file}: fallback_providers[{i}] must be a mapping")
        key = row.get("api_key") or (settings.env.get(row["key_env"], "") if row.get("key_env") else "")
        out.append(ModelSettings(provider=str(row.get("provider") or "custom"), model=str(row.get("model") or ""),
                                 base_url=str(row.get("base_url") or ""), api_key=str(key or "")))
    return out


def build_provider(settings: Settings, notify: Callable[[str], None] | None = None) -> Provider:
    """Primary endpoint plus `fallback_providers`, each with retries and backoff."""
    retries = int(settings.get("agent.api_max_retries", 3) or 0)
    base_delay = float(settings.get("agent.retry_base_delay", 1.0) or 0.0)
    timeout = float(settings.get("agent.request_timeout", 600) or 600)
    chain: list[Provider] = []
    for model in [settings.model, *_fallback_models(settings)]:
        ep = resolve_endpoint(model, settings.env, str(settings.config_file))
        inner = OpenAIChatProvider(ep.base_url, ep.api_key, ep.model, name=ep.provider, timeout=timeout,
                                   wire_hook=_cache_hook(settings))
        chain.append(RetryingProvider(inner, retries, base_delay, notify=notify))
    return chain[0] if len(chain) == 1 else FallbackProvider(chain, notify=notify)


def _cache_hook(settings: Settings):
    if not settings.get("prompt_caching.enabled", True):
        return None
    try:
        from hermes_agent.providers.caching import apply_cache_breakpoints
    except ImportError:
        return None
    return apply_cache_breakpoints


def platform_toolsets(settings: Settings, platform: str, override: list[str] | None) -> list[str]:
    """Toolsets for a platform: CLI flag > platform_toolsets.<platform> > toolsets > hermes-<platform>."""
    if override:
        return override
    per = (settings.get("platform_toolsets") or {}).get(platform)
    if per:
        return list(per)
    if platform == "cli":
        return list(settings.get("toolsets") or ["hermes-cli"])
    return [f"hermes-{platform}"]


def build_agent(settings: Settings, *, platform: str = "cli", toolsets: list[str] | None = None,
                event_callback: Callable[[Event], None] | None = None, max_iterations: int | None = None,
                approver: object = None, interactive: bool = False, save_trajectories: bool = False) -> AIAgent:
    """Everything a frontend needs: provider chain, tools, hooks, context, stores."""
    notify = (lambda text: event_callback(Notice(text, "warning"))) if event_callback else None
    provider = build_provider(settings, notify)
    discover_builtin_tools()
    hooks = HookBus()
    ctx = ToolContext(settings=settings, task_id=new_task_id())
    services = AgentServices(provider=provider, settings=settings, ctx=ctx, hooks=hooks,
                             prompt_parts=PromptParts(cwd=os.getcwd()))
    services.closers.append(lambda: None)
    agent = AIAgent(max_iterations=max_iterations or int(settings.get("agent.max_turns", 60) or 60),
                    enabled_toolsets=platform_toolsets(settings, platform, toolsets),
                    services=services, event_callback=event_callback, save_trajectories=save_trajectories)
    agent.tool_definitions()  # validate toolset names now: a typo is a config error, not a mid-turn surprise
    return agent
