"""What a Hermes plugin imports from Hermes itself, for plugins written for the released Hermes:
`from tools.registry import registry, tool_error, tool_result`. The modules are aliases made in
sys.modules when the first plugin loads (never at import time, never when a real `tools` package
is importable), so nothing changes for a run without plugins."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable

from hermes_agent.tools.registry import ToolEntry, ToolRegistry
from hermes_agent.tools.registry import registry as default_registry
from hermes_agent.tools.results import tool_error, tool_result

SHIM_MARK = "__hermes_agent_shim__"


class ToolOverrideRefused(PermissionError):
    """A plugin asked to replace an existing tool without the operator's opt-in."""


def register_like_hermes(reg: ToolRegistry, name: str, toolset: str, schema: dict, handler: Callable[..., object],
                         check_fn: Callable[[], object] | None = None, requires_env: list | None = None,
                         is_async: bool = False, description: str = "", emoji: str = "",
                         max_result_size_chars: int | float | None = None,
                         dynamic_schema_overrides: Callable[..., object] | None = None,
                         override: bool = False, *, override_allowed: bool = True,
                         **traits: object) -> ToolEntry | None:
    """Hermes's `registry.register`: a name held by another toolset is kept (None returned, as Hermes
    rejects the shadowing) unless `override` — which raises when the operator did not allow it.
    (`dynamic_schema_overrides` is accepted; schemas here are static.) `traits` are ours (approval, ...).
    A plugin tool's result is untrusted content (it taints the turn, like an external MCP tool's): plugins read
    mail, feeds and pages. A plugin whose tool returns only what it computed itself opts out with
    `untrusted_output=False` (or a callable of the call's arguments)."""
    traits.setdefault("untrusted_output", True)
    existing = reg.get(name)
    if existing is not None and existing.toolset != toolset:
        if not override:
            return None
        if not override_allowed:
            raise ToolOverrideRefused(f"cannot override built-in tool {name!r} without "
                                      "plugins.entries.<plugin>.allow_tool_override: true in config.yaml")
    cap = int(max_result_size_chars) if isinstance(max_result_size_chars, int | float) and max_result_size_chars > 0 else None
    return reg.register(name, toolset, schema, handler, check_fn, requires_env, is_async, description, emoji, cap,
                        **traits)  # type: ignore[arg-type]


class HermesRegistryView:
    """`tools.registry.registry` as a Hermes plugin sees it: Hermes's register() signature over our
    registry; everything else (get, names, deregister, ...) is the registry's own."""

    def __init__(self, reg: ToolRegistry) -> None:
        self._reg = reg

    def register(self, name: str, toolset: str, schema: dict, handler: Callable[..., object],
                 *args: object, **kw: object) -> ToolEntry | None:
        return register_like_hermes(self._reg, name, toolset, schema, handler, *args, **kw)  # type: ignore[arg-type]

    def __getattr__(self, attr: str) -> object:
        return getattr(self._reg, attr)


def install_tools_shim(reg: ToolRegistry = default_registry) -> bool:
    """Make `tools` and `tools.registry` importable for plugins; False when a real `tools` package is
    there (it is left alone)."""
    present = sys.modules.get("tools")
    if present is not None:
        view = getattr(sys.modules.get("tools.registry"), "registry", None)
        if isinstance(view, HermesRegistryView):
            view._reg = reg  # plugins now load into `reg`
        return bool(getattr(present, SHIM_MARK, False))
    if importlib.util.find_spec("tools") is not None:
        return False
    package = types.ModuleType("tools", "Hermes plugin compatibility (hermes_agent.plugin_compat)")
    package.__path__ = []  # a package, so `import tools.registry` resolves through sys.modules
    setattr(package, SHIM_MARK, True)
    module = types.ModuleType("tools.registry", "Hermes's tools.registry for plugins")
    module.registry = HermesRegistryView(reg)  # type: ignore[attr-defined]
    module.tool_error = tool_error  # type: ignore[attr-defined]
    module.tool_result = tool_result  # type: ignore[attr-defined]
    module.ToolEntry = ToolEntry  # type: ignore[attr-defined]
    setattr(module, SHIM_MARK, True)
    package.registry = module  # type: ignore[attr-defined]
    sys.modules["tools"] = package
    sys.modules["tools.registry"] = module
    return True
