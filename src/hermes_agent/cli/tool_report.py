"""Which tools exist, which toolsets a platform enables, and why a tool is unavailable (doctor, tools list).
Plugins load into a private registry, so inspecting never changes the running agent's tools."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_agent.config.settings import Settings


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """One tool: `reason` says why it is unavailable ('' when it is available)."""

    name: str
    toolset: str
    reason: str = ""

    @property
    def available(self) -> bool:
        return not self.reason


@dataclass(slots=True)
class ToolInventory:
    """Registered tools with their status, plus plugin load failures."""

    tools: dict[str, ToolStatus] = field(default_factory=dict)
    dynamic: dict[str, list[str]] = field(default_factory=dict)
    plugin_failures: dict[str, str] = field(default_factory=dict)

    def status(self, name: str) -> ToolStatus:
        return self.tools.get(name) or ToolStatus(name, "", "not included in this installation")


def _check_reason(entry: object, env: dict) -> str:
    missing = [v for v in getattr(entry, "requires_env", []) or [] if not str(env.get(v, "")).strip()]
    if missing:
        return f"needs {', '.join(missing)} (set with `hermes config set {missing[0]} ...`)"
    check = getattr(entry, "check_fn", None)
    if check is None:
        return ""
    try:
        ok = bool(check())
    except Exception as exc:  # a requirement check is third-party code; report, never crash
        return f"requirement check failed: {type(exc).__name__}: {exc}"
    if ok:
        return ""
    from hermes_agent.tools.registry import check_explanation

    why = check_explanation(check)
    return f"requirement not met: {why}" if why else f"requirement check {getattr(check, '__name__', '?')} failed"


def inventory(settings: Settings, *, plugins: bool = True) -> ToolInventory:
    """Discover built-in tools (and plugins, privately) and check each tool's availability."""
    from hermes_agent.tools.registry import ToolRegistry, discover_builtin_tools
    from hermes_agent.tools.registry import registry as builtin

    discover_builtin_tools()
    reg = ToolRegistry()
    for e in builtin.entries():
        reg.add(e)
    out = ToolInventory()
    if plugins:
        out.plugin_failures = _load_plugins(settings, reg)
    env = dict(settings.env)
    for entry in reg.entries():
        out.tools[entry.name] = ToolStatus(entry.name, entry.toolset, _check_reason(entry, env))
    out.dynamic = reg.toolsets()
    return out


def _load_plugins(settings: Settings, reg: object) -> dict[str, str]:
    import logging

    try:
        from hermes_agent.plugins import load_plugins
        from hermes_agent.tools.hooks import HookBus
    except ImportError:
        return {}
    logging.getLogger("hermes_agent.plugins").setLevel(logging.ERROR)  # failures are reported by the caller
    report = load_plugins(settings, HookBus(), registry=reg)  # type: ignore[arg-type]
    return dict(report.failed)


def enabled_toolsets(settings: Settings, platform: str) -> list[str]:
    """The toolsets the agent would enable on `platform` (same rule as bootstrap)."""
    from hermes_agent.bootstrap import platform_toolsets

    return platform_toolsets(settings, platform, None)


def selected_tools(toolsets: list[str], dynamic: dict[str, list[str]]) -> set[str]:
    """Tool names those toolsets select (unknown toolset names are skipped, not fatal here)."""
    from hermes_agent.errors import ToolError
    from hermes_agent.tools.toolsets import resolve_toolset

    names: set[str] = set()
    for ts in toolsets:
        try:
            names.update(resolve_toolset(ts, dynamic))
        except ToolError:
            continue
    return names
