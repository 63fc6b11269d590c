"""`hermes tools list|enable|disable [--platform P]`: toolsets and tools with availability; enable/disable
edit `platform_toolsets.<platform>` in config.yaml (comments kept)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError

if TYPE_CHECKING:
    from hermes_agent.cli.tool_report import ToolInventory


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes tools ...`."""
    p = subparsers.add_parser("tools", help="list toolsets and tools; enable or disable toolsets per platform")
    sub = p.add_subparsers(dest="tools_command", metavar="ACTION")
    ls = sub.add_parser("list", help="toolsets and their tools, with availability")
    ls.add_argument("--platform", default="cli", help="platform (cli, telegram, discord, slack, cron, ...)")
    for action, text in (("enable", "turn a toolset on"), ("disable", "turn a toolset off")):
        sp = sub.add_parser(action, help=f"{text} for a platform")
        sp.add_argument("name", help="toolset name (see `hermes tools list`)")
        sp.add_argument("--platform", default="cli", help="platform (default cli)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes tools` action; problems become one line on stderr."""
    action = getattr(args, "tools_command", None) or "list"
    if not hasattr(args, "platform"):
        args.platform = "cli"
    try:
        return _ACTIONS[action](args, settings)
    except HermesError as exc:
        print(f"hermes tools {action}: {exc}", file=sys.stderr)
        return 1


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.tool_report import enabled_toolsets, inventory, selected_tools
    from hermes_agent.tools.toolsets import TOOLSETS, resolve_toolset

    inv = inventory(settings)
    active = enabled_toolsets(settings, args.platform)
    chosen = selected_tools(active, inv.dynamic)
    print(f"platform {args.platform}: toolsets {', '.join(active)}  ({len(chosen & set(inv.tools))} tools selected)")
    names = [*TOOLSETS, *sorted(set(inv.dynamic) - set(TOOLSETS))]
    width = max(len(n) for n in names)
    for name in names:
        tools = resolve_toolset(name, inv.dynamic)
        on = sum(t in chosen for t in tools)
        mark = "[x]" if tools and on == len(tools) else "[~]" if on else "[ ]"
        desc = TOOLSETS.get(name, {}).get("description", "plugin/MCP toolset")
        print(f"{mark} {name:<{width}}  {desc}{_coverage(tools, inv)}")
        if name.startswith("hermes-") or TOOLSETS.get(name, {}).get("includes") or len(tools) > 20:
            continue  # composites repeat tools listed under the basic toolsets
        _details(tools, inv)
    for plugin, why in sorted(inv.plugin_failures.items()):
        print(f"plugin {plugin} failed to load: {why}", file=sys.stderr)
    print("[x] enabled  [~] partly enabled  [ ] off — change with `hermes tools enable|disable NAME`")
    return 0


def _coverage(tools: list[str], inv: ToolInventory) -> str:
    """' (partial: 14 of 60 tools here)' when some of a toolset's tools are not in this hermes."""
    here = sum(t in inv.tools for t in tools)
    if not tools or here == len(tools):
        return ""
    return f"  (partial: {here} of {len(tools)} tools here)" if here else "  (none of its tools here yet)"


def _details(tools: list[str], inv: ToolInventory) -> None:
    ready = [t for t in tools if inv.status(t).available]
    if ready:
        print(f"      ready: {', '.join(ready)}")
    for tool in tools:
        if tool in inv.tools and not inv.status(tool).available:
            print(f"      unavailable: {tool} — {inv.status(tool).reason}")
    absent = [t for t in tools if t not in inv.tools]
    if ready and absent:
        print(f"      not in this hermes: {', '.join(absent)}")


def _basic_toolsets(dynamic: dict[str, list[str]]) -> list[str]:
    """Toolsets that are plain tool lists and not a strict subset of another (search ⊂ web)."""
    from hermes_agent.tools.toolsets import TOOLSETS

    plain = {n: set(s.get("tools", [])) for n, s in TOOLSETS.items()
             if not n.startswith("hermes-") and not s.get("includes") and not s.get("posture") and s.get("tools")}
    plain.update({n: set(t) for n, t in dynamic.items() if n not in TOOLSETS})
    return [n for n, tools in plain.items() if not any(tools < other for o, other in plain.items() if o != n)]


def _expand(name: str, dynamic: dict[str, list[str]]) -> list[str]:
    """A composite toolset as the basic toolsets it is made of (so one part can be switched off)."""
    from hermes_agent.tools.toolsets import resolve_toolset

    covered = set(resolve_toolset(name, dynamic))
    parts = [b for b in _basic_toolsets(dynamic) if set(resolve_toolset(b, dynamic)) <= covered]
    return parts or [name]


def _known(name: str, settings: Settings, dynamic: dict[str, list[str]]) -> None:
    import difflib

    from hermes_agent.tools.toolsets import LEGACY_TOOLSETS, TOOLSETS, all_toolset_names

    mcp = {f"mcp-{s}" for s in settings.cfg.mcp_servers}
    if name in TOOLSETS or name in LEGACY_TOOLSETS or name in dynamic or name in mcp or name in ("all", "*"):
        return
    known = [*all_toolset_names(dynamic), *sorted(mcp)]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; known: {', '.join(known)}"
    raise HermesError(f"unknown toolset {name!r}{hint}")


def _save(settings: Settings, platform: str, toolsets: list[str]) -> Path:
    from hermes_agent.config.edit import ConfigDocument

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    doc = ConfigDocument.load(cfg)
    doc.set(f"platform_toolsets.{platform}", toolsets)
    doc.save()
    return cfg


def _enable(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.tool_report import enabled_toolsets, inventory, selected_tools
    from hermes_agent.tools.toolsets import resolve_toolset

    inv = inventory(settings)
    dynamic = inv.dynamic
    _known(args.name, settings, dynamic)
    current = enabled_toolsets(settings, args.platform)
    if args.name in current:
        print(f"{args.name} is already enabled for {args.platform}")
        return 0
    wanted = set(resolve_toolset(args.name, dynamic)) if not args.name.startswith("mcp-") else set()
    if wanted and wanted <= selected_tools(current, dynamic):
        print(f"{args.name} is already enabled for {args.platform} (through {', '.join(current)})")
        _note_unusable(inv, wanted)
        return 0
    cfg = _save(settings, args.platform, [*current, args.name])
    print(f"enabled {args.name} for {args.platform}: platform_toolsets.{args.platform} = "
          f"{[*current, args.name]} ({cfg})")
    _note_unusable(inv, wanted)
    return 0


def _note_unusable(inv: object, tools: set[str]) -> None:
    """An enabled toolset whose tools cannot run here yet says what they need (as `hermes tools list` does)."""
    for name in sorted(tools):
        status = inv.tools.get(name)  # type: ignore[attr-defined]
        if status is not None and status.reason and "not included" not in status.reason:
            print(f"note: {name} is not usable yet ({status.reason})", file=sys.stderr)


def _disable(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.tool_report import enabled_toolsets, inventory, selected_tools
    from hermes_agent.tools.toolsets import resolve_toolset

    dynamic = inventory(settings).dynamic
    _known(args.name, settings, dynamic)
    current = enabled_toolsets(settings, args.platform)
    target = set(resolve_toolset(args.name, dynamic)) if not args.name.startswith("mcp-") else set()
    if args.name not in current and not (target & selected_tools(current, dynamic)):
        print(f"{args.name} is not enabled for {args.platform}")
        return 0
    new: list[str] = []
    for ts in current:
        if ts == args.name:
            continue
        covered = set(resolve_toolset(ts, dynamic)) if not ts.startswith("mcp-") else set()
        parts = _expand(ts, dynamic) if target and target <= covered and ts != args.name else [ts]
        new.extend(p for p in parts if p != args.name and p not in new)
    if not new:
        raise HermesError(f"{args.name} is the only toolset enabled for {args.platform}; enable another first")
    cfg = _save(settings, args.platform, new)
    still = sorted(target & selected_tools(new, dynamic))
    print(f"disabled {args.name} for {args.platform}: platform_toolsets.{args.platform} = {new} ({cfg})")
    if still:
        print(f"note: still enabled through other toolsets: {', '.join(still)}")
    return 0


_ACTIONS = {"list": _list, "enable": _enable, "disable": _disable}
