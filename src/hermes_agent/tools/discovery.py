"""Built-in tool discovery: import only modules with a top-level `registry.register(...)` call."""

from __future__ import annotations

import ast
import importlib
import logging
from pathlib import Path

log = logging.getLogger(__name__)

_BUILTIN_PACKAGE = "hermes_agent.tools.builtin"
_DONE: dict[str, list[str]] = {}


def _registers_at_top_level(source: str) -> bool:
    if "registry.register(" not in source:
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else getattr(node, "value", None)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            owner = call.func.value
            if call.func.attr == "register" and isinstance(owner, ast.Name) and owner.id == "registry":
                return True
    return False


def discover_builtin_tools(tools_dir: str | Path | None = None, package: str = _BUILTIN_PACKAGE) -> list[str]:
    """Import every tool module in `tools_dir` that registers tools; return the imported module names.
    A module that fails to import is logged and skipped."""
    base = Path(tools_dir) if tools_dir else Path(__file__).with_name("builtin")
    key = f"{base}|{package}"
    if key in _DONE:
        return list(_DONE[key])
    imported: list[str] = []
    for path in sorted(base.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            source = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if not _registers_at_top_level(source):
            continue
        module = f"{package}.{path.stem}"
        try:
            importlib.import_module(module)
        except Exception as exc:
            log.warning("tool module %s failed to import: %s: %s", module, type(exc).__name__, exc)
            continue
        imported.append(module)
    _DONE[key] = imported
    return imported
