"""Built-in tool discovery: import only modules with a top-level `registry.register(...)` call, and of
those only the ones a run's toolsets need. Each module is scanned (text, not AST) once per process."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.lazylog import get_logger

log = get_logger(__name__)

_BUILTIN_PACKAGE = "hermes_agent.tools.builtin"
_SCANNED: dict[str, dict[str, tuple[frozenset[str], frozenset[str], bool]]] = {}  # base -> stem -> scan
_DONE: dict[str, list[str]] = {}  # base|package -> modules imported, in order
_FAILED: set[str] = set()
_PLACEHELD: set[str] = set()  # builtin modules whose tools were registered as manifest placeholders
# registry.register("name", "toolset", ... written with literal strings (how every built-in registers)
_LITERAL = lazyre.compile(r"""^[ \t]*registry\.register\(\s*["']([\w.-]+)["']\s*,\s*["']([\w.-]+)["']""", re.M)
_CALL = lazyre.compile(r"^[ \t]*registry\.register\(", re.M)


def _scan(source: str) -> tuple[frozenset[str], frozenset[str], bool] | None:
    """(tool names, toolsets, registers tools other than by literal names) of a module registering at top
    level; None for a module that does not (a register call inside a function is not discovery's)."""
    if not (source.startswith("registry.register(") or "\nregistry.register(" in source):
        return None
    literal = _LITERAL.findall(source)
    dynamic = len(_CALL.findall(source)) > len(literal)
    return frozenset(n for n, _ in literal), frozenset(t for _, t in literal), dynamic


def _modules(base: Path) -> dict[str, tuple[frozenset[str], frozenset[str], bool]]:
    key = str(base)
    if key not in _SCANNED:
        found = {}
        for path in sorted(base.glob("*.py")):
            if path.name.startswith("_"):
                continue
            try:
                scan = _scan(path.read_text(encoding="utf-8"))
            except OSError:
                continue
            if scan is not None:
                found[path.stem] = scan
        _SCANNED[key] = found
    return _SCANNED[key]


def _wanted(toolsets: Iterable[str] | None) -> tuple[set[str], set[str]] | None:
    """(tool names, toolset names) the toolsets need, or None when only importing everything can tell."""
    if toolsets is None:
        return None
    from hermes_agent.errors import ToolError
    from hermes_agent.tools.toolsets import LEGACY_TOOLSETS, TOOLSETS, resolve_toolset

    tools: set[str] = set()
    names: set[str] = set()
    for name in toolsets:
        if name.startswith("mcp-"):
            continue  # MCP servers register these themselves
        if name in ("all", "*") or (name not in TOOLSETS and name not in LEGACY_TOOLSETS):
            return None  # a toolset only a module can define (or a typo, named later): scan them all
        try:
            tools.update(resolve_toolset(name))
        except ToolError:
            return None
        names.add(name)
    return tools, names


def builtin_modules() -> list[tuple[str, bool]]:
    """(stem, registers other than by literal names) of each builtin module that registers tools."""
    return [(stem, dynamic) for stem, (_, _, dynamic) in _modules(Path(__file__).with_name("builtin")).items()]


def _from_manifest(wanted: tuple[set[str], set[str]], done: list[str]) -> bool:
    """Placeholders for the wanted tools' modules from the tool manifest (no tool module imported); False when
    there is no manifest matching the sources."""
    from hermes_agent.tools import manifest

    data = manifest.current()
    if data is None:
        return False
    always = set(data["always"])
    for stem, records in manifest.module_tools(data).items():
        module = f"{_BUILTIN_PACKAGE}.{stem}"
        if module in done or module in _PLACEHELD:
            continue
        if stem in always or any(r["name"] in wanted[0] or r["toolset"] in wanted[1] for r in records):
            manifest.register_placeholders(records)
            _PLACEHELD.add(module)
    return True


def discover_builtin_tools(tools_dir: str | Path | None = None, package: str = _BUILTIN_PACKAGE,
                           toolsets: Iterable[str] | None = None) -> list[str]:
    """Import the tool modules in `tools_dir` that register tools (with `toolsets`, only those registering a
    tool those toolsets name; for the builtin package, placeholders from the tool manifest instead, each module
    imported when one of its tools is first called); return every module imported so far. A module failing to
    import is logged and skipped."""
    base = Path(tools_dir) if tools_dir else Path(__file__).with_name("builtin")
    done = _DONE.setdefault(f"{base}|{package}", [])
    wanted = _wanted(toolsets)
    if wanted is not None and tools_dir is None and package == _BUILTIN_PACKAGE and _from_manifest(wanted, done):
        return list(done)
    for stem, (names, sets, dynamic) in _modules(base).items():
        module = f"{package}.{stem}"
        if module in done or module in _FAILED:
            continue
        if wanted is not None and not (dynamic or names & wanted[0] or sets & wanted[1]):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:
            log.warning("tool module %s failed to import: %s: %s", module, type(exc).__name__, exc)
            _FAILED.add(module)
            continue
        done.append(module)
    return list(done)
