"""The built-in tool manifest: what every module of `tools/builtin/` registers (name, toolset, schema, plain
traits, and where each trait function lives), written to `builtin_manifest.json` by
`python -m hermes_agent.tools.manifest` (`--check` compares instead: tests/unit/tools/test_tool_manifest.py).
Discovery registers placeholders from it (registry.ManifestEntry), so a run sends its first request without
importing a tool module; a tool's module is imported when the model first calls it. The manifest carries a
checksum of the builtin sources: when they changed since it was written, discovery imports modules instead."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from hermes_agent.lazylog import get_logger
from hermes_agent.tools.registry import LazyTrait, ManifestEntry, ToolEntry, registry

log = get_logger(__name__)

MANIFEST = Path(__file__).with_name("builtin_manifest.json")
PACKAGE = "hermes_agent.tools.builtin"
_BUILTIN = Path(__file__).with_name("builtin")
VERSION = 1
_PLAIN = ("schema", "description", "emoji", "requires_env", "is_async", "max_result_size_chars", "parallel_safe",
          "approval", "subagent_ok", "path_arg", "preview_arg", "show_name", "unlocked_by")
# trait functions: None, a bool (untrusted_output), "module:name" (imported on its own) or "in-module" (lives in
# the tool's module: the placeholder imports that module when the trait is first called)
_FUNCTIONS = ("check_fn", "dynamic_schema", "approval_subject", "persists", "untrusted_output")
_cache: list = []  # [manifest or None], read once per process


def digest() -> str:
    """Checksum of the builtin tool sources (names and bytes of tools/builtin/*.py). A start whose sources have
    the names, sizes and modification times the last computing run saw reuses its figure (kept in tools'
    __pycache__, which Python's own .pyc files trust on the same two stats) instead of reading ~40 files."""
    import os
    import zlib

    folder = str(_BUILTIN)  # os.listdir, not Path.glob: the glob compiled a regex and walked pathlib's selectors
    names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    seen = ";".join(f"{n}:{st.st_size}:{st.st_mtime_ns}" for n in names
                    for st in (os.stat(os.path.join(folder, n)),))
    try:
        figure, _, stats = _STAT_CACHE.read_text(encoding="utf-8").partition("\n")
        if stats == seen and len(figure) == 8:
            return figure
    except (OSError, ValueError):
        pass
    crc = 0
    for name in names:
        with open(os.path.join(folder, name), "rb") as fh:
            crc = zlib.crc32(fh.read(), zlib.crc32(name.encode(), crc))
    figure = f"{crc:08x}"
    _keep(f"{figure}\n{seen}")
    return figure


_STAT_CACHE = Path(__file__).with_name("__pycache__") / "builtin-digest.txt"  # the figure, then the stats it is for


def _keep(text: str) -> None:
    """Keep the figure with its stats (not when bytecode writing is off; silently not when it cannot)."""
    import os

    if sys.dont_write_bytecode:
        return
    tmp = _STAT_CACHE.with_name(f"{_STAT_CACHE.name}.{os.getpid()}.tmp")
    try:
        tmp.parent.mkdir(exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, _STAT_CACHE)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # a read-only tree says EROFS even for a name that is not there
            pass


def current() -> dict | None:
    """The manifest when it was written from the sources installed here, else None (discovery imports)."""
    if not _cache:
        _cache.append(_read())
    return _cache[0]


def _read() -> dict | None:
    try:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("digest") != digest():
        log.debug("tool manifest out of date: tool modules are imported instead")
        return None
    return data


def module_tools(data: dict) -> dict[str, list[dict]]:
    """Module stem -> its tool records, in manifest order."""
    out: dict[str, list[dict]] = {}
    for rec in data["tools"]:
        out.setdefault(rec["module"], []).append(rec)
    return out


def register_placeholders(records: list[dict]) -> None:
    """Placeholders for one module's tools in the process-wide registry."""
    for rec in records:
        registry.add_placeholder(_placeholder(rec))


def _placeholder(rec: dict) -> ManifestEntry:
    fields = {k: rec[k] for k in _PLAIN}
    entry = ManifestEntry(f"{PACKAGE}.{rec['module']}", name=rec["name"], toolset=rec["toolset"], handler=None,
                          needs=frozenset(rec["needs"]), **fields)
    entry.handler = LazyTrait(entry, "handler")
    for trait in _FUNCTIONS:
        value = rec[trait]
        if value == "in-module":
            value = LazyTrait(entry, trait)
        elif isinstance(value, str):
            owner, _, name = value.partition(":")
            value = getattr(importlib.import_module(owner), name)
        setattr(entry, trait, value)
    return entry


def _where(fn: object, module: str) -> object:
    if fn is None or isinstance(fn, bool):
        return fn
    owner, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if owner and owner != module and name.isidentifier() and getattr(sys.modules.get(owner), name, None) is fn:
        return f"{owner}:{name}"
    return "in-module"


def _record(entry: ToolEntry, stem: str) -> dict:
    rec: dict = {"name": entry.name, "toolset": entry.toolset, "module": stem}
    rec.update({k: getattr(entry, k) for k in _PLAIN})
    rec["needs"] = sorted(entry.needs)
    rec.update({k: _where(getattr(entry, k), f"{PACKAGE}.{stem}") for k in _FUNCTIONS})
    return rec


def build() -> dict:
    """Import every builtin tool module (in a fresh process) and describe what each registers."""
    from hermes_agent.tools.discovery import builtin_modules

    tools: list[dict] = []
    always: list[str] = []
    for stem, dynamic in builtin_modules():
        before = set(registry.names())
        importlib.import_module(f"{PACKAGE}.{stem}")
        tools.extend(_record(registry.get(n), stem) for n in sorted(set(registry.names()) - before))  # type: ignore[arg-type]
        if dynamic:
            always.append(stem)
    data = {"version": VERSION, "digest": digest(), "always": always, "tools": tools}
    return json.loads(json.dumps(data, ensure_ascii=False))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    built = build()
    text = json.dumps(built, ensure_ascii=False, indent=1) + "\n"
    if "--check" in args:
        try:
            ok = json.loads(MANIFEST.read_text(encoding="utf-8")) == built
        except (OSError, ValueError):
            ok = False
        if not ok:
            print(f"{MANIFEST} is out of date: run python -m hermes_agent.tools.manifest", file=sys.stderr)
            return 1
        print(f"{MANIFEST.name}: {len(built['tools'])} tools, up to date")
        return 0
    MANIFEST.write_text(text, encoding="utf-8")
    print(f"wrote {MANIFEST} ({len(built['tools'])} tools)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
