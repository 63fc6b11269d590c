"""The built-in tool manifest (issue 24): a run learns the builtin tools' schemas and traits from
tools/builtin_manifest.json and imports a tool's module only when the model calls it. Each check runs in a fresh
interpreter, where nothing was imported or registered yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _python(code: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_committed_manifest_is_what_the_tool_modules_register() -> None:
    # imports every builtin tool module and compares; when this fails, run the command it prints
    proc = subprocess.run([sys.executable, "-m", "hermes_agent.tools.manifest", "--check"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr


def test_placeholders_offer_what_the_modules_offer_without_importing_them(hermes_home: Path) -> None:
    got = _python("""
        import json, sys
        from hermes_agent.tools.discovery import discover_builtin_tools
        from hermes_agent.tools.registry import ManifestEntry, registry
        from hermes_agent.tools.toolsets import TOOLSETS
        everything = sorted(TOOLSETS)
        discover_builtin_tools(toolsets=everything)
        imported = sorted(m for m in sys.modules if m.startswith("hermes_agent.tools.builtin.") and
                          not m.rsplit(".", 1)[1].startswith("_"))
        names = registry.names()
        deferred = sorted(n for n in names if isinstance(registry.get(n), ManifestEntry))
        before = registry.get_definitions(names)
        held = {n: registry.get(n) for n in deferred}
        discover_builtin_tools()  # every module now: the real entries fill the placeholders
        after = registry.get_definitions(names)
        plain = ("toolset", "schema", "description", "emoji", "requires_env", "is_async", "max_result_size_chars",
                 "parallel_safe", "approval", "subagent_ok", "needs", "path_arg", "preview_arg", "show_name",
                 "unlocked_by")
        differ = [f"{n}.{k}" for n, e in held.items() for k in plain if getattr(e, k) != getattr(e.real, k)]
        replaced = [n for n in deferred if registry.get(n) is not held[n].real]
        print(json.dumps({"imported": imported, "in-module": deferred, "same_definitions": before == after,
                          "differ": differ, "replaced": replaced, "count": len(names)}))
    """, hermes_home)
    assert got["imported"] == []
    assert got["count"] >= 40 and len(got["in-module"]) == got["count"]
    assert got["same_definitions"] and got["differ"] == [] and got["replaced"] == []


def test_a_call_imports_the_tool_module_and_runs_the_real_tool(hermes_home: Path) -> None:
    got = _python("""
        import json, sys, types
        from hermes_agent.memory.todo import TodoStore
        from hermes_agent.tools.discovery import discover_builtin_tools
        from hermes_agent.tools.registry import registry
        discover_builtin_tools(toolsets=["todo", "terminal"])
        was = "hermes_agent.tools.builtin.todo" in sys.modules
        subject = registry.get("terminal").subject({"command": "rm -rf /tmp/x"})  # a trait living in the module
        out = json.loads(registry.dispatch("todo", {"todos": [{"id": "1", "content": "a", "status": "pending"}]},
                                           ctx=types.SimpleNamespace(todo_store=TodoStore())))
        print(json.dumps({"was": was, "now": "hermes_agent.tools.builtin.todo" in sys.modules, "out": out,
                          "subject": subject.command, "terminal": "hermes_agent.tools.builtin.terminal" in sys.modules}))
    """, hermes_home)
    assert got["was"] is False and got["now"] is True
    assert [t["content"] for t in got["out"]["todos"]] == ["a"]
    assert got["subject"] == "rm -rf /tmp/x" and got["terminal"] is True


def test_a_plugin_that_replaced_a_placeholder_keeps_the_name(hermes_home: Path) -> None:
    got = _python("""
        import json
        from hermes_agent.tools.discovery import discover_builtin_tools
        from hermes_agent.tools.registry import registry
        discover_builtin_tools(toolsets=["file"])
        placeholder = registry.get("read_file")
        registry.register("read_file", "plugin-x", {"name": "read_file", "description": "plugin"},
                          lambda args, **kw: "from the plugin")
        write = registry.dispatch("write_file", {"path": "/nonexistent/x", "content": "x"})  # imports files.py
        print(json.dumps({"read": registry.dispatch("read_file", {"path": "x"}), "filled": placeholder.real is not None,
                          "toolset": registry.get("read_file").toolset, "write_is_real": "error" in write}))
    """, hermes_home)
    assert got == {"read": "from the plugin", "filled": True, "toolset": "plugin-x", "write_is_real": True}


def test_a_manifest_older_than_the_sources_is_not_used(hermes_home: Path, tmp_path: Path) -> None:
    stale = tmp_path / "manifest.json"
    data = json.loads((ROOT / "src/hermes_agent/tools/builtin_manifest.json").read_text(encoding="utf-8"))
    stale.write_text(json.dumps({**data, "digest": "00000000"}), encoding="utf-8")
    got = _python(f"""
        import json, sys
        from hermes_agent.tools import manifest
        manifest.MANIFEST = manifest.Path({str(stale)!r})
        from hermes_agent.tools.discovery import discover_builtin_tools
        from hermes_agent.tools.registry import ManifestEntry, registry
        discover_builtin_tools(toolsets=["todo"])
        print(json.dumps({{"imported": "hermes_agent.tools.builtin.todo" in sys.modules,
                          "in-module": isinstance(registry.get("todo"), ManifestEntry)}}))
    """, hermes_home)
    assert got == {"imported": True, "in-module": False}


def test_the_sources_checksum_is_read_again_when_a_source_changes(tmp_path, monkeypatch):
    # issue 24 (speed14): a start reuses the checksum its sources' names, sizes and mtimes were last seen with
    from hermes_agent.tools import manifest

    folder, cache = tmp_path / "builtin", tmp_path / "__pycache__" / "builtin-digest.txt"
    folder.mkdir()
    (folder / "a.py").write_text("A = 1\n")
    (folder / "b.py").write_text("B = 2\n")
    monkeypatch.setattr(manifest, "_BUILTIN", folder)
    monkeypatch.setattr(manifest, "_STAT_CACHE", cache)
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    first = manifest.digest()
    assert cache.read_text().startswith(first + "\n")
    assert manifest.digest() == first
    cache.write_text("deadbeef\n" + cache.read_text().partition("\n")[2])  # the same stats: the kept figure
    assert manifest.digest() == "deadbeef"
    (folder / "b.py").write_text("B = 3\n")  # same size, new bytes and mtime
    os.utime(folder / "b.py", ns=(1, 1))
    changed = manifest.digest()
    assert changed not in (first, "deadbeef")
    (folder / "c.py").write_text("")  # a new module counts too
    assert manifest.digest() != changed
