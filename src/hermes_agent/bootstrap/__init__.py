"""Composition root: Settings + platform -> a ready AIAgent. The only place concrete classes are chosen."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.errors import StorageError, ToolError
from hermes_agent.events import Event, Notice
from hermes_agent.lazylog import get_logger

from .options import RunOptions, person_options

if TYPE_CHECKING:
    from hermes_agent.config.settings import Settings
    from hermes_agent.core.agent import AgentServices
    from hermes_agent.core.contract import AgentSession
    from hermes_agent.plugins import PluginReport
    from hermes_agent.storage.store import SessionStore
    from hermes_agent.tools.hooks import HookBus

    from .budget import Meter
    from .library import AIAgent
    from .session import SessionBinding

# Only what a run needs is imported, when it needs it (ARCHITECTURE rule 3): delegation, approval rules,
# MCP and plugins load on first use; `from hermes_agent.bootstrap import AIAgent` resolves lazily, and so does
# `build_provider` (the provider chain pulls in http.client: the REPL shows its prompt before it is needed).


def __getattr__(name: str) -> object:
    if name == "AIAgent":
        from .library import AIAgent

        return AIAgent
    if name == "build_provider":
        from .provider import build_provider

        return build_provider
    raise AttributeError(name)


__all__ = ["AIAgent", "RunOptions", "build_agent", "person_options", "build_provider", "build_services", "platform_toolsets"]

log = get_logger(__name__)


def platform_toolsets(settings: Settings, platform: str, override: list[str] | None,
                      plugin_toolsets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Toolsets for a platform: CLI flag > platform_toolsets.<platform> > toolsets > hermes-<platform>.
    Without a CLI flag, loaded plugins' toolsets are added as Hermes does: on unless the user turned
    one off (listed in known_plugin_toolsets.<platform> but not in platform_toolsets.<platform>)."""
    if override:
        return override
    per = settings.cfg.platform_toolsets.get(platform)
    if per:
        chosen = list(per)
    elif platform == "cli":
        chosen = list(settings.cfg.toolsets)
    else:
        chosen = [f"hermes-{platform.replace('_', '-')}"]  # api_server -> hermes-api-server
    known = settings.cfg.known_plugin_toolsets.get(platform) or []
    return chosen + [t for t in plugin_toolsets if t not in chosen and t not in known]


def checked_toolsets(enabled: list[str], warn: Callable[[str], None] | None) -> list[str]:
    """`enabled` without unknown toolset names, each named in one warning (an error when none is left);
    a toolset whose tools are all unavailable here is kept but named too, and the Hermes tools a
    chosen toolset lists that this hermes lacks are named in one warning per run."""
    from hermes_agent.tools.registry import registry
    from hermes_agent.tools.toolsets import resolve_toolset

    dynamic = registry.toolsets()
    kept, unknown, partial = [], [], []
    for name in enabled:
        if name.startswith(("hermes-", "mcp-")) or name in ("all", "*"):  # MCP toolsets may register later
            kept.append(name)
            continue
        try:
            tools = resolve_toolset(name, dynamic)
        except ToolError:
            unknown.append(name)
            continue
        kept.append(name)
        usable = registry.availability(tools)
        if tools and warn is not None and not any(usable.values()):
            why = "; ".join(dict.fromkeys(w for t in tools if (w := registry.why_unavailable(t))))
            warn(f"toolset {name!r} has no usable tool here ({', '.join(tools)} unavailable"
                 + (f", requirement not met: {why})" if why else ")"))
        elif len(usable) < len(tools):
            partial.append(name)
    if unknown and not kept:
        resolve_toolset(unknown[0], dynamic)  # raises the ToolError naming it and the known toolsets
    if unknown and warn is not None:
        warn(f"unknown toolset{'s' if len(unknown) > 1 else ''} ignored: {', '.join(unknown)}")
    _warn_missing(partial, dynamic, warn)
    return kept


def _warn_missing(partial: list[str], dynamic: dict[str, list[str]], warn: Callable[[str], None] | None) -> None:
    from hermes_agent.tools.registry import registry
    from hermes_agent.tools.toolsets import missing_tools, not_yet_reported

    fresh = not_yet_reported(missing_tools(partial, dynamic, registry.names()))
    if fresh and warn is not None:
        warn(f"toolset{'s' if len(partial) > 1 else ''} {', '.join(partial)}: not in this hermes, "
             f"left out: {', '.join(fresh)}")


def build_services(settings: Settings, *, platform: str = "cli", toolsets: list[str] | None = None,
                   event_callback: Callable[[Event], None] | None = None, approver: object = None,
                   interactive: bool = False, persist: bool = True,
                   options: RunOptions | None = None) -> tuple[AgentServices, list[str]]:
    """Provider chain, tools, hooks, approval, context, stores: everything an agent runs on."""
    from hermes_agent.core.agent import AgentServices, new_task_id
    from hermes_agent.tools.context import ToolContext
    from hermes_agent.tools.dispatch import resolve_tool_names
    from hermes_agent.tools.hooks import HookBus
    from hermes_agent.tools.registry import discover_builtin_tools

    from .provider import auxiliary_provider, build_provider, provider_from_row, summarizer
    from .safety import wire_approval
    from .stores import (
        finish_context_watch,
        prompt_parts,
        skills_in,
        wire_browser_and_vision,
        wire_checkpoints,
        wire_compression,
        wire_memory_and_todo,
        wire_terminal,
    )

    opts = options or RunOptions()
    notify = (lambda text: event_callback(Notice(text, "warning"))) if event_callback else None
    services_ref: list[AgentServices] = []
    meter = _meter(settings, platform, opts, services_ref, notify)
    provider = build_provider(settings, notify, meter)
    discover_builtin_tools(toolsets=platform_toolsets(settings, platform, toolsets))
    hooks = HookBus()
    plugin_report = _load_plugins(settings, hooks, safe_mode=opts.safe_mode)
    ctx = ToolContext(settings=settings, task_id=new_task_id(), hook_bus=hooks, person=opts.person, role=opts.role,
                      media_scope=opts.media_scope, provider_for=lambda row: provider_from_row(settings, row, meter, "moa"))
    services = AgentServices(provider=provider, settings=settings, ctx=ctx, hooks=hooks, meter=meter)
    services_ref.append(services)
    if settings.cfg.web.summarize:  # the user opted in to auxiliary calls for long web pages
        ctx.summarize = summarizer(auxiliary_provider(settings, "web_extract", provider), max_tokens=2000)
    wire_checkpoints(services, settings)  # before an MCP server may write the workspace (terminal/base.py keep_work)
    if not opts.safe_mode:
        _start_mcp(services, settings, wait=not interactive, warn=notify)
    wire_approval(services, settings, approver, interactive)  # type: ignore[arg-type]
    memory = wire_memory_and_todo(services, settings, user_dir=opts.user_dir)
    if opts.role == "member":  # their own cron jobs (the only ones the tool lets them touch) need nobody's approval
        from hermes_agent.tools.provenance import OWN_CRON_JOBS

        ctx.private_persists = ctx.private_persists | OWN_CRON_JOBS
    plugin_toolsets = plugin_report.toolsets if plugin_report is not None else ()
    enabled = checked_toolsets(platform_toolsets(settings, platform, toolsets, plugin_toolsets), notify)
    with_skills = skills_in(resolve_tool_names(enabled))
    extra = opts.prompt_extra
    services.prompt_parts = prompt_parts(settings, memory, with_skills=with_skills, ignore_rules=opts.ignore_rules,
                                         extra=extra)
    services.refresh_prompt = lambda: prompt_parts(settings, memory, with_skills=with_skills, refresh=True,
                                                   ignore_rules=opts.ignore_rules, extra=extra)
    binding = _wire_session(services, settings, platform, interactive) if persist else None
    wire_compression(services, settings, event_callback, binding.on_compressed if binding else None)
    wire_terminal(services, settings, warm=platform == "cli")
    wire_browser_and_vision(services, settings)
    services.closers.append(lambda: finish_context_watch(ctx))  # last: the session's processes are gone
    _wire_delegation(services, enabled, persist=persist, emit=event_callback, disabled=opts.disabled_toolsets)
    if opts.person and persist:
        from .stores import wire_attribution

        wire_attribution(services, settings, opts.person, opts.role)
    return services, enabled


def spender(platform: str, opts: RunOptions) -> str:
    """Whose budget a run spends: the person a frontend names, else cron's or batch's, else the owner's ("")."""
    if opts.spender is not None:
        return opts.spender
    return platform if platform in ("cron", "batch") else ""


def _role_caps_set(settings: Settings) -> bool:
    """Whether a team role has a `budget` (config/team.py, imported only then: `chat -q` start-up stays as it was)."""
    team = settings.cfg.team
    if not (isinstance(team, dict) and team.get("roles")):
        return False
    from hermes_agent.config.team import any_role_caps

    return any_role_caps(settings)


def _meter(settings: Settings, platform: str, opts: RunOptions, ref: list[AgentServices],
           notify: Callable[[str], None] | None) -> Meter | None:
    """The run's spending meter (None when no cap applies: nothing is imported or checked); spend is kept in
    the session store once the session has one."""
    b = settings.cfg.budget
    if not (b.users or b.cron or b.batch or _role_caps_set(settings) or any(v is not None for v in (
            b.session_usd, b.day_usd, b.month_usd, b.session_tokens, b.day_tokens, b.month_tokens))):
        return None
    from .budget import Ledger, Meter

    def session_id() -> str | None:
        s = ref[0] if ref else None
        if s is None:
            return None
        return (s.session.lineage or s.session.id) if s.session is not None else s.session_id

    meter = Meter(settings, spender(platform, opts), Ledger(lambda: None), session_id, notify, role=opts.role or None)
    if not meter.caps.any():
        return None

    def store() -> object | None:  # a run that keeps no session (batch) still books spend when it has caps
        s = ref[0] if ref else None
        if s is not None and s.session is not None:
            return s.session.store
        from .session import shared_store

        return shared_store()

    meter.ledger = Ledger(store)
    return meter


def build_agent(settings: Settings, *, platform: str = "cli", toolsets: list[str] | None = None,
                event_callback: Callable[[Event], None] | None = None, max_iterations: int | None = None,
                approver: object = None, interactive: bool = False, save_trajectories: bool = False,
                resume: str | None = None, persist: bool = True,
                clarify: Callable[[str, list[str]], str] | None = None,
                options: RunOptions | None = None) -> AgentSession:
    """A ready agent for a frontend (the door contract; validates toolsets now, restores a session when asked)."""
    from hermes_agent.core.agent import AIAgent as CoreAgent

    services, enabled = build_services(settings, platform=platform, toolsets=toolsets, event_callback=event_callback,
                                       approver=approver, interactive=interactive, persist=persist, options=options)
    disabled = list(options.disabled_toolsets) if options and options.disabled_toolsets else None
    agent = CoreAgent(max_iterations=max_iterations or settings.cfg.agent.max_turns,
                      enabled_toolsets=enabled, disabled_toolsets=disabled, services=services,
                      event_callback=event_callback, save_trajectories=save_trajectories)
    services.ctx.clarify = clarify
    agent.tool_definitions()  # a toolset typo is a clear error now, not a mid-turn surprise
    if resume and services.session is not None:
        agent.history = services.session.resume(resume, by_title=bool(options and options.resume_by_title))
        agent.taint_from_history()
    return agent


def _load_plugins(settings: Settings, hooks: HookBus, *, safe_mode: bool) -> PluginReport | None:
    """None when no plugin can load: safe mode, or none enabled (plugins are opt-in) and no plugin folder whose
    plugin.yaml could be reported broken."""
    if safe_mode or (not settings.cfg.plugins.enabled and not _has_plugin_dirs(settings.home / "plugins")):
        return None
    from hermes_agent.plugins import load_plugins

    report = load_plugins(settings, hooks)
    for name, why in report.failed.items():
        log.warning("plugin %s skipped: %s", name, why)
    return report


def _has_plugin_dirs(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.is_dir() and not e.name.startswith((".", "_")) for e in it)
    except OSError:
        return False


def _start_mcp(services: AgentServices, settings: Settings, *, wait: bool,
               warn: Callable[[str], None] | None = None) -> None:
    """MCP servers connect in the background (the `mcp` SDK loads on that thread); a one-shot run waits for
    them, up to `mcp_single_query_discovery_timeout`, returning as soon as every server is up or failed. A
    server whose entry is broken or whose command is missing is named in one line and costs nothing: it is
    sorted out from the config alone, before the manager, asyncio or the context watch load. Exit never waits
    long for a server."""
    if not settings.cfg.mcp_servers:
        return
    from hermes_agent.tools.mcp.config import startable

    servers, left_out = startable(settings.cfg.mcp_servers, settings.env)
    for name, why in left_out.items():
        if warn is not None:
            warn(f"MCP server {name} skipped: {why}")
    if not servers:
        return
    from hermes_agent.tools import ctxwatch, readwatch
    from hermes_agent.tools.mcp.manager import McpManager

    ctxwatch.watch_for(services.ctx).start()  # the baseline before any server can write (tools/ctxwatch.py)
    readwatch.look(services.ctx, "before the MCP servers start")  # a server's reads at its start count (prov13)
    # stdio servers run inside the session's sandbox (tools/mcp/confine.py)
    mcp = McpManager.from_settings(settings, servers=servers, errors=left_out).start()
    for name, why in mcp.config_errors.items():
        if warn is not None and name not in left_out:
            warn(f"MCP server {name} skipped: {why}" if name != "*" else f"MCP servers skipped: {why}")
    if not mcp.running:
        return
    services.closers.append(lambda: mcp.shutdown(timeout=_MCP_EXIT_WAIT_S))
    timeout = settings.cfg.mcp_single_query_discovery_timeout
    if wait and timeout > 0:
        mcp.wait_ready(timeout)


_MCP_EXIT_WAIT_S = 2.0  # a server slower than this to close is left to die with the process


def _wire_session(services: AgentServices, settings: Settings, platform: str,
                  interactive: bool = False) -> SessionBinding:
    from .provider import auxiliary_provider, titler
    from .session import apply_retention, bind_session, shared_store, store_is_open

    mode = settings.cfg.sessions.title_mode

    def open_store() -> SessionStore:
        store = shared_store(auto_title=mode != "off")
        if store.read_only:  # one line, and the turn goes on unsaved (SessionBinding)
            raise StorageError(f"cannot save this conversation: {store.read_only}")
        apply_retention(store, settings)
        return store

    # the CLI's store opens once the first request is on its way (SessionBinding.open_soon); a spending cap books
    # against the session from the first call, other frontends name their session early, and a plugin's
    # on_session_start comes before its first pre_llm_call (with the session's id): opened now
    late = (platform == "cli" and services.meter is None and not store_is_open()
            and not services.hooks.has("on_session_start"))
    binding = bind_session(None if late else open_store(), services, platform, opener=open_store)
    if interactive:  # the REPL: opened while the user types the first message (the turn never waits for it)
        binding.open_soon()
    if mode == "llm":  # the user opted in to one extra (auxiliary) model call per session
        binding.titler = titler(auxiliary_provider(settings, "title_generation", services.provider))
    services.on_reset.append(binding.new_session)
    services.on_rewind.append(binding.on_rewind)
    return binding


def _wire_delegation(services: AgentServices, enabled: list[str], *, persist: bool,
                     emit: Callable[[Event], None] | None, disabled: tuple[str, ...] = ()) -> None:
    """`ctx.delegate`: subagent machinery (bootstrap/delegation.py) loads on the first delegate_task call."""

    def delegate(args: dict) -> str:
        from .delegation import Delegator

        return Delegator(services, enabled, persist=persist, emit=emit, disabled=disabled)(args)

    services.ctx.delegate = delegate
