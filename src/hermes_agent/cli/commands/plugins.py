"""`hermes plugins list|enable|disable`: show plugins with their load status; switch them in config.yaml."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.edit import edit_config, section
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes plugins ...`."""
    p = subparsers.add_parser("plugins", help="List, enable and disable plugins")
    sub = p.add_subparsers(dest="plugins_command", metavar="ACTION")
    sub.add_parser("list", help="Installed plugins and whether they load")
    for action, text in (("enable", "Turn a plugin on"), ("disable", "Turn a plugin off")):
        sp = sub.add_parser(action, help=text)
        sp.add_argument("name")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes plugins` action; problems become one line on stderr."""
    action = getattr(args, "plugins_command", None) or "list"
    try:
        return _ACTIONS[action](args, settings)
    except ConfigError as exc:
        print(f"hermes plugins: {exc}", file=sys.stderr)
        return 1


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.plugins import discover_plugins, load_plugins
    from hermes_agent.tools.hooks import HookBus
    from hermes_agent.tools.registry import ToolRegistry

    plugins_dir = Path(settings.home) / "plugins"
    sources, _ = discover_plugins(plugins_dir)
    logging.getLogger("hermes_agent.plugins").setLevel(logging.ERROR)  # failures are listed below
    # Load into a private registry and hook bus: the same code path as the agent, no side effects on it.
    report = load_plugins(settings, HookBus(), registry=ToolRegistry(), plugins_dir=plugins_dir)
    if not sources and not report.failed:
        print(f"No plugins installed. Put one in {plugins_dir}/<name>/ (plugin.yaml + __init__.py with register(ctx)).")
        return 0
    manifests = {s.manifest.name: s.manifest for s in sources}
    labels = {}
    for name in {*manifests, *report.failed}:
        m = manifests.get(name)
        version = f" {m.version}" if m and m.version else ""
        source = f" [{m.source}]" if m and m.source != "user" else ""
        labels[name] = f"{name}{version}{source}"
    width = max(len(v) for v in labels.values())
    for name in sorted(labels):
        m = manifests.get(name)
        if name in report.failed:
            state = f"FAILED: {report.failed[name]}"
        elif name in report.disabled:
            state = "disabled (plugins.disabled)"
        elif name in report.not_enabled:
            state = f"not enabled (hermes plugins enable {name})"
        else:
            tools = report.tools.get(name) or []
            cmds = [f"/{c.name}" for c in report.commands.values() if c.plugin == name]
            state = "enabled" + (f"  tools: {', '.join(tools)}" if tools else "") + (
                f"  commands: {', '.join(cmds)}" if cmds else "")
        desc = f" - {m.description}" if m and m.description else ""
        print(f"{labels[name]:<{width}}  {state}{desc}")
        for warning in report.warnings.get(name, []):
            print(f"{'':<{width}}  warning: {warning}")
    if report.not_enabled:
        print(f"Skipped (not in plugins.enabled): {', '.join(sorted(report.not_enabled))}")
    return 1 if report.failed else 0


def _config_file(settings: Settings) -> Path:
    return Path(settings.config_file) if settings.config_file else paths.config_path()


def _set_list(plugins: dict, key: str, name: str, present: bool) -> None:
    from ruamel.yaml.comments import CommentedSeq

    items = plugins.get(key)
    if not isinstance(items, list):
        items = CommentedSeq()
    if present and name not in items:
        items.append(name)
    while not present and name in items:
        items.remove(name)
    if items:
        plugins[key] = items
    else:
        plugins.pop(key, None)


def _switch(args: argparse.Namespace, settings: Settings, on: bool) -> int:
    from hermes_agent.plugins import discover_plugins

    sources, _ = discover_plugins(Path(settings.home) / "plugins")
    manifest = next((s.manifest for s in sources if s.manifest.name == args.name), None)
    if manifest is None and on:
        raise ConfigError(f"no plugin named {args.name!r} (see: hermes plugins list)")

    def mutate(data: dict) -> None:
        plugins = section(data, "plugins")
        _set_list(plugins, "disabled", args.name, not on)
        _set_list(plugins, "enabled", args.name, on)
        if not plugins:
            del data["plugins"]

    edit_config(_config_file(settings), mutate)
    print(f"Plugin {args.name!r} {'enabled' if on else 'disabled'}; it takes effect in new sessions.")
    return 0


_ACTIONS = {
    "list": _list,
    "enable": lambda a, s: _switch(a, s, True),
    "disable": lambda a, s: _switch(a, s, False),
}
