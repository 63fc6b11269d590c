"""Registry: definitions filtered by check_fn (once per call), dispatch errors as JSON, async bridging."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from hermes_agent.tools.discovery import discover_builtin_tools
from hermes_agent.tools.registry import ToolRegistry, registry

SCHEMA = {"description": "d", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}


def test_definitions_skip_unavailable_and_run_shared_check_once():
    reg = ToolRegistry()
    calls = []

    def shared():
        calls.append(1)
        return True

    def boom():
        raise RuntimeError("probe failed")

    reg.register("a", "s", SCHEMA, lambda args, **kw: "{}", check_fn=shared)
    reg.register("b", "s", SCHEMA, lambda args, **kw: "{}", check_fn=shared)
    reg.register("c", "s", SCHEMA, lambda args, **kw: "{}", check_fn=lambda: False)
    reg.register("d", "t", SCHEMA, lambda args, **kw: "{}", check_fn=boom)
    defs = reg.get_definitions(["a", "b", "c", "d", "missing"])
    assert [d["function"]["name"] for d in defs] == ["a", "b"]
    assert defs[0]["type"] == "function" and defs[0]["function"]["parameters"]["type"] == "object"
    assert len(calls) == 1
    reg.get_definitions(["a"])
    assert len(calls) == 2  # cached per call, not forever
    assert reg.is_toolset_available("s") and not reg.is_toolset_available("t")


def test_dispatch_unknown_tool_and_handler_exception_are_json():
    reg = ToolRegistry()

    def bad(args, **kw):
        raise KeyError("needle")

    reg.register("bad", "s", SCHEMA, bad)
    assert json.loads(reg.dispatch("nope", {})) == {"error": "Unknown tool: nope"}
    err = json.loads(reg.dispatch("bad", {}))["error"]
    assert "KeyError" in err and "needle" in err


def test_dispatch_passes_kwargs_and_rejects_bad_result_types():
    reg = ToolRegistry()
    reg.register("echo", "s", SCHEMA, lambda args, **kw: json.dumps({"args": args, "task": kw["task_id"]}))
    reg.register("num", "s", SCHEMA, lambda args, **kw: 42)
    assert json.loads(reg.dispatch("echo", {"x": 1}, task_id="t1")) == {"args": {"x": 1}, "task": "t1"}
    assert "unsupported result type: int" in json.loads(reg.dispatch("num", {}))["error"]


def _async_registry():
    reg = ToolRegistry()

    async def handler(args, **kw):
        await asyncio.sleep(0.01)
        return json.dumps({"loop": id(asyncio.get_running_loop()), "thread": threading.get_ident()})

    reg.register("aio", "s", SCHEMA, handler, is_async=True)
    return reg


def test_async_handler_from_plain_code_reuses_a_persistent_loop():
    reg = _async_registry()
    first, second = (json.loads(reg.dispatch("aio", {})) for _ in range(2))
    assert first["loop"] == second["loop"]  # cached async clients stay valid between calls


async def test_async_handler_from_inside_a_running_loop():
    reg = _async_registry()
    result = json.loads(reg.dispatch("aio", {}))
    assert result["loop"] != id(asyncio.get_running_loop())
    assert result["thread"] != threading.get_ident()


def test_async_handler_from_worker_threads():
    reg = _async_registry()
    with ThreadPoolExecutor(4) as pool:
        results = [json.loads(r) for r in pool.map(lambda _: reg.dispatch("aio", {}), range(8))]
    assert all("loop" in r for r in results)
    assert len({r["thread"] for r in results}) <= 4


def test_discovery_imports_only_modules_with_top_level_register(tmp_path, caplog):
    pkg = tmp_path / "fakepkg_tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    reg_line = "from hermes_agent.tools.registry import registry\n"
    (pkg / "good.py").write_text(reg_line + "registry.register('disc_good', 'disc', {'description': 'x'}, "
                                 "lambda a, **k: '{}')\n")
    (pkg / "helper.py").write_text(reg_line + "def f():\n    registry.register('disc_inner', 'disc', {}, None)\n"
                                   "raise SystemExit('helper must not be imported')\n")
    (pkg / "broken.py").write_text(reg_line + "import not_a_real_module_xyz\nregistry.register('x', 'y', {}, None)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        imported = discover_builtin_tools(pkg, package="fakepkg_tools")
    finally:
        sys.path.remove(str(tmp_path))
    assert imported == ["fakepkg_tools.good"]
    assert registry.get("disc_good") is not None and registry.get("disc_inner") is None
    assert "broken" in caplog.text and "not_a_real_module_xyz" in caplog.text
    registry.deregister("disc_good")
