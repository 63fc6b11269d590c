"""Building the REPL's agent in the background (after the prompt is up) and wiring its interactive seams:
the approver, the clarify callback, the startup personality and the `-r/-c` resume recap."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hermes_agent.errors import ConfigError, HermesError

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost
    from hermes_agent.config.settings import Settings
    from hermes_agent.core.contract import AgentSession

log = logging.getLogger(__name__)


def build(repl: ReplHost) -> None:
    """Build the agent on the runner thread; a failure prints one line and ends the REPL."""
    from hermes_agent.cli.approver import make_clarify
    from hermes_agent.cli.run_flags import resume_target

    resume = resume_target(repl.args)
    try:
        from hermes_agent.bootstrap import build_agent

        agent = build_agent(repl.settings, platform="cli", toolsets=repl.toolsets, event_callback=repl.live,
                            max_iterations=getattr(repl.args, "max_iterations", None), approver=repl.approver,
                            interactive=True, resume=resume, options=repl.options)
    except ConfigError as exc:
        _fail(repl, f"hermes: config error: {exc}", 2)
        return
    except HermesError as exc:
        _fail(repl, f"hermes: error: {exc}", 1)
        return
    except Exception as exc:  # frontend boundary
        log.debug("agent build failed", exc_info=True)
        _fail(repl, f"hermes: error: {type(exc).__name__}: {exc}", 1)
        return
    cancel = agent.services.ctx.interrupt
    repl.approver.cancel = cancel
    timeout = repl.settings.cfg.agent.clarify_timeout
    agent.services.ctx.clarify = make_clarify(repl.asker, timeout, cancel)
    repl.agent = agent
    repl.ready.set()
    _startup_personality(repl, agent)
    repl.screen.line(ready_line(repl, agent), "dim")
    if resume:
        from hermes_agent.cli.slash_session import recap

        recap(repl)
    repl.invalidate()
    _prewarm()


def _fail(repl: ReplHost, message: str, code: int) -> None:
    repl.screen.line(message, "red")
    repl.ready.set()
    repl.request_exit(code)


def ready_line(repl: ReplHost, agent: AgentSession) -> str:
    """`27 tools from 1 toolset · 6 skills · session …` once the agent exists."""
    tools = len(agent.tool_definitions())
    toolsets = agent.enabled_toolsets or []
    parts = [f"{tools} tools from {len(toolsets)} toolset{'s' if len(toolsets) != 1 else ''} "
             f"({', '.join(toolsets)})"]
    skills = skills_count(repl.settings)
    if skills is not None:
        parts.append(f"{skills} skill{'s' if skills != 1 else ''}")
    if agent.session_id:
        parts.append(f"session {agent.session_id}")
    return "  " + " · ".join(parts)


def skills_count(settings: Settings) -> int | None:
    """Visible skills in the catalog, or None when the catalog cannot be read."""
    try:
        from hermes_agent.skills.catalog import catalog_from_settings

        return len(catalog_from_settings(settings).visible())
    except Exception:  # the banner must never fail the REPL
        log.debug("skill count failed", exc_info=True)
        return None


def _startup_personality(repl: ReplHost, agent: AgentSession) -> None:
    name = repl.settings.cfg.display.personality.strip()
    if not name:
        return
    from hermes_agent.cli.personality import apply

    try:
        apply(agent, repl.settings, name)
        repl.personality = name
    except HermesError as exc:
        repl.screen.line(f"personality: {exc}", "yellow")


def _prewarm() -> None:
    try:
        from hermes_agent.cli.screen import prewarm

        prewarm()
    except Exception:  # only a speed-up
        log.debug("rich prewarm failed", exc_info=True)
