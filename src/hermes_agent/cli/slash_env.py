"""Slash commands about the session's setup: /model, /provider, /tools, /toolsets, /skills, /config,
/personality, /reasoning, /verbose, /yolo, /stop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.errors import HermesError
from hermes_agent.events import Notice

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost


def _kv(repl: ReplHost, rows: list[tuple[str, object]]) -> None:
    width = max(len(k) for k, _ in rows)
    repl.screen.lines([f"  {repl.screen.style(k.ljust(width), 'cyan')}  {v}" for k, v in rows])


def model(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    if not arg:
        _kv(repl, [("model", agent.provider.model), ("provider", agent.provider.name)])
        repl.screen.line("  /model NAME switches the model for this session.", "dim")
        return
    from hermes_agent.bootstrap.provider import build_provider

    settings = repl.settings.with_overrides({"model.default": arg})
    provider = build_provider(settings, lambda text: repl.live(Notice(text, "warning")))
    agent.set_provider(provider)
    repl.settings = settings
    repl.screen.line(f"Model switched to {arg} for this session (config unchanged).", "green")


def provider(repl: ReplHost, arg: str) -> None:
    m = repl.settings.model
    rows: list[tuple[str, object]] = [("provider", m.provider), ("model", m.model or "(none)"),
                                      ("base_url", m.base_url or "(provider default)"),
                                      ("context", f"{m.context_length:,} tokens")]
    for i, row in enumerate(repl.settings.cfg.fallback_providers, 1):
        if isinstance(row, dict):
            rows.append((f"fallback {i}", f"{row.get('provider', 'custom')} {row.get('model', '')} "
                                          f"{row.get('base_url', '')}".strip()))
    _kv(repl, rows)


def tools(repl: ReplHost, arg: str) -> None:
    from hermes_agent.tools.registry import registry

    agent = repl.require_agent()
    names = [d["function"]["name"] for d in agent.tool_definitions()]
    rows = []
    for name in names:
        entry = registry.get(name)
        emoji = (entry.emoji if entry else "") or "🔧"
        toolset = entry.toolset if entry else "?"
        rows.append(f"  {emoji} {name.ljust(22)} {repl.screen.style(toolset, 'dim')}")
    repl.screen.lines(rows or ["  (no tools enabled)"])
    repl.screen.line(f"  {len(names)} tools", "dim")


def toolsets(repl: ReplHost, arg: str) -> None:
    from hermes_agent.tools.registry import registry
    from hermes_agent.tools.toolsets import TOOLSETS, all_toolset_names

    agent = repl.require_agent()
    enabled = set(agent.enabled_toolsets or [])
    dynamic = registry.toolsets()
    rows = []
    for name in all_toolset_names(dynamic):
        mark = repl.screen.style("●", "green") if name in enabled else repl.screen.style("○", "dim")
        desc = TOOLSETS.get(name, {}).get("description") or f"{len(dynamic.get(name, []))} tools"
        rows.append(f"  {mark} {name.ljust(20)} {repl.screen.style(desc, 'dim')}")
    repl.screen.lines(rows)


def skills(repl: ReplHost, arg: str) -> None:
    """`/skills` lists installed skills; `/skills search|install|update|... ARGS` runs the hub action."""
    if arg.strip() and arg.split()[0] != "list":
        from hermes_agent.cli.commands.skills import slash

        slash(repl.settings, arg, out=lambda text: repl.screen.line(text))
        return
    from hermes_agent.skills.catalog import catalog_from_settings

    found = catalog_from_settings(repl.settings).visible()
    if not found:
        repl.screen.line("No skills installed (they live in $HERMES_HOME/skills).", "dim")
        return
    rows = []
    for info in found:
        desc = (getattr(info, "description", "") or "").strip().split("\n")[0][:80]
        category = getattr(info, "category", None)
        rows.append(f"  {info.name.ljust(28)} {repl.screen.style(desc, 'dim')}"
                    + (repl.screen.style(f"  [{category}]", "dim") if category else ""))
    repl.screen.lines(rows)
    repl.screen.line(f"  {len(found)} skills", "dim")


def config(repl: ReplHost, arg: str) -> None:
    s = repl.settings
    rows: list[tuple[str, object]] = [
        ("config file", s.config_file or "(none)"), ("home", s.home),
        ("model", f"{s.model.model or '(none)'} via {s.model.base_url or s.model.provider}"),
        ("toolsets", ", ".join(repl.agent.enabled_toolsets or []) if repl.agent else s.cfg.toolsets),
        ("terminal", s.cfg.terminal.backend), ("approvals", s.cfg.approvals.mode),
        ("yolo", "on" if repl.approver.yolo else "off"), ("compression", s.cfg.compression.enabled),
        ("max turns", s.cfg.agent.max_turns), ("tool progress", repl.live.progress),
        ("reasoning", "shown" if repl.live.show_reasoning else "hidden"),
    ]
    _kv(repl, rows)
    repl.screen.line("  `hermes config edit` changes it; `hermes config show` prints everything.", "dim")


def personality(repl: ReplHost, arg: str) -> None:
    from hermes_agent.cli import personality as p

    agent = repl.require_agent()
    if not arg:
        rows = [f"  {'●' if active else '○'} {name.ljust(14)} {repl.screen.style(first, 'dim')}"
                for name, first, active in p.listing(repl.settings, p.current(agent))]
        repl.screen.lines(rows)
        repl.screen.line("  /personality NAME switches; named ones live under `personalities:` in config.", "dim")
        return
    p.apply(agent, repl.settings, arg)
    repl.personality = arg
    started = any(m.role != "system" for m in agent.history)
    when = "next conversation (/new starts one)" if started else "first message of this conversation"
    repl.screen.line(f"Personality set to {arg}: the system prompt changes from the {when}.", "green")


def reasoning(repl: ReplHost, arg: str) -> None:
    word = arg.lower()
    if word not in ("", "show", "hide", "on", "off"):
        raise HermesError("usage: /reasoning [show|hide]")
    repl.live.show_reasoning = (not repl.live.show_reasoning) if not word else word in ("show", "on")
    repl.screen.line(f"Reasoning is now {'shown (dimmed)' if repl.live.show_reasoning else 'hidden'}.", "green")


def verbose(repl: ReplHost, arg: str) -> None:
    from hermes_agent.cli.live import PROGRESS_MODES

    modes = list(PROGRESS_MODES)
    if arg:
        if arg not in modes:
            raise HermesError(f"usage: /verbose [{'|'.join(modes)}]")
        repl.live.progress = arg
    else:
        repl.live.progress = modes[(modes.index(repl.live.progress) + 1) % len(modes)]
    meaning = {"off": "no tool lines", "new": "a line when the tool changes", "all": "a line per tool call",
               "verbose": "a line per call plus the start of its output"}[repl.live.progress]
    repl.screen.line(f"Tool progress: {repl.live.progress} ({meaning}).", "green")


def yolo(repl: ReplHost, arg: str) -> None:
    agent = repl.require_agent()
    repl.approver.yolo = not repl.approver.yolo
    gate = agent.services.gate
    if gate is not None:
        gate.yolo = repl.approver.yolo  # the gate skips asking (hard-line rules still run first)
    if repl.approver.yolo:
        repl.screen.line("YOLO on: flagged commands run without asking (hard-line rules still apply; leaving the "
                         "sandbox still asks you, one call at a time).", "yellow")
    else:
        repl.screen.line("YOLO off: flagged commands ask for approval again.", "green")


def stop(repl: ReplHost, arg: str) -> None:
    from hermes_agent.terminal.processes import get_manager

    manager = get_manager()
    running = [p for p in manager.list() if p["status"] == "running"]
    for proc in running:
        manager.kill(proc["id"])
    if running:
        repl.screen.line(f"Stopped {len(running)} background process(es): "
                         + ", ".join(p["command"][:40] for p in running), "green")
    else:
        repl.screen.line("No background processes are running.", "dim")
