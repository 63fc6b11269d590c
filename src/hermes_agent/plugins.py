"""Plugins: `$HERMES_HOME/plugins/<name>/` (plugin.yaml + `register(ctx)`) and the entry-point group
`hermes_agent.plugins`, opt-in as in Hermes (only names listed in `plugins.enabled` load). A plugin
adds tools, hooks and slash commands; one that fails is reported and skipped, never stopping the
agent. Registration is all-or-nothing per plugin; a tool name already held by another toolset is
skipped with a warning unless the plugin passes `override=True` and the operator allowed it
(`plugins.entries.<name>.allow_tool_override: true`), as in Hermes."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.config.settings import Settings
from hermes_agent.plugin_compat import install_tools_shim, register_like_hermes
from hermes_agent.tools.hooks import VALID_HOOKS, HookBus
from hermes_agent.tools.registry import ToolRegistry
from hermes_agent.tools.registry import registry as default_registry

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "hermes_agent.plugins"
_MODULE_ROOT = "hermes_plugins"
_NAME = lazyre.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_COMMAND = lazyre.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


@dataclass(frozen=True, slots=True)
class PluginManifest:
    """What plugin.yaml (or the distribution metadata) says about a plugin."""

    name: str
    description: str = ""
    version: str = ""
    enabled: bool = True
    source: str = "user"  # user | entry_point
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class PluginSource:
    """A discovered plugin: its manifest and how to get its register(ctx) function."""

    manifest: PluginManifest
    load: Callable[[], Callable[[PluginContext], object]]


@dataclass(frozen=True, slots=True)
class PluginCommand:
    """A slash command added by a plugin; `handler(args: str, **kw)` returns text to show."""

    name: str
    handler: Callable[..., object]
    help: str
    plugin: str


@dataclass(slots=True)
class PluginReport:
    """Outcome of load_plugins: what loaded, what failed (with the reason) and what is disabled."""

    loaded: list[PluginManifest] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    disabled: list[str] = field(default_factory=list)  # listed in plugins.disabled
    not_enabled: list[str] = field(default_factory=list)  # not listed in plugins.enabled (opt-in)
    commands: dict[str, PluginCommand] = field(default_factory=dict)
    tools: dict[str, list[str]] = field(default_factory=dict)
    toolsets: list[str] = field(default_factory=list)  # toolsets the loaded plugins' tools are in
    warnings: dict[str, list[str]] = field(default_factory=dict)


class PluginContext:
    """Handed to a plugin's register(ctx). Registrations are buffered and applied only when
    register() returns without raising."""

    def __init__(self, manifest: PluginManifest, settings: Settings) -> None:
        self.manifest = manifest
        self.settings = settings
        self._tools: list[dict] = []
        self._hooks: list[tuple[str, Callable[..., object]]] = []
        self._commands: list[PluginCommand] = []

    @property
    def name(self) -> str:
        return self.manifest.name

    def register_tool(self, name: str, toolset: str | None = None, schema: dict | None = None,
                      handler: Callable[..., object] | None = None, check_fn: Callable[[], object] | None = None,
                      requires_env: list | None = None, is_async: bool = False, description: str = "",
                      emoji: str = "", override: bool = False, **kw: object) -> None:
        """Hermes's ctx.register_tool (toolset defaults to `plugin-<name>`; also max_result_size_chars); approval
        defaults to "external" (asked only when the plugin passes an `approval_subject` that returns something);
        the result counts as untrusted content unless the plugin passes `untrusted_output=False`."""
        if not isinstance(schema, dict) or not callable(handler):
            raise ValueError(f"register_tool({name!r}) needs a schema dict and a callable handler")
        if override and not self.override_allowed:
            raise PermissionError(f"plugin {self.name!r} cannot override built-in tool {name!r}: set "
                                  f"plugins.entries.{self.name}.allow_tool_override: true in config.yaml")
        self._tools.append({"name": name, "toolset": toolset or f"plugin-{self.name}", "schema": schema,
                            "handler": handler, "check_fn": check_fn, "requires_env": requires_env,
                            "is_async": is_async, "description": description, "emoji": emoji,
                            "override": override, "approval": "external", **kw})

    @property
    def override_allowed(self) -> bool:
        """`plugins.entries.<name>.allow_tool_override` (Hermes's opt-in for replacing a tool)."""
        entries = self.settings.cfg.plugins.entries
        entry = entries.get(self.name) if isinstance(entries, dict) else None
        return bool(isinstance(entry, dict) and entry.get("allow_tool_override"))

    def register_hook(self, event: str, fn: Callable[..., object]) -> None:
        """Subscribe `fn` to a hook event (pre_tool_call, post_tool_call, pre_llm_call, ...)."""
        if event not in VALID_HOOKS:
            raise ValueError(f"unknown hook event {event!r}; valid: {', '.join(sorted(VALID_HOOKS))}")
        if not callable(fn):
            raise ValueError(f"hook for {event} is not callable")
        self._hooks.append((event, fn))

    def register_command(self, name: str, handler: Callable[..., object], help: str = "") -> None:
        """Add a slash command `/name` (lowercase letters, digits, - and _)."""
        name = name.lstrip("/")
        if not _COMMAND.match(name):
            raise ValueError(f"invalid command name {name!r}")
        if not callable(handler):
            raise ValueError(f"handler of /{name} is not callable")
        self._commands.append(PluginCommand(name, handler, help, self.name))

    def _commit(self, reg: ToolRegistry, hooks: HookBus, report: PluginReport) -> None:
        """Check every buffered registration for conflicts, then apply them all. A tool whose name another
        toolset holds is skipped with a warning (Hermes rejects such shadowing) unless it overrides."""
        for cmd in self._commands:
            if cmd.name in report.commands:
                raise ValueError(f"command /{cmd.name} already added by plugin {report.commands[cmd.name].plugin}")
        added = []
        for tool in self._tools:
            if register_like_hermes(reg, **tool, override_allowed=self.override_allowed) is None:
                held = reg.get(tool["name"])
                report.warnings.setdefault(self.name, []).append(
                    f"tool {tool['name']!r} skipped: toolset {held.toolset if held else '?'} already has it "
                    "(register it with override=True to replace it)")
            else:
                added.append(tool)
        for event, fn in self._hooks:
            hooks.register(event, fn)
        for cmd in self._commands:
            report.commands[cmd.name] = cmd
        report.tools[self.name] = [t["name"] for t in added]
        report.toolsets.extend(t["toolset"] for t in added if t["toolset"] not in report.toolsets)


def _read_manifest(plugin_dir: Path) -> PluginManifest:
    data: dict = {}
    manifest = plugin_dir / "plugin.yaml"
    if manifest.exists():
        from ruamel.yaml import YAML

        loaded = YAML(typ="safe", pure=True).load(manifest.read_text(encoding="utf-8"))
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError("plugin.yaml must be a mapping")
        data = loaded or {}
    enabled = data.get("enabled", True) not in (False, "false", "no", "off")
    return PluginManifest(name=str(data.get("name") or plugin_dir.name), description=str(data.get("description") or ""),
                          version=str(data.get("version") or ""), enabled=enabled, source="user", path=plugin_dir)


def _dir_loader(name: str, plugin_dir: Path) -> Callable[[], Callable[[PluginContext], object]]:
    def load() -> Callable[[PluginContext], object]:
        entry = plugin_dir / "__init__.py"
        if not entry.exists():
            entry = plugin_dir / "plugin.py"
        if not entry.exists():
            raise ImportError("no __init__.py or plugin.py")
        if _MODULE_ROOT not in sys.modules:
            root = types.ModuleType(_MODULE_ROOT)
            root.__path__ = []
            sys.modules[_MODULE_ROOT] = root
        mod_name = f"{_MODULE_ROOT}.{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
        spec = importlib.util.spec_from_file_location(mod_name, entry, submodule_search_locations=[str(plugin_dir)])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {entry}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
        return _register_of(module)

    return load


def _register_of(obj: object) -> Callable[[PluginContext], object]:
    fn = obj if callable(obj) and not isinstance(obj, types.ModuleType) else getattr(obj, "register", None)
    if not callable(fn):
        raise ImportError("the plugin has no register(ctx) function")
    return fn  # type: ignore[return-value]


def _declares_entry_point_plugins() -> bool:
    """Cheap pre-check: does any installed distribution's entry_points.txt name our group? Saves the
    ~40 ms of importing and scanning importlib.metadata on every start when none does. Asked once per
    process (and sys.path): a gateway composes an agent per chat."""
    key = tuple(sys.path)
    if key not in _DECLARED:
        _DECLARED[key] = _scan_entry_points()
    return _DECLARED[key]


_DECLARED: dict[tuple[str, ...], bool] = {}


def _scan_entry_points() -> bool:
    for base in sys.path:
        try:
            entries = os.scandir(base or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as fh:
                        if ENTRY_POINT_GROUP in fh.read():
                            return True
                except OSError:
                    continue
    return False


def _entry_point_sources() -> list[PluginSource]:
    if not _declares_entry_point_plugins():
        return []
    from importlib.metadata import entry_points

    out = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        meta = getattr(dist, "metadata", None)
        manifest = PluginManifest(name=ep.name, description=str(meta.get("Summary", "") if meta else ""),
                                  version=str(getattr(dist, "version", "") or ""), source="entry_point")
        out.append(PluginSource(manifest, (lambda ep=ep: _register_of(ep.load()))))
    return out


def discover_plugins(plugins_dir: Path, *, entry_points: bool = True) -> tuple[list[PluginSource], dict[str, str]]:
    """Plugins in `plugins_dir` then entry points (same name: the entry point wins); plus
    name -> reason for directories whose plugin.yaml cannot be read."""
    found: dict[str, PluginSource] = {}
    broken: dict[str, str] = {}
    if plugins_dir.is_dir():
        for child in sorted(plugins_dir.iterdir()):
            if not child.is_dir() or child.name.startswith((".", "_")):
                continue
            try:
                manifest = _read_manifest(child)
            except Exception as exc:
                broken[child.name] = f"plugin.yaml: {type(exc).__name__}: {exc}"
                continue
            found[manifest.name] = PluginSource(manifest, _dir_loader(manifest.name, child))
    if entry_points:
        try:
            for src in _entry_point_sources():
                found[src.manifest.name] = src
        except Exception as exc:
            log.warning("reading %s entry points failed: %s", ENTRY_POINT_GROUP, exc)
    return list(found.values()), broken


def is_enabled(manifest: PluginManifest, settings: Settings) -> bool:
    """Opt-in as in Hermes: listed in `plugins.enabled` and not in `plugins.disabled`."""
    disabled = settings.cfg.plugins.disabled
    enabled = settings.cfg.plugins.enabled
    return manifest.name in enabled and manifest.name not in disabled


def load_plugins(settings: Settings, hooks: HookBus, *, registry: ToolRegistry | None = None,
                 plugins_dir: Path | None = None, entry_points: bool = True) -> PluginReport:
    """Discover and load every enabled plugin; failures are reported, never raised."""
    reg = registry or default_registry
    report = PluginReport()
    sources, broken = discover_plugins(plugins_dir or Path(settings.home) / "plugins", entry_points=entry_points)
    report.failed.update(broken)
    for src in sources:
        manifest = src.manifest
        if not _NAME.match(manifest.name):
            report.failed[manifest.name] = "invalid plugin name (letters, digits, . _ - only)"
            continue
        if not is_enabled(manifest, settings):
            listed = manifest.name in settings.cfg.plugins.disabled
            (report.disabled if listed else report.not_enabled).append(manifest.name)
            continue
        try:
            install_tools_shim(reg)
            register = src.load()
            ctx = PluginContext(manifest, settings)
            register(ctx)
            ctx._commit(reg, hooks, report)
        except BaseException as exc:  # a plugin may even call sys.exit; it must not stop the agent
            if isinstance(exc, KeyboardInterrupt):
                raise
            report.failed[manifest.name] = f"{type(exc).__name__}: {exc}"
            log.warning("plugin %s skipped: %s", manifest.name, report.failed[manifest.name])
            continue
        report.loaded.append(manifest)
    return report
